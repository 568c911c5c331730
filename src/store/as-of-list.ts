/**
 * @module ListObjects (V1 and V2) as of a past time: the keys that existed then, with the
 * version each had, read from the bucket's version log (the namespace only knows "now").
 *
 * One seeking merge over the log, which holds every key's writes newest first: for each key
 * the entries newer than the time are stepped over, the first one the key's state at that
 * time is taken (versions-read.ts PastFilter), and the rest of the key is skipped with one
 * seek. A key that existed then is listed (or, under a delimiter, its common prefix once,
 * after which the whole prefix is skipped with one seek).
 *
 * Cost: a page costs one step per entry written after the time (for the keys it passes) plus
 * one step and one seek per key it passes, listed or not — keys that did not exist then (made
 * later, or deleted by then) are passed over, so a page over a range of such keys reads more
 * than it lists. Two bounds keep a request short whatever the bucket holds:
 *   - commit sequences and commit times rise together (a commit's time never goes back), so
 *     once an entry of sequence s is known to be newer than the time, every entry of sequence
 *     >= s is too: past a few steps, a key's newer entries are skipped with one seek
 *     (past-scan.ts SeqBound);
 *   - at most STEP_BUDGET log entries are read per request: when it runs out, the page ends
 *     there, truncated (possibly with fewer keys than asked, possibly none), and its token /
 *     NextMarker resume after the last key examined, as S3 allows.
 */
import type { Repository } from './repository.js';
import { mergeSources } from './index/merge.js';
import { compareKeys, keyAfterPrefix } from './index/compare.js';
import { decodeEntry, decodeEntryHeader, isLogTombstone } from './version-log.js';
import { escapeKey, logKeyEnd, logKeyPosition, parseLogKey, VERSION_ID_LENGTH, type Position } from './version-id.js';
import { SeqBound } from './past-scan.js';
import { escapePrefix } from './upload-keys.js';
import { PastFilter, requireBucketState } from './versions-read.js';
import { checkReadableTime } from './history-window.js';
import { decodeToken, encodeToken, type ListBinding, type ListPosition } from './tokens.js';
import { MAX_KEYS, type ListOptions, type ListResult } from './list.js';
import { StoreError } from './errors.js';
import { blobError } from './body-reader.js';
import { BudgetHold, RETRY_AFTER_SECONDS, type BudgetAccount } from './budget.js';

/** Memory one examined key may hold in the page (its entry object, record, key), bytes, besides its key. */
const AS_OF_KEY_BYTES = 512;

/**
 * Version log entries read per as-of listing request at most: about 50-100 ms of merge work,
 * enough for a full page of 1000 keys with dozens of writes each since the time, while a
 * request over keys that mostly did not exist then returns a short page instead of walking
 * the whole bucket.
 */
export const STEP_BUDGET = 100_000;

/**
 * Older entries of a decided key stepped over before seeking past them: a step is much
 * cheaper than a seek (which repositions every source), and most keys have a few writes.
 */
const SKIP_STEPS = 4;

export interface AsOfListOptions extends ListOptions {
  /** The time, ms since the epoch, inside the bucket's history window. */
  at: number;
  /** Log entries to read at most (default STEP_BUDGET; tests lower it). */
  stepBudget?: number;
  /** What the page's entries are charged to while it is built (default the whole pending budget). */
  budget?: BudgetAccount;
}

/**
 * Lists `bucket` as of `opts.at` (see the module note): the same page shape, tokens and
 * markers as listObjects (a V1 NextMarker is set on every truncated page, since a short page
 * may end before its last key). Throws StoreError 'NoSuchBucket', 'InvalidArgument' (a time
 * outside the history window), 'InvalidToken', and what reading the log throws.
 */
export async function listObjectsAsOf(repo: Repository, bucket: string, opts: AsOfListOptions): Promise<ListResult> {
  const b = requireBucketState(repo, bucket);
  checkReadableTime(repo, b, opts.at, 'x-strata-as-of');
  const at = opts.at;
  const prefix = opts.prefix ?? '';
  const delimiter = opts.delimiter ?? '';
  const maxKeys = Math.min(opts.maxKeys ?? MAX_KEYS, MAX_KEYS);
  const budget = opts.stepBudget ?? STEP_BUDGET;
  const bind: ListBinding = { bucket, prefix, delimiter };
  const secret = Buffer.from(repo.config.tokenSecret, 'hex');
  const result: ListResult = { contents: [], commonPrefixes: [], isTruncated: false };
  if (maxKeys <= 0) return result;

  let from = { key: escapePrefix(prefix), inclusive: true };
  const pos: ListPosition | undefined = opts.continuationToken
    ? decodeToken(secret, bind, opts.continuationToken)
    : opts.startAfter
      ? {
          key: opts.startAfter,
          skipPrefix:
            delimiter !== '' &&
            opts.startAfter.endsWith(delimiter) &&
            opts.startAfter.startsWith(prefix) &&
            opts.startAfter.indexOf(delimiter, prefix.length) === opts.startAfter.length - delimiter.length,
        }
      : undefined;
  if (pos) {
    const after = pos.skipPrefix ? keyAfterPrefix(escapePrefix(pos.key)) : logKeyEnd(pos.key);
    if (after === undefined) return result; // after the last possible prefix: nothing is left
    if (compareKeys(after, from.key) > 0) from = { key: after, inclusive: true };
  }

  const it = mergeSources(b.versions.sources(), from);
  const hold = new BudgetHold(opts.budget ?? repo.budget);
  const bound = new SeqBound(at);
  let steps = 0;
  let count = 0;
  /** Everything up to here has been examined (where a page cut by the budget resumes). */
  let done: ListPosition | undefined;
  /** The last key or common prefix listed (where a full page resumes, as S3's NextMarker). */
  let listed: ListPosition | undefined;
  /** The key being examined: its escaped form (its log keys start with it), its filter, and
   * how many of its entries were stepped over (newer than the time, or older once decided). */
  let current: { key: string; esc: string; filter: PastFilter; decided: boolean; skipped: number } | undefined;
  try {
    for (;;) {
      let e;
      try {
        // Synchronous while the cursors hold the entries; a read (await) once per block.
        e = it.nextSync();
        if (e === undefined) {
          const r = await it.next();
          e = r.done ? null : r.value;
        }
      } catch (err) {
        throw blobError(err, `bucket ${bucket} version log`);
      }
      if (e === null) break;
      if (isLogTombstone(e.value)) continue; // dropped by expiry
      const raw = e.key;
      const same = current !== undefined && raw.length === current.esc.length + VERSION_ID_LENGTH && raw.startsWith(current.esc);
      let position: Position | undefined;
      if (same) {
        position = logKeyPosition(raw);
      } else {
        const parsed = parseLogKey(raw);
        if (parsed) {
          if (!parsed.key.startsWith(prefix)) {
            if (compareKeys(parsed.key, prefix) > 0) break;
            continue;
          }
          // A new key: the previous one is examined (decided, or all its writes were later).
          if (current) done = { key: current.key, skipPrefix: false };
          // The page holds what it lists until it is rendered: each key examined is charged to
          // the pending budget; short of room, the page ends here as when out of steps.
          const short = !hold.tryAdd(AS_OF_KEY_BYTES + 2 * parsed.key.length);
          if (short && !done) throw new StoreError('SlowDown', 'pending budget exhausted: no room for a page of keys', { retryAfterSeconds: RETRY_AFTER_SECONDS });
          // Out of budget: end the page here, unless `done` would read back as a common
          // prefix (a V1 marker ending in the delimiter): then one more key is examined.
          if ((steps >= budget || short) && done && (done.skipPrefix || !cpShaped(done.key, prefix, delimiter))) {
            result.isTruncated = true;
            break;
          }
          current = { key: parsed.key, esc: escapeKey(parsed.key), filter: new PastFilter(at), decided: false, skipped: 0 };
          position = parsed.position;
        }
      }
      if (!position || !current) throw new StoreError('Corrupt', `bucket ${bucket}: version log key ${JSON.stringify(raw)} is malformed`);
      steps++;
      const key = current.key;
      if (current.decided) {
        // The rest of a decided key: stepped over while that is cheaper than a seek.
        if (++current.skipped >= SKIP_STEPS) it.seek(logKeyEnd(key), true);
        continue;
      }
      const what = `version log entry of ${bucket}/${key}`;
      const head = decodeEntryHeader(e.value, what);
      bound.learn(position.seq, head.time);
      if (!current.filter.decides(head)) {
        // Every entry of sequence >= bound.newer is later than the time: past a few of them
        // (stepping is cheaper than a seek), the rest are skipped at once.
        const skip = head.time > at && ++current.skipped >= SKIP_STEPS ? bound.skipFrom(key, position.seq) : undefined;
        if (skip) it.seek(skip, true);
        continue;
      }
      current.decided = true;
      current.skipped = 0;
      const record = head.kind === 'version' ? decodeEntry(e.value, what).record : undefined;
      if (!record || record.deleteMarker) continue;
      if (count === maxKeys) {
        result.isTruncated = true;
        done = listed;
        break;
      }
      const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      count++;
      if (cut >= 0) {
        const cp = key.slice(0, cut + delimiter.length);
        result.commonPrefixes.push(cp);
        done = listed = { key: cp, skipPrefix: true };
        current = undefined;
        const next = keyAfterPrefix(escapePrefix(cp));
        if (next === undefined) break;
        it.seek(next, true);
      } else {
        result.contents.push({ key, version: record });
        done = listed = { key, skipPrefix: false };
      }
    }
  } finally {
    hold.release();
    await it.return();
  }
  if (result.isTruncated && done) {
    result.nextContinuationToken = encodeToken(secret, bind, done);
    result.nextMarker = done.key;
  }
  return result;
}

/** Whether `key`, given back as a V1 marker, would be taken for a common prefix (listObjects' rule). */
function cpShaped(key: string, prefix: string, delimiter: string): boolean {
  return delimiter !== '' && key.startsWith(prefix) && key.endsWith(delimiter) && key.indexOf(delimiter, prefix.length) === key.length - delimiter.length;
}
