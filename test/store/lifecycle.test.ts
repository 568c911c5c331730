/**
 * runLifecycle on a real repository (fs provider): each action S3 defines, with the rule
 * arithmetic driven by `now` and a short `dayMs` instead of sleeping; what it must never do
 * (remove a locked version, touch a fork that has no rules, act on a disabled rule or before
 * the day); and a bucket larger than one page (keys and markers across page boundaries).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { lockedBucketConfigs } from '../../src/store/object-lock-config.js';
import { runLifecycle, LIFECYCLE_PAGE } from '../../src/store/lifecycle.js';
import { afterDays, encodeLifecycle, LIFECYCLE_CONFIG } from '../../src/store/lifecycle-config.js';
import { parseLifecycleConfiguration } from '../../src/s3/xml/lifecycle.js';
import { makeProvider, stream } from './helpers.js';

const DAY = 1000;
const B = 'lcb';

let cleanup: () => void = () => undefined;
afterEach(() => cleanup());

async function open(configs?: [string, Uint8Array][]) {
  const p = await makeProvider('fs');
  cleanup = p.cleanup;
  const store = await Store.open(p.provider);
  await store.createBucket(B, undefined, configs);
  return store;
}

const rules = (xml: string) => encodeLifecycle(parseLifecycleConfiguration(`<LifecycleConfiguration>${xml}</LifecycleConfiguration>`));
const setRules = (store: Store, xml: string, bucket = B) => store.putBucketConfig(bucket, LIFECYCLE_CONFIG, rules(xml));
const put = async (store: Store, key: string, body = 'abc', opts: Record<string, unknown> = {}, bucket = B) =>
  (await store.putObject(bucket, key, stream(Buffer.from(body)), { size: body.length, ...opts })).version;
const keys = async (store: Store, bucket = B) => (await store.listObjects(bucket)).contents.map((c) => c.key);
const versions = async (store: Store, bucket = B) =>
  (await store.listVersions(bucket)).versions.map((v) => `${v.key}:${v.version.deleteMarker ? 'marker' : 'v'}${v.isLatest ? '*' : ''}`);
const run = (store: Store, now: number, bucket?: string, dayMs = DAY) => runLifecycle(store.repo, { now, dayMs, ...(bucket ? { bucket } : {}) });

describe('runLifecycle', () => {
  it('Expiration Days deletes current objects the filter selects, on the day and not before (unversioned)', async () => {
    const store = await open();
    await setRules(
      store,
      `<Rule><ID>p</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>
       <Rule><ID>t</ID><Filter><And><Tag><Key>tmp</Key><Value>yes</Value></Tag><ObjectSizeGreaterThan>3</ObjectSizeGreaterThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
       <Rule><ID>off</ID><Filter/><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>`
    );
    // An hour-long day: the puts below take far less, so which rule is due when is certain.
    const D = 3_600_000;
    const t0 = (await put(store, 'logs/a')).lastModified;
    const logsB = (await put(store, 'logs/b')).lastModified;
    await put(store, 'keep');
    const big = (await put(store, 'tagged-big', 'abcdef', { tags: { tmp: 'yes' } })).lastModified;
    await put(store, 'tagged-small', 'ab', { tags: { tmp: 'yes' } });
    await put(store, 'tagged-other', 'abcdef', { tags: { tmp: 'no' } });
    // Before the day (rounded up to the next day boundary) nothing happens.
    expect((await run(store, t0 + 1, undefined, D)).expired).toBe(0);
    expect((await run(store, afterDays(big, 1, D) - 1, undefined, D)).expired).toBe(0);
    const r1 = await run(store, afterDays(big, 1, D), undefined, D);
    expect(r1.expired).toBe(1);
    expect(await keys(store)).toEqual(['keep', 'logs/a', 'logs/b', 'tagged-other', 'tagged-small']);
    const r2 = await run(store, afterDays(logsB, 2, D), undefined, D);
    expect(r2.expired).toBe(2);
    expect(await keys(store)).toEqual(['keep', 'tagged-other', 'tagged-small']);
    // An unversioned bucket keeps no versions of what expired.
    expect(await versions(store)).toEqual(['keep:v*', 'tagged-other:v*', 'tagged-small:v*']);
    // Nothing is due again.
    expect((await run(store, t0 + 10 * D, undefined, D)).expired).toBe(0);
  });

  it('Expiration Date past: everything selected goes; a future date: nothing', async () => {
    const store = await open();
    await setRules(
      store,
      `<Rule><ID>past</ID><Prefix>past/</Prefix><Status>Enabled</Status><Expiration><Date>2015-01-01T00:00:00Z</Date></Expiration></Rule>
       <Rule><ID>future</ID><Prefix>future/</Prefix><Status>Enabled</Status><Expiration><Date>2100-01-01</Date></Expiration></Rule>`
    );
    await put(store, 'past/x');
    await put(store, 'future/x');
    const r = await runLifecycle(store.repo);
    expect(r.expired).toBe(1);
    expect(await keys(store)).toEqual(['future/x']);
  });

  it('versioned: expiration leaves a delete marker; noncurrent versions go NoncurrentDays after they became noncurrent, newest N kept', async () => {
    const store = await open();
    await store.putVersioning(B, 'Enabled');
    await setRules(
      store,
      `<Rule><ID>cur</ID><Prefix>a</Prefix><Status>Enabled</Status><Expiration><Days>50</Days></Expiration></Rule>
       <Rule><ID>nc</ID><Prefix>b</Prefix><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>`
    );
    const t0 = (await put(store, 'a')).lastModified;
    for (let i = 0; i < 5; i++) await put(store, 'b', `v${i}`);
    const last = (await store.listVersions(B)).versions.find((v) => v.key === 'b' && v.isLatest)!.version.lastModified;
    // b's noncurrent versions became noncurrent when their successors were written: the
    // oldest ones long enough ago; the newest two noncurrent are kept whatever their age.
    const r = await run(store, last + 3 * DAY);
    expect(r.versionsRemoved).toBe(2);
    expect(r.expired).toBe(0);
    expect(await versions(store)).toEqual(['a:v*', 'b:v*', 'b:v', 'b:v']);
    const r2 = await run(store, t0 + 52 * DAY);
    expect(r2.expired).toBe(1);
    expect(await versions(store)).toEqual(['a:marker*', 'a:v', 'b:v*', 'b:v', 'b:v']);
    expect(await keys(store)).toEqual(['b']);
  });

  it('NoncurrentDays counts from the successor, not from the version itself', async () => {
    const store = await open();
    await store.putVersioning(B, 'Enabled');
    await setRules(store, `<Rule><ID>nc</ID><Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionExpiration></Rule>`);
    const old = await put(store, 'k', 'old');
    const now = old.lastModified + 10 * DAY; // the version is old...
    await new Promise((res) => setTimeout(res, 20));
    const successor = await put(store, 'k', 'new'); // ...but noncurrent only since now
    expect((await run(store, successor.lastModified + DAY)).versionsRemoved).toBe(0);
    expect((await run(store, Math.max(now, successor.lastModified + 4 * DAY))).versionsRemoved).toBe(1);
    expect(await versions(store)).toEqual(['k:v*']);
  });

  it('suspended versioning: expiration writes a null delete marker', async () => {
    const store = await open();
    await store.putVersioning(B, 'Enabled');
    await put(store, 'k', 'one');
    await store.putVersioning(B, 'Suspended');
    const t = (await put(store, 'k', 'two')).lastModified;
    await setRules(store, `<Rule><ID>x</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`);
    expect((await run(store, t + 3 * DAY)).expired).toBe(1);
    const vs = (await store.listVersions(B)).versions;
    expect(vs[0]!.version.deleteMarker).toBe(true);
    expect(vs[0]!.versionId).toBe('null');
    expect(vs.length).toBe(2); // the null version was replaced by the null marker; v1 stays
  });

  it('ExpiredObjectDeleteMarker removes a marker that is the only version left, not one hiding versions', async () => {
    const store = await open();
    await store.putVersioning(B, 'Enabled');
    await setRules(store, `<Rule><ID>dm</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>`);
    await store.deleteObject(B, 'alone'); // a marker with nothing under it
    await put(store, 'hiding');
    await store.deleteObject(B, 'hiding');
    const r = await run(store, Date.now() + DAY);
    expect(r.markersRemoved).toBe(1);
    expect(await versions(store)).toEqual(['hiding:marker*', 'hiding:v']);
  });

  it('noncurrent expiration then ExpiredObjectDeleteMarker empties a deleted key over two passes', async () => {
    const store = await open();
    await store.putVersioning(B, 'Enabled');
    await setRules(
      store,
      `<Rule><ID>dm</ID><Prefix></Prefix><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>
       <Rule><ID>nc</ID><Prefix></Prefix><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>`
    );
    await put(store, 'k');
    await store.deleteObject(B, 'k');
    const later = Date.now() + 3 * DAY;
    const r1 = await run(store, later);
    expect(r1.versionsRemoved).toBe(1);
    const r2 = await run(store, later);
    expect(r2.markersRemoved).toBe(1);
    expect(await versions(store)).toEqual([]);
  });

  it('Expiration Days also removes a lone delete marker once the marker is that old (S3)', async () => {
    const store = await open();
    await store.putVersioning(B, 'Enabled');
    await setRules(store, `<Rule><ID>d</ID><Filter/><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>`);
    const marker = (await store.deleteObject(B, 'gone')).versionId;
    expect(marker).toBeTruthy();
    const t = (await store.listVersions(B)).versions[0]!.version.lastModified;
    expect((await run(store, t + DAY)).markersRemoved).toBe(0);
    expect((await run(store, t + 4 * DAY)).markersRemoved).toBe(1);
    expect(await versions(store)).toEqual([]);
  });

  it('Object Lock: a locked noncurrent version is kept and counted; once the retention ends it goes', async () => {
    const store = await open(lockedBucketConfigs());
    await setRules(store, `<Rule><ID>nc</ID><Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>`);
    await put(store, 'held', 'x', { lock: { legalHold: true } });
    await put(store, 'held', 'y');
    await put(store, 'free', 'x');
    await put(store, 'free', 'y');
    const r = await run(store, Date.now() + 3 * DAY);
    expect(r.versionsRemoved).toBe(1);
    expect(r.skippedLocked).toBe(1);
    expect(await versions(store)).toEqual(['free:v*', 'held:v*', 'held:v']);
  });

  it('AbortIncompleteMultipartUpload aborts uploads under the prefix older than the days', async () => {
    const store = await open();
    await setRules(store, `<Rule><ID>mp</ID><Prefix>tmp/</Prefix><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`);
    await store.createMultipartUpload(B, 'tmp/a');
    await store.createMultipartUpload(B, 'keep/b');
    expect((await run(store, Date.now())).uploadsAborted).toBe(0);
    const r = await run(store, Date.now() + 3 * DAY);
    expect(r.uploadsAborted).toBe(1);
    expect((await store.listMultipartUploads(B)).uploads.map((u) => u.key)).toEqual(['keep/b']);
  });

  it('a fork does not take its source rules, and the source expiring leaves the fork whole', async () => {
    const store = await open();
    await setRules(store, `<Rule><ID>all</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`);
    await put(store, 'a');
    await put(store, 'b');
    const fork = await store.forkBucket(B, 'lcb-fork');
    expect(fork.copied).not.toContain(LIFECYCLE_CONFIG);
    expect(store.getBucketConfig('lcb-fork', LIFECYCLE_CONFIG)).toBeUndefined();
    const r = await run(store, Date.now() + 3 * DAY);
    expect(r.buckets).toBe(1);
    expect(r.expired).toBe(2);
    expect(await keys(store)).toEqual([]);
    expect(await keys(store, 'lcb-fork')).toEqual(['a', 'b']);
    // Given its own rules, the fork expires too.
    await setRules(store, `<Rule><ID>own</ID><Prefix>a</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`, 'lcb-fork');
    expect((await run(store, Date.now() + 3 * DAY, 'lcb-fork')).expired).toBe(1);
    expect(await keys(store, 'lcb-fork')).toEqual(['b']);
  });

  it('a bucket larger than a page: keys, noncurrent versions and lone markers across page boundaries', async () => {
    const store = await open();
    await store.putVersioning(B, 'Enabled');
    await setRules(
      store,
      `<Rule><ID>dm</ID><Prefix>m/</Prefix><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>
       <Rule><ID>nc</ID><Prefix>v/</Prefix><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>`
    );
    const n = Math.ceil((LIFECYCLE_PAGE * 1.3) / 2);
    const jobs: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const k = `v/${String(i).padStart(5, '0')}`;
      jobs.push(put(store, k, 'one').then(() => put(store, k, 'two')));
      jobs.push(store.deleteObject(B, `m/${String(i).padStart(5, '0')}`));
      if (jobs.length >= 64) await Promise.all(jobs.splice(0));
    }
    await Promise.all(jobs);
    const seen: number[] = [];
    const r = await runLifecycle(store.repo, { now: Date.now() + 3 * DAY, dayMs: DAY, onProgress: (p) => seen.push(p.examined) });
    expect(r.examined).toBe(3 * n);
    expect(seen.length).toBeGreaterThan(1);
    expect(r.versionsRemoved).toBe(n);
    expect(r.markersRemoved).toBe(n);
    const left = await store.listVersions(B, { maxKeys: 1000 });
    expect(left.versions.every((v) => v.key.startsWith('v/') && v.isLatest && !v.version.deleteMarker)).toBe(true);
  }, 60_000);

  it('refuses an unknown bucket and does nothing for buckets without rules', async () => {
    const store = await open();
    await put(store, 'a');
    await expect(runLifecycle(store.repo, { bucket: 'nope' })).rejects.toMatchObject({ code: 'NoSuchBucket' });
    const r = await runLifecycle(store.repo, { now: Date.now() + 1e12 });
    expect(r.buckets).toBe(0);
    expect(await keys(store)).toEqual(['a']);
  });
});
