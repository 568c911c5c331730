/**
 * @module The history budget: how many bytes of metadata retained history costs, kept exact
 * commit by commit, and the admission check that keeps it under the budget.
 *
 * What is counted ("accounted history bytes"): for every bucket, the encoded bytes of every
 * entry of its version log (version-log.ts), each entry counted as the UTF-8 length of its
 * log key plus the length of its value — exactly what a walk of that bucket's whole history
 * reads from the log's overlay and runs (a run adds framing and an index of its own, which
 * scale with these bytes). A fork counts its own log (what a walk of the fork reads), so a
 * fork of a bucket holding H bytes adds H: forks share runs on storage, yet each fork's walk
 * reads all of them, and deleting the source does not make the fork's walk cheaper.
 *
 * What is not counted, and why: commit records after the root and the root itself. A commit
 * record after the root carries the same entries its putVersion / rewriteVersion mutations
 * put in the log (counting both would count each retained point twice until the next
 * checkpoint, and make the total depend on when checkpoints land: two servers replaying from
 * different roots would disagree). The chain after the root is bounded by the checkpoint
 * policy (checkpointEvery commits, overlayBytes), not by retention; the root's size grows
 * with buckets and runs, not with retained points. Commit records before the root are never
 * read again (garbage for GC). So the total is a function of the commit chain alone.
 *
 * How it stays exact: `RepoState.apply` (state.ts) calls `historyChange` before a mutation
 * and `applyHistoryChange` after it. A putVersion adds its entry; forkBucket adds the
 * source's bytes to the new bucket; deleteBucket takes the bucket's bytes away. A change the
 * mutation alone cannot tell (a rewriteVersion's entry replaces one of unknown size; a
 * forkBucketAt brings runs written beforehand; expiry's and GC's ops drop or re-point
 * entries) travels with it as `historyDelta`, computed at staging from the entries the stager
 * read, and is written in the commit record (commit.ts, trailing history section) with the
 * repository total after the commit. Roots record the total and each bucket's bytes. A record
 * without them (written before budgets) leaves the total unknown; opening then recounts it
 * once by walking every bucket's log (`recountHistory`: reads every version-log run once).
 *
 * Admission: `checkHistoryRoom` at staging (Tx) refuses a mutation when the total after its
 * batch (committed total + batch in flight + this batch) would pass the budget, with StoreError
 * 'HistoryBudgetFull' (S3 403 QuotaExceeded: retrying cannot help). Changes that only make
 * history expirable are admitted past the budget: a version's removal (DELETE ?versionId=
 * rewrites its entry, a few bytes more, once per entry) and an unversioned DELETE of an existing
 * key (one absence per live key). Delete markers add a retained point and free nothing in a
 * versioned bucket: they are refused like any write.
 */
import type { Mutation } from './commit.js';
import type { RootRecord } from './root.js';
import type { BucketState, RepoState } from './state.js';
import type { Loaded } from './recovery.js';
import { StoreError } from './errors.js';
import { mergeSources } from './index/merge.js';
import { decodeRunMeta } from './index/run-format.js';
import { logKey } from './version-id.js';
import { isLogTombstone } from './version-log.js';
import { escapeKey } from './upload-keys.js';
import { VERSION_ID_LENGTH } from './version-id.js';

/** Default history budget, bytes: about 1.3 million retained points of ~200 B each. */
export const DEFAULT_HISTORY_BUDGET = 256 * 1024 * 1024;

const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Accounted bytes of one version-log entry: its log key (UTF-8) plus its value. Pure. */
export function logEntryBytes(logKey: string, entry: Uint8Array | number): number {
  return utf8Length(logKey) + (typeof entry === 'number' ? entry : entry.length);
}

/** Refusals by reason (metrics). */
export interface HistoryRefusals {
  /** Writes refused because the history budget was full. */
  history: number;
}

/** The repository's history account: its total, its budget, and whether the total is known. */
export class HistoryAccount {
  /** Accounted history bytes, whole repository (see the module note). */
  bytes = 0;
  /** Retained points: version-log entries, whole repository (forks count their own). */
  points = 0;
  /** The budget, bytes (Infinity: unbounded). */
  limit = Infinity;
  /** False while a record without history totals was replayed: `recountHistory` fixes it. */
  exact = true;
  readonly refusals: HistoryRefusals = { history: 0 };

  /** The StoreError 'HistoryBudgetFull' for a change of `adding` bytes on top of `using`. */
  fullError(using: number, adding: number): StoreError {
    this.refusals.history++;
    return new StoreError(
      'HistoryBudgetFull',
      `history budget full: the history budget is ${this.limit} bytes, ${using} are in use and this write needs ${adding} more. ` +
        'Free room by shortening the retention window (--retention or the bucket history setting), deleting versions ' +
        '(DELETE ?versionId=), running expiry (strata expire) and GC (strata gc), or raise --history-budget.',
      { detail: { Budget: 'history', BudgetBytes: this.limit, UsedBytes: using, RequestedBytes: adding } }
    );
  }
}

/** A pending change of one bucket's (and the repository's) history bytes. */
export interface HistoryChange {
  bucket: string;
  /** Accounted bytes. */
  delta: number;
  /** Version-log entries. */
  points: number;
}

/**
 * The history change `m` makes, read from the state BEFORE it is applied (pure). Undefined
 * when it changes nothing. Marks the account inexact when the change cannot be known (a
 * legacy record's rewrite without `historyDelta`).
 */
export function historyChange(state: RepoState, m: Mutation): HistoryChange | undefined {
  switch (m.op) {
    case 'putVersion':
      return { bucket: m.bucket, delta: logEntryBytes(logKeyOf(m), m.entry), points: 1 };
    case 'forkBucket': {
      const src = state.buckets.get(m.source);
      return { bucket: m.bucket, delta: src?.historyBytes ?? 0, points: src?.historyPoints ?? 0 };
    }
    case 'deleteBucket': {
      const b = state.buckets.get(m.bucket);
      return { bucket: m.bucket, delta: -(b?.historyBytes ?? 0), points: -(b?.historyPoints ?? 0) };
    }
    case 'rewriteVersion':
      if (m.historyDelta === undefined) {
        state.history.exact = false;
        return undefined;
      }
      return { bucket: m.bucket, delta: m.historyDelta, points: 0 };
    case 'forkBucketAt': {
      if (m.historyDelta === undefined) {
        state.history.exact = false;
        return undefined;
      }
      const points = m.versionRuns.reduce((n, meta) => n + decodeRunMeta(meta).entryCount, 0);
      return { bucket: m.bucket, delta: m.historyDelta, points };
    }
    case 'expireVersions': {
      // Each dropped entry: its log key and the value length recorded when it was staged.
      let bytes = 0;
      for (const [i, k] of m.keys.entries()) bytes += logEntryBytes(k, m.sizes[i] ?? 0);
      return { bucket: m.bucket, delta: -bytes, points: -m.keys.length };
    }
    default:
      // Ops appended later carry their change.
      return m.historyDelta === undefined ? undefined : { bucket: m.bucket, delta: m.historyDelta, points: m.historyPoints ?? 0 };
  }
}

/** Applies `c` (from historyChange) once its mutation is applied. Mutates the account and bucket. */
export function applyHistoryChange(state: RepoState, c: HistoryChange | undefined): void {
  if (!c) return;
  const b = state.buckets.get(c.bucket);
  if (b) {
    b.historyBytes += c.delta;
    b.historyPoints += c.points;
  }
  state.history.bytes += c.delta;
  state.history.points += c.points;
}

const logKeyOf = (m: { key: string; seq: number; index: number }): string => logKey(m.key, m);

/** What a root records of the account (root.ts): per bucket, in the root's order, [bytes, points]. */
export interface RootHistory {
  buckets: [number, number][];
}

/** The account as a root records it, buckets in `names` order. */
export function rootHistory(state: RepoState, names: readonly string[]): RootHistory {
  return { buckets: names.map((n) => [state.buckets.get(n)?.historyBytes ?? 0, state.buckets.get(n)?.historyPoints ?? 0]) };
}

/**
 * Sets the account from a root at open, before the chain is replayed: each bucket's bytes and
 * points, and the totals (their sums). A root without history totals (written before budgets)
 * leaves it inexact (the genesis root, holding no bucket, is exact).
 */
export function restoreHistory(state: RepoState, root: RootRecord): void {
  state.history.bytes = 0;
  state.history.points = 0;
  if (root.history === undefined) {
    // A root without buckets (the genesis root) holds no history: nothing to count.
    state.history.exact = root.buckets.length === 0;
    return;
  }
  for (const [i, rb] of root.buckets.entries()) {
    const b = state.buckets.get(rb.name);
    const [bytes, points] = root.history.buckets[i]!;
    if (b) {
      b.historyBytes = bytes;
      b.historyPoints = points;
    }
    state.history.bytes += bytes;
    state.history.points += points;
  }
}

/**
 * Walks bucket `b`'s whole version log and returns its accounted bytes and entries. Reads
 * every run of the log once (cost: the log's size). Throws what reading a run throws.
 */
export async function countBucketHistory(b: BucketState): Promise<{ bytes: number; entries: number }> {
  const it = mergeSources(b.versions.sources());
  let bytes = 0;
  let entries = 0;
  try {
    for (;;) {
      let e = it.nextSync();
      if (e === undefined) {
        const r = await it.next();
        e = r.done ? null : r.value;
      }
      if (e === null) break;
      if (isLogTombstone(e.value)) continue; // dropped by expiry: not history any more
      bytes += logEntryBytes(e.key, e.value);
      entries++;
    }
  } finally {
    await it.return();
  }
  return { bytes, entries };
}

export interface HistoryRecount {
  /** The total before the recount, and after it. */
  recorded: number;
  counted: number;
  entries: number;
  /** Buckets whose recorded bytes differed from their count. */
  mismatched: string[];
}

/**
 * Recounts every bucket's history by walking its log, and (with `fix`) makes the account
 * exact with the counts. Reads every version-log run of every bucket. The state must not
 * change meanwhile (at open, or between commits in tests). Throws what reading runs throws.
 */
export async function recountHistory(state: RepoState, fix: boolean): Promise<HistoryRecount> {
  const out: HistoryRecount = { recorded: state.history.bytes, counted: 0, entries: 0, mismatched: [] };
  const counts = new Map<BucketState, { bytes: number; entries: number }>();
  for (const b of state.buckets.values()) {
    const c = await countBucketHistory(b);
    counts.set(b, c);
    out.counted += c.bytes;
    out.entries += c.entries;
    if (c.bytes !== b.historyBytes || c.entries !== b.historyPoints) out.mismatched.push(b.name);
  }
  if (fix) {
    for (const [b, c] of counts) {
      b.historyBytes = c.bytes;
      b.historyPoints = c.entries;
    }
    state.history.bytes = out.counted;
    state.history.points = out.entries;
    state.history.exact = true;
  }
  return out;
}

/**
 * After the chain is replayed at open: checks the account against the total the newest record
 * names (the last commit's, else the root's), and recounts by walking every log when it is
 * inexact (records written before budgets) or disagrees (logged 'history.recounted': `strata
 * verify` reports such a disagreement as a problem). Skipped for a root older than the version
 * log (the migration that follows recounts). Throws what reading runs throws.
 */
export async function settleHistory(repo: { state: RepoState; log(event: string, fields: Record<string, unknown>): void }, loaded: Pick<Loaded, 'root' | 'commits'>): Promise<void> {
  if (!loaded.root.versionLog) return;
  const state = repo.state;
  const recorded = loaded.commits.length > 0 ? loaded.commits[loaded.commits.length - 1]!.historyBytes : state.history.exact ? state.history.bytes : undefined;
  if (state.history.exact && recorded === state.history.bytes) return;
  const started = performance.now();
  const reason = !state.history.exact || recorded === undefined ? 'not recorded' : 'mismatch';
  const r = await recountHistory(state, true);
  repo.log('history.recounted', { reason, recorded: recorded ?? null, counted: r.counted, entries: r.entries, ms: Math.round(performance.now() - started) });
}

/**
 * Records, in the transaction staging `m`, the drop of version-log entries `dropped` (log key,
 * entry bytes or length) from `bucket`, and returns the HistoryNote the mutation that drops
 * them must carry (expiry's 'expireVersions'). Never refused: drops free room.
 */
export function dropLogEntryBytes(tx: { noteHistory(bucket: string, delta: number, opts?: { exempt?: boolean }): void }, bucket: string, dropped: Iterable<readonly [string, Uint8Array | number]>): { historyDelta: number; historyPoints: number } {
  let bytes = 0;
  let points = 0;
  for (const [k, e] of dropped) {
    bytes += logEntryBytes(k, e);
    points++;
  }
  tx.noteHistory(bucket, -bytes, { exempt: true });
  return { historyDelta: -bytes, historyPoints: -points };
}

/**
 * Fixed part of the largest log entry a write can make, bytes: entry header (18), record
 * fields of bounded size (version id, size, MD5, part count, times: 61), checksums (all five:
 * 180), encryption envelope, owner/ACL and lock (at most 544), and the null version's log id (19).
 */
const MAX_ENTRY_FIXED_BYTES = 1024;
/** Largest encoding of one carrier chunk reference in a record: blob key (<= 64) and varints. */
const MAX_CHUNK_REF_BYTES = 96;

/**
 * An UPPER bound of the accounted bytes of the log entry a write of `key` with `meta`
 * (content type, system and user metadata, tags, owner) and `chunks` carrier chunks makes.
 * Pure. Used before a carrier's first blob is written: a refusal there writes nothing.
 */
export function maxEntryBytes(key: string, meta: { contentType?: string; system?: Record<string, string>; userMetadata?: Record<string, string>; tags?: Record<string, string>; access?: { owner?: string; acl: string } }, chunks: number): number {
  let n = 2 * utf8Length(key) + 2 + 18 + MAX_ENTRY_FIXED_BYTES + chunks * MAX_CHUNK_REF_BYTES;
  n += 8 + utf8Length(meta.contentType ?? '');
  for (const map of [meta.system, meta.userMetadata, meta.tags]) for (const [k, v] of Object.entries(map ?? {})) n += 16 + utf8Length(k) + utf8Length(v);
  if (meta.access) n += 16 + utf8Length(meta.access.owner ?? '') + utf8Length(meta.access.acl);
  return n;
}

/**
 * Throws StoreError 'HistoryBudgetFull' (counted) if `bytes` more history would not fit on the
 * committed total now. A pre-check only: staging checks exactly.
 */
export function assertHistoryRoom(state: RepoState, bytes: number): void {
  const h = state.history;
  if (h.limit !== Infinity && h.bytes + bytes > h.limit) throw h.fullError(h.bytes, bytes);
}

/**
 * Bytes every version-log entry holds besides its key and metadata, at least: kind and flags
 * (2), commit time (a 6-byte varint for any time after 1970 + 4.4 years), record flags (1),
 * version id (1 + 4: `null` at the shortest), size (1), MD5 (16), part count (1),
 * Last-Modified (6).
 */
const MIN_ENTRY_FIXED_BYTES = 2 + 6 + 1 + 5 + 1 + 16 + 1 + 6;

/**
 * The smallest accounted size of a new log entry for `key`. Pure. Metadata headers are not
 * counted: what is stored of them can be shorter than what was sent (trimmed, decoded), and a
 * lower bound must stay one; the exact check at staging counts them.
 */
export function minEntryBytes(key: string): number {
  return Buffer.byteLength(escapeKey(key), 'utf8') + VERSION_ID_LENGTH + MIN_ENTRY_FIXED_BYTES;
}

