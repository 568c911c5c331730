/**
 * @module Permanent removal of one version: the ONE place a version stops existing for S3
 * (DELETE ?versionId=, DeleteObjects with VersionId; later lifecycle expiry and GC call it too).
 *
 * A removal rewrites the version's log entry with the removal time (version-log.ts flag
 * `removed`): S3 never shows it again, while a read as of an earlier time still finds it
 * (history is never made unrecoverable here: expiry.ts drops the entry once no read in the
 * bucket's window reaches it). Removing the key's
 * current version makes the next visible one current (a delete marker included), or the key
 * absent when none is left.
 *
 * Object lock: `checkRemovable` below applies the object-lock check (object-lock.ts
 * `assertRemovable`) to every removal, at the removing commit's time: a legal hold or an
 * active COMPLIANCE retention refuses it, an active GOVERNANCE one unless the request
 * bypasses governance. Later expiry and GC must remove through here too.
 */
import type { Repository } from './repository.js';
import type { Tx } from './tx.js';
import { encodeEntry } from './version-log.js';
import { encodeVersions, TOMBSTONE, type ObjectVersion } from './records.js';
import { findVersion, positionOf, visibleVersions } from './versions-read.js';
import { currentRecord } from './versions-write.js';
import { checkKey } from './validate.js';
import { assertRemovable } from './object-lock.js';

export interface RemoveOptions {
  /** x-amz-bypass-governance-retention from a key allowed to bypass (object lock). */
  bypassGovernance?: boolean;
  /** A further check of the version before it is removed (a DELETE's If-Match); throws to refuse. */
  check?: (version: ObjectVersion) => void;
}

export interface RemoveOutcome {
  key: string;
  /** The version id as asked. */
  versionId: string;
  /** Whether a version was removed (false: none by that id; S3 still answers success). */
  removed: boolean;
  /** The removed version was a delete marker (x-amz-delete-marker: true). */
  deleteMarker: boolean;
}

/**
 * The object-lock hook: throws StoreError 'AccessDenied' when `version` must not be removed
 * at `now` (object-lock.ts assertRemovable). Every removal path calls it. Pure.
 */
export function checkRemovable(version: ObjectVersion, opts: RemoveOptions & { now: number }): void {
  assertRemovable(version, { now: opts.now, bypassGovernance: opts.bypassGovernance === true });
}

/**
 * Stages the permanent removal of `versionId` of `key` in `tx` (see the module note). A
 * version that does not exist (never, or already removed) stages nothing and reports
 * `removed: false`. Throws StoreError 'InvalidArgument' for a malformed id, 'NoSuchBucket',
 * and what checkRemovable throws.
 */
export async function stageRemoveVersion(tx: Tx, bucket: string, key: string, versionId: string, opts: RemoveOptions = {}): Promise<RemoveOutcome> {
  checkKey(key);
  tx.requireBucket(bucket);
  const found = await findVersion(tx.logSources(bucket, key), key, versionId);
  if (!found?.entry.record) return { key, versionId, removed: false, deleteMarker: false };
  const record = found.entry.record;
  opts.check?.(record);
  checkRemovable(record, { ...opts, now: tx.time });
  tx.rewriteVersion(bucket, key, found.position, encodeEntry({ ...found.entry, removedAt: tx.time }), found.bytes);
  const cur = await currentRecord(tx, bucket, key);
  const pos = cur && positionOf(cur);
  if (pos && pos.seq === found.position.seq && pos.index === found.position.index) {
    let next: ObjectVersion | undefined;
    for await (const v of visibleVersions(tx.logSources(bucket, key), key)) {
      next = v.record;
      break;
    }
    tx.put(bucket, key, next ? encodeVersions([next]) : TOMBSTONE);
  }
  return { key, versionId, removed: true, deleteMarker: record.deleteMarker };
}

/** Removes one version in its own commit (stageRemoveVersion). */
export function removeVersion(repo: Repository, bucket: string, key: string, versionId: string, opts: RemoveOptions = {}): Promise<RemoveOutcome> {
  return repo.run((tx) => stageRemoveVersion(tx, bucket, key, versionId, opts));
}
