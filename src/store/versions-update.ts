/**
 * @module Rewriting one version's record in place: tagging, ACL and (object lock) retention
 * by versionId. The version keeps its id, body and position; its log entry is replaced and,
 * when it is the key's current version, the namespace record too, in one commit.
 */
import type { Repository } from './repository.js';
import type { Tx } from './tx.js';
import { encodeEntry } from './version-log.js';
import { encodeVersions, type ObjectVersion } from './records.js';
import { findVersion, keyEntries, noSuchVersion, positionOf, type KeyEntry } from './versions-read.js';
import { currentRecord } from './versions-write.js';
import { StoreError } from './errors.js';
import { checkKey } from './validate.js';

const noSuchKey = (key: string) => new StoreError('NoSuchKey', 'The specified key does not exist.', { detail: { Key: key } });

/** The error S3 gives for a sub-resource of a delete marker (405). */
export function markerNotAllowed(): StoreError {
  return new StoreError('MethodNotAllowed', 'The specified method is not allowed against this resource.', { detail: { Method: 'PUT', ResourceType: 'DeleteMarker' } });
}

/**
 * Stages rewriting the record of `versionId` of `key` (the current version when undefined)
 * with `fn`'s result; returns the new record. `fn` gets the stored record and must not change
 * its identity: versionId, logId and deleteMarker are kept whatever it returns, and so is its
 * Object Lock unless `changesLock` (only object-lock-ops.ts, which checks the change). Throws
 * StoreError 'NoSuchKey' (no current version, or it is a delete marker), 'NoSuchVersion',
 * 'MethodNotAllowed' (the version is a delete marker), 'InvalidArgument' (malformed id),
 * 'NoSuchBucket', and what `fn` throws.
 */
export async function stageUpdateVersion(
  tx: Tx,
  bucket: string,
  key: string,
  versionId: string | undefined,
  fn: (v: ObjectVersion) => ObjectVersion,
  changesLock = false
): Promise<ObjectVersion> {
  checkKey(key);
  tx.requireBucket(bucket);
  const sources = tx.logSources(bucket, key);
  const cur = await currentRecord(tx, bucket, key);
  let found: KeyEntry | undefined;
  if (versionId === undefined) {
    if (!cur || cur.deleteMarker) throw noSuchKey(key);
    const pos = positionOf(cur);
    for await (const e of keyEntries(sources, key, pos)) {
      if (e.position.seq === pos.seq && e.position.index === pos.index) found = e;
      break;
    }
    if (!found?.entry.record) throw new StoreError('Corrupt', `${bucket}/${key}: the current version has no version log entry`);
  } else {
    found = await findVersion(sources, key, versionId);
    if (!found?.entry.record) throw noSuchVersion(key, versionId);
  }
  const old = found.entry.record!;
  if (old.deleteMarker) throw markerNotAllowed();
  const next: ObjectVersion = { ...fn(old), versionId: old.versionId, deleteMarker: old.deleteMarker };
  if (old.logId !== undefined) next.logId = old.logId;
  else delete next.logId;
  if (!changesLock) {
    if (old.lock) next.lock = old.lock;
    else delete next.lock;
  }
  tx.rewriteVersion(bucket, key, found.position, encodeEntry({ ...found.entry, record: next }), found.bytes);
  const pos = cur && positionOf(cur);
  if (pos && pos.seq === found.position.seq && pos.index === found.position.index) tx.put(bucket, key, encodeVersions([next]));
  return next;
}

/** Rewrites one version's record in its own commit (stageUpdateVersion). */
export function updateVersion(
  repo: Repository,
  bucket: string,
  key: string,
  versionId: string | undefined,
  fn: (v: ObjectVersion) => ObjectVersion
): Promise<ObjectVersion> {
  return repo.run((tx) => stageUpdateVersion(tx, bucket, key, versionId, fn));
}
