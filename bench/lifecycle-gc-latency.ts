/**
 * @module What a GC pass costs the writes running beside it, and whether it keeps them: serial
 * 512 B PUTs into a side bucket, first with nothing else running (the baseline), then while a
 * runGc pass runs, until it ends. Two passes run beside PUTs:
 *   - with the default grace (what the server's scheduled passes use): the latency figures;
 *   - with grace 0 (what the lifecycle's GC phase uses on a quiet repository): a safety check
 *     only — every PUT acknowledged during it must read back byte-exact afterwards.
 * Reports p50/p99 without and during the first pass, each pass's own report, the PUTs that
 * failed during a pass (counted and the first error kept; the writer goes on) and what the
 * read-back of every acknowledged PUT found (a lost PUT is reported, with the first error).
 *
 * It writes into the repository it is given, so `bench:lifecycle` runs it on a copy of the
 * lane's repository taken after expiry (the state the measured GC pass starts from).
 */
import type { Store } from '../src/store/store.js';
import { bodyOf, objectKey, once } from './engine-fixture.js';
import { BODY_BYTES } from './lifecycle-workload.js';
import { checkLive } from './lifecycle-measure.js';
import { runGc, type GcReport } from './lifecycle-maintenance.js';
import { percentile } from './lib/stats.js';

const SIDE_BUCKET = 'bench-latency';
/** Baseline PUTs (enough for a stable p99: 1% of them is 5 samples); a third of the lane's
 * writes when that is fewer (quick runs). */
const BASELINE_PUTS = 500;
/** PUTs during a pass at most (a pass that outlasts this many is cut off from sampling). */
const MAX_DURING_PUTS = 200_000;

export interface LatencySample {
  puts: number;
  p50Ms: number;
  p99Ms: number;
}

/** One GC pass run beside serial PUTs. */
export interface PassBesideWrites {
  graceMs: number | 'default';
  during: LatencySample;
  gc: GcReport;
  /** Wall time of the pass as the writer saw it, ms. */
  wallMs: number;
  /** PUTs during the pass that failed (not acknowledged), and the first failure. */
  failed: number;
  firstFailure?: string;
  /** Acknowledged side PUTs read back byte-exact after the pass, of all acknowledged so far; the first problem. */
  intact: number;
  written: number;
  firstProblem?: string;
}

export interface GcLatencyResult {
  baseline: LatencySample;
  /** Default grace: the latency figures. */
  pass: PassBesideWrites;
  /** Grace 0: the safety check. */
  graceZero: PassBesideWrites;
}

const sample = (xs: number[]): LatencySample => ({ puts: xs.length, p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99) });

class SideWriter {
  n = 0;
  /** Side key -> the write it holds, for every acknowledged PUT. */
  readonly acked = new Map<string, number>();
  constructor(private readonly store: Store) {}

  /** One serial PUT of the next side key; its latency, ms. Throws what the PUT throws. */
  async put(): Promise<number> {
    const i = this.n++;
    const t = performance.now();
    await this.store.putObject(SIDE_BUCKET, objectKey(i), once(bodyOf(i, BODY_BYTES)), { size: BODY_BYTES });
    this.acked.set(objectKey(i), i);
    return performance.now() - t;
  }

  /** Runs one GC pass with PUTs beside it until it ends, then reads every side PUT back. */
  async beside(graceMs: number | undefined): Promise<PassBesideWrites> {
    const during: number[] = [];
    let done = false;
    const t0 = performance.now();
    const pass = runGc(this.store.repo, graceMs === undefined ? {} : { graceMs }).finally(() => (done = true));
    let failed = 0;
    let firstFailure: string | undefined;
    for (let tries = 0; !done && tries < MAX_DURING_PUTS; tries++) {
      try {
        during.push(await this.put());
      } catch (err) {
        failed++;
        firstFailure ??= `PUT ${this.n - 1}: ${(err as Error).message}`;
      }
    }
    const report = await pass;
    const wallMs = performance.now() - t0;
    // Only acknowledged PUTs must be there; a failed one may or may not be (checkLive would
    // count it as unexpected), so the listing check is left to the acknowledged set.
    const check = await checkLive(this.store, SIDE_BUCKET, this.acked, (i) => bodyOf(i, BODY_BYTES), { listUnexpected: false });
    return {
      graceMs: graceMs ?? 'default',
      during: sample(during),
      gc: { ...report },
      wallMs,
      failed,
      ...(firstFailure !== undefined ? { firstFailure } : {}),
      intact: check.exact,
      written: this.acked.size,
      ...(check.firstProblem !== undefined ? { firstProblem: check.firstProblem } : {}),
    };
  }
}

/**
 * Measures PUT latency without and during GC passes (see the module note). Mutates `store`
 * (a side bucket and its objects; whatever the passes free). `writes` is the lane's (a quick
 * lane takes a smaller baseline). Throws when a baseline PUT fails or a pass throws.
 */
export async function gcLatency(store: Store, writes: number): Promise<GcLatencyResult> {
  await store.createBucket(SIDE_BUCKET);
  const w = new SideWriter(store);
  const baseline: number[] = [];
  const puts = Math.min(BASELINE_PUTS, Math.ceil(writes / 3));
  for (let i = 0; i < puts; i++) baseline.push(await w.put());
  const pass = await w.beside(undefined);
  const graceZero = await w.beside(0);
  return { baseline: sample(baseline), pass, graceZero };
}
