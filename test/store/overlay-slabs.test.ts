/**
 * The values an overlay keeps until a checkpoint live in shared slabs (store/index/value-slab.ts).
 *
 * Regression (1M-object writer, bench:engine scale lane): every committed put left two
 * Uint8Arrays of ~100-200 bytes in the overlays (the key's namespace value and its version log
 * entry), each with its own malloc'd backing store, alive for a whole checkpoint interval among
 * the put path's short-lived buffers. The C heap fragmented around them: its resident size was
 * ~130 MiB for ~30 MiB of live values. Now the state copies them into shared slabs as it
 * applies a commit, so thousands of values share a few allocations.
 *
 * Asserted on the repository's own overlays (which ArrayBuffers their values are views of), on
 * a real fs provider, with the commit log on and off; and every value must still read back
 * exactly: through the overlays, after a checkpoint (runs), and after a reopen (replay).
 */
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { SLAB_BYTES } from '../../src/store/index/value-slab.js';
import { collect, stream, tempDir } from './helpers.js';

const PUTS = 200;
/** Seeded body bytes: object i gets a body of 1 + (i * 37) % 300 bytes (packed in the commit). */
function bodyOf(i: number): Uint8Array {
  const out = new Uint8Array(1 + ((i * 37) % 300));
  let x = (i + 11) * 2654435761;
  for (let j = 0; j < out.length; j++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[j] = x >>> 24;
  }
  return out;
}

/** Distinct ArrayBuffers behind the values `get` answers for `keys`. */
function buffersOf(get: (key: string) => Uint8Array | undefined, keys: string[]): Set<ArrayBufferLike> {
  const out = new Set<ArrayBufferLike>();
  for (const k of keys) out.add(get(k)!.buffer);
  return out;
}

describe('overlay values in shared slabs', () => {
  for (const commitLog of [true, false]) {
    it(`${PUTS} puts keep their overlay values in a few slabs and read back exactly (commit log ${commitLog ? 'on' : 'off'})`, async () => {
      const { dir, cleanup } = tempDir('overlay-slabs');
      try {
        const open = async () => Store.open(await createFsProvider({ dir }), { commitLog, checkpointEvery: 1 << 20, blockCacheBytes: 0, bodyCacheBytes: 0 });
        let store = await open();
        await store.createBucket('bkt');
        const keys = Array.from({ length: PUTS }, (_, i) => `k/${String(i).padStart(4, '0')}`);
        const meta = (i: number) => ({ userMetadata: { n: String(i), pad: 'm'.repeat(i % 90) } });
        for (let at = 0; at < PUTS; at += 100) {
          await Promise.all(keys.slice(at, at + 100).map((k, j) => store.putObject('bkt', k, stream(bodyOf(at + j)), { size: bodyOf(at + j).length, ...meta(at + j) })));
        }
        const b = store.repo.state.buckets.get('bkt')!;
        expect(b.overlay.size).toBe(PUTS);
        // Before: one ArrayBuffer per value (PUTS of them). Now: the values' bytes over SLAB_BYTES, plus a slab cut short at each end.
        let valueBytes = 0;
        for (const k of keys) valueBytes += b.overlay.get(k)!.length;
        const bound = Math.ceil((2 * valueBytes) / SLAB_BYTES) + 2;
        expect(buffersOf((k) => b.overlay.get(k), keys).size).toBeLessThanOrEqual(bound);
        const logValues = [...b.versions.overlay].map(([, v]) => v);
        expect(logValues.length).toBe(PUTS);
        expect(new Set(logValues.map((v) => v.buffer)).size).toBeLessThanOrEqual(bound);

        // Every value through the overlays; every fourth after the reopen and after the checkpoint.
        const check = async (s: Store, every = 1) => {
          for (let i = 0; i < PUTS; i += every) {
            const got = await s.getObject('bkt', keys[i]!);
            expect(got.version.userMetadata).toEqual(meta(i).userMetadata);
            expect(Buffer.from(await collect(got.body)).equals(Buffer.from(bodyOf(i)))).toBe(true);
          }
        };
        await check(store);
        await store.close();
        store = await open(); // replays the commits
        await check(store, 4);
        await store.repo.checkpoint();
        await check(store, 4); // from runs
        await store.close();
      } finally {
        cleanup();
      }
    }, 120_000);
  }
});
