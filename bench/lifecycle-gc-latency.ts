/**
 * @module What a GC pass costs the writes running beside it, and whether it keeps them: serial
 * 512 B PUTs into a side bucket, first with nothing else running (the baseline), then while a
 * runGc pass runs, until it ends. Two passes run beside PUTs:
 *   - with the default grace (what the server's scheduled passes use): the latency figures;
 *   - with grace 0 (what the lifecycle's GC phase uses on a quiet repository): a safety check
 *     only — every PUT acknowledged during it must read back byte-exact afterwards.
 * Reports p50/p99 without and during the first pass, each pass's own report, and what the
 * read-back found (a lost PUT is reported, with the first error, not hidden).
 *
 * It writes into the repository it is given, so `bench:lifecycle` runs it on a copy of the
 * lane's repository taken after expiry (the state the measured GC pass starts from).
 */
import type { Store } from '../src/store/store.js';
import { bodyOf, objectKey, once } from './engine-fixture.js';
import { BODY_BYTES } from './lifecycle-workload.js';
import { checkLive } from './lifecycle-measure.js';
import { loadGc, type GcModule, type GcReport } from './lifecycle-maintenance.js';
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
  /** Side PUTs read back byte-exact after the pass, of those written so far; the first problem. */
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
  constructor(private readonly store: Store) {}

  /** One serial PUT of the next side key; its latency, ms. */
  async put(): Promise<number> {
    const i = this.n++;
    const t = performance.now();
    await this.store.putObject(SIDE_BUCKET, objectKey(i), once(bodyOf(i, BODY_BYTES)), { size: BODY_BYTES });
    return performance.now() - t;
  }

  /** Runs one GC pass with PUTs beside it until it ends, then reads every side PUT back. */
  async beside(gc: GcModule, graceMs: number | undefined): Promise<PassBesideWrites> {
    const during: number[] = [];
    let done = false;
    const t0 = performance.now();
    const pass = gc.runGc(this.store.repo, graceMs === undefined ? {} : { graceMs }).finally(() => (done = true));
    try {
      while (!done && during.length < MAX_DURING_PUTS) during.push(await this.put());
    } catch (err) {
      await pass.catch(() => undefined);
      throw new Error(`PUT ${this.n} (the ${during.length + 1}th during a GC pass) failed: ${(err as Error).message}`);
    }
    const report = await pass;
    const wallMs = performance.now() - t0;
    const expected = new Map<string, number>();
    for (let i = 0; i < this.n; i++) expected.set(objectKey(i), i);
    const check = await checkLive(this.store, SIDE_BUCKET, expected, (i) => bodyOf(i, BODY_BYTES));
    return {
      graceMs: graceMs ?? 'default',
      during: sample(during),
      gc: { ...report },
      wallMs,
      intact: check.exact,
      written: this.n,
      ...(check.firstProblem !== undefined ? { firstProblem: check.firstProblem } : {}),
    };
  }
}

/**
 * Measures PUT latency without and during GC passes (see the module note). Mutates `store`
 * (a side bucket and its objects; whatever the passes free). Sets `into.unavailable` and
 * returns undefined when gc.ts has not landed. Throws when a PUT fails.
 */
export async function gcLatency(store: Store, writes: number, into: { unavailable?: string }): Promise<GcLatencyResult | undefined> {
  const gc = await loadGc();
  if (typeof gc === 'string') {
    into.unavailable = gc;
    return undefined;
  }
  await store.createBucket(SIDE_BUCKET);
  const w = new SideWriter(store);
  const baseline: number[] = [];
  const puts = Math.min(BASELINE_PUTS, Math.ceil(writes / 3));
  for (let i = 0; i < puts; i++) baseline.push(await w.put());
  const pass = await w.beside(gc, undefined);
  const graceZero = await w.beside(gc, 0);
  return { baseline: sample(baseline), pass, graceZero };
}
