/**
 * @module Forks as of a past time (`x-strata-fork-source: SRC@TIME`, `strata fork --at`): the
 * new bucket starts as SRC was at that time — its objects then, and its versions then (what
 * ListObjectVersions showed at that time, with the same version ids).
 *
 * A fork as of now shares the source's keyspaces in O(1) (fork.ts, keyspace.ts). A past state
 * is not a set of shared layers, so this fork is built, in two steps:
 *   1. prepareForkAt: one scan of the source's version log writes the fork's own runs — a
 *      version log run of the entries visible at the time (removals made later undone, null
 *      versions replaced later kept as they were, writes made later left out) and an object
 *      index run of each key's state then, read back from that log run — under the fork's
 *      new bucket id. Bodies are shared (records point at the same blobs and pack entries):
 *      only metadata is written. Nothing refers to these runs yet: a crash here leaves
 *      unreferenced blobs (the garbage collector's to sweep), never a partial bucket.
 *   2. one commit with a `forkBucketAt` mutation naming the runs creates the bucket whole
 *      (state.ts; replay re-opens the runs first: openForkRuns). Either it lands or there is
 *      no fork: "no fork or a complete one".
 * Cost: O(versions of the source written up to the time) to read and write, not O(1): about
 * the cost of a checkpoint of that much metadata (see bench:history). As-of reads of the fork
 * start at its creation (history-window.ts): its past before that is the source's.
 */
import type { Repository } from './repository.js';
import type { BucketState, RunHandle } from './state.js';
import type { Tx } from './tx.js';
import { mergeSources } from './index/merge.js';
import { decodeEntry, decodeEntryHeader, encodeEntry, isLogTombstone, namespaceValue } from './version-log.js';
import { escapeKey, logKeyEnd, logKeyPosition, parseLogKey, VERSION_ID_LENGTH } from './version-id.js';
import { lazyRunHandle, openRunHandle, writeIndexRun, writeVersionsRun } from './runs.js';
import type { Mutation } from './commit.js';
import { checkReadableTime } from './history-window.js';
import { requireBucketState } from './versions-read.js';
import { SeqBound } from './past-scan.js';
import { newId } from './layout.js';
import { runMetaKey } from './run-meta-key.js';
import type { Provider } from '../provider/provider.js';
import { StoreError } from './errors.js';
import { blobError } from './body-reader.js';
import { logEntryBytes } from './history-budget.js';

/** A key's later writes stepped over before the rest are skipped with a seek (as-of-list.ts). */
const SKIP_STEPS = 4;

/** What step 1 produced: the fork's id and its runs (open), ready for the commit of step 2. */
export interface PreparedForkAt {
  /** The fork's bucket id (its runs' blob keys are under it). */
  id: string;
  source: string;
  at: number;
  /** The object index run (none when nothing existed then). */
  runs: RunHandle[];
  /** The version log run (none when nothing was visible then). */
  versionRuns: RunHandle[];
  /** Keys and versions (markers included) the fork starts with. */
  keys: number;
  versions: number;
  /** Accounted history bytes of the fork's version log (history-budget.ts). */
  historyBytes: number;
}

/**
 * The source's log entries visible at `at`, in log order: per key, newest first, those
 * written by then, not removed by then (a removal made later is undone in the copy), and of
 * the null writes only the newest by then; absences are not versions and are left out.
 */
async function* visibleAt(b: BucketState, at: number, count: { versions: number; bytes: number }): AsyncGenerator<[string, Uint8Array]> {
  const it = mergeSources(b.versions.sources());
  const bound = new SeqBound(at);
  let cur: { esc: string; key: string; nullSeen: boolean; newer: number } | undefined;
  try {
    for (;;) {
      let e;
      try {
        e = it.nextSync();
        if (e === undefined) {
          const r = await it.next();
          e = r.done ? null : r.value;
        }
      } catch (err) {
        throw blobError(err, `bucket ${b.name} version log`);
      }
      if (e === null) return;
      if (isLogTombstone(e.value)) continue; // dropped by expiry
      const raw = e.key;
      if (!(cur && raw.length === cur.esc.length + VERSION_ID_LENGTH && raw.startsWith(cur.esc))) {
        const parsed = parseLogKey(raw);
        if (!parsed) throw new StoreError('Corrupt', `bucket ${b.name}: version log key ${JSON.stringify(raw)} is malformed`);
        cur = { esc: escapeKey(parsed.key), key: parsed.key, nullSeen: false, newer: 0 };
      }
      const what = `version log entry of ${b.name}/${cur.key}`;
      const head = decodeEntryHeader(e.value, what);
      if (head.time > at) {
        const position = logKeyPosition(raw);
        if (!position) throw new StoreError('Corrupt', `bucket ${b.name}: version log key ${JSON.stringify(raw)} is malformed`);
        bound.learn(position.seq, head.time);
        // Past a few of a key's later writes, skip the rest with one seek.
        const skip = ++cur.newer >= SKIP_STEPS ? bound.skipFrom(cur.key, position.seq) : undefined;
        if (skip) it.seek(skip, true);
        continue;
      }
      if (head.isNull) {
        if (cur.nullSeen) continue;
        cur.nullSeen = true;
      }
      if (head.removedAt !== undefined && head.removedAt <= at) continue;
      if (head.kind === 'absence') continue;
      count.versions++;
      const value = head.removedAt === undefined ? e.value.slice() : encodeEntry((({ removedAt: _r, ...entry }) => entry)(decodeEntry(e.value, what)));
      count.bytes += logEntryBytes(raw, value);
      yield [raw, value];
    }
  } finally {
    await it.return();
  }
}

/** The object index of a fork from its version log run: each key's newest entry. */
async function* indexOf(log: RunHandle, count: { keys: number }): AsyncGenerator<[string, Uint8Array]> {
  const it = mergeSources([log.reader]);
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      const parsed = parseLogKey(r.value.key);
      if (!parsed) throw new StoreError('Corrupt', `fork version log key ${JSON.stringify(r.value.key)} is malformed`);
      count.keys++;
      yield [parsed.key, namespaceValue(r.value.value)];
      it.seek(logKeyEnd(parsed.key), true);
    }
  } finally {
    await it.return();
  }
}

/**
 * Step 1 (see the module note): writes the runs of a fork of bucket `source` as it was at
 * `at` (ms) under a new bucket id, and returns them. Writes blobs only, changes no state.
 * Throws StoreError 'NoSuchBucket', 'InvalidArgument' (a time outside the source's history
 * window: before it existed, too old, in the future), and what reading or writing runs throws.
 * The runs are written through `provider` (the caller's ticketed one: GC keeps them until the
 * commit that names them is applied).
 */
export async function prepareForkAt(repo: Repository, source: string, at: number, provider: Provider = repo.provider): Promise<PreparedForkAt> {
  const b = requireBucketState(repo, source);
  checkReadableTime(repo, b, at, 'fork time');
  const id = newId(8);
  const count = { versions: 0, keys: 0, bytes: 0 };
  const log = await writeVersionsRun(provider, id, visibleAt(b, at, count), repo.cache);
  const index = log ? await writeIndexRun(provider, id, indexOf(log, count), repo.cache) : undefined;
  return { id, source, at, runs: index ? [index] : [], versionRuns: log ? [log] : [], keys: count.keys, versions: count.versions, historyBytes: count.bytes };
}

/**
 * Readies the runs named by the `forkBucketAt` mutations among `mutations` (a replay) in
 * `prepared`, so that applying them (synchronous) finds them: object index runs opened (and
 * checked) now, version log runs on first read, as a root's (runs.ts). Throws what opening a
 * run throws.
 */
export async function openForkRuns(repo: Repository, mutations: readonly Mutation[], prepared: Map<string, RunHandle>): Promise<void> {
  for (const m of mutations) {
    if (m.op !== 'forkBucketAt') continue;
    for (const meta of m.runs) if (!prepared.has(runMetaKey(meta))) prepared.set(runMetaKey(meta), await openRunHandle(repo.provider, meta, repo.cache));
    for (const meta of m.versionRuns) if (!prepared.has(runMetaKey(meta))) prepared.set(runMetaKey(meta), lazyRunHandle(repo.provider, meta, repo.cache));
  }
}

/**
 * Step 2, inside the transaction that creates the fork (fork.ts, after its checks): stages
 * bucket `name` onto the runs `prepared` wrote, created at the transaction's time. The caller
 * stages the fork's settings after it, as for a fork as of now.
 */
export function stageForkAt(tx: Tx, prepared: PreparedForkAt, name: string): void {
  tx.forkBucketAt(name, prepared.source, prepared, tx.time);
}
