/**
 * @module ListObjects (V1 and V2) over a bucket's merged index.
 *
 * A seeking merge over the overlay and the runs: the cost of a page follows the page size
 * (plus tombstones skipped), not the bucket size — a common prefix under a delimiter is
 * emitted once and then skipped with one seek past every key it covers.
 */
import type { Repository } from './repository.js';
import { mergeSources } from './index/merge.js';
import { compareKeys, keyAfterPrefix } from './index/compare.js';
import { decodeListedHead, headIsDeleted, isTombstone, type ListedVersion } from './records.js';
import { decodeToken, encodeToken, type ListBinding, type ListPosition } from './tokens.js';
import { StoreError } from './errors.js';
import { blobError } from './body-reader.js';

/** S3 returns at most this many keys + common prefixes per page. */
export const MAX_KEYS = 1000;
/**
 * Longest stretch of synchronous listing between event-loop turns, ms. Seeks and steps are
 * served from memory without a promise (merge.ts nextSync), including blocks decoded from
 * the cache's encoded tier — a delimiter listing of a million-key bucket can decode a
 * thousand blocks that way — so without turns one listing would hold every other request
 * (a PUT's acknowledgement) for as long; 2 ms as the run writer's slices (run-writer.ts).
 */
const SLICE_MS = 2;
/** Entries between clock reads (a read costs more than a step served from a batch). */
const SLICE_CHECK_EVERY = 64;

export interface ListOptions {
  prefix?: string;
  /** Empty or absent: no delimiter. */
  delimiter?: string;
  /** V2 start-after, or V1 marker: list keys strictly after this. */
  startAfter?: string;
  /** V2 continuation token (takes precedence over startAfter). */
  continuationToken?: string;
  maxKeys?: number;
}

export interface ListEntry {
  key: string;
  /** What a listing shows of the key's current version (as-of listings give the whole version). */
  version: ListedVersion;
}

export interface ListResult {
  contents: ListEntry[];
  commonPrefixes: string[];
  isTruncated: boolean;
  /** Opaque token for the next page (V2), when truncated. */
  nextContinuationToken?: string;
  /** The last key or common prefix returned (V1 NextMarker), when truncated. */
  nextMarker?: string;
}

/** The smallest string greater than every string that starts with `p` (p non-empty). */
export function prefixSuccessor(p: string): string {
  return keyAfterPrefix(p) ?? '\u{10ffff}'.repeat(256); // unreachable for real keys: past every key
}

export async function listObjects(repo: Repository, bucket: string, opts: ListOptions = {}): Promise<ListResult> {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  const prefix = opts.prefix ?? '';
  const delimiter = opts.delimiter ?? '';
  const maxKeys = Math.min(opts.maxKeys ?? MAX_KEYS, MAX_KEYS);
  const bind: ListBinding = { bucket, prefix, delimiter };
  const secret = Buffer.from(repo.config.tokenSecret, 'hex');
  const result: ListResult = { contents: [], commonPrefixes: [], isTruncated: false };
  if (maxKeys <= 0) return result;

  // Where to start: after the token's position, else after start-after, never before the prefix.
  let from: { key: string; inclusive: boolean } = { key: prefix, inclusive: true };
  const pos: ListPosition | undefined = opts.continuationToken
    ? decodeToken(secret, bind, opts.continuationToken)
    : opts.startAfter
      ? // A V1 NextMarker that is a common prefix resumes after everything under it.
        { key: opts.startAfter, skipPrefix: delimiter !== '' && opts.startAfter.endsWith(delimiter) && opts.startAfter.startsWith(prefix) && opts.startAfter.indexOf(delimiter, prefix.length) === opts.startAfter.length - delimiter.length }
      : undefined;
  if (pos) {
    const after = pos.skipPrefix ? { key: prefixSuccessor(pos.key), inclusive: true } : { key: pos.key, inclusive: false };
    if (compareKeys(after.key, from.key) >= 0) from = after;
  }

  const it = mergeSources(b.sources(), from);
  let count = 0;
  let last: ListPosition | undefined;
  let steps = 0;
  let sliceStart = performance.now();
  try {
    for (;;) {
      let e;
      try {
        // Synchronous while the cursors hold the entries; a read (await) once per block.
        e = it.nextSync();
        if (e === undefined) {
          const r = await it.next();
          e = r.done ? null : r.value;
          sliceStart = performance.now();
        } else if (++steps % SLICE_CHECK_EVERY === 0 && performance.now() - sliceStart >= SLICE_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      } catch (err) {
        throw blobError(err, `bucket ${bucket} index`);
      }
      if (e === null) break;
      const { key, value } = e;
      if (!key.startsWith(prefix)) {
        if (compareKeys(key, prefix) > 0) break;
        continue;
      }
      if (isTombstone(value)) continue;
      const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (cut >= 0) {
        // Rolled into a common prefix: only whether the key is live matters (no decode).
        if (headIsDeleted(value, `${bucket}/${key}`)) continue;
        if (count === maxKeys) {
          result.isTruncated = true;
          break;
        }
        const cp = key.slice(0, cut + delimiter.length);
        result.commonPrefixes.push(cp);
        last = { key: cp, skipPrefix: true };
        it.seek(prefixSuccessor(cp), true);
      } else {
        const version = decodeListedHead(value, `${bucket}/${key}`);
        if (!version || version.deleteMarker) continue;
        if (count === maxKeys) {
          result.isTruncated = true;
          break;
        }
        result.contents.push({ key, version });
        last = { key, skipPrefix: false };
      }
      count++;
    }
  } finally {
    await it.return();
  }
  if (result.isTruncated && last) {
    result.nextContinuationToken = encodeToken(secret, bind, last);
    result.nextMarker = last.key;
  }
  return result;
}
