/**
 * @module What changed when in a bucket: its version log as a list of writes — each PUT (a
 * version), delete marker and unversioned delete, with its time, key, ids and size — for
 * `strata history` and the admin API. Read-only.
 *
 * Order is the log's: keys in namespace order, each key's writes newest first (a timeline of
 * one key, or of the keys under a prefix, key by key). `since` / `until` keep the writes made
 * in that interval; writes older than the bucket's history window are not shown (expiry.ts
 * drops those no read in the window reaches). Pages are bounded twice: `limit` writes returned, and at
 * most SCAN_BUDGET log entries read per call (a narrow time filter over a large bucket returns
 * short pages); `next` resumes after the last entry read.
 *
 * Cost: one seek, then one step per log entry under the key or prefix, from the cursor on.
 */
import type { Repository } from './repository.js';
import { mergeSources } from './index/merge.js';
import { compareKeys } from './index/compare.js';
import { decodeEntry, isLogTombstone } from './version-log.js';
import { formatVersionId, logKey, logKeyStart, parseLogKey, parseVersionId, VERSION_ID_LENGTH } from './version-id.js';
import { escapePrefix } from './upload-keys.js';
import { requireBucketState, s3VersionId } from './versions-read.js';
import { bucketWindow, readableRange } from './history-window.js';
import { etagOf } from './records.js';
import { StoreError } from './errors.js';
import { blobError } from './body-reader.js';
import { checkKey, MAX_KEY_BYTES } from './validate.js';
import { BudgetHold, RETRY_AFTER_SECONDS } from './budget.js';

/** Memory one listed history entry holds (object, ids, cursor), bytes, besides its key (UTF-16). */
const HISTORY_ENTRY_BYTES = 256;

/** Writes per page by default, and at most. */
export const DEFAULT_HISTORY_LIMIT = 100;
export const MAX_HISTORY_LIMIT = 1000;
/** Log entries read per call at most (about 50 ms of merge work). */
export const SCAN_BUDGET = 100_000;

export interface HistoryOptions {
  /** Only this key's writes. */
  key?: string;
  /** Only keys starting with this (ignored with `key`). */
  prefix?: string;
  /** Only writes made at or after this time, ms. */
  since?: number;
  /** Only writes made at or before this time, ms. */
  until?: number;
  /** Writes per page, 1..MAX_HISTORY_LIMIT (default DEFAULT_HISTORY_LIMIT). */
  limit?: number;
  /** The `next` of the previous page. */
  cursor?: string;
  /** Log entries read at most (default SCAN_BUDGET; tests lower it). */
  scanBudget?: number;
}

export interface HistoryEntry {
  /** Commit time of the write, ms. */
  time: number;
  key: string;
  /** put: a new version; delete-marker; delete: an unversioned DELETE (the key stopped existing). */
  op: 'put' | 'delete-marker' | 'delete';
  /** The id S3 shows for it (`null` for null writes). */
  versionId: string;
  /** The write's own position id (what distinguishes null writes from each other). */
  writeId: string;
  size?: number;
  etag?: string;
  /** When it was permanently removed (DELETE ?versionId=), ms. */
  removedAt?: number;
}

export interface HistoryPage {
  entries: HistoryEntry[];
  /** The earliest time shown: the bucket's creation or the start of its history window, ms. */
  from: number;
  /** The bucket's history window, ms. */
  windowMs: number;
  /** Present when there may be more: pass as `cursor`. */
  next?: string;
}

const badArg = (name: string, value: string, why: string) =>
  new StoreError('InvalidArgument', `${name}: ${why}`, { detail: { ArgumentName: name, ArgumentValue: value.slice(0, 64) } });

/** The cursor naming log key `k`: its position id, then its object key. */
function encodeCursor(key: string, writeId: string): string {
  return Buffer.from(`${writeId}${key}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const bad = () => badArg('cursor', cursor, 'not a history cursor');
  if (cursor.length > 4 * MAX_KEY_BYTES || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const pos = parseVersionId(text.slice(0, VERSION_ID_LENGTH));
  const key = text.slice(VERSION_ID_LENGTH);
  if (!pos || key.length === 0 || Buffer.from(text, 'utf8').toString('base64url') !== cursor) throw bad();
  try {
    checkKey(key);
  } catch {
    throw bad();
  }
  return logKey(key, pos);
}

/**
 * One page of `bucket`'s history (see the module note). Throws StoreError 'NoSuchBucket',
 * 'InvalidArgument' (bad limit, cursor, key, prefix, or since after until), and what reading
 * the log throws.
 */
export async function listHistory(repo: Repository, bucket: string, opts: HistoryOptions = {}): Promise<HistoryPage> {
  const b = requireBucketState(repo, bucket);
  const limit = opts.limit ?? DEFAULT_HISTORY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_LIMIT) throw badArg('limit', String(limit), `1 to ${MAX_HISTORY_LIMIT}`);
  if (opts.key !== undefined) checkKey(opts.key);
  const prefix = opts.key ?? opts.prefix ?? '';
  if (Buffer.byteLength(prefix, 'utf8') > MAX_KEY_BYTES) throw badArg('prefix', prefix, `longer than a key can be (${MAX_KEY_BYTES} bytes)`);
  const { from } = readableRange(repo, b);
  const since = Math.max(from, opts.since ?? from);
  const until = opts.until ?? Number.POSITIVE_INFINITY;
  if (Number.isNaN(since) || Number.isNaN(until) || since > until) throw badArg('since', String(opts.since), 'must be a time not after until');
  const page: HistoryPage = { entries: [], from, windowMs: bucketWindow(repo, b) };
  const budget = opts.scanBudget ?? SCAN_BUDGET;

  let start = { key: opts.key !== undefined ? logKeyStart(opts.key) : escapePrefix(prefix), inclusive: true };
  if (opts.cursor !== undefined) {
    const after = decodeCursor(opts.cursor);
    if (compareKeys(after, start.key) >= 0) start = { key: after, inclusive: false };
  }
  const it = mergeSources(b.versions.sources(), start);
  const hold = new BudgetHold(repo.budget);
  let steps = 0;
  let last: string | undefined;
  /** The cursor after the last entry put in the page. */
  let previous: string | undefined;
  try {
    for (;;) {
      if (page.entries.length === limit || steps === budget) {
        if (last !== undefined) page.next = last;
        break;
      }
      let r;
      try {
        r = await it.next();
      } catch (err) {
        throw blobError(err, `bucket ${bucket} version log`);
      }
      if (r.done) break;
      if (isLogTombstone(r.value.value)) continue; // dropped by expiry
      const parsed = parseLogKey(r.value.key);
      if (!parsed) throw new StoreError('Corrupt', `bucket ${bucket}: version log key ${JSON.stringify(r.value.key)} is malformed`);
      const { key, position } = parsed;
      if (opts.key !== undefined ? key !== opts.key : !key.startsWith(prefix)) {
        if (compareKeys(key, prefix) > 0) break;
        continue;
      }
      steps++;
      const writeId = formatVersionId(position);
      last = encodeCursor(key, writeId);
      const e = decodeEntry(r.value.value, `version log entry of ${bucket}/${key}`);
      if (e.time < since || e.time > until) continue;
      const out: HistoryEntry = {
        time: e.time,
        key,
        op: e.kind === 'absence' ? 'delete' : e.record!.deleteMarker ? 'delete-marker' : 'put',
        versionId: s3VersionId(e),
        writeId,
      };
      if (out.op === 'put') {
        out.size = e.record!.size;
        out.etag = etagOf(e.record!);
      }
      if (e.removedAt !== undefined) out.removedAt = e.removedAt;
      // The page is charged to the pending budget while it is built; short of room it ends
      // before this entry (the cursor resumes here), and with no room at all it is refused.
      if (!hold.tryAdd(HISTORY_ENTRY_BYTES + 2 * key.length)) {
        if (page.entries.length === 0) throw new StoreError('SlowDown', 'pending budget exhausted: no room for a page of history', { retryAfterSeconds: RETRY_AFTER_SECONDS });
        page.next = previous!;
        break;
      }
      page.entries.push(out);
      previous = last;
    }
  } finally {
    hold.release();
    await it.return();
  }
  return page;
}
