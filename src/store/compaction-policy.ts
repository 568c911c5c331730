/**
 * @module Which runs of a keyspace a checkpoint merges: size-tiered, incremental.
 *
 * A keyspace's runs are listed newest first. Nothing is merged while there are at most
 * `maxRuns` (reads consult every run, so this bounds them). Past that, the newest runs are
 * merged as long as the next older run is no larger than SIZE_RATIO times what is merged so
 * far: runs of similar size merge together and a large old run is rewritten only once the
 * newer ones add up to half its size, so an entry is rewritten a few times per doubling of
 * the keyspace, and the typical checkpoint rewrites a small fraction of it (a full merge
 * happens only when the newer runs add up to half the oldest one).
 * When the newest runs are too small next to their elders for that (a tiny flush in front of
 * big runs), nothing is merged until there are 2 * maxRuns runs; then the adjacent pair with
 * the smallest total is merged: the cheapest merge that brings the count down by one.
 * Measured by simulation (test/store/compaction-policy.test.ts, 5,000 flushes, maxRuns 8):
 * about 7 bytes written per byte flushed, at most 13 runs, equal or very uneven flushes alike.
 * Merging whenever the count passes maxRuns instead pins the count there with runs of about
 * keyspace / maxRuns each, and every flush rewrites one: ~30-250x.
 *
 * Merging a contiguous window keeps the recency order; only a window that reaches the oldest
 * run may drop deletions (nothing older is left for them to shadow): see {@link reachesOldest}.
 */

/**
 * How much larger than the merged newer runs the next older run may be and still join the
 * merge. 2 gives fewer runs than 1 (13 vs 15 at most, in the simulation above) for about the
 * same bytes rewritten (7.2 vs 6.1x with equal flushes; 1 does better with uneven ones).
 */
export const SIZE_RATIO = 2;

/** A contiguous window of a newest-first run list: `count` runs from index `start`. */
export interface MergeWindow {
  start: number;
  count: number;
}

/** How many newest runs the size ratio merges (1: none joins the newest). */
function ratioPrefix(sizes: readonly number[]): number {
  let n = 1;
  let merged = sizes[0]!;
  while (n < sizes.length && sizes[n]! <= SIZE_RATIO * merged) merged += sizes[n++]!;
  return n;
}

/**
 * The runs to merge given their sizes (bytes, newest first), or undefined when none need
 * merging. `shared[i]` says run i is also read by another keyspace (a fork or its source):
 * merging it would leave its entries stored twice (the merged run here, the run there), so
 * while there are at most 2 * maxRuns runs only the newest runs no other keyspace reads are
 * merged (the fork's own writes since it forked); past that, sharing is ignored, so reads stay
 * bounded. Pure; a window holds at least two runs.
 */
export function chooseMerge(sizes: readonly number[], maxRuns: number, shared: readonly boolean[] = []): MergeWindow | undefined {
  if (sizes.length <= Math.max(1, maxRuns)) return undefined;
  const own = shared.indexOf(true);
  if (own >= 0 && sizes.length <= 2 * maxRuns) {
    const n = own >= 2 ? ratioPrefix(sizes.slice(0, own)) : 1;
    return n >= 2 ? { start: 0, count: n } : undefined;
  }
  const n = ratioPrefix(sizes);
  if (n >= 2) return { start: 0, count: n };
  if (sizes.length < 2 * maxRuns) return undefined;
  let best = 0;
  for (let i = 1; i + 1 < sizes.length; i++) if (sizes[i]! + sizes[i + 1]! < sizes[best]! + sizes[best + 1]!) best = i;
  return { start: best, count: 2 };
}

/** Whether merging `w` out of `length` runs produces the keyspace's oldest run. */
export function reachesOldest(w: MergeWindow, length: number): boolean {
  return w.start + w.count === length;
}
