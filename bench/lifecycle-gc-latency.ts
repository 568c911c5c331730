/**
 * @module What a GC pass costs the writes running beside it: serial 512 B PUTs into a side
 * bucket, first with nothing else running (the baseline), then while one runGc pass (grace 0)
 * runs, until it ends. Reports p50/p99 of each, the GC pass's own report, and checks afterwards
 * that every PUT made during the pass reads back byte-exact (GC must not free what an
 * in-flight write reaches).
 *
 * It writes into the repository it is given, so `bench:lifecycle` runs it on a copy of the
 * lane's repository taken after expiry (the state the measured GC pass starts from).
 */
import type { Store } from '../src/store/store.js';
import { bodyOf, objectKey, once } from './engine-fixture.js';
import { BODY_BYTES } from './lifecycle-workload.js';
import { checkLive, liveOk } from './lifecycle-measure.js';
import { loadGc, type GcReport } from './lifecycle-maintenance.js';
import { percentile } from './lib/stats.js';

const SIDE_BUCKET = 'bench-latency';
/** Baseline PUTs (enough for a stable p99: 1% of them is 5 samples). */
const BASELINE_PUTS = 500;
/** PUTs during the pass at most (a pass that outlasts this many is cut off from sampling). */
const MAX_DURING_PUTS = 200_000;

export interface LatencySample {
  puts: number;
  p50Ms: number;
  p99Ms: number;
}

export interface GcLatencyResult {
  baseline: LatencySample;
  during: LatencySample;
  gc: GcReport;
  /** Wall time of the GC pass as the writer saw it, ms. */
  gcWallMs: number;
  /** PUTs of the side bucket read back byte-exact after the pass / written. */
  intact: number;
  written: number;
}

const sample = (xs: number[]): LatencySample => ({ puts: xs.length, p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99) });

/**
 * Measures PUT latency without and during one GC pass (see the module note). Mutates `store`
 * (a side bucket and its objects; whatever the GC pass frees). Sets `into.unavailable` and
 * returns undefined when gc.ts has not landed. Throws when a PUT fails or a value is lost.
 */
export async function gcLatency(store: Store, into: { unavailable?: string }): Promise<GcLatencyResult | undefined> {
  const gc = await loadGc();
  if (typeof gc === 'string') {
    into.unavailable = gc;
    return undefined;
  }
  await store.createBucket(SIDE_BUCKET);
  let n = 0;
  const put = async (): Promise<number> => {
    const i = n++;
    const t = performance.now();
    await store.putObject(SIDE_BUCKET, objectKey(i), once(bodyOf(i, BODY_BYTES)), { size: BODY_BYTES });
    return performance.now() - t;
  };
  const baseline: number[] = [];
  for (let i = 0; i < BASELINE_PUTS; i++) baseline.push(await put());

  const during: number[] = [];
  let done = false;
  const t0 = performance.now();
  const pass = gc.runGc(store.repo, { graceMs: 0 }).finally(() => (done = true));
  while (!done && during.length < MAX_DURING_PUTS) during.push(await put());
  const report = await pass;
  const gcWallMs = performance.now() - t0;

  const expected = new Map<string, number>();
  for (let i = 0; i < n; i++) expected.set(objectKey(i), i);
  const check = await checkLive(store, SIDE_BUCKET, expected, (i) => bodyOf(i, BODY_BYTES));
  if (!liveOk(check)) throw new Error(`after a GC pass beside writes: ${check.firstProblem}`);
  return { baseline: sample(baseline), during: sample(during), gc: report, gcWallMs, intact: check.exact, written: n };
}
