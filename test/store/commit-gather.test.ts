/**
 * Gathering (commit-loop.ts GATHER_MS): with a commit log, a batch about to start right after a
 * batch of B > 1 operations landed, with fewer than half of B queued, waits for half of B (or
 * `gatherMs`) instead of committing the first writer back alone. A lone writer, and the first
 * batch after a pause, never wait. Real fs provider and commit log; `gatherMs` is raised so the
 * wait is long enough to observe (and to fail the test if it happens where it must not).
 */
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { GATHER_WITHIN_MS } from '../../src/store/commit-loop.js';
import { tempDir } from './helpers.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const B = 'gather';

/** Runs `body` on a store on a new fs directory (bucket B made) with a commit log or not and
 * `gatherMs`, closed after; the directory is removed either way. */
async function withStore(gatherMs: number, body: (store: Store) => Promise<void>, commitLog = true): Promise<void> {
  const t = tempDir('gather');
  try {
    const store = await Store.open(await createFsProvider({ dir: t.dir }), { checkpointEvery: 1 << 20, commitLog, gatherMs });
    await store.createBucket(B);
    await body(store);
    await store.close();
  } finally {
    t.cleanup();
  }
}

/** One operation that writes (a bucket setting): resolves with the sequence it committed in. */
let n = 0;
function write(store: Store): Promise<number> {
  const value = new Uint8Array([n++ & 0xff]);
  return store.repo.run(async (tx) => {
    tx.setConfig(B, 'gather-test', value);
    return tx.seq;
  });
}

/** Runs `count` writes at once; resolves with the sequence each was committed in. */
function burst(store: Store, count: number): Promise<number[]> {
  return Promise.all(Array.from({ length: count }, () => write(store)));
}

describe('gathering a batch after a large one', () => {
  it('the first writer back waits for half of the last batch and goes with them, in one commit', { timeout: 20_000 }, async () => {
    await withStore(5_000, async (store) => {
      const first = await burst(store, 8);
      expect(new Set(first).size, 'the eight went in one batch').toBe(1);
      const gathered = store.repo.stats.gathered;
      const lone = write(store);
      await sleep(50);
      const rest = burst(store, 3);
      const seqs = [await lone, ...(await rest)];
      expect(seqs, 'the early one waited for the next three: one commit of four').toEqual(Array(4).fill(first[0]! + 1));
      expect(store.repo.stats.gathered - gathered).toBe(1);
    });
  });

  it('with gatherMs 0 the first writer back commits alone', { timeout: 20_000 }, async () => {
    await withStore(0, async (store) => {
      const first = await burst(store, 8);
      const lone = write(store);
      await sleep(50);
      const rest = await burst(store, 3);
      expect(await lone).toBe(first[0]! + 1);
      expect(rest).toEqual(Array(3).fill(first[0]! + 2));
      expect(store.repo.stats.gathered).toBe(0);
    });
  });

  it('waits gatherMs at most: a writer whose companions never come commits alone after it', { timeout: 20_000 }, async () => {
    await withStore(100, async (store) => {
      const first = await burst(store, 8);
      const t0 = performance.now();
      expect(await write(store)).toBe(first[0]! + 1);
      const waited = performance.now() - t0;
      expect(waited, 'it waited for companions').toBeGreaterThanOrEqual(90);
      expect(waited, 'and not much past gatherMs').toBeLessThan(5_000);
    });
  });

  it('never holds a lone writer, nor the first batch after a pause', { timeout: 20_000 }, async () => {
    await withStore(60_000, async (store) => {
      const t0 = performance.now();
      for (let i = 0; i < 20; i++) await write(store);
      await burst(store, 8);
      await sleep(GATHER_WITHIN_MS + 20);
      await write(store);
      expect(performance.now() - t0, 'no 60 s wait: a lone writer (B = 1) and the write after a pause went at once').toBeLessThan(30_000);
      expect(store.repo.stats.gathered).toBe(0);
    });
  });

  it('does not gather without a commit log (commit blobs stage behind every commit in flight)', { timeout: 20_000 }, async () => {
    await withStore(60_000, async (store) => {
      await burst(store, 8);
      await write(store);
      expect(store.repo.stats.gathered).toBe(0);
    }, false);
  });
});
