/**
 * The chunk blob size of carriers follows the provider's preference
 * (ProviderCapabilities.chunkBytes, layout.ts chunkSizeFor): a provider that asks for bigger
 * chunks gets fewer blobs on both write paths (hashed on a worker and in place), every byte
 * and range reads back, and a preference out of bounds falls back to CHUNK_SIZE. Reads never
 * depend on it: a carrier written under one size reads back under another. The erasure
 * provider asks for MAX_CHUNK_SIZE while such chunks are striped, and for nothing when its
 * stripe threshold would replicate them.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Store } from '../../src/store/store.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { HashPool } from '../../src/checksum/hash-pool.js';
import { CHUNK_SIZE, MAX_CHUNK_SIZE, SEGMENT_SIZE, chunkSizeFor } from '../../src/store/layout.js';
import { ERASURE_CHUNK_BYTES, STRIPED_CHUNKS_THRESHOLD } from '../../src/provider/erasure/index.js';
import { cleanupRigs, makeRig } from '../provider/erasure-helpers.js';
import { collect, stream, tempDir } from './helpers.js';
import { randomBytes } from '../support/random.js';
import { withPut } from '../support/put-wrapper.js';

const MiB = 1024 * 1024;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(cleanupRigs);

/** `inner` saying it prefers chunks of `chunkBytes` (undefined: no preference). */
function preferring(inner: Provider, chunkBytes: number | undefined): Provider {
  const p = withPut(inner, (key, body, options) => inner.put(key, body, options));
  return { ...p, capabilities: { ...inner.capabilities, ...(chunkBytes === undefined ? {} : { chunkBytes }) } };
}

async function chunkBlobs(provider: Provider): Promise<{ key: string; size: number }[]> {
  return (await provider.list({ prefix: 'chunks/' })).items.map((i) => ({ key: i.key, size: i.size }));
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

describe('chunkSizeFor', () => {
  it('takes a whole number of segments from CHUNK_SIZE to MAX_CHUNK_SIZE, else CHUNK_SIZE', () => {
    expect(chunkSizeFor(undefined)).toBe(CHUNK_SIZE);
    for (const ok of [CHUNK_SIZE, CHUNK_SIZE + SEGMENT_SIZE, 2 * CHUNK_SIZE, MAX_CHUNK_SIZE]) expect(chunkSizeFor(ok)).toBe(ok);
    for (const bad of [0, -CHUNK_SIZE, CHUNK_SIZE - SEGMENT_SIZE, SEGMENT_SIZE, CHUNK_SIZE + 1, 2 * CHUNK_SIZE + 4096, MAX_CHUNK_SIZE + SEGMENT_SIZE, 2 ** 53, NaN, Infinity, 1.5 * SEGMENT_SIZE * 64 + 0.5]) {
      expect(chunkSizeFor(bad), String(bad)).toBe(CHUNK_SIZE);
    }
  });
});

describe("carriers cut to the provider's chunk size", () => {
  async function setup(chunkBytes: number | undefined) {
    const { dir, cleanup } = tempDir('chunk-size');
    const fs = await createFsProvider({ dir });
    const provider = preferring(fs, chunkBytes);
    const store = await Store.open(provider);
    await store.createBucket('bkt');
    const pool = new HashPool({ threads: 1 });
    cleanups.push(cleanup, () => pool.close(), () => store.close());
    return { store, provider, pool, dir };
  }

  it('writes fewer, bigger chunk blobs when the provider asks, on the worker and the in-place path, and reads every byte and range back', async () => {
    const size = 2 * CHUNK_SIZE + 12_345;
    const body = randomBytes(size, 41);
    const md5 = createHash('md5').update(body).digest('hex');
    for (const [chunkBytes, blobs] of [[undefined, 3], [2 * CHUNK_SIZE, 2], [MAX_CHUNK_SIZE, 1], [CHUNK_SIZE + 1, 3]] as const) {
      const { store, provider, pool } = await setup(chunkBytes);
      const viaWorker = await store.putObject('bkt', 'w', stream(body, 300_000), { size, hashPool: pool });
      const w = await chunkBlobs(provider);
      const inPlace = await store.putObject('bkt', 't', stream(body, 300_000), { size, hashPool: null });
      const all = await chunkBlobs(provider);
      expect(w.length, `${chunkBytes}: worker path`).toBe(blobs);
      expect(all.length - w.length, `${chunkBytes}: in-place path`).toBe(blobs);
      expect(viaWorker.etag).toBe(md5);
      expect(inPlace.etag).toBe(md5);
      const want = chunkSizeFor(chunkBytes);
      for (const key of ['w', 't']) {
        expect(same(await collect((await store.getObject('bkt', key)).body), body), `${chunkBytes} ${key}`).toBe(true);
        // Ranges across the default chunk boundary and across the chunk boundary in use.
        for (const at of [CHUNK_SIZE, want]) {
          if (at >= size) continue;
          const r = await store.getObject('bkt', key, { range: { start: at - 5, end: at + 4 } });
          expect(same(await collect(r.body), body.subarray(at - 5, at + 5)), `${chunkBytes} ${key} @${at}`).toBe(true);
        }
      }
    }
  });

  it('reads carriers written under another chunk size: the preference only shapes new writes', async () => {
    const size = CHUNK_SIZE * 2 + SEGMENT_SIZE + 3;
    const body = randomBytes(size, 42);
    const { dir, cleanup } = tempDir('chunk-size-reopen');
    cleanups.push(cleanup);
    const open = async (chunkBytes: number | undefined) => {
      const provider = preferring(await createFsProvider({ dir }), chunkBytes);
      return { provider, store: await Store.open(provider) };
    };
    let { store } = await open(undefined);
    await store.createBucket('bkt');
    await store.putObject('bkt', 'small-chunks', stream(body, 1 << 20), { size, hashPool: null });
    await store.close();
    ({ store } = await open(MAX_CHUNK_SIZE));
    expect(same(await collect((await store.getObject('bkt', 'small-chunks')).body), body)).toBe(true);
    await store.putObject('bkt', 'big-chunks', stream(body, 1 << 20), { size, hashPool: null });
    await store.close();
    let provider: Provider;
    ({ store, provider } = await open(undefined));
    expect((await chunkBlobs(provider)).length).toBe(3 + 1);
    for (const key of ['small-chunks', 'big-chunks']) expect(same(await collect((await store.getObject('bkt', key)).body), body), key).toBe(true);
    await store.close();
  });

  it('over the erasure provider: 64 MiB chunk blobs, every byte and the ranges across their boundary back', async () => {
    expect(chunkSizeFor(ERASURE_CHUNK_BYTES)).toBe(ERASURE_CHUNK_BYTES);
    expect(ERASURE_CHUNK_BYTES).toBe(MAX_CHUNK_SIZE);
    const rig = await makeRig({ kind: 'memory', cellSize: 256 * 1024, stripeThreshold: MiB });
    expect(rig.provider.capabilities.chunkBytes).toBe(ERASURE_CHUNK_BYTES);
    const store = await Store.open(rig.provider);
    cleanups.push(() => store.close());
    await store.createBucket('bkt');
    const size = ERASURE_CHUNK_BYTES + 300 * 1024 + 7;
    const body = randomBytes(size, 43);
    await store.putObject('bkt', 'o', stream(body, 1 << 20), { size });
    const blobs = await chunkBlobs(rig.provider);
    expect(blobs.length).toBe(2);
    expect(same(await collect((await store.getObject('bkt', 'o')).body), body)).toBe(true);
    for (const [start, end] of [[ERASURE_CHUNK_BYTES - 5, ERASURE_CHUNK_BYTES + 4], [ERASURE_CHUNK_BYTES - SEGMENT_SIZE - 1, ERASURE_CHUNK_BYTES + SEGMENT_SIZE], [CHUNK_SIZE - 3, CHUNK_SIZE + 2]] as const) {
      const r = await store.getObject('bkt', 'o', { range: { start, end } });
      expect(same(await collect(r.body), body.subarray(start, end + 1)), `${start}-${end}`).toBe(true);
    }
  });

  it('over the erasure provider with a stripe threshold above 8 MiB: no preference, chunks stay at CHUNK_SIZE', async () => {
    const rig = await makeRig({ kind: 'memory', cellSize: 256 * 1024, stripeThreshold: STRIPED_CHUNKS_THRESHOLD + 1 });
    expect(rig.provider.capabilities.chunkBytes).toBeUndefined();
    const edge = await makeRig({ kind: 'memory', cellSize: 256 * 1024, stripeThreshold: STRIPED_CHUNKS_THRESHOLD });
    expect(edge.provider.capabilities.chunkBytes).toBe(ERASURE_CHUNK_BYTES);
    const store = await Store.open(rig.provider);
    cleanups.push(() => store.close());
    await store.createBucket('bkt');
    const size = 2 * CHUNK_SIZE + 7;
    const body = randomBytes(size, 44);
    await store.putObject('bkt', 'o', stream(body, 1 << 20), { size });
    expect((await chunkBlobs(rig.provider)).length).toBe(3);
    expect(same(await collect((await store.getObject('bkt', 'o')).body), body)).toBe(true);
  });
});
