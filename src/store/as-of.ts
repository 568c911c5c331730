/**
 * @module Reading one object as of a past time (GET/HEAD with `x-strata-as-of`): the key's
 * state then, from its version log entries (versions-read.ts PastFilter), inside the bucket's
 * history window (history-window.ts).
 *
 * What is served is the version that was current at that time, with its id and its record
 * as stored now: the body, metadata and checksums never change, while the sub-resources that
 * can be rewritten in place (tags, ACL, object lock) are their current values, not those of
 * then (a rewrite replaces the version's entry; only writes are history).
 */
import type { Repository } from './repository.js';
import type { ObjectVersion } from './records.js';
import { checkReadableTime } from './history-window.js';
import { requireBucketState, stateAt } from './versions-read.js';
import { checkKey } from './validate.js';

/** What a key was at a time: its version, or a delete marker, or nothing. */
export interface AsOfState {
  /** The version that was current (never a delete marker). */
  version?: ObjectVersion;
  /** The delete marker that was current (the key did not exist, S3 shows the marker). */
  marker?: ObjectVersion;
}

/**
 * The state of `key` in `bucket` as of `at` (ms): its version then, the delete marker then,
 * or neither (never written by then, or deleted without versioning). Throws StoreError
 * 'NoSuchBucket', 'KeyTooLong', 'InvalidArgument' for a time outside the bucket's readable
 * range (history-window.ts checkReadableTime, `what` naming the parameter), and what reading
 * the log throws.
 */
export async function stateAsOf(repo: Repository, bucket: string, key: string, at: number, what = 'x-strata-as-of'): Promise<AsOfState> {
  checkKey(key);
  const b = requireBucketState(repo, bucket);
  checkReadableTime(repo, b, at, what);
  const past = await stateAt(b.versions.sources(), key, at);
  const record = past?.record;
  if (!record) return {};
  return record.deleteMarker ? { marker: record } : { version: record };
}
