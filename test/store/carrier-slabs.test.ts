/**
 * Large bodies hashed on a worker thread (store/carrier-slabs.ts) through the real store on
 * the fs provider: the same ETag, checksums and bytes as the in-thread path for any size
 * and fragmentation; claims checked; and a body that fails (short, long, aborted, or its
 * hash worker crashed) leaves nothing committed, no chunk blob, no budget and no worker
 * slot behind. Needs `npm run build:js` (the worker is the compiled one).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Store } from '../../src/store/store.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { ProviderError, type Provider } from '../../src/provider/provider.js';
import { HashPool } from '../../src/checksum/hash-pool.js';
import { SEALED_SLAB_WORKING_BYTES, SLAB_POOL_SLABS, SLAB_WORKING_BYTES, idleSlabCount } from '../../src/store/carrier-slabs.js';
import { StoreError } from '../../src/store/errors.js';
import { s3ErrorOf } from '../../src/s3/store-errors.js';
import { collect, tempDir } from './helpers.js';
import { prng, randInt, randomBytes } from '../support/random.js';
import { withPut } from '../support/put-wrapper.js';

const CRASHING = new URL('../support/crash-hash-worker.mjs', import.meta.url);
const MiB = 1024 * 1024;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: { pool?: HashPool; pendingBytes?: number; cpuBoundWrites?: boolean } = {}) {
  const { dir, cleanup } = tempDir('slabs');
  const fs = await createFsProvider({ dir });
  // A provider whose writes cost the main thread CPU (erasure) says so: the same fs provider
  // with the flag set (read with the target as receiver: its getters use private fields).
  const provider: Provider = opts.cpuBoundWrites
    ? new Proxy(fs, { get: (t, prop) => (prop === 'cpuBoundWrites' ? true : ((v) => (typeof v === 'function' ? v.bind(t) : v))(Reflect.get(t, prop))) })
    : fs;
  const store = await Store.open(provider, opts.pendingBytes ? { pendingBytes: opts.pendingBytes } : {});
  await store.createBucket('bkt');
  const pool = opts.pool ?? new HashPool({ threads: 1 });
  cleanups.push(cleanup, () => pool.close(), () => store.close());
  return { store, provider, pool };
}

/** `data` in pieces of seeded random sizes between 1 byte and 200 KiB. */
async function* ragged(data: Uint8Array, seed: number): AsyncGenerator<Uint8Array> {
  const next = prng(seed);
  for (let i = 0; i < data.length; ) {
    const n = Math.min(data.length - i, randInt(next, 1, 200_000));
    yield data.subarray(i, i + n);
    i += n;
  }
}

async function chunkBlobs(provider: Provider): Promise<string[]> {
  return (await provider.list({ prefix: 'chunks/' })).items.map((i) => i.key);
}

const md5hex = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

/**
 * `inner` with a hook run after each chunk blob's put has succeeded on it and before the caller
 * hears so (its final flush and rename, made slow or failed): `index` counts chunk puts started.
 */
function hooked(inner: Provider, afterPut: (index: number, started: () => number) => Promise<void>): Provider {
  let started = 0;
  return withPut(inner, async (key, body, options) => {
    if (!key.startsWith('chunks/')) return inner.put(key, body, options);
    const index = started++;
    const info = await inner.put(key, body, options);
    await afterPut(index, () => started);
    return info;
  });
}

/** Resolves true once `cond` holds (polled), false after `ms`. */
async function eventually(cond: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 5))) if (cond()) return true;
  return cond();
}

describe('carriers hashed on a worker', () => {
  it('stores the same ETag, CRC64NVME and bytes as the in-thread path, across sizes and chunk boundaries', async () => {
    const { store, pool } = await setup();
    for (const size of [MiB, 8 * MiB + 12_345, 17 * MiB - 1]) {
      const body = randomBytes(size, size);
      const viaWorker = await store.putObject('bkt', `w${size}`, ragged(body, size), { size, hashPool: pool, checksumAlgorithm: 'sha256' });
      const inThread = await store.putObject('bkt', `t${size}`, ragged(body, size + 1), { size, hashPool: null, checksumAlgorithm: 'sha256' });
      expect(viaWorker.etag).toBe(md5hex(body));
      expect(inThread.etag).toBe(viaWorker.etag);
      for (const alg of ['crc64nvme', 'sha256'] as const) {
        expect(Buffer.from(viaWorker.version.checksums!.values[alg]!)).toEqual(Buffer.from(inThread.version.checksums!.values[alg]!));
      }
      expect(Buffer.from(viaWorker.version.checksums!.values.sha256!).toString('hex')).toBe(createHash('sha256').update(body).digest('hex'));
      const back = await collect((await store.getObject('bkt', `w${size}`)).body);
      expect(Buffer.from(back).equals(Buffer.from(body))).toBe(true);
      // A range that straddles a segment and a slab boundary verifies and serves the right bytes.
      const r = await store.getObject('bkt', `w${size}`, { range: { start: 512 * 1024 - 7, end: 768 * 1024 + 3 } });
      expect(Buffer.from(await collect(r.body)).equals(Buffer.from(body.subarray(512 * 1024 - 7, 768 * 1024 + 4)))).toBe(true);
    }
    expect(pool.openJobs).toBe(0);
  });

  it('hashes every digest on the worker for a provider with cpuBoundWrites (erasure), CRC64NVME on this thread otherwise; same digests', async () => {
    for (const cpuBoundWrites of [false, true]) {
      const { store, pool } = await setup({ cpuBoundWrites });
      const asked: string[][] = [];
      const open = pool.open.bind(pool);
      pool.open = (algorithms) => (asked.push([...algorithms]), open(algorithms));
      const body = randomBytes(6 * MiB + 5, 77);
      const r = await store.putObject('bkt', 'k', ragged(body, 5), { size: body.length, hashPool: pool });
      expect(asked.length).toBe(1);
      expect(asked[0]!.includes('crc64nvme')).toBe(cpuBoundWrites);
      expect(asked[0]).toContain('md5');
      const inThread = await store.putObject('bkt', 't', ragged(body, 6), { size: body.length, hashPool: null });
      expect(r.etag).toBe(md5hex(body));
      expect(Buffer.from(r.version.checksums!.values.crc64nvme!)).toEqual(Buffer.from(inThread.version.checksums!.values.crc64nvme!));
    }
  });

  it('reuses the slabs the fs provider has written for the next uploads, with every byte right', async () => {
    const { store, pool } = await setup();
    const bodies = [0, 1, 2, 3].map((i) => randomBytes(5 * MiB + 777 * i, 900 + i));
    for (const [i, body] of bodies.entries()) {
      const r = await store.putObject('bkt', `reuse${i}`, ragged(body, i), { size: body.length, hashPool: pool });
      expect(r.etag).toBe(md5hex(body));
      // Written slabs came back (the short last slab of a body is not a pooled size).
      expect(idleSlabCount()).toBeGreaterThan(0);
      expect(idleSlabCount()).toBeLessThanOrEqual(SLAB_POOL_SLABS);
    }
    // Reused slab memory never leaks one body's bytes into another's.
    for (const [i, body] of bodies.entries()) {
      const got = await collect((await store.getObject('bkt', `reuse${i}`)).body);
      expect(Buffer.from(got).equals(Buffer.from(body)), `reuse${i}`).toBe(true);
    }
  });

  it('checks the claims against the worker digests: a wrong Content-MD5 commits nothing and leaves no chunk', async () => {
    const { store, provider, pool } = await setup();
    const body = randomBytes(3 * MiB, 3);
    const wrong = createHash('md5').update('other').digest('base64');
    await expect(store.putObject('bkt', 'k', ragged(body, 1), { size: body.length, hashPool: pool, claims: { contentMd5: wrong } })).rejects.toMatchObject({ code: 'BadDigest' });
    const right = createHash('md5').update(body).digest('base64');
    const sha = createHash('sha256').update(body).digest('hex');
    await expect(store.headObject('bkt', 'k')).rejects.toMatchObject({ code: 'NoSuchKey' });
    expect(await chunkBlobs(provider)).toEqual([]);
    const ok = await store.putObject('bkt', 'k', ragged(body, 2), { size: body.length, hashPool: pool, claims: { contentMd5: right, payloadSha256: sha } });
    expect(ok.etag).toBe(md5hex(body));
    expect(pool.openJobs).toBe(0);
  });

  it('refuses a short or a long body with IncompleteBody and leaves nothing behind', async () => {
    const { store, provider, pool } = await setup();
    const body = randomBytes(9 * MiB, 4);
    const before = store.repo.budget.used;
    await expect(store.putObject('bkt', 'short', ragged(body.subarray(0, body.length - 1), 5), { size: body.length, hashPool: pool })).rejects.toMatchObject({
      code: 'IncompleteBody',
    });
    await expect(store.putObject('bkt', 'long', ragged(body, 6), { size: body.length - 10, hashPool: pool })).rejects.toMatchObject({ code: 'IncompleteBody' });
    expect(await chunkBlobs(provider)).toEqual([]);
    expect(pool.openJobs).toBe(0);
    expect(store.repo.budget.used).toBe(before);
  });

  it('frees the worker slot, the budget and the chunks when the client goes away mid-body', async () => {
    const { store, provider, pool } = await setup();
    const body = randomBytes(12 * MiB, 7);
    const before = store.repo.budget.used;
    let peakJobs = 0;
    async function* dropsAfter(n: number): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < n; i += 100_000) {
        peakJobs = Math.max(peakJobs, pool.openJobs);
        yield body.subarray(i, Math.min(n, i + 100_000));
      }
      throw new StoreError('IncompleteBody', 'the connection closed (test)');
    }
    // Past the first 8 MiB chunk, so that a written chunk must be deleted too.
    await expect(store.putObject('bkt', 'gone', dropsAfter(9 * MiB), { size: body.length, hashPool: pool })).rejects.toThrow(/connection closed/);
    expect(peakJobs).toBe(1);
    expect(pool.openJobs).toBe(0);
    expect(store.repo.budget.used).toBe(before);
    expect(await chunkBlobs(provider)).toEqual([]);
    await expect(store.headObject('bkt', 'gone')).rejects.toMatchObject({ code: 'NoSuchKey' });
  });

  it("writes the next chunk while the one before it finishes, and fails whole when a finished chunk's put fails late", async () => {
    const { dir, cleanup } = tempDir('slabs-pipe');
    const fs = await createFsProvider({ dir });
    let mode: 'overlap' | 'fail' = 'overlap';
    const overlapped: boolean[] = [];
    let first = 0; // index of the first chunk put of the body being put
    let count = () => 0;
    const provider = hooked(fs, async (index, started) => {
      count = started;
      if (index !== first) return; // only the first chunk of each body
      // Chunk puts are one at a time if the next never starts while this one has not returned.
      const seen = await eventually(() => started() > index + 1, 3000);
      overlapped.push(seen);
      if (mode === 'fail') throw new ProviderError('Io', 'flush failed (test)');
    });
    const store = await Store.open(provider, {});
    await store.createBucket('bkt');
    const pool = new HashPool({ threads: 1 });
    cleanups.push(cleanup, () => pool.close(), () => store.close());

    const body = randomBytes(2 * 8 * MiB + 3 * MiB + 5, 11); // 3 chunk blobs
    const ok = await store.putObject('bkt', 'piped', ragged(body, 12), { size: body.length, hashPool: pool });
    expect(overlapped).toEqual([true]);
    expect(ok.etag).toBe(md5hex(body));
    expect(Buffer.from(await collect((await store.getObject('bkt', 'piped')).body)).equals(Buffer.from(body))).toBe(true);
    const kept = await chunkBlobs(fs);
    expect(kept).toHaveLength(3);

    // The first chunk's blob is there, but its put reports failure while the second is being
    // written: nothing commits, and no chunk of this body is left behind.
    mode = 'fail';
    const before = store.repo.budget.used;
    first = count();
    await expect(store.putObject('bkt', 'failed', ragged(body, 13), { size: body.length, hashPool: pool })).rejects.toThrow(/flush failed/);
    expect(overlapped).toEqual([true, true]);
    await expect(store.headObject('bkt', 'failed')).rejects.toMatchObject({ code: 'NoSuchKey' });
    expect((await chunkBlobs(fs)).sort()).toEqual(kept.sort());
    expect(store.repo.budget.used).toBe(before);
    expect(pool.openJobs).toBe(0);

    // The same failure while the next chunk's bytes still trickle in ends the body at once,
    // not after that chunk has been read whole.
    let sent = 0;
    async function* trickling(): AsyncGenerator<Uint8Array> {
      for (let off = 0; off < body.length; off += 64 * 1024) {
        if (off >= 8 * MiB + MiB) await new Promise((r) => setTimeout(r, 10)); // ~1.2 s for the rest of chunk 2
        const piece = body.subarray(off, Math.min(body.length, off + 64 * 1024));
        sent += piece.length;
        yield piece;
      }
    }
    first = count();
    await expect(store.putObject('bkt', 'failed2', trickling(), { size: body.length, hashPool: pool })).rejects.toThrow(/flush failed/);
    expect(overlapped).toEqual([true, true, true]);
    expect(sent).toBeLessThan(12 * MiB);
    expect((await chunkBlobs(fs)).sort()).toEqual(kept.sort());
    expect(store.repo.budget.used).toBe(before);
    expect(pool.openJobs).toBe(0);
  });

  it('fails the request with an internal (500) error and commits nothing when the hash worker dies', async () => {
    process.env.CRASH_HASH_AFTER = '6'; // mid-body: 3 MiB into a 10 MiB body
    const pool = new HashPool({ threads: 1, script: CRASHING });
    const { store, provider } = await setup({ pool });
    const body = randomBytes(10 * MiB, 8);
    const err = await store.putObject('bkt', 'crash', ragged(body, 9), { size: body.length, hashPool: pool }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('Io');
    expect(String((err as Error).message)).toMatch(/hash worker exited/);
    const s3 = s3ErrorOf(err);
    expect(s3.status).toBe(500);
    expect(s3.code).toBe('InternalError');
    await expect(store.headObject('bkt', 'crash')).rejects.toMatchObject({ code: 'NoSuchKey' });
    expect(await chunkBlobs(provider)).toEqual([]);
    expect(pool.openJobs).toBe(0);
    expect(store.repo.budget.used).toBe(0);
    // The store still writes (the next body gets a new thread, or hashes in place).
    const ok = await store.putObject('bkt', 'after', ragged(body.subarray(0, 100), 1), { size: 100, hashPool: pool });
    expect(ok.etag).toBe(md5hex(body.subarray(0, 100)));
    // An encrypted body is hashed on the worker too: the crash fails it the same way.
    const encryption = { mode: 'sse-s3' as const, root: Buffer.from(randomBytes(32, 10)) };
    const sealedErr = await store.putObject('bkt', 'crash-sealed', ragged(body, 11), { size: body.length, hashPool: pool, encryption }).catch((e: unknown) => e);
    expect((sealedErr as StoreError).code).toBe('Io');
    expect(String((sealedErr as Error).message)).toMatch(/hash worker exited/);
    expect(await chunkBlobs(provider)).toEqual([]);
    expect(pool.openJobs).toBe(0);
    expect(store.repo.budget.used).toBe(0);
  });

  it('keeps many concurrent uploads within maxJobs and the budget; the rest hash in place', async () => {
    const pool = new HashPool({ threads: 1, maxJobs: 2 });
    const { store } = await setup({ pool });
    const bodies = Array.from({ length: 6 }, (_, i) => randomBytes(2 * MiB + i, 20 + i));
    let peakJobs = 0;
    let peakBudget = 0;
    async function* watched(data: Uint8Array): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < data.length; i += 64 * 1024) {
        peakJobs = Math.max(peakJobs, pool.openJobs);
        peakBudget = Math.max(peakBudget, store.repo.budget.used);
        await new Promise((r) => setImmediate(r));
        yield data.subarray(i, i + 64 * 1024);
      }
    }
    const results = await Promise.all(bodies.map((b, i) => store.putObject('bkt', `c${i}`, watched(b), { size: b.length, hashPool: pool })));
    results.forEach((r, i) => expect(r.etag).toBe(md5hex(bodies[i]!)));
    expect(peakJobs).toBe(2);
    expect(peakBudget).toBeLessThanOrEqual(2 * SLAB_WORKING_BYTES + 6 * 256 * 1024);
    expect(pool.openJobs).toBe(0);
  });

  it('bounds encrypted uploads too: many at once stay within maxJobs and the budget, one that goes away mid-body frees all', async () => {
    const pool = new HashPool({ threads: 1, maxJobs: 2 });
    const { store, provider } = await setup({ pool });
    const encryption = { mode: 'sse-s3' as const, root: Buffer.from(randomBytes(32, 60)) };
    const bodies = Array.from({ length: 6 }, (_, i) => randomBytes(2 * MiB + i, 61 + i));
    let peakJobs = 0;
    let peakBudget = 0;
    async function* watched(data: Uint8Array, stopAt = data.length): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < stopAt; i += 64 * 1024) {
        peakJobs = Math.max(peakJobs, pool.openJobs);
        peakBudget = Math.max(peakBudget, store.repo.budget.used);
        await new Promise((r) => setImmediate(r));
        yield data.subarray(i, Math.min(stopAt, i + 64 * 1024));
      }
      if (stopAt < data.length) throw new StoreError('IncompleteBody', 'the connection closed (test)');
    }
    const results = await Promise.all(bodies.map((b, i) => store.putObject('bkt', `sc${i}`, watched(b), { size: b.length, hashPool: pool, encryption })));
    results.forEach((r, i) => expect(r.etag).toBe(md5hex(bodies[i]!)));
    expect(peakJobs).toBe(2);
    // Two on the worker (slabs and sealed copies), the rest in place (a segment and its sealed copy each).
    expect(peakBudget).toBeLessThanOrEqual(2 * SEALED_SLAB_WORKING_BYTES + 6 * 2 * (256 * 1024 + 16));
    expect(pool.openJobs).toBe(0);
    expect(store.repo.budget.used).toBe(0);
    // A client that stops mid-body: the slot, the budget and the chunk already written go.
    const big = randomBytes(12 * MiB, 67);
    const chunksBefore = (await chunkBlobs(provider)).length;
    await expect(store.putObject('bkt', 'sgone', watched(big, 9 * MiB), { size: big.length, hashPool: pool, encryption })).rejects.toThrow(/connection closed/);
    expect(pool.openJobs).toBe(0);
    expect(store.repo.budget.used).toBe(0);
    expect((await chunkBlobs(provider)).length).toBe(chunksBefore);
    await expect(store.headObject('bkt', 'sgone')).rejects.toMatchObject({ code: 'NoSuchKey' });
  });

  it('hashes in place when the budget cannot spare the slabs', async () => {
    const pool = new HashPool({ threads: 1 });
    // 1 MiB of budget: a carrier's 256 KiB segment fits, its 3 MiB of slabs do not.
    const { store } = await setup({ pool, pendingBytes: MiB });
    const body = randomBytes(3 * MiB, 30);
    let sawJob = false;
    async function* watched(): AsyncGenerator<Uint8Array> {
      for await (const p of ragged(body, 31)) {
        sawJob ||= pool.openJobs > 0;
        yield p;
      }
    }
    const refusals = store.repo.budget.refusals;
    const r = await store.putObject('bkt', 'lean', watched(), { size: body.length, hashPool: pool });
    expect(r.etag).toBe(md5hex(body));
    expect(sawJob).toBe(false);
    // Doing without the worker is not a refusal (strata_budget_refusals_total stays put).
    expect(store.repo.budget.refusals).toBe(refusals);
  });

  it('seals encrypted bodies while the worker hashes them: same digests as in-thread, no plaintext stored, every byte back', async () => {
    const { store, provider, pool } = await setup();
    const root = Buffer.from(randomBytes(32, 70));
    const customer = Buffer.from(randomBytes(32, 71));
    const sseS3 = { mode: 'sse-s3' as const, root };
    const keysOf = (mode: string) => (mode === 'sse-c' ? { sseS3: root, customer } : { sseS3: root });
    for (const [i, size] of [MiB, 8 * MiB + 12_345, 17 * MiB - 1].entries()) {
      const body = randomBytes(size, 80 + i);
      const enc = i === 1 ? { mode: 'sse-c' as const, root: customer } : sseS3;
      const keys = keysOf(enc.mode);
      const before = store.repo.budget.used;
      const viaWorker = await store.putObject('bkt', `ew${i}`, ragged(body, size), { size, hashPool: pool, encryption: enc });
      const inThread = await store.putObject('bkt', `et${i}`, ragged(body, size + 1), { size, hashPool: null, encryption: enc });
      expect(store.repo.budget.used).toBe(before);
      expect(viaWorker.version.encryption?.mode).toBe(enc.mode);
      if (enc.mode === 'sse-s3') expect(viaWorker.etag).toBe(md5hex(body)); // SSE-C masks it
      expect(Buffer.from(viaWorker.version.checksums!.values.crc64nvme!)).toEqual(Buffer.from(inThread.version.checksums!.values.crc64nvme!));
      expect(Buffer.from(await collect((await store.getObject('bkt', `ew${i}`, { keys })).body)).equals(Buffer.from(body))).toBe(true);
      const r = await store.getObject('bkt', `ew${i}`, { keys, range: { start: 512 * 1024 - 7, end: 1024 * 1024 + 3 } });
      expect(Buffer.from(await collect(r.body)).equals(Buffer.from(body.subarray(512 * 1024 - 7, 1024 * 1024 + 4)))).toBe(true);
      // Only sealed segments reach the provider: no 64-byte window of the plaintext in any chunk.
      for (const key of await chunkBlobs(provider)) {
        const stored = Buffer.from(await collect((await provider.get(key)).body));
        for (let off = 0; off + 64 <= size; off += Math.floor(size / 7)) expect(stored.includes(Buffer.from(body.subarray(off, off + 64))), `${key} at ${off}`).toBe(false);
      }
    }
    // The plaintext slabs came back from the worker to the pool.
    expect(idleSlabCount()).toBeGreaterThan(0);
    expect(pool.openJobs).toBe(0);
    // A short encrypted body: IncompleteBody, nothing committed, no chunk, budget back.
    const chunksBefore = (await chunkBlobs(provider)).length;
    const used = store.repo.budget.used;
    const body = randomBytes(3 * MiB, 90);
    await expect(store.putObject('bkt', 'eshort', ragged(body.subarray(0, body.length - 1), 91), { size: body.length, hashPool: pool, encryption: sseS3 })).rejects.toMatchObject({ code: 'IncompleteBody' });
    expect((await chunkBlobs(provider)).length).toBe(chunksBefore);
    expect(store.repo.budget.used).toBe(used);
    expect(pool.openJobs).toBe(0);
    // An encrypted multipart part goes the same way.
    const uploadId = await store.createMultipartUpload('bkt', 'emp', { encryption: sseS3 });
    const partBody = randomBytes(5 * MiB + 3, 92);
    const part = await store.uploadPart('bkt', 'emp', uploadId, 1, ragged(partBody, 93), { size: partBody.length, hashPool: pool, keys: keysOf('sse-s3') });
    await store.completeMultipartUpload('bkt', 'emp', uploadId, [{ partNumber: 1, etag: part.etag }], { keys: keysOf('sse-s3') });
    expect(Buffer.from(await collect((await store.getObject('bkt', 'emp', { keys: keysOf('sse-s3') })).body)).equals(Buffer.from(partBody))).toBe(true);
  });

  it('hashes multipart parts on the worker too, with the same part ETag', async () => {
    const { store, pool } = await setup();
    const body = randomBytes(5 * MiB + 3, 40);
    const uploadId = await store.createMultipartUpload('bkt', 'mp', {});
    const part = await store.uploadPart('bkt', 'mp', uploadId, 1, ragged(body, 41), { size: body.length, hashPool: pool });
    expect(part.etag).toBe(md5hex(body));
    await store.completeMultipartUpload('bkt', 'mp', uploadId, [{ partNumber: 1, etag: part.etag }]);
    expect(Buffer.from(await collect((await store.getObject('bkt', 'mp')).body)).equals(Buffer.from(body))).toBe(true);
  });
});
