/**
 * Gathering (commit-loop.ts GATHER_MS): with a commit log, a batch about to start right after a
 * batch of B > 1 operations landed, with fewer than half of B queued, waits for half of B (or
 * `gatherMs`) instead of committing the first writer back alone. A lone writer, and the first
 * batch after a pause, never wait. Real fs provider and commit log; `gatherMs` is raised so the
 * wait is long enough to observe (and to fail the test if it happens where it must not).
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { GATHER_WITHIN_MS } from '../../src/store/commit-loop.js';
import { withFsStore } from './helpers.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const B = 'gather';
/** A window far longer than any pause a loaded test machine makes between a batch landing and
 * the next write (the default, GATHER_WITHIN_MS, is what the never-holds test exercises). */
const LONG_WINDOW = { gatherWithinMs: 10_000 };

/** Runs `body` on a store with a commit log (unless `commitLog` is false), `gatherMs` and
 * `gatherWithinMs` (helpers.ts withFsStore). */
function withStore(gatherMs: number, body: (store: Store) => Promise<void>, opts: { commitLog?: boolean; gatherWithinMs?: number } = {}): Promise<void> {
  return withFsStore(B, { checkpointEvery: 1 << 20, commitLog: opts.commitLog ?? true, gatherMs, gatherWithinMs: opts.gatherWithinMs }, body);
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
    }, LONG_WINDOW);
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
    }, LONG_WINDOW);
  });

  it('never holds a lone writer, nor the first batch after a pause', { timeout: 20_000 }, async () => {
    await withStore(5_000, async (store) => {
      let t0 = performance.now();
      for (let i = 0; i < 20; i++) await write(store);
      expect(performance.now() - t0, 'twenty writes one after another, none waiting 5 s').toBeLessThan(2_000);
      await burst(store, 8);
      await sleep(GATHER_WITHIN_MS + 20);
      t0 = performance.now();
      await write(store);
      expect(performance.now() - t0, 'the write after a pause did not wait 5 s').toBeLessThan(2_000);
      expect(store.repo.stats.gathered).toBe(0);
    });
  });

  it('does not hold an operation that runs alone anyway', { timeout: 20_000 }, async () => {
    await withStore(5_000, async (store) => {
      await burst(store, 8);
      const t0 = performance.now();
      await store.repo.run(async (tx) => tx.setConfig(B, 'gather-alone', new Uint8Array([1])), { alone: true });
      expect(performance.now() - t0, 'no 5 s wait').toBeLessThan(2_000);
      expect(store.repo.stats.gathered).toBe(0);
    }, LONG_WINDOW);
  });

  it('a roll asked for while a batch gathers happens before that batch', { timeout: 20_000 }, async () => {
    await withStore(200, async (store) => {
      const first = await burst(store, 8);
      const rolls = store.repo.stats.segmentRolls;
      const lone = write(store);
      await sleep(20); // well inside its gathering (200 ms)
      expect(store.repo.stats.gathered, 'the write is waiting').toBe(1);
      const roll = store.repo.rollLog();
      expect(await lone).toBe(first[0]! + 1);
      await roll;
      expect(store.repo.stats.segmentRolls - rolls, 'the log rolled before the waiting batch was written').toBe(1);
    }, LONG_WINDOW);
  });

  it('does not gather without a commit log (commit blobs stage behind every commit in flight)', { timeout: 20_000 }, async () => {
    await withStore(5_000, async (store) => {
      await burst(store, 8);
      const t0 = performance.now();
      await write(store);
      expect(performance.now() - t0, 'no 5 s wait').toBeLessThan(2_000);
      expect(store.repo.stats.gathered).toBe(0);
    }, { commitLog: false, gatherWithinMs: 10_000 });
  });
});
