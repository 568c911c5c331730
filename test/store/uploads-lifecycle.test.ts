/**
 * The life of multipart uploads in the uploads keyspace, through the Store API: the per-bucket
 * cap, Complete retried after success, DeleteBucket with uploads in progress, expiry (with a
 * test clock), and which part chunks are deleted (only those nothing can reference). Every
 * flow ends with a clean `verifyRepository` on the fs provider.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import type { Provider } from '../../src/provider/provider.js';
import { etagOf } from '../../src/store/records.js';
import { verifyRepository } from '../../src/store/verify.js';
import { MIN_PART_BYTES } from '../../src/store/multipart.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, makeProvider, stream, type ProviderKind } from './helpers.js';

const B = 'uploads';
const DAY = 86_400_000;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(kind: ProviderKind, options: Parameters<typeof Store.open>[1] = {}) {
  const p = await makeProvider(kind);
  cleanups.push(p.cleanup);
  const clock = { now: Date.UTC(2026, 0, 1) };
  const opts = { now: () => clock.now, ...options };
  const store = await Store.open(p.provider, opts);
  await store.createBucket(B);
  return { store, provider: p.provider, clock, reopen: async () => Store.open(await p.reopen(), opts) };
}

async function chunks(provider: Provider): Promise<Set<string>> {
  const out = new Set<string>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await provider.list({ prefix: 'chunks/', ...(startAfter ? { startAfter } : {}) });
    for (const i of page.items) out.add(i.key);
    if (!page.next) return out;
    startAfter = page.next;
  }
}

async function part(store: Store, key: string, id: string, n: number, size: number, seed: number) {
  const body = randomBytes(size, seed);
  const r = await store.uploadPart(B, key, id, n, stream(body), { size });
  return { ...r, body };
}

async function expectClean(provider: Provider): Promise<void> {
  const report = await verifyRepository(provider);
  expect(report.problems).toEqual([]);
}

describe.each(['memory', 'fs'] as const)('uploads on %s', (kind) => {
  it('caps uploads in progress per bucket; aborting or completing frees a place; the count survives reopening', async () => {
    const { store, reopen } = await open(kind, { maxUploadsPerBucket: 3 });
    await store.createBucket('other-bucket');
    // Ten at once: the cap holds inside one group commit too.
    const created = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.createMultipartUpload(B, `k${i}`)));
    const ids = created.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(ids).toHaveLength(3);
    for (const r of created) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'TooManyUploads', message: expect.stringMatching(/3 multipart uploads in progress/) });
    await expect(store.createMultipartUpload('other-bucket', 'x')).resolves.toMatch(/^[0-9a-f]{44}$/);
    const keyOf = async (id: string) => (await store.listMultipartUploads(B)).uploads.find((u) => u.uploadId === id)!.key;
    await store.abortMultipartUpload(B, await keyOf(ids[0]!), ids[0]!);
    const fourth = await store.createMultipartUpload(B, 'k-fourth');
    await expect(store.createMultipartUpload(B, 'k-fifth')).rejects.toMatchObject({ code: 'TooManyUploads' });
    const p = await part(store, await keyOf(ids[1]!), ids[1]!, 1, 10, 1);
    await store.completeMultipartUpload(B, await keyOf(ids[1]!), ids[1]!, [{ partNumber: 1, etag: p.etag }]);
    await store.checkpoint();
    await store.close();
    const again = await reopen();
    expect(again.repo.state.buckets.get(B)!.uploads.count).toBe(2);
    await again.createMultipartUpload(B, 'k-after-reopen');
    await expect(again.createMultipartUpload(B, 'k-one-too-many')).rejects.toMatchObject({ code: 'TooManyUploads' });
    const listed = (await again.listMultipartUploads(B)).uploads.map((u) => u.uploadId);
    expect(listed).toHaveLength(3);
    expect(listed).toEqual(expect.arrayContaining([ids[2]!, fourth]));
    await again.close();
  });

  it('answers a Complete retried after success with the same result; a different part list is InvalidPart', async () => {
    const { store, provider, reopen } = await open(kind);
    const id = await store.createMultipartUpload(B, 'big', { checksumAlgorithm: 'crc32' });
    const p1 = await part(store, 'big', id, 1, MIN_PART_BYTES, 11);
    const p2 = await part(store, 'big', id, 2, 1000, 12);
    const list = [
      { partNumber: 1, etag: `"${p1.etag}"` },
      { partNumber: 2, etag: p2.etag.toUpperCase() },
    ];
    const first = await store.completeMultipartUpload(B, 'big', id, list);
    const again = await store.completeMultipartUpload(B, 'big', id, [
      { partNumber: 1, etag: p1.etag },
      { partNumber: 2, etag: `&quot;${p2.etag}&quot;` },
    ]);
    expect(etagOf(again)).toBe(etagOf(first));
    expect(again.versionId).toBe(first.versionId);
    const hex = (c: typeof first.checksums) => ({ ...c, values: Object.fromEntries(Object.entries(c?.values ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('hex')])) });
    expect(hex(again.checksums)).toEqual(hex(first.checksums));
    expect(again.checksums?.values.crc32).toBeDefined();
    // A retry carries the first request's conditions: If-None-Match * must not turn it into 412.
    await expect(store.completeMultipartUpload(B, 'big', id, list, { conditions: { ifNoneMatch: '*' } })).resolves.toMatchObject({ versionId: first.versionId });
    await expect(store.completeMultipartUpload(B, 'big', id, [list[0]!])).rejects.toMatchObject({ code: 'InvalidPart' });
    await expect(store.completeMultipartUpload(B, 'big', id, [list[0]!, { partNumber: 3, etag: p2.etag }])).rejects.toMatchObject({ code: 'InvalidPart' });
    await expect(store.completeMultipartUpload(B, 'other-key', id, list)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    // The upload is no longer in progress in any way.
    await expect(store.uploadPart(B, 'big', id, 3, stream(new Uint8Array(1)), { size: 1 })).rejects.toMatchObject({ code: 'NoSuchUpload' });
    await expect(store.abortMultipartUpload(B, 'big', id)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    await expect(store.listParts(B, 'big', id)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    expect((await store.listMultipartUploads(B)).uploads).toEqual([]);
    // The same answer after the object changed, and from the runs after a checkpoint and reopen.
    await store.putObject(B, 'big', stream(new Uint8Array(3)), { size: 3 });
    await store.checkpoint();
    await store.close();
    const reopened = await reopen();
    expect(etagOf(await reopened.completeMultipartUpload(B, 'big', id, list))).toBe(etagOf(first));
    expect((await reopened.version(B, 'big')).size).toBe(3);
    await reopened.close();
    if (kind === 'fs') await expectClean(provider);
  });

  it('deletes the chunks of aborted uploads, replaced parts and parts left out, never those an object uses', async () => {
    const { store, provider } = await open(kind);
    const before = await chunks(provider);
    const aborted = await store.createMultipartUpload(B, 'gone');
    await part(store, 'gone', aborted, 1, 300_000, 21);
    await part(store, 'gone', aborted, 7, 2000, 22);
    expect((await chunks(provider)).size).toBe(before.size + 2);
    await store.abortMultipartUpload(B, 'gone', aborted);
    expect(await chunks(provider)).toEqual(before);

    const id = await store.createMultipartUpload(B, 'kept');
    const a = await part(store, 'kept', id, 1, MIN_PART_BYTES, 31);
    const replaced = await chunks(provider);
    const a2 = await part(store, 'kept', id, 1, MIN_PART_BYTES, 32); // replaces part 1
    await part(store, 'kept', id, 2, 500, 33); // left out of the Complete below
    const c = await part(store, 'kept', id, 3, 700, 34);
    await store.repo.reaper.idle();
    const afterReplace = await chunks(provider);
    for (const k of replaced) if (!before.has(k)) expect(afterReplace.has(k), 'replaced part chunk deleted').toBe(false);
    expect(a.etag).not.toBe(a2.etag);
    await store.completeMultipartUpload(B, 'kept', id, [
      { partNumber: 1, etag: a2.etag },
      { partNumber: 3, etag: c.etag },
    ]);
    await store.repo.reaper.idle();
    const v = await store.version(B, 'kept');
    const used = new Set(v.location.kind === 'chunks' ? v.location.chunks.map((x) => x.blob) : []);
    const now = await chunks(provider);
    expect([...now].filter((k) => !before.has(k)).sort()).toEqual([...used].sort());
    expectBytes(await collect((await store.getObject(B, 'kept')).body), Buffer.concat([a2.body, c.body]), 'object');
    expect(store.repo.reaper.stats.failed).toBe(0);
    await store.close();
    if (kind === 'fs') await expectClean(provider);
  });

  it('deletes a bucket that holds only uploads in progress, with their chunks, but not chunks a copy still uses', async () => {
    const { store, provider } = await open(kind);
    await store.createBucket('keeper');
    const before = await chunks(provider);
    const done = await store.createMultipartUpload(B, 'done');
    const d = await part(store, 'done', done, 1, 400_000, 41);
    await store.completeMultipartUpload(B, 'done', done, [{ partNumber: 1, etag: d.etag }]);
    await store.copyObject({ bucket: B, key: 'done' }, { bucket: 'keeper', key: 'copy' });
    await store.deleteObject(B, 'done');
    const open1 = await store.createMultipartUpload(B, 'open/1');
    await part(store, 'open/1', open1, 1, 300_000, 42);
    const open2 = await store.createMultipartUpload(B, 'open/2');
    await part(store, 'open/2', open2, 3, 10, 43);
    await store.createMultipartUpload(B, 'open/3');
    await store.checkpoint(); // some of it in runs, some in the overlay
    await part(store, 'open/2', open2, 4, 20, 44);
    await store.putObject(B, 'blocker', stream(new Uint8Array(1)), { size: 1 });
    await expect(store.deleteBucket(B)).rejects.toMatchObject({ code: 'BucketNotEmpty' });
    await store.deleteObject(B, 'blocker');
    await store.deleteBucket(B);
    await store.repo.reaper.idle();
    const copy = await store.version('keeper', 'copy');
    const used = copy.location.kind === 'chunks' ? copy.location.chunks.map((x) => x.blob) : [];
    expect([...(await chunks(provider))].filter((k) => !before.has(k)).sort()).toEqual(used.sort());
    expectBytes(await collect((await store.getObject('keeper', 'copy')).body), d.body, 'copy of the completed upload');
    await expect(store.listMultipartUploads(B)).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await expect(store.uploadPart(B, 'open/1', open1, 2, stream(new Uint8Array(1)), { size: 1 })).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await store.createBucket(B);
    expect((await store.listMultipartUploads(B)).uploads).toEqual([]);
    await expect(store.abortMultipartUpload(B, 'open/1', open1)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    await store.close();
    if (kind === 'fs') await expectClean(provider);
  });

  it('never stages an upload change for a bucket deleted earlier in the same group commit', async () => {
    const { store, provider, reopen } = await open(kind);
    const ids = await Promise.all(['a', 'b', 'c'].map((k) => store.createMultipartUpload(B, k)));
    // Queued together, these share batches: the deletion may be staged before the others.
    const settled = await Promise.allSettled([
      store.deleteBucket(B),
      store.abortMultipartUpload(B, 'a', ids[0]!),
      store.createBucket(B),
      store.createMultipartUpload(B, 'd'),
      store.completeMultipartUpload(B, 'b', ids[1]!, [{ partNumber: 1, etag: 'x' }]),
    ]);
    expect(settled[0]!.status).toBe('fulfilled');
    for (const r of settled.slice(1)) if (r.status === 'rejected') expect(['NoSuchBucket', 'NoSuchUpload', 'InvalidPart', 'BucketAlreadyOwnedByYou']).toContain((r.reason as { code: string }).code);
    const listed = (await store.listMultipartUploads(B)).uploads;
    expect(listed.every((u) => u.key === 'd')).toBe(true);
    expect(store.repo.state.buckets.get(B)!.uploads.count).toBe(listed.length);
    await store.checkpoint();
    await store.close();
    const again = await reopen();
    expect((await again.listMultipartUploads(B)).uploads).toHaveLength(listed.length);
    await again.close();
    if (kind === 'fs') await expectClean(provider);
  });

  it('expires uploads and completion records by age, through commits, across checkpoints and reopening', async () => {
    const { store, provider, clock, reopen } = await open(kind);
    const t0 = clock.now;
    const old = await store.createMultipartUpload(B, 'old');
    // Commit times strictly increase, so with the clock standing still `old` began a few ms
    // after t0 (the repository's creation and the bucket's came first).
    const oldAt = (await store.listMultipartUploads(B)).uploads[0]!.initiated;
    expect(oldAt).toBeGreaterThan(t0);
    expect(oldAt).toBeLessThan(t0 + 10);
    await part(store, 'old', old, 1, 300_000, 51);
    clock.now += DAY;
    const young = await store.createMultipartUpload(B, 'young');
    const done = await store.createMultipartUpload(B, 'done');
    const d = await part(store, 'done', done, 1, 10, 52);
    clock.now += DAY;
    await store.completeMultipartUpload(B, 'done', done, [{ partNumber: 1, etag: d.etag }]);
    await store.checkpoint();
    const chunksWithOld = await chunks(provider);
    const maxAgeMs = 7 * DAY;

    clock.now = oldAt + maxAgeMs; // exactly the age: not yet
    expect(await store.expireUploads({ maxAgeMs })).toMatchObject({ aborted: 0, completionsDropped: 0 });
    clock.now = oldAt + maxAgeMs + 1;
    expect(await store.expireUploads({ maxAgeMs })).toMatchObject({ aborted: 1, completionsDropped: 0, chunksDeleted: 1, more: false });
    expect((await store.listMultipartUploads(B)).uploads.map((u) => u.uploadId)).toEqual([young]);
    await expect(store.listParts(B, 'old', old)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    expect((await chunks(provider)).size).toBe(chunksWithOld.size - 1);
    expect(await store.expireUploads({ maxAgeMs })).toMatchObject({ aborted: 0, completionsDropped: 0 }); // idempotent
    await store.close();

    const again = await reopen();
    // The completion record answers retries until it is as old as the age, then goes.
    clock.now = t0 + 2 * DAY + maxAgeMs;
    await expect(again.completeMultipartUpload(B, 'done', done, [{ partNumber: 1, etag: d.etag }])).resolves.toMatchObject({ size: 10 });
    clock.now += 1;
    expect(await again.expireUploads({ maxAgeMs })).toMatchObject({ aborted: 1, completionsDropped: 1 }); // `young` too
    await expect(again.completeMultipartUpload(B, 'done', done, [{ partNumber: 1, etag: d.etag }])).rejects.toMatchObject({ code: 'NoSuchUpload' });
    expect((await again.listMultipartUploads(B)).uploads).toEqual([]);
    expectBytes(await collect((await again.getObject(B, 'done')).body), d.body, 'the completed object stays');
    expect(again.repo.state.buckets.get(B)!.uploads.count).toBe(0);
    await again.checkpoint();
    await again.close();
    if (kind === 'fs') await expectClean(provider);
  });

  it('expires in bounded batches and leaves alone what a client ended meanwhile', async () => {
    const { store, clock } = await open(kind);
    const ids = [];
    for (let i = 0; i < 25; i++) ids.push(await store.createMultipartUpload(B, `k/${i}`));
    clock.now += 10 * DAY;
    await store.abortMultipartUpload(B, 'k/3', ids[3]!);
    let total = 0;
    let rounds = 0;
    for (;;) {
      const r = await store.expireUploads({ maxAgeMs: DAY, batch: 10 });
      total += r.aborted;
      rounds++;
      if (!r.more) break;
    }
    expect(total).toBe(24);
    expect(rounds).toBe(3);
    expect((await store.listMultipartUploads(B)).uploads).toEqual([]);
    await expect(store.expireUploads({ maxAgeMs: 0 })).rejects.toBeInstanceOf(RangeError);
    await store.close();
  });
});
