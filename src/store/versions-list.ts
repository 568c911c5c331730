/**
 * @module ListObjectVersions: every version and delete marker S3 shows, key by key in
 * namespace order and newest first within a key, as one seeking merge over the version log.
 *
 * Cost follows the page: each listed entry is one merge step; a common prefix is skipped
 * with one seek; a removed entry or a replaced null write (history kept for reads as of a
 * past time) is stepped over. In a bucket that never enabled versioning every write is a
 * null write, so a key's older entries are skipped with one seek after its newest. In a
 * Suspended bucket the replaced null writes of a listed key are stepped over one by one (the
 * price of keeping that history until expiry, expiry.ts, drops it past the window).
 */
import type { Repository } from './repository.js';
import type { BucketState } from './state.js';
import { mergeSources, type SortedSource } from './index/merge.js';
import { compareKeys, keyAfterPrefix } from './index/compare.js';
import { decodeEntry, isLogTombstone } from './version-log.js';
import { comparePositions, logKey, logKeyEnd, NULL_VERSION_ID, parseLogKey, parseVersionId, type Position } from './version-id.js';
import { escapePrefix } from './upload-keys.js';
import { invalidVersionId, keyEntries, requireBucketState, VisibilityFilter } from './versions-read.js';
import { VERSIONING_CONFIG } from './versioning.js';
import type { ObjectVersion } from './records.js';
import { StoreError } from './errors.js';
import { blobError } from './body-reader.js';
import { BudgetHold, RETRY_AFTER_SECONDS, type BudgetAccount } from './budget.js';

/**
 * What a listed version costs in memory while its page is built, relative to its encoded log
 * entry: the decoded record (strings, maps, digests as objects) is about three times its bytes.
 */
const DECODED_RECORD_FACTOR = 3;
/** Fixed cost of one listed version (the page entry object and its key string), bytes. */
const PAGE_ENTRY_OVERHEAD = 128;

/** S3 returns at most this many versions + common prefixes per page. */
export const MAX_VERSION_KEYS = 1000;

export interface ListVersionsOptions {
  prefix?: string;
  /** Empty or absent: no delimiter. */
  delimiter?: string;
  /** List keys after this one (or, with versionIdMarker, the versions after that one of it). */
  keyMarker?: string;
  versionIdMarker?: string;
  /** 0..1000 (larger is clamped). */
  maxKeys?: number;
  /** What the page's entries are charged to while it is built (default the whole pending budget). */
  budget?: BudgetAccount;
}

export interface VersionListEntry {
  key: string;
  /** `null` or the version id. */
  versionId: string;
  isLatest: boolean;
  /** The version or delete marker (`deleteMarker`). */
  version: ObjectVersion;
}

export interface ListVersionsResult {
  /** Versions and delete markers in listing order. */
  versions: VersionListEntry[];
  commonPrefixes: string[];
  isTruncated: boolean;
  nextKeyMarker?: string;
  nextVersionIdMarker?: string;
}

/**
 * Lists `bucket`'s versions (see the module note). Throws StoreError 'NoSuchBucket',
 * 'InvalidArgument' (a version-id-marker without a key-marker, or one that cannot be an id),
 * and what reading the log throws.
 */
export async function listVersions(repo: Repository, bucket: string, opts: ListVersionsOptions = {}): Promise<ListVersionsResult> {
  const b = requireBucketState(repo, bucket);
  const prefix = opts.prefix ?? '';
  const delimiter = opts.delimiter ?? '';
  const keyMarker = opts.keyMarker ?? '';
  const versionIdMarker = opts.versionIdMarker ?? '';
  const maxKeys = Math.min(Math.max(opts.maxKeys ?? MAX_VERSION_KEYS, 0), MAX_VERSION_KEYS);
  const result: ListVersionsResult = { versions: [], commonPrefixes: [], isTruncated: false };
  if (versionIdMarker && !keyMarker) {
    throw new StoreError('InvalidArgument', 'A version-id marker cannot be specified without a key marker.', {
      detail: { ArgumentName: 'version-id-marker', ArgumentValue: versionIdMarker },
    });
  }
  const markerPos = versionIdMarker && versionIdMarker !== NULL_VERSION_ID ? parseVersionId(versionIdMarker) : undefined;
  if (versionIdMarker && versionIdMarker !== NULL_VERSION_ID && !markerPos) throw invalidVersionId(versionIdMarker);
  if (maxKeys === 0) return result;
  const sources = b.versions.sources();
  const neverVersioned = !b.configs.has(VERSIONING_CONFIG);

  // Where to start, and what is known of the marker's key when starting inside it.
  let from = { key: escapePrefix(prefix), inclusive: true };
  let resume: { key: string; filter: VisibilityFilter; nullUnknownBefore?: Position } | undefined;
  if (keyMarker) {
    let start: { key: string; inclusive: boolean };
    if (versionIdMarker === NULL_VERSION_ID) {
      let nullPos: Position | undefined;
      for await (const e of keyEntries(sources, keyMarker)) {
        if (e.entry.isNull) {
          nullPos = e.position;
          break;
        }
      }
      start = nullPos ? { key: logKey(keyMarker, nullPos), inclusive: false } : { key: logKeyEnd(keyMarker), inclusive: true };
      if (nullPos) resume = { key: keyMarker, filter: new VisibilityFilter(true, true) };
    } else if (markerPos) {
      start = { key: logKey(keyMarker, markerPos), inclusive: false };
      resume = { key: keyMarker, filter: new VisibilityFilter(false, true), nullUnknownBefore: markerPos };
    } else {
      const isPrefix = delimiter !== '' && keyMarker.startsWith(prefix) && keyMarker.indexOf(delimiter, prefix.length) === keyMarker.length - delimiter.length;
      const after = isPrefix ? keyAfterPrefix(escapePrefix(keyMarker)) : undefined;
      start = after !== undefined ? { key: after, inclusive: true } : { key: logKeyEnd(keyMarker), inclusive: true };
    }
    if (compareKeys(start.key, from.key) > 0) from = start;
  }

  const it = mergeSources(sources, from);
  const hold = new BudgetHold(opts.budget ?? repo.budget);
  let count = 0;
  let current: { key: string; filter: VisibilityFilter; nullUnknownBefore?: Position } | undefined = resume;
  let last: { key: string; versionId?: string } | undefined;
  try {
    for (;;) {
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
      if (!key.startsWith(prefix)) {
        if (compareKeys(key, prefix) > 0) break;
        continue;
      }
      const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (cut >= 0) {
        const cp = key.slice(0, cut + delimiter.length);
        const next = keyAfterPrefix(escapePrefix(cp));
        // Only what S3 shows makes a common prefix: history alone (absences, removed
        // versions, replaced nulls) under it does not.
        if (await anyVisible(sources, r.value.key, next, neverVersioned, bucket)) {
          if (count === maxKeys) {
            result.isTruncated = true;
            break;
          }
          result.commonPrefixes.push(cp);
          count++;
          last = { key: cp };
        }
        if (next === undefined) break;
        it.seek(next, true);
        continue;
      }
      if (current?.key !== key) current = { key, filter: new VisibilityFilter() };
      const entry = decodeEntry(r.value.value, `version log entry of ${bucket}/${key}`);
      if (entry.isNull && current.nullUnknownBefore) {
        // Resumed inside this key: is there a null write newer than the marker?
        const before = current.nullUnknownBefore;
        current.nullUnknownBefore = undefined;
        let seen = false;
        for await (const e of keyEntries(sources, key)) {
          if (comparePositions(e.position, before) <= 0) break;
          if (e.entry.isNull) {
            seen = true;
            break;
          }
        }
        if (seen) current.filter = new VisibilityFilter(true, true);
      }
      const v = current.filter.next({ position, entry, bytes: r.value.value });
      if (neverVersioned && entry.isNull) it.seek(logKeyEnd(key), true); // older entries: replaced nulls only
      if (!v) continue;
      if (count === maxKeys) {
        result.isTruncated = true;
        break;
      }
      // The page holds its decoded records until it is rendered: charged to the pending budget.
      // Short of room, the page ends here (S3 lets a page be shorter than max-keys).
      if (!hold.tryAdd(r.value.value.length * DECODED_RECORD_FACTOR + PAGE_ENTRY_OVERHEAD)) {
        if (count === 0) throw new StoreError('SlowDown', 'pending budget exhausted: no room for a page of versions', { retryAfterSeconds: RETRY_AFTER_SECONDS });
        result.isTruncated = true;
        break;
      }
      result.versions.push({ key, versionId: v.versionId, isLatest: v.isLatest, version: v.record });
      count++;
      last = { key, versionId: v.versionId };
    }
  } finally {
    hold.release();
    await it.return();
  }
  if (result.isTruncated && last) {
    result.nextKeyMarker = last.key;
    if (last.versionId !== undefined) result.nextVersionIdMarker = last.versionId;
  }
  return result;
}

/**
 * Whether the log between `from` (a log key, inclusive) and `end` (exclusive; undefined: the
 * end of the log) holds a version or delete marker S3 shows. Stops at the first one; a
 * range of history only (the common prefix of deleted keys) is walked to its end, skipping
 * a key's replaced null writes with one seek in a never-versioned bucket.
 */
async function anyVisible(sources: readonly SortedSource[], from: string, end: string | undefined, neverVersioned: boolean, bucket: string): Promise<boolean> {
  const it = mergeSources(sources, { key: from, inclusive: true });
  let current: { key: string; filter: VisibilityFilter } | undefined;
  try {
    for (;;) {
      let r;
      try {
        r = await it.next();
      } catch (err) {
        throw blobError(err, `bucket ${bucket} version log`);
      }
      if (r.done || (end !== undefined && compareKeys(r.value.key, end) >= 0)) return false;
      if (isLogTombstone(r.value.value)) continue; // dropped by expiry
      const parsed = parseLogKey(r.value.key);
      if (!parsed) throw new StoreError('Corrupt', `bucket ${bucket}: version log key ${JSON.stringify(r.value.key)} is malformed`);
      if (current?.key !== parsed.key) current = { key: parsed.key, filter: new VisibilityFilter() };
      const entry = decodeEntry(r.value.value, `version log entry of ${bucket}/${parsed.key}`);
      if (current.filter.next({ position: parsed.position, entry, bytes: r.value.value })) return true;
      if (neverVersioned && entry.isNull) it.seek(logKeyEnd(parsed.key), true);
    }
  } finally {
    await it.return();
  }
}

/**
 * Whether `bucket` (committed state) holds any version or delete marker S3 shows: what keeps a
 * versioned bucket from being deleted. Stops at the first one; throws what reading throws.
 */
export async function hasVisibleVersions(bucket: BucketState): Promise<boolean> {
  const it = mergeSources(bucket.versions.sources());
  let current: { key: string; filter: VisibilityFilter } | undefined;
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) return false;
      if (isLogTombstone(r.value.value)) continue; // dropped by expiry
      const parsed = parseLogKey(r.value.key);
      if (!parsed) throw new StoreError('Corrupt', `bucket ${bucket.name}: version log key ${JSON.stringify(r.value.key)} is malformed`);
      if (current?.key !== parsed.key) current = { key: parsed.key, filter: new VisibilityFilter() };
      const entry = decodeEntry(r.value.value, `version log entry of ${bucket.name}/${parsed.key}`);
      if (current.filter.next({ position: parsed.position, entry, bytes: r.value.value })) return true;
    }
  } finally {
    await it.return();
  }
}
