/**
 * The hash worker pool (src/checksum/hash-pool.ts): digests computed on a worker thread
 * equal the in-thread ones whatever the slicing, and the pool stays bounded and recovers
 * when a job is aborted or its thread dies. Needs `npm run build:js` (the worker runs the
 * compiled dist/src/checksum/hash-worker.js).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HashPool, HashWorkerError, workerScript } from '../../src/checksum/hash-pool.js';
import { createHasher } from '../../src/checksum/hasher.js';
import { crc32c } from '../../src/checksum/crc.js';
import type { ChecksumAlgorithm } from '../../src/checksum/algorithms.js';
import { prng, randInt, randomBytes } from '../support/random.js';

const CRASHING = new URL('../support/crash-hash-worker.mjs', import.meta.url);
const ALL: ChecksumAlgorithm[] = ['md5', 'crc64nvme', 'crc32c', 'crc32', 'sha256', 'sha1'];
const pools: HashPool[] = [];
const newPool = (o: ConstructorParameters<typeof HashPool>[0] = {}) => {
  const p = new HashPool(o);
  pools.push(p);
  return p;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** `data` copied into shared memory at `at`, inside a slice of `total` bytes. */
function shared(data: Uint8Array, at: number, total: number): Uint8Array {
  const s = new Uint8Array(new SharedArrayBuffer(total));
  s.set(data, at);
  return s;
}

describe('hash pool', () => {
  it('finds the compiled worker (run npm run build:js first)', () => {
    expect(workerScript()).toBeDefined();
  });

  it('gives the in-thread digests and per-span CRC32C for every slicing, spans with gaps included', async () => {
    const pool = newPool({ threads: 2 });
    const next = prng(11);
    for (const size of [0, 1, 63, 64, 65, 4095, 65_537, 1_000_055]) {
      const body = randomBytes(size, size + 1);
      const h = pool.open(ALL)!;
      expect(h).toBeDefined();
      const wantCrcs: number[] = [];
      const gotCrcs: Promise<number[]>[] = [];
      let transfer = false; // alternate transferred and shared slices
      // Slices of random length, each holding 1-3 spans separated by junk gaps.
      for (let off = 0; off < size; ) {
        const spans: number[] = [];
        const parts: [number, Uint8Array][] = [];
        let at = randInt(next, 0, 30);
        for (let k = randInt(next, 1, 3); k > 0 && off < size; k--) {
          const n = Math.min(size - off, randInt(next, 1, 300_000));
          parts.push([at, body.subarray(off, off + n)]);
          spans.push(at, n);
          wantCrcs.push(crc32c(body.subarray(off, off + n)));
          off += n;
          at += n + randInt(next, 0, 40);
        }
        transfer = !transfer;
        // A transferred slice may be a view at an offset of a larger buffer.
        const slice = transfer ? new Uint8Array(new ArrayBuffer(at + 64), 32, at) : new Uint8Array(new SharedArrayBuffer(at));
        slice.fill(0xee);
        for (const [p, bytes] of parts) slice.set(bytes, p);
        const copy = Uint8Array.from(slice);
        const offset = slice.byteOffset;
        gotCrcs.push(
          h.hash(slice, spans).then((r) => {
            // The slice comes back whole, as a view at the same place.
            expect(r.bytes.byteOffset).toBe(offset);
            expect(Buffer.from(r.bytes).equals(Buffer.from(copy))).toBe(true);
            return r.crcs;
          })
        );
        if (transfer) expect(slice.buffer.byteLength).toBe(0); // detached while the worker has it
        if (gotCrcs.length % 3 === 0) await gotCrcs.at(-1); // stay under maxSlicesPerJob
      }
      expect((await Promise.all(gotCrcs)).flat()).toEqual(wantCrcs);
      const digests = await h.digest();
      for (const a of ALL) {
        expect(Buffer.from(digests[a]!).toString('hex'), `${a} of ${size} bytes`).toBe(Buffer.from(createHasher(a).update(body).digest()).toString('hex'));
      }
    }
    expect(pool.openJobs).toBe(0);
  });

  it('hashes without answering CRCs when asked for none (an encrypted body stores other bytes)', async () => {
    const pool = newPool({ threads: 1 });
    const body = randomBytes(700_000, 77);
    const h = pool.open(['md5', 'crc64nvme'])!;
    const first = new Uint8Array(new ArrayBuffer(400_016));
    first.set(body.subarray(0, 400_000), 16);
    const a = await h.hash(first, [16, 400_000], { crcs: false });
    expect(a.crcs).toEqual([]);
    expect(Buffer.from(a.bytes.subarray(16)).equals(Buffer.from(body.subarray(0, 400_000)))).toBe(true);
    // Mixed with a slice that does want its CRC: both are absorbed, in order.
    const b = await h.hash(Uint8Array.from(body.subarray(400_000)), [0, 300_000]);
    expect(b.crcs).toEqual([crc32c(body.subarray(400_000))]);
    const digests = await h.digest();
    for (const alg of ['md5', 'crc64nvme'] as const) {
      expect(Buffer.from(digests[alg]!).toString('hex')).toBe(Buffer.from(createHasher(alg).update(body).digest()).toString('hex'));
    }
    expect(pool.openJobs).toBe(0);
  });

  it('keeps concurrent jobs on one thread independent', async () => {
    const pool = newPool({ threads: 1 });
    const bodies = [0, 1, 2, 3].map((i) => randomBytes(300_000 + i * 7, 100 + i));
    const jobs = bodies.map(() => pool.open(['md5', 'crc64nvme'])!);
    // Interleave the slices of all four jobs.
    for (let off = 0; off < 300_000; off += 100_000) {
      await Promise.all(jobs.map((h, i) => h.hash(shared(bodies[i]!.subarray(off, off + 100_000), 0, 100_000), [0, 100_000])));
    }
    await Promise.all(jobs.map((h, i) => h.hash(shared(bodies[i]!.subarray(300_000), 0, i * 7), [0, i * 7])));
    const digests = await Promise.all(jobs.map((h) => h.digest()));
    digests.forEach((d, i) => expect(Buffer.from(d.md5!)).toEqual(Buffer.from(createHasher('md5').update(bodies[i]!).digest())));
  });

  it('refuses spans outside the slice, and more than maxSlicesPerJob in flight', async () => {
    const pool = newPool({ threads: 1, maxSlicesPerJob: 2 });
    const h = pool.open(['md5'])!;
    const s = shared(new Uint8Array(10), 0, 10);
    const a = h.hash(s, [0, 10]);
    const b = h.hash(s, [0, 10]);
    expect(() => h.hash(s, [0, 10])).toThrow(/in flight/);
    await Promise.all([a, b]);
    await h.digest();
  });

  it('opens at most maxJobs jobs; digest and abort free their slots', async () => {
    const pool = newPool({ threads: 1, maxJobs: 3 });
    const jobs = [pool.open(['md5'])!, pool.open(['md5'])!, pool.open(['md5'])!];
    expect(jobs.every(Boolean)).toBe(true);
    expect(pool.open(['md5'])).toBeUndefined();
    expect(pool.openJobs).toBe(3);
    await jobs[0]!.digest();
    jobs[1]!.abort();
    jobs[1]!.abort(); // idempotent
    expect(pool.openJobs).toBe(1);
    const again = pool.open(['md5']);
    expect(again).toBeDefined();
    again!.abort();
    jobs[2]!.abort();
    expect(pool.openJobs).toBe(0);
  });

  it('rejects the slices of an aborted job and frees its slot at once', async () => {
    const pool = newPool({ threads: 1 });
    const h = pool.open(['md5', 'sha256'])!;
    const big = shared(randomBytes(4 << 20, 5), 0, 4 << 20);
    const pending = h.hash(big, [0, big.length]);
    h.abort();
    await expect(pending).rejects.toBeInstanceOf(HashWorkerError);
    expect(pool.openJobs).toBe(0);
    expect(() => h.hash(big, [0, 1])).toThrow(/ended/);
    // The thread is still good for the next job.
    const h2 = pool.open(['md5'])!;
    await h2.hash(shared(Uint8Array.of(1, 2, 3), 0, 3), [0, 3]);
    expect(Buffer.from((await h2.digest()).md5!)).toEqual(Buffer.from(createHasher('md5').update(Uint8Array.of(1, 2, 3)).digest()));
  });

  it('fails every job of a thread that dies, and starts a new thread for the next job', async () => {
    process.env.CRASH_HASH_AFTER = '2';
    const pool = newPool({ threads: 1, script: CRASHING });
    const a = pool.open(['md5'])!;
    const b = pool.open(['md5'])!;
    const s = shared(new Uint8Array(8), 0, 8);
    await a.hash(s, [0, 8]); // slice 1: answered
    const dying = a.hash(s, [0, 8]); // slice 2: the thread exits
    const other = b.hash(s, [0, 8]);
    await expect(dying).rejects.toThrow(/exited \(code 3\)/);
    await expect(other).rejects.toBeInstanceOf(HashWorkerError);
    await expect(b.digest()).rejects.toBeInstanceOf(HashWorkerError);
    expect(pool.openJobs).toBe(0);
    expect(pool.threads).toBe(0);
    const c = pool.open(['md5'])!;
    await c.hash(s, [0, 8]);
    expect(pool.threads).toBe(1);
    c.abort();
  });

  it('fails closed when a worker answers a slice without handing it back', async () => {
    process.env.CRASH_HASH_MODE = 'lie';
    try {
      const pool = newPool({ threads: 1, script: CRASHING });
      const h = pool.open(['md5'])!;
      await expect(h.hash(new Uint8Array(16), [0, 16])).rejects.toBeInstanceOf(HashWorkerError);
      h.abort();
      expect(pool.openJobs).toBe(0);
    } finally {
      delete process.env.CRASH_HASH_MODE;
    }
  });

  it('fails open jobs when the pool closes, and opens none after', async () => {
    const pool = newPool({ threads: 1 });
    const h = pool.open(['md5'])!;
    const p = h.hash(shared(randomBytes(1 << 20, 9), 0, 1 << 20), [0, 1 << 20]);
    const failed = expect(p).rejects.toThrow(/closed/);
    await pool.close();
    await failed;
    expect(pool.open(['md5'])).toBeUndefined();
    expect(pool.openJobs).toBe(0);
  });

  it('validates its options', () => {
    expect(() => new HashPool({ threads: 0 })).toThrow(RangeError);
    expect(() => new HashPool({ maxJobs: 1.5 })).toThrow(RangeError);
    expect(() => new HashPool({ maxSlicesPerJob: -1 })).toThrow(RangeError);
  });
});
