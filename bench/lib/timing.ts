/** @module Repeated timing of a synchronous operation. */

/**
 * Runs `op` repeatedly for about `minMs`, `runs` times, and returns the rate of each run in
 * `unitsPerOp` units per second (e.g. bytes/s). One warm-up run is discarded.
 */
export function rates(op: () => void, unitsPerOp: number, runs: number, minMs: number): number[] {
  const out: number[] = [];
  for (let r = -1; r < runs; r++) {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    do {
      op();
      n++;
      t = performance.now();
    } while (t - t0 < minMs);
    if (r >= 0) out.push((n * unitsPerOp) / ((t - t0) / 1000));
  }
  return out;
}
