/**
 * @module Garbage collection: frees the blobs no bucket, fork, retained point or upload in
 * progress can reach any more, and cleans sparse packs.
 *
 *   1. mark   (gc-mark.ts)  from the DURABLE anchor: root, chain, every keyspace of every bucket;
 *   2. clean  (gc-pack.ts)  packs whose live fraction is below `cleanBelow` get their live
 *                           bodies copied and re-pointed by guarded commits (live repository
 *                           only, never in a dry run); the old pack is swept by a later pass;
 *   3. sweep  (gc-sweep.ts) unmarked blobs, after the grace period, are deleted.
 *
 * One GC at a time per repository in this process (a mutex: a second call waits for the first).
 * Across processes the repository is single-writer today (the fs provider's directory lock; one
 * server per S3 repository): only the process that holds it runs GC, and `strata gc` on a
 * running repository goes through that server's admin endpoint.
 */
import type { Provider } from '../provider/provider.js';
import type { Repository } from './repository.js';
import { Repository as RepositoryClass } from './repository.js';
import { markRepository, MARK_CACHE_BYTES, type MarkProgress } from './gc-mark.js';
import { sweep, type SweepReport } from './gc-sweep.js';
import { BlockCache } from './index/block-cache.js';
import { bucketsToCompact, cleanPacks, type CleanProgress } from './gc-pack.js';

/** Grace before an unreachable blob is deleted, ms: longer than any request or in-flight write
 * (a multi-GiB upload on a slow link), short enough that space comes back the same day. */
export const DEFAULT_GRACE_MS = 60 * 60 * 1000;
/**
 * Live fraction below which a pack is cleaned. It bounds what packs left alone can store: at
 * most 1 / DEFAULT_CLEAN_BELOW of their live bytes (1.67x), at the price of moving up to 1.5
 * bytes per byte freed. At 0.5 (2x, one byte moved per byte freed) the commit log segments of
 * serial small writes were never cleaned: each 512 B body sits beside its ~500 B commit record,
 * so a segment stays about half live once the records are checkpointed, and a repository of
 * 100,000 such values kept 2.25x their bytes after expiry and GC (bench:lifecycle; 1.94x at 0.6).
 */
export const DEFAULT_CLEAN_BELOW = 0.6;

export type GcProgress = (p: Parameters<MarkProgress>[0] | Parameters<NonNullable<import('./gc-sweep.js').SweepOptions['onProgress']>>[0] | Parameters<CleanProgress>[0]) => void;

export interface GcOptions {
  /** Report what would be freed; change nothing (no deletion, no cleaning, no state). */
  dryRun?: boolean;
  /** Grace period, ms (default DEFAULT_GRACE_MS); tests use 0. */
  graceMs?: number;
  /** Live fraction below which packs are cleaned (default DEFAULT_CLEAN_BELOW; 0 disables). */
  cleanBelow?: number;
  /** Write a checkpoint first, so that the chain's superseded bodies become collectable. */
  checkpoint?: boolean;
  onProgress?: GcProgress;
  /** Referrers one pass's cleaning gathers at most (default MAX_MOVE_REFS; tests lower it). */
  maxMoveRefs?: number;
}

export interface GcReport {
  examinedBlobs: number;
  examinedBytes: number;
  unreachableBlobs: number;
  unreachableBytes: number;
  freedBlobs: number;
  freedBytes: number;
  cleanedPacks: number;
  /** Sparse packs left for a later pass: cleaning them too would have gathered more than
   * MAX_MOVE_REFS referrers (gc-pack.ts). */
  deferredPacks: number;
  movedBytes: number;
  ms: number;
  /** Unreachable blobs kept for a later pass (grace, too young, or a failed delete). */
  pendingBlobs: number;
  /** Deletes or cleanings that failed (retried by a later pass). */
  errors: number;
  /** Live blobs the mark found, and the anchor sequence it marked from. */
  liveBlobs: number;
  anchorSeq: number;
  dryRun: boolean;
  /** Where the pass spent its time, ms: the mark, pack cleaning, the mark after it, the sweep. */
  phaseMs?: { mark: number; clean: number; remark: number; sweep: number };
  /** Pack cleaning's provider reads of source packs and its re-pointing commits. */
  cleanRequests?: number;
  cleanCommits?: number;
  /** Referrers (namespace and version log entries) pack cleaning re-pointed. */
  cleanRepointed?: number;
}

/** Totals over every pass of one repository (the server's strata_gc_* metrics). */
export interface GcStats {
  passes: number;
  failedPasses: number;
  examinedBlobs: number;
  examinedBytes: number;
  freedBlobs: number;
  freedBytes: number;
  cleanedPacks: number;
  /** Sparse packs passes left for a later one (GcReport.deferredPacks). */
  deferredPacks: number;
  movedBytes: number;
  errors: number;
  lastPassMs: number;
  running: boolean;
}

const stats = new WeakMap<object, GcStats>();
const locks = new WeakMap<object, Promise<unknown>>();

/** The running totals of `repo`'s GC passes (zeros before the first). */
export function gcStats(repo: Repository): GcStats {
  let s = stats.get(repo);
  if (!s) stats.set(repo, (s = { passes: 0, failedPasses: 0, examinedBlobs: 0, examinedBytes: 0, freedBlobs: 0, freedBytes: 0, cleanedPacks: 0, deferredPacks: 0, movedBytes: 0, errors: 0, lastPassMs: 0, running: false }));
  return s;
}

/** Runs `fn` once every earlier call for `owner` has settled. */
async function exclusive<T>(owner: object, fn: () => Promise<T>): Promise<T> {
  const before = locks.get(owner) ?? Promise.resolve();
  const run = before.catch(() => undefined).then(fn);
  locks.set(owner, run);
  try {
    return await run;
  } finally {
    if (locks.get(owner) === run) locks.delete(owner);
  }
}

function validate(opts: GcOptions): { graceMs: number; cleanBelow: number } {
  const graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
  const cleanBelow = opts.cleanBelow ?? DEFAULT_CLEAN_BELOW;
  if (!Number.isFinite(graceMs) || graceMs < 0) throw new RangeError(`graceMs must be a non-negative number of ms, not ${graceMs}`);
  if (!(cleanBelow >= 0 && cleanBelow <= 1)) throw new RangeError(`cleanBelow must be within 0..1, not ${cleanBelow}`);
  return { graceMs, cleanBelow };
}

const fromSweep = (s: SweepReport, dryRun: boolean, started: number, liveBlobs: number, anchorSeq: number): GcReport => ({
  examinedBlobs: s.examinedBlobs,
  examinedBytes: s.examinedBytes,
  unreachableBlobs: s.unreachableBlobs,
  unreachableBytes: s.unreachableBytes,
  freedBlobs: s.freedBlobs,
  freedBytes: s.freedBytes,
  cleanedPacks: 0,
  deferredPacks: 0,
  movedBytes: 0,
  ms: Math.round(performance.now() - started),
  pendingBlobs: s.pendingBlobs,
  errors: s.errors,
  liveBlobs,
  anchorSeq,
  dryRun,
});

/** Blob keys of every run `repo`'s memory names (all keyspaces of all buckets, prepared forks). */
function runsInMemory(repo: Repository): string[] {
  const out: string[] = [];
  for (const b of repo.state.buckets.values()) for (const r of [...b.runs, ...b.uploads.runs, ...b.versions.runs]) out.push(r.key);
  for (const r of repo.state.preparedRuns.values()) out.push(r.key);
  return out;
}

/**
 * One GC pass over the live repository `repo` (see the module note). Marks from the durable
 * anchor (what `repo` holds in memory is not consulted), cleans sparse packs through `repo`'s
 * commits, then sweeps. Holds MARK_CACHE_BYTES of the pending budget while it runs. Throws
 * what marking throws (nothing is then deleted), StoreError 'SlowDown' when the pending budget
 * cannot take the pass, and listing errors; failed deletes and cleanings are counted in
 * `errors` and left to a later pass.
 */
export async function runGc(repo: Repository, opts: GcOptions = {}): Promise<GcReport> {
  const { graceMs, cleanBelow } = validate(opts);
  const dryRun = opts.dryRun === true;
  return exclusive(repo, async () => {
    const s = gcStats(repo);
    const started = performance.now();
    s.running = true;
    const release = repo.budget.reserve(MARK_CACHE_BYTES);
    try {
      // A new commit log segment first: the one appended to so far then leaves the chain at the
      // next root, and goes once nothing in it is reachable (a dry run changes nothing).
      if (!dryRun && repo.usesCommitLog) await repo.rollLog();
      if (opts.checkpoint && !dryRun) await repo.checkpoint();
      // Compared with the provider's modification times: the wall clock, not a test's clock.
      let markStarted = Date.now();
      const cache = new BlockCache({ maxBytes: MARK_CACHE_BYTES });
      const markNow = () => markRepository(repo.provider, { cache, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
      const phaseMs = { mark: 0, clean: 0, remark: 0, sweep: 0 };
      let t = performance.now();
      const lap = () => {
        const ms = Math.round(performance.now() - t);
        t = performance.now();
        return ms;
      };
      let mark = await markNow();
      phaseMs.mark = lap();
      const cleaned = !dryRun && cleanBelow > 0 ? await cleanPacks(repo, mark, { cleanBelow, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}), ...(opts.maxMoveRefs !== undefined ? { maxRefs: opts.maxMoveRefs } : {}) }) : undefined;
      phaseMs.clean = lap();
      if (cleaned && cleaned.cleanedPacks > 0) {
        // The packs just emptied are unreachable once a root covers the re-pointing commits:
        // mark again, so this sweep already counts them (first seen now: freed after the grace).
        // Buckets whose index was largely rewritten are merged whole by that checkpoint, so the
        // superseded copies of the re-pointed entries (and the runs holding them) go too.
        repo.requestMajorCompaction(bucketsToCompact(repo, cleaned.repointedByBucket));
        await repo.checkpoint();
        markStarted = Date.now();
        mark = await markNow();
        phaseMs.remark = lap();
      }
      // Runs this process already reads but no durable root names yet (installed by a checkpoint
      // whose root is not durable, a fork at a time being staged) are kept too: extra roots for
      // the sweep, never a reason to keep less. Runs and roots still being written (a
      // checkpoint building, a fork preparing its past state) are in repo.inflight.
      for (const key of runsInMemory(repo)) mark.live.add(key);
      const swept = await sweep(repo.provider, mark, { dryRun, graceMs, now: () => repo.now(), markStarted, protect: (key) => repo.inflight.protects(key, markStarted), ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
      phaseMs.sweep = lap();
      const report = fromSweep(swept, dryRun, started, mark.live.size, mark.anchorSeq);
      report.phaseMs = phaseMs;
      if (cleaned) {
        report.cleanedPacks = cleaned.cleanedPacks;
        report.deferredPacks = cleaned.deferredPacks;
        report.movedBytes = cleaned.movedBytes;
        report.errors += cleaned.errors;
        report.cleanRequests = cleaned.requests;
        report.cleanCommits = cleaned.commits;
        report.cleanRepointed = cleaned.repointed;
      }
      report.ms = Math.round(performance.now() - started);
      s.passes++;
      s.examinedBlobs += report.examinedBlobs;
      s.examinedBytes += report.examinedBytes;
      s.freedBlobs += report.freedBlobs;
      s.freedBytes += report.freedBytes;
      s.cleanedPacks += report.cleanedPacks;
      s.deferredPacks += report.deferredPacks;
      s.movedBytes += report.movedBytes;
      s.errors += report.errors;
      s.lastPassMs = report.ms;
      repo.log('gc', { ...report });
      return report;
    } catch (err) {
      s.failedPasses++;
      repo.log('gc.failed', { error: String(err) });
      throw err;
    } finally {
      s.running = false;
      release();
    }
  });
}

/**
 * GC of a STOPPED repository on `provider` (`strata gc --data`): nothing else may write it.
 * A dry run only reads (mark + sweep report). Otherwise the repository is opened (not
 * created), checkpointed, collected with runGc (pack cleaning included) and closed. Throws
 * what opening and runGc throw.
 */
export async function collectGarbage(provider: Provider, opts: GcOptions & { singleWriter?: boolean } = {}): Promise<GcReport> {
  const { graceMs } = validate(opts);
  if (opts.dryRun) {
    return exclusive(provider, async () => {
      const started = performance.now();
      const markStarted = Date.now();
      const mark = await markRepository(provider, opts.onProgress ? { onProgress: opts.onProgress } : {});
      const swept = await sweep(provider, mark, { dryRun: true, graceMs, now: Date.now, markStarted, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
      return fromSweep(swept, true, started, mark.live.size, mark.anchorSeq);
    });
  }
  const repo = await RepositoryClass.open(provider, { create: false, singleWriter: opts.singleWriter ?? !provider.capabilities.conditionalWrites });
  try {
    return await runGc(repo, { ...opts, checkpoint: opts.checkpoint ?? true });
  } finally {
    await repo.close();
  }
}
