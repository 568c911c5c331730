/**
 * bench/erasure-report.ts: the 4 KiB rows judge each erasure lane against the fs run of the same
 * round (paired shares), and show the ratio of the medians beside it.
 */
import { describe, expect, it } from 'vitest';
import { pairedShares, smallTable, targetsTable, type ErasureResults } from '../../bench/erasure-report.js';
import type { SmallRun } from '../../bench/erasure-measure.js';

const run = (opsPerSecond: number, serverSwitches = 0): SmallRun => ({
  n: opsPerSecond * 4,
  errors: 0,
  wrong: 0,
  latenciesMs: [],
  seconds: 4,
  bytes: 0,
  serverCpuSeconds: 1,
  clientCpuSeconds: 1,
  serverSwitches,
});

function results(fs: number[], ec: number[], switches: { fs?: number[]; ec?: number[] } = {}): ErasureResults {
  return {
    bigSize: 64 * 2 ** 20,
    bigPut: new Map(),
    bigGet: new Map(),
    degradedGet: new Map(),
    smallPut: new Map([
      ['fs', fs.map((x, i) => run(x, switches.fs?.[i]))],
      ['ec 4+2', ec.map((x, i) => run(x, switches.ec?.[i]))],
    ]),
    smallGet: new Map(),
    maintenance: new Map(),
    checks: [],
  };
}

describe('erasure report, 4 KiB rows', () => {
  it('pairs run i with run i', () => {
    expect(pairedShares([run(80), run(45), run(90)], [run(100), run(50), run(100)])).toEqual([0.8, 0.9, 0.9]);
    expect(pairedShares([run(80), run(45)], [run(100)])).toEqual([0.8]); // unpaired runs are left out
    expect(pairedShares([run(80), run(45)], [run(0), run(50)])).toEqual([0.9]); // a base run of nothing pairs with nothing
  });

  it('judges the median of the per-round shares, showing the ratio of the medians beside it', () => {
    // Round by round ec is at 90% of fs, but its quiet run and fs's busy one do not line up:
    // the ratio of the medians (3,600 vs 5,000) says 72%.
    const table = targetsTable(results([5000, 3000, 6000, 2000, 5500], [4500, 2700, 5400, 1800, 3600]));
    expect(table).toMatch(/\| 4 KiB PUT, ec 4\+2 vs fs, 16 conn \| >= 80% of fs \| 90 \(65–90\)% \(median of 5 paired runs; medians 3,600 vs 5,000 ops\/s = 72%\) \| PASS \|/);
    const low = targetsTable(results([5000, 5000, 5000], [3900, 3800, 4100]));
    expect(low).toMatch(/\| 4 KiB PUT, ec 4\+2 vs fs, 16 conn \| >= 80% of fs \| 78 \(76–82\)% \(median of 3 paired runs; medians 3,900 vs 5,000 ops\/s = 78%\) \| MISS \|/);
    expect(targetsTable(results([5000], []))).toMatch(/\| 4 KiB PUT, ec 4\+2 vs fs, 16 conn \| >= 80% of fs \| not run/);
  });

  it('shows the server context switches per operation over all runs of a lane', () => {
    // fs: 2 runs of 4,000 operations with 3,200 and 4,000 switches; ec: 1 run of 3,000 with 12,000.
    const table = smallTable(results([1000, 1000], [750], { fs: [3200, 4000], ec: [12_000] }));
    expect(table).toMatch(/server context switches\/op \|/);
    expect(table).toMatch(/\| fs \| PUT \| 2 \| 8000 \| .* \| 0\.250 \| 0\.90 \|/);
    expect(table).toMatch(/\| ec 4\+2 \| PUT \| 1 \| 3000 \| .* \| 0\.333 \| 4\.00 \|/);
  });
});
