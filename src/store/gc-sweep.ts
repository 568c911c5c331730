/**
 * @module GC sweep: lists the repository's blobs and deletes those a mark (gc-mark.ts) did not
 * reach, once they have stayed unreachable for a grace period.
 *
 * A blob is deleted only if ALL of these hold:
 *   - the mark did not reach it;
 *   - it was first seen unreachable at least `graceMs` ago (gc-state.ts remembers when, across
 *     passes): a reader that took a location before it became unreachable (a GET between its
 *     index lookup and its body read, a listing on an older run set) has that long to finish;
 *   - its own modification time is at least `graceMs` old: another server, or a write in
 *     flight here (a carrier streaming before its commit, a checkpoint's runs before its root),
 *     may still be about to name it;
 *   - it was not modified after the mark began (minus the provider's mtime resolution): the
 *     mark cannot judge what it never saw, so even with a grace of 0 a blob written during
 *     the pass is left for the next one.
 * Everything else that is unmarked is remembered as a candidate with its first-seen time.
 * A dry run applies the same rules, deletes nothing and writes no state: its `freed*` figures
 * are exactly what a pass at that moment would delete.
 *
 * Listing is streamed page by page; memory holds the candidates (about 100 B each) and the
 * deletions in flight (at most SWEEP_PARALLEL).
 */
import type { Provider } from '../provider/provider.js';
import { GC_PREFIX, readGcState, writeGcState } from './gc-state.js';
import type { MarkResult } from './gc-mark.js';

/** Prefixes of the blobs GC may delete: everything but the anchor and the config. */
export const SWEPT_PREFIXES = ['commits/', 'roots/', 'runs/', 'chunks/', 'packs/', 'log/'] as const;
/** Concurrent deletes: enough to hide provider latency, few enough to leave it to the writers. */
const SWEEP_PARALLEL = 8;
/** Modification-time resolution of a provider, ms: S3 (and what we do not know) reports whole
 * seconds; fs and memory report milliseconds or better. */
const mtimeResolutionMs = (p: Provider) => (p.kind === 'fs' || p.kind === 'memory' ? 0 : 1000);

export interface SweepOptions {
  dryRun: boolean;
  graceMs: number;
  /** Clock, ms. */
  now: () => number;
  /** When the mark began (ms): blobs modified since are never deleted by this pass. */
  markStarted: number;
  /** Blobs of writes in flight in this process (inflight-blobs.ts): never deleted. */
  protect?: (key: string) => boolean;
  onProgress?: (p: { phase: 'sweep'; examined: number; unreachable: number; freed: number; freedBytes: number }) => void;
}

export interface SweepReport {
  examinedBlobs: number;
  examinedBytes: number;
  unreachableBlobs: number;
  unreachableBytes: number;
  freedBlobs: number;
  freedBytes: number;
  /** Unreachable blobs kept for now (grace, young, or a failed delete). */
  pendingBlobs: number;
  /** Deletes that failed (the blob stays a candidate). */
  errors: number;
}

/**
 * Sweeps `provider` against `mark` (see the module note). Mutates storage only when not
 * `dryRun`: deletes what qualifies, writes the new GC state, deletes older state blobs.
 * Throws listing and state-writing errors (deletions already done stay done: they were of
 * unreachable blobs); failed deletes are counted, not thrown.
 */
/** Whether `key` names a commit blob (layout.ts commitKey) with a sequence above `seq`, or a
 * commit log segment (layout.ts logKey) whose first commit is above it: a segment created for a
 * roll whose anchor move the mark did not see yet. */
function commitAfter(key: string, seq: number): boolean {
  const prefix = key.startsWith('commits/') ? 'commits/' : key.startsWith('log/') ? 'log/' : undefined;
  if (!prefix) return false;
  const n = parseInt(key.slice(prefix.length, prefix.length + 12), 16);
  return !Number.isFinite(n) || n > seq;
}

export async function sweep(provider: Provider, mark: MarkResult, opts: SweepOptions): Promise<SweepReport> {
  const report: SweepReport = { examinedBlobs: 0, examinedBytes: 0, unreachableBlobs: 0, unreachableBytes: 0, freedBlobs: 0, freedBytes: 0, pendingBlobs: 0, errors: 0 };
  const state = await readGcState(provider);
  const next = new Map<string, number>();
  const now = opts.now();
  const unjudged = opts.markStarted - mtimeResolutionMs(provider);
  const pending = new Set<Promise<void>>();
  const del = async (key: string, size: number, first: number) => {
    while (pending.size >= SWEEP_PARALLEL) await Promise.race(pending);
    const p = provider.delete(key).then(
      () => {
        report.freedBlobs++;
        report.freedBytes += size;
      },
      () => {
        report.errors++;
        next.set(key, first);
      }
    );
    const tracked = p.finally(() => pending.delete(tracked));
    pending.add(tracked);
  };
  const progress = () =>
    opts.onProgress?.({ phase: 'sweep', examined: report.examinedBlobs, unreachable: report.unreachableBlobs, freed: report.freedBlobs, freedBytes: report.freedBytes });

  for (const prefix of SWEPT_PREFIXES) {
    let startAfter: string | undefined;
    for (;;) {
      // Keys, sizes and times only (no etags): one stat per blob on fs instead of reading its
      // header, and a blob whose header is damaged is judged like any other.
      const page = await provider.list({ prefix, etags: false, ...(startAfter ? { startAfter } : {}) });
      for (const item of page.items) {
        if (report.examinedBlobs++ % 256 === 0) progress();
        report.examinedBytes += item.size;
        if (mark.live.has(item.key)) continue;
        report.unreachableBlobs++;
        report.unreachableBytes += item.size;
        // A commit blob past the anchor the mark read is a commit in flight (written, its
        // anchor move pending) or a crashed attempt, which a later pass frees once the anchor
        // has passed its sequence; and what an open write holds is not garbage.
        if (commitAfter(item.key, mark.anchorSeq) || opts.protect?.(item.key)) {
          report.pendingBlobs++;
          continue;
        }
        const first = Math.min(state.seen.get(item.key) ?? now, now);
        const modified = item.lastModified.getTime();
        const due = now - first >= opts.graceMs && now - modified >= opts.graceMs && modified < unjudged;
        if (!due) next.set(item.key, first);
        else if (opts.dryRun) {
          report.freedBlobs++;
          report.freedBytes += item.size;
        } else await del(item.key, item.size, first);
      }
      if (!page.next) break;
      startAfter = page.next;
    }
  }
  await Promise.all(pending);
  report.pendingBlobs += next.size;
  if (!opts.dryRun) {
    // The new state first, then the old ones: a crash in between leaves two, the newest wins.
    const newest = state.key ? parseInt(state.key.slice(GC_PREFIX.length, GC_PREFIX.length + 12), 16) : -1;
    const written = next.size > 0 ? await writeGcState(provider, next, Math.max(now, newest + 1)) : undefined;
    for (const old of state.blobs) if (old !== written) await provider.delete(old).catch(() => void report.errors++);
  }
  progress();
  return report;
}
