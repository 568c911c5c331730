/**
 * compaction-policy.ts (which runs a checkpoint merges) and the merges themselves at the
 * edges: the bytes rewritten per flush stay logarithmic and the run count bounded, forks'
 * shared runs are left alone until the count doubles, and only a merge that reaches a
 * keyspace's oldest run drops tombstones (object index, version log).
 */
import { describe, expect, it } from 'vitest';
import { chooseMerge, reachesOldest } from '../../src/store/compaction-policy.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { BlockCache } from '../../src/store/index/block-cache.js';
import { SortedMap } from '../../src/store/index/sorted-map.js';
import { compactObjects, compactVersions, flushOverlay, flushVersions } from '../../src/store/runs.js';
import { TOMBSTONE } from '../../src/store/records.js';
import { LOG_TOMBSTONE } from '../../src/store/version-log.js';
import type { RunHandle } from '../../src/store/state.js';
import { FROM_START, mergeSources } from '../../src/store/index/merge.js';

/** Simulates `flushes` equal flushes, merging what chooseMerge picks; returns bytes written / flushed and the most runs. */
function simulate(flushes: number, sizeOf: (i: number) => number, maxRuns: number) {
  let runs: number[] = [];
  let written = 0;
  let flushed = 0;
  let most = 0;
  let largestMerge = 0;
  for (let i = 0; i < flushes; i++) {
    const f = sizeOf(i);
    runs = [f, ...runs];
    written += f;
    flushed += f;
    const w = chooseMerge(runs, maxRuns);
    if (w) {
      const merged = runs.slice(w.start, w.start + w.count).reduce((a, b) => a + b, 0);
      written += merged;
      largestMerge = Math.max(largestMerge, merged);
      runs = [...runs.slice(0, w.start), merged, ...runs.slice(w.start + w.count)];
    }
    most = Math.max(most, runs.length);
  }
  return { amplification: written / flushed, most, runs, largestMerge, total: flushed };
}

describe('the compaction policy', () => {
  it('merges nothing at or below maxRuns, similar sizes together, never a large run for a small one', () => {
    expect(chooseMerge([100, 100, 100, 100], 4)).toBeUndefined();
    expect(chooseMerge([100, 100, 100, 100, 100], 4)).toEqual({ start: 0, count: 5 });
    expect(chooseMerge([100, 100, 150, 10_000, 20_000], 4)).toEqual({ start: 0, count: 3 });
    // A tiny new run in front of big ones waits (the next flushes will join it)...
    expect(chooseMerge([100, 10_000, 25_000, 60_000, 130_000], 4)).toBeUndefined();
    expect(chooseMerge([5_000, 100, 30_000, 70_000, 150_000], 4)).toEqual({ start: 0, count: 2 });
    // ...until there are 2 * maxRuns runs: then the cheapest adjacent pair.
    const sizes = [300, 30_000, 100, 90_000, 300_000, 700_000, 1_500_000, 3_100_000];
    expect(chooseMerge(sizes, 4)).toEqual({ start: 1, count: 2 });
    expect(reachesOldest({ start: 1, count: 2 }, 3)).toBe(true);
    expect(reachesOldest({ start: 0, count: 2 }, 3)).toBe(false);
  });

  it('leaves runs shared with forks alone until the count doubles', () => {
    const shared = [false, false, true, true, true];
    expect(chooseMerge([10, 10, 100, 100, 100], 3, shared)).toEqual({ start: 0, count: 2 });
    expect(chooseMerge([10, 100, 100, 100, 100], 3, [false, true, true, true, true])).toBeUndefined();
    const many = Array.from({ length: 7 }, () => 100);
    expect(chooseMerge(many, 3, many.map(() => true))).toEqual({ start: 0, count: 7 });
  });

  it('rewrites each flushed byte a logarithmic number of times and bounds the runs, with equal flushes', () => {
    const maxRuns = 8;
    const flushes = 5000;
    const r = simulate(flushes, () => 1000, maxRuns);
    expect(r.most).toBeLessThan(2 * maxRuns);
    // A full merge at every ninth flush would rewrite ~flushes / 18 flushes' worth per flush.
    expect(r.amplification).toBeLessThan(10);
  });

  it('stays bounded with flushes of very uneven sizes (forced checkpoints between big ones)', () => {
    const maxRuns = 8;
    const flushes = 5000;
    let x = 7;
    const r = simulate(flushes, () => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % 10 === 0 ? 100_000 : 10 + (x % 1000)), maxRuns);
    expect(r.most).toBeLessThanOrEqual(2 * maxRuns);
    expect(r.amplification).toBeLessThan(10);
  });

  it('does not rewrite the whole keyspace at every flush: the typical merge stays far below its size', () => {
    const merges: number[] = [];
    let runs: number[] = [];
    let total = 0;
    for (let i = 0; i < 2000; i++) {
      runs = [1000, ...runs];
      total += 1000;
      const w = chooseMerge(runs, 8);
      if (!w) continue;
      const merged = runs.slice(w.start, w.start + w.count).reduce((a, b) => a + b, 0);
      merges.push(merged / total);
      runs = [...runs.slice(0, w.start), merged, ...runs.slice(w.start + w.count)];
    }
    merges.sort((a, b) => a - b);
    expect(merges[Math.floor(merges.length / 2)]!).toBeLessThan(0.05); // the median merge: < 5% of the keyspace
  });
});

async function entries(run: RunHandle): Promise<[string, number][]> {
  const out: [string, number][] = [];
  for await (const { key, value } of mergeSources([run.reader], FROM_START)) out.push([key, value.length]);
  return out;
}

describe('merges and tombstones', () => {
  const value = new Uint8Array([1, 2, 3]);
  const map = (pairs: [string, Uint8Array][]) => {
    const m = new SortedMap('test');
    for (const [k, v] of pairs) m.set(k, v);
    return m;
  };

  it('drops version-log tombstones only when the merge reaches the oldest run', async () => {
    const p = await createMemoryProvider();
    const cache = new BlockCache({ maxBytes: 0 });
    const oldest = await flushVersions(p, 'bkt', map([['a', value], ['b', value], ['c', value]]), cache);
    const newer = await flushVersions(p, 'bkt', map([['a', LOG_TOMBSTONE], ['d', value]]), cache);
    const newest = await flushVersions(p, 'bkt', map([['b', LOG_TOMBSTONE]]), cache);
    const partial = await compactVersions(p, 'bkt', [newest, newer], cache, false);
    expect(await entries(partial)).toEqual([['a', 1], ['b', 1], ['d', 3]]); // kept: they shadow 'oldest'
    const full = await compactVersions(p, 'bkt', [newest, newer, oldest], cache, true);
    expect(await entries(full)).toEqual([['c', 3], ['d', 3]]);
  });

  it('drops object-index tombstones only when the merge reaches the oldest run', async () => {
    const p = await createMemoryProvider();
    const cache = new BlockCache({ maxBytes: 0 });
    const oldest = await flushOverlay(p, 'bkt', map([['a', value], ['b', value]]), cache);
    const newer = await flushOverlay(p, 'bkt', map([['a', TOMBSTONE]]), cache);
    expect(await entries(await compactObjects(p, 'bkt', [newer], cache, false))).toEqual([['a', 1]]);
    expect(await entries(await compactObjects(p, 'bkt', [newer, oldest], cache, true))).toEqual([['b', 3]]);
  });
});
