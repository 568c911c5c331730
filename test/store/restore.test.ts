/**
 * Restoring a bucket or a prefix to a past time (store level, real providers): the state
 * after a restore equals the model's at that time for every step of a seeded history; keys
 * that need nothing get no write; a prefix restore leaves every other key; a restore is itself
 * history (as-of reads around it, restore of a restore, undo); running it again writes nothing;
 * dry runs write nothing; batches, progress and stepping with a cursor; bodies shared (SSE-C
 * restored without its key); versioned and never-versioned buckets; refusals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import type { RestoreProgress } from '../../src/store/restore.js';
import { collect, makeProvider, stream, type ProviderKind } from './helpers.js';
import { BucketModel, Clock, putText, runScript, type Step } from './history-model.js';
import { randomBytes } from '../support/random.js';
import { lockedBucketConfigs } from '../../src/store/object-lock-config.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(kind: ProviderKind, clock: Clock, opts: Parameters<typeof Store.open>[1] = {}) {
  const p = await makeProvider(kind);
  cleanups.push(p.cleanup);
  const all = { ...opts, now: clock.now };
  const store = await Store.open(p.provider, all);
  return { store, provider: p.provider, reopen: async () => Store.open(await p.reopen(), all) };
}

const text = async (body: AsyncIterable<Uint8Array>) => Buffer.from(await collect(body)).toString();

/** The bucket's current keys and bodies (everything, in order). */
async function current(store: Store, bucket: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let token: string | undefined;
  do {
    const page = await store.listObjects(bucket, { maxKeys: 1000, ...(token ? { continuationToken: token } : {}) });
    for (const c of page.contents) out.set(c.key, await text((await store.getObject(bucket, c.key)).body));
    token = page.nextContinuationToken;
  } while (token);
  return out;
}

/** Current version ids of every key (to tell which keys a restore wrote). */
async function ids(store: Store, bucket: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const c of (await store.listObjects(bucket, { maxKeys: 1000 })).contents) out.set(c.key, c.version.logId ?? c.version.versionId);
  return out;
}

const KEYS = ['a', 'b', 'c/x', 'c/y', 'd/e/f', 'd/g', 'zz'];

describe.each(['memory', 'fs'] as const)('restore on %s', (kind) => {
  it('brings the bucket back to the model at many times, writing only the keys that differ, and is history itself', async () => {
    const clock = new Clock();
    const { store } = await open(kind, clock, { checkpointEvery: 11, maxRuns: 2 });
    await store.createBucket('rst');
    const model = new BucketModel();
    const steps = await runScript(store, clock, 'rst', model, { seed: 21, count: 60, keys: KEYS });
    const targets = [0, 5, 17, 30, 44, 59, 60].map((i) => steps[i]!);
    let previous: Step = steps.at(-1)!;
    for (const target of targets) {
      const beforeTime = clock.mark(store);
      const before = await ids(store, 'rst');
      const r = await store.restore('rst', { to: target.time });
      const after = await current(store, 'rst');
      expect(after, `restored to "${target.what}"`).toEqual(target.snapshot);
      // Keys that were already right got no write; the others did.
      const now = await ids(store, 'rst');
      for (const [key, body] of target.snapshot) {
        const same = previous.snapshot.get(key) === body;
        if (same) expect(now.get(key), key).toBe(before.get(key));
      }
      expect(r.restored + r.deleted).toBe(r.changes.length);
      expect(r.scanned).toBe(r.restored + r.deleted + r.unchanged);
      // The state before the restore is still readable as of then.
      for (const [key, body] of previous.snapshot) expect(await text((await store.getObject('rst', key, { asOf: beforeTime })).body)).toBe(body);
      // Again: nothing to do.
      clock.tick();
      const again = await store.restore('rst', { to: target.time });
      expect(again).toMatchObject({ restored: 0, deleted: 0, commits: 0 });
      previous = target;
    }
  }, 60_000);
});

describe('restore', () => {
  it('of a prefix leaves every other key, and a restore of a restore undoes it', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    await store.createBucket('pfx');
    for (const k of ['logs/1', 'logs/2', 'data/1', 'data/2', 'top']) await putText(store, 'pfx', k, `${k} v1`);
    const t1 = clock.mark(store);
    await putText(store, 'pfx', 'logs/1', 'logs/1 v2');
    await store.deleteObject('pfx', 'logs/2');
    await putText(store, 'pfx', 'logs/3', 'logs/3 new');
    await putText(store, 'pfx', 'data/1', 'data/1 v2');
    await store.deleteObject('pfx', 'top');
    const t2 = clock.mark(store);
    const otherIds = await ids(store, 'pfx');
    clock.tick();
    const r = await store.restore('pfx', { to: t1, prefix: 'logs/' });
    expect(r).toMatchObject({ scanned: 3, restored: 2, deleted: 1, unchanged: 0, commits: 1 });
    expect(r.changes.map((c) => [c.key, c.action])).toEqual([
      ['logs/1', 'restore'],
      ['logs/2', 'restore'],
      ['logs/3', 'delete'],
    ]);
    expect(await current(store, 'pfx')).toEqual(
      new Map([
        ['data/1', 'data/1 v2'],
        ['data/2', 'data/2 v1'],
        ['logs/1', 'logs/1 v1'],
        ['logs/2', 'logs/2 v1'],
      ])
    );
    const now = await ids(store, 'pfx');
    for (const k of ['data/1', 'data/2']) expect(now.get(k)).toBe(otherIds.get(k));
    // Undo: back to t2 (the restore's own writes are history).
    clock.tick();
    const undo = await store.restore('pfx', { to: t2 });
    expect(undo).toMatchObject({ restored: 2, deleted: 1, unchanged: 3 });
    expect(await current(store, 'pfx')).toEqual(
      new Map([
        ['data/1', 'data/1 v2'],
        ['data/2', 'data/2 v1'],
        ['logs/1', 'logs/1 v2'],
        ['logs/3', 'logs/3 new'],
      ])
    );
    // And the whole bucket to t1.
    clock.tick();
    await store.restore('pfx', { to: t1 });
    expect(await current(store, 'pfx')).toEqual(new Map(['data/1', 'data/2', 'logs/1', 'logs/2', 'top'].map((k) => [k, `${k} v1`])));
  });

  it('in a versioned bucket makes new versions and delete markers, keeping every version', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    await store.createBucket('ver');
    await store.putVersioning('ver', 'Enabled');
    const v1 = await putText(store, 'ver', 'k', 'one');
    const t1 = clock.mark(store);
    const v2 = await putText(store, 'ver', 'k', 'two');
    await putText(store, 'ver', 'later', 'x');
    clock.tick();
    const r = await store.restore('ver', { to: t1 });
    const restoredId = r.changes.find((c) => c.key === 'k')!;
    expect(restoredId).toMatchObject({ action: 'restore', from: v1.versionId });
    expect(restoredId.versionId).not.toBe(v1.versionId);
    const list = await store.listVersions('ver');
    expect(list.versions.map((v) => [v.key, v.versionId, v.version.deleteMarker])).toEqual([
      ['k', restoredId.versionId, false],
      ['k', v2.versionId, false],
      ['k', v1.versionId, false],
      ['later', r.changes.find((c) => c.key === 'later')!.versionId, true],
      ['later', expect.any(String), false],
    ]);
    const got = await store.getObject('ver', 'k');
    expect(await text(got.body)).toBe('one');
    expect(got.version.lastModified).toBe(clock.t);
    expect(got.version.location).toEqual(v1.version.location); // the body is shared, not copied
  });

  it('sees what permanent removals after the time changed: a marker removed since is put back', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    await store.createBucket('rmv');
    await store.putVersioning('rmv', 'Enabled');
    await putText(store, 'rmv', 'k', 'kept');
    clock.tick();
    const marker = await store.deleteObject('rmv', 'k');
    const t = clock.mark(store);
    await store.removeVersion('rmv', 'k', marker.versionId!); // 'kept' is current again
    clock.tick();
    expect(await text((await store.getObject('rmv', 'k')).body)).toBe('kept');
    const r = await store.restore('rmv', { to: t });
    expect(r).toMatchObject({ deleted: 1, restored: 0 });
    await expect(store.getObject('rmv', 'k')).rejects.toMatchObject({ code: 'NoSuchKey' });
  });

  it('gives a restored version the bucket default Object Lock retention from now, and leaves old versions locked', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    await store.createBucket('lck', undefined, lockedBucketConfigs());
    await store.putBucketLockConfig('lck', { rule: { mode: 'GOVERNANCE', days: 1 } });
    clock.tick();
    const rule = { defaultRule: { mode: 'GOVERNANCE' as const, days: 1 } };
    const b1 = utf8('locked one');
    const v1 = await store.putObject('lck', 'k', stream(b1), { size: b1.length, lock: rule });
    const t = clock.mark(store);
    const b2 = utf8('locked two');
    await store.putObject('lck', 'k', stream(b2), { size: b2.length, lock: rule });
    clock.tick(3_600_000);
    const r = await store.restore('lck', { to: t });
    expect(r.restored).toBe(1);
    const now = (await store.getObject('lck', 'k')).version;
    expect(now.lock).toEqual({ mode: 'GOVERNANCE', retainUntil: store.repo.lastCommitTime + 86_400_000 });
    expect((await store.getVersion('lck', 'k', v1.versionId)).version.lock).toEqual(v1.version.lock);
    // Locked versions cannot be removed; a second restore has nothing to do (the lock is no content).
    await expect(store.removeVersion('lck', 'k', v1.versionId)).rejects.toMatchObject({ code: 'AccessDenied' });
    clock.tick();
    expect(await store.restore('lck', { to: t })).toMatchObject({ restored: 0, deleted: 0, commits: 0 });
  });

  it('shares SSE-C bodies without the customer key', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    await store.createBucket('ssec');
    const key = Buffer.from(randomBytes(32, 77));
    const secret = Buffer.from(randomBytes(300_000, 78));
    await store.putObject('ssec', 'enc', stream(secret), { size: secret.length, encryption: { mode: 'sse-c', root: key } });
    const t = clock.mark(store);
    await putText(store, 'ssec', 'enc', 'plain now');
    clock.tick();
    const r = await store.restore('ssec', { to: t });
    expect(r.restored).toBe(1);
    await expect(store.getObject('ssec', 'enc')).rejects.toMatchObject({ code: 'InvalidRequest' });
    const back = await store.getObject('ssec', 'enc', { keys: { customer: key } });
    expect(Buffer.from(await collect(back.body)).equals(secret)).toBe(true);
  });

  it('reports a dry run without writing, batches commits with progress, and steps with a cursor', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    await store.createBucket('bat');
    for (let i = 0; i < 10; i++) await putText(store, 'bat', `k${i}`, `v1 ${i}`);
    const t = clock.mark(store);
    for (let i = 0; i < 10; i++) if (i !== 4) await putText(store, 'bat', `k${i}`, `v2 ${i}`);
    await putText(store, 'bat', 'new', 'n');
    clock.tick();
    const seq = store.repo.seq;
    const dry = await store.restore('bat', { to: t, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, scanned: 11, restored: 9, deleted: 1, unchanged: 1, commits: 0 });
    expect(dry.changes.map((c) => c.key)).toEqual(['k0', 'k1', 'k2', 'k3', 'k5', 'k6', 'k7', 'k8', 'k9', 'new']);
    expect(store.repo.seq).toBe(seq);
    const seen: RestoreProgress[] = [];
    const stepped = { scanned: 0, restored: 0, deleted: 0 };
    let after: string | undefined;
    for (let calls = 0; calls < 10; calls++) {
      const r = await store.restore('bat', { to: t, batchKeys: 2, maxKeys: 4, onProgress: (p) => seen.push(p), ...(after ? { after } : {}) });
      stepped.scanned += r.scanned;
      stepped.restored += r.restored;
      stepped.deleted += r.deleted;
      if (!r.next) break;
      after = r.next;
    }
    expect(stepped).toEqual({ scanned: 11, restored: 9, deleted: 1 });
    expect(seen.filter((p) => p.commits > 0).length).toBeGreaterThanOrEqual(5);
    for (let i = 0; i < 10; i++) expect(await text((await store.getObject('bat', `k${i}`)).body)).toBe(`v1 ${i}`);
    await expect(store.getObject('bat', 'new')).rejects.toMatchObject({ code: 'NoSuchKey' });
  });

  it('refuses times outside the window, oversized prefixes and missing buckets, writing nothing', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    await store.createBucket('bad');
    await putText(store, 'bad', 'k', 'x');
    clock.tick();
    const seq = store.repo.seq;
    await expect(store.restore('bad', { to: clock.t + 1 })).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/restore time .* is in the future/) });
    await expect(store.restore('bad', { to: 0 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.restore('bad', { to: Number.NaN })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.restore('bad', { to: clock.t, prefix: 'p'.repeat(1025) })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.restore('nope', { to: clock.t })).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await store.putHistoryWindow('bad', 0);
    await expect(store.restore('bad', { to: clock.t - 1 })).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/history window/) });
    expect(store.repo.seq).toBe(seq + 1); // the window change only
  });
});
