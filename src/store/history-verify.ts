/**
 * @module `strata verify`'s check of the history account (history-budget.ts): the totals a
 * root and the commits after it record must match what the logs hold.
 *
 * 1. For each bucket of the root: its version log runs (merged, newest value per log key, as a
 *    walk reads them) are recounted; the root's recorded bytes and entries must match.
 * 2. The chain after the root: starting from the root's per-bucket totals, each commit's changes
 *    (history-budget.ts historyChange, the very rule replay applies) are summed, and each
 *    commit's recorded total must match the sum. A record without totals (written before
 *    budgets) ends this check (nothing to compare against).
 * A root without the account (written before budgets) is not checked: opening recounts it.
 * Reads every version-log run named by the root once.
 */
import type { Provider } from '../provider/provider.js';
import type { CommitRecord } from './commit.js';
import type { RootRecord } from './root.js';
import { BlockCache } from './index/block-cache.js';
import { mergeSources } from './index/merge.js';
import { openRunHandle } from './runs.js';
import { applyHistoryChange, historyChange, logEntryBytes, HistoryAccount } from './history-budget.js';
import type { RepoState } from './state.js';
import { StoreError } from './errors.js';
import { isLogTombstone } from './version-log.js';

/** One disagreement, named by what it is about. */
export interface HistoryProblem {
  blob: string;
  error: StoreError;
}

/** Recounts `runs` merged (a bucket's version log): accounted bytes and entries. */
async function countRuns(provider: Provider, runs: Uint8Array[], cache: BlockCache): Promise<{ bytes: number; entries: number }> {
  const handles = await Promise.all(runs.map((m) => openRunHandle(provider, m, cache)));
  const it = mergeSources(handles.map((h) => h.reader));
  let bytes = 0;
  let entries = 0;
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      if (isLogTombstone(r.value.value)) continue; // dropped by expiry
      bytes += logEntryBytes(r.value.key, r.value.value);
      entries++;
    }
  } finally {
    await it.return();
  }
  return { bytes, entries };
}

/** A stand-in for RepoState holding only what historyChange and applyHistoryChange read. */
interface Tally {
  buckets: Map<string, { historyBytes: number; historyPoints: number }>;
  history: HistoryAccount;
}

/**
 * Checks the history totals of `root` and `chain` (see the module note). Returns the problems
 * found (empty: consistent); read failures are returned as problems too.
 */
export async function verifyHistory(provider: Provider, root: RootRecord, chain: readonly CommitRecord[]): Promise<HistoryProblem[]> {
  const problems: HistoryProblem[] = [];
  if (!root.history) return problems;
  const cache = new BlockCache({ maxBytes: 4 * 1024 * 1024 });
  const tally: Tally = { buckets: new Map(), history: new HistoryAccount() };
  for (const [i, b] of root.buckets.entries()) {
    const [bytes, points] = root.history.buckets[i]!;
    tally.buckets.set(b.name, { historyBytes: bytes, historyPoints: points });
    tally.history.bytes += bytes;
    try {
      const c = await countRuns(provider, b.versionRuns ?? [], cache);
      if (c.bytes !== bytes || c.entries !== points) {
        problems.push({
          blob: `bucket ${b.name} history`,
          error: new StoreError('Corrupt', `bucket ${b.name}: the root records ${bytes} history bytes in ${points} entries, its version log holds ${c.bytes} in ${c.entries}`),
        });
      }
    } catch (err) {
      problems.push({ blob: `bucket ${b.name} history`, error: err instanceof StoreError ? err : new StoreError('Io', String(err)) });
    }
  }
  const state = tally as unknown as RepoState;
  for (const c of chain) {
    for (const m of c.mutations) {
      const change = historyChange(state, m);
      if (m.op === 'createBucket') tally.buckets.set(m.bucket, { historyBytes: 0, historyPoints: 0 });
      if (m.op === 'forkBucket' || m.op === 'forkBucketAt') tally.buckets.set(m.bucket, { historyBytes: 0, historyPoints: 0 });
      applyHistoryChange(state, change);
      if (m.op === 'deleteBucket') tally.buckets.delete(m.bucket);
    }
    if (!tally.history.exact || c.historyBytes === undefined) break;
    if (c.historyBytes !== tally.history.bytes) {
      problems.push({
        blob: `commit ${c.seq} history`,
        error: new StoreError('Corrupt', `commit ${c.seq} records ${c.historyBytes} history bytes; its changes on top of the root sum to ${tally.history.bytes}`),
      });
      break;
    }
  }
  return problems;
}
