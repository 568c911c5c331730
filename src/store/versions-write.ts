/**
 * @module Staging new writes of a key: every PUT, COPY, CompleteMultipartUpload and DELETE
 * without versionId goes through here, so every write lands in the version log (one
 * `putVersion` mutation: the new entry, nothing else) and gets the id S3 gives it.
 *
 *   versioning Enabled          a new version id (its position); DELETE makes a delete marker
 *   Suspended                   S3's `null` (replacing the key's null version); DELETE makes a
 *                               null delete marker
 *   never enabled               `null`; DELETE records an absence (no marker), and only when
 *                               the key exists
 */
import type { Tx } from './tx.js';
import { encodeEntry, type LogEntry } from './version-log.js';
import { formatVersionId, NULL_VERSION_ID } from './version-id.js';
import { decodeVersions, isTombstone, type ObjectAccess, type ObjectVersion } from './records.js';
import { versioningIn } from './versioning.js';

/** The ids a staged write got: `versionId` as S3 shows it, `logId` for a null write. */
export interface WriteIds {
  versionId: string;
  logId?: string;
}

/**
 * Stages `record` as the new current version of `key` (the caller checked the bucket and
 * conditions). Sets `record.versionId` (and `record.logId` for a null write) — the only
 * fields it changes — and returns them, so a caller answering with another copy of the
 * record (e.g. with checksums unsealed) can copy them. Throws StoreError 'NoSuchBucket'.
 */
export function stageVersion(tx: Tx, bucket: string, key: string, record: ObjectVersion): WriteIds {
  const ids = nextIds(tx, bucket);
  record.versionId = ids.versionId;
  if (ids.logId !== undefined) record.logId = ids.logId;
  else delete record.logId;
  const entry: LogEntry = { kind: 'version', isNull: ids.logId !== undefined, time: tx.time, record };
  tx.putVersion(bucket, key, encodeEntry(entry));
  return ids;
}

function nextIds(tx: Tx, bucket: string): WriteIds {
  const id = formatVersionId(tx.nextPosition());
  return versioningIn(tx, bucket) === 'Enabled' ? { versionId: id } : { versionId: NULL_VERSION_ID, logId: id };
}

/** What a DELETE without versionId did. */
export interface DeleteOutcome {
  /** Whether the key had a current object (not a delete marker) before. */
  existed: boolean;
  /** The delete marker it made (versioned buckets), with its S3 id. */
  marker?: ObjectVersion;
}

/** The namespace record of `key` as `tx` sees it (a version or a delete marker), or undefined. */
export async function currentRecord(tx: Tx, bucket: string, key: string): Promise<ObjectVersion | undefined> {
  const raw = await tx.get(bucket, key);
  if (!raw || isTombstone(raw)) return undefined;
  return decodeVersions(raw, `${bucket}/${key}`)[0];
}

/**
 * Stages a DELETE of `key` without versionId. In a bucket whose versioning was ever enabled
 * it always makes a delete marker (owned by `access.owner` when given), as S3 does even for a
 * key that does not exist; otherwise it records an absence when the key exists and stages
 * nothing when it does not. Throws StoreError 'NoSuchBucket'.
 */
export async function stageDelete(tx: Tx, bucket: string, key: string, access?: ObjectAccess): Promise<DeleteOutcome> {
  tx.requireBucket(bucket);
  const cur = await currentRecord(tx, bucket, key);
  const existed = !!cur && !cur.deleteMarker;
  const status = versioningIn(tx, bucket);
  if (status === undefined) {
    if (existed) tx.putVersion(bucket, key, encodeEntry({ kind: 'absence', isNull: true, time: tx.time }));
    return { existed };
  }
  const marker: ObjectVersion = {
    versionId: '',
    deleteMarker: true,
    size: 0,
    md5: new Uint8Array(16),
    partCount: 0,
    lastModified: tx.time,
    system: {},
    userMetadata: {},
    tags: {},
    location: { kind: 'empty' },
  };
  if (access) marker.access = access;
  stageVersion(tx, bucket, key, marker);
  return { existed, marker };
}
