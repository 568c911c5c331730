/**
 * @module Child process of `bench:lifecycle`: runs ONE phase of a workload's lifecycle on the
 * repository at `--dir`, alone in its process, so its peak RSS and its provider traffic are
 * its own and every phase after the first starts from a reopened repository:
 *
 *   write    create the repository and bucket, `--writes` serial PUTs of 512 B
 *   delete   delete the latest value, checkpoint
 *   probe    reopen (cold) and measure: a full history walk and the accounted history
 *            metadata, then, once closed, stored bytes and du at rest (the "reopen" phase, and
 *            the figures after each phase)
 *   restore  restore the bucket to the three sampled points in turn, checking each
 *   expire   retention 0, then expireHistory (expiry.ts) over the whole repository
 *   gc       runGc (gc.ts) with grace 0
 *   gc-latency  serial PUT latency without and then during a GC pass (run on a copy)
 *   verify   `strata verify` (the CLI, in its own process) and the live values byte-exact
 *
 * Arguments: --phase, --dir, the workload (lifecycle-workload.ts), and for restore/verify
 * --points=t1,t2,t3 (the commit times the write phase reported). Prints one `RESULT {json}`
 * line (PhaseResult) on stdout; progress goes to stderr. A failure reports `error` and exits 1.
 */
import { RESULT_MARK, argValue, once, peakRssMiB } from './engine-fixture.js';
import type { RequestCounts } from './lib/counting-provider.js';
import { BUCKET, BODY_BYTES, bodyOfWrite, deletedKey, keyOf, openLane, samplePoints, stateAfter, workloadFromArgs } from './lifecycle-workload.js';
import { checkLive, diskUsage, historyBytes, liveOk, readPoints, storedBytes, walkHistory } from './lifecycle-measure.js';
import { expireHistory, runGc, runVerifyCli } from './lifecycle-maintenance.js';
import { gcLatency } from './lifecycle-gc-latency.js';
import { createFsProvider } from '../src/provider/fs/index.js';
import { percentile } from './lib/stats.js';
import type { BenchStore } from './engine-fixture.js';

export type PhaseName = 'write' | 'delete' | 'probe' | 'restore' | 'expire' | 'gc' | 'gc-latency' | 'verify';

export interface PhaseResult {
  phase: PhaseName;
  /** Set when the phase failed: what went wrong. */
  error?: string;
  /** Store.open, and the provider traffic it cost. */
  openMs: number;
  openCounts: RequestCounts;
  /** The phase itself (after open, before close). */
  elapsedMs: number;
  counts: RequestCounts;
  peakRssMiB: number;
  /** Phase-specific figures (see each phase). */
  data: Record<string, unknown>;
}

const phase = argValue('phase') as PhaseName;
const dir = argValue('dir');
if (!dir || !phase) throw new Error('usage: lifecycle-phase --phase=NAME --dir=DIR --mode=... --writes=N ...');
const w = workloadFromArgs(argValue);
const points = (argValue('points') ?? '').split(',').filter(Boolean).map(Number);
const log = (m: string) => process.stderr.write(`    ${phase}: ${m}\n`);

/** The RESULT of this process, filled as the phase goes. */
const result: PhaseResult = { phase, openMs: 0, openCounts: zero(), elapsedMs: 0, counts: zero(), peakRssMiB: 0, data: {} };

function zero(): RequestCounts {
  return { puts: 0, bytesPut: 0, gets: 0, rangedGets: 0, bytesGot: 0, heads: 0, lists: 0, deletes: 0 };
}

/** Opens the lane's repository (extra options for this phase), counting the open apart. */
async function open(extra: Record<string, unknown> = {}): Promise<BenchStore> {
  const bs = await openLane(dir!, w, extra);
  result.openMs = bs.openMs;
  result.openCounts = bs.counter.snapshot().total;
  bs.counter.reset();
  return bs;
}

async function writePhase(bs: BenchStore): Promise<void> {
  const { store } = bs;
  await store.createBucket(BUCKET);
  const marks = new Set(samplePoints(w.writes));
  const pointTimes: number[] = [];
  const latencies = new Float64Array(w.writes);
  const every = Math.max(1, Math.floor(w.writes / 10));
  const t0 = performance.now();
  for (let i = 0; i < w.writes; i++) {
    const t = performance.now();
    await store.putObject(BUCKET, keyOf(w.mode, i), once(bodyOfWrite(i)), { size: BODY_BYTES });
    latencies[i] = performance.now() - t;
    // Commit times strictly increase: the state as of this one is exactly writes 0..i.
    if (marks.has(i)) pointTimes.push(store.repo.lastCommitTime);
    if ((i + 1) % every === 0) log(`${i + 1} PUTs, ${((performance.now() - t0) / 1000).toFixed(1)} s, rss ${(process.memoryUsage.rss() / 2 ** 20).toFixed(0)} MiB`);
  }
  const lat = Array.from(latencies);
  result.data = { pointTimes, putP50Ms: percentile(lat, 50), putP99Ms: percentile(lat, 99), stats: { ...store.repo.stats } };
}

async function deletePhase(bs: BenchStore): Promise<void> {
  const key = deletedKey(w);
  await bs.store.deleteObject(BUCKET, key);
  await bs.store.repo.checkpoint();
  const gone = await bs.store.getObject(BUCKET, key).then(
    () => false,
    (err: { code?: string }) => err.code === 'NoSuchKey'
  );
  if (!gone) throw new Error(`${key} is still readable after its delete`);
  result.data = { key };
}

async function probePhase(bs: BenchStore): Promise<void> {
  const walk = await walkHistory(bs.store, BUCKET);
  const walkCounts = bs.counter.snapshot().total;
  // Each sampled point read as of its time (its own newest write): exact while it is history,
  // refused once expired; anything else is a wrong answer, which the lane counts as a failure.
  const idx = samplePoints(w.writes);
  const pointReads = points.length === 3 ? await readPoints(bs.store, BUCKET, idx.map((write, p) => ({ key: keyOf(w.mode, write), time: points[p]!, write })), bodyOfWrite) : [];
  // Stored bytes and du are taken at rest, after the close (atRest below).
  result.data = { walk, walkCounts, historyBytes: historyBytes(bs.store) ?? null, pointReads };
}

/**
 * The probe's stored bytes and disk usage, read once its process has closed the repository: what
 * a stopped server leaves (a segment being appended to is listed at its sparse preallocation
 * until the log leaves it or a clean close cuts it to what was written).
 */
async function atRest(): Promise<void> {
  const fs = await createFsProvider({ dir: dir! });
  try {
    result.data.stored = await storedBytes(fs);
  } finally {
    await fs.close();
  }
  result.data.du = diskUsage(dir!);
}

async function restorePhase(bs: BenchStore): Promise<void> {
  if (points.length !== 3) throw new Error('restore needs --points=t1,t2,t3');
  const idx = samplePoints(w.writes);
  const restores: unknown[] = [];
  let prev = stateAfter(w.mode, w.writes - 1);
  prev.delete(deletedKey(w));
  for (let p = 0; p < 3; p++) {
    const t = performance.now();
    const r = await bs.store.restore(BUCKET, { to: points[p]! });
    const want = stateAfter(w.mode, idx[p]!);
    // What the restore had to do, from the state before it to the state then.
    let restored = 0;
    let deleted = 0;
    for (const [k, v] of want) if (prev.get(k) !== v) restored++;
    for (const k of prev.keys()) if (!want.has(k)) deleted++;
    if (r.restored !== restored || r.deleted !== deleted) {
      throw new Error(`restore to point ${p + 1} (write ${idx[p]}) restored ${r.restored} and deleted ${r.deleted}; expected ${restored} and ${deleted}`);
    }
    // Spot-check: the point's newest write, and the write after it (absent in append mode).
    const spot = new Map([[keyOf(w.mode, idx[p]!), idx[p]!]]);
    const check = await checkLive(bs.store, BUCKET, w.mode === 'append' ? want : spot, bodyOfWrite);
    if (!liveOk(check)) throw new Error(`after restore to point ${p + 1}: ${check.firstProblem}`);
    restores.push({ write: idx[p], restored: r.restored, deleted: r.deleted, commits: r.commits, ms: performance.now() - t, checked: check.exact });
    log(`point ${p + 1} (write ${idx[p]}): ${r.restored} restored, ${r.deleted} deleted, ${check.exact} values checked`);
    prev = want;
  }
  await bs.store.repo.checkpoint();
  result.data = { restores };
}

async function expirePhase(bs: BenchStore): Promise<void> {
  const report = await expireHistory(bs.store.repo);
  await bs.store.repo.checkpoint();
  result.data = { report: { ...report } };
}

async function gcPhase(bs: BenchStore): Promise<void> {
  const report = await runGc(bs.store.repo, { graceMs: 0 });
  result.data = { report };
}

async function verifyPhase(bs: BenchStore): Promise<void> {
  const cli = await runVerifyCli(dir!);
  const live = await checkLive(bs.store, BUCKET, stateAfter(w.mode, w.writes - 1), bodyOfWrite);
  result.data = { cli, live };
  if (!cli.ok) throw new Error(`strata verify: ${cli.summary}`);
  if (!liveOk(live)) throw new Error(`live state: ${live.firstProblem}`);
}

const PHASES: Record<PhaseName, (bs: BenchStore) => Promise<void>> = {
  write: writePhase,
  delete: deletePhase,
  probe: probePhase,
  restore: restorePhase,
  expire: expirePhase,
  gc: gcPhase,
  'gc-latency': async (bs) => {
    result.data = { ...(await gcLatency(bs.store, w.writes)) };
  },
  verify: verifyPhase,
};

let bs: BenchStore | undefined;
let code = 0;
try {
  if (!PHASES[phase]) throw new Error(`unknown phase ${phase}`);
  bs = await open(phase === 'expire' ? { retentionMs: 0 } : phase === 'write' ? {} : { create: false });
  const t0 = performance.now();
  await PHASES[phase](bs);
  result.elapsedMs = performance.now() - t0;
  result.counts = bs.counter.snapshot().total;
} catch (err) {
  result.error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  code = 1;
} finally {
  await bs?.store.close().catch(() => undefined);
}
if (phase === 'probe' && code === 0) {
  try {
    await atRest();
  } catch (err) {
    result.error = `at rest: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
    code = 1;
  }
}
result.peakRssMiB = peakRssMiB();
process.stdout.write(`${RESULT_MARK}${JSON.stringify(result)}\n`);
process.exitCode = code;
