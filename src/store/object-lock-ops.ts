/**
 * @module Object Lock per version: reading and changing one version's retention and legal
 * hold (Get/PutObjectRetention, Get/PutObjectLegalHold). Each change is one commit that
 * checks the bucket's lock, the version, and the retention rules (object-lock.ts) at the
 * commit's time, then rewrites the version's record (same version id, same body).
 */
import type { Repository } from './repository.js';
import { StoreError } from './errors.js';
import type { ObjectVersion } from './records.js';
import { liveVersion } from './objects-read.js';
import { openUpload } from './multipart.js';
import { checkKey } from './validate.js';
import { getVersion } from './versions-read.js';
import { stageUpdateVersion } from './versions-update.js';
import { assertRetentionChange, checkRetainUntil, withLegalHold, withRetention, type ObjectLock, type Retention } from './object-lock.js';
import { lockEnabledIn, OBJECT_LOCK_CONFIG } from './object-lock-config.js';

const notLockEnabled = () => new StoreError('InvalidRequest', 'Bucket is missing Object Lock Configuration');

/**
 * Rewrites the lock of version `versionId` of `key` (undefined: the current one) with `fn`'s
 * result (at the commit's time `now`), in one commit (versions-update.ts: same version id,
 * body and position); `fn` may throw to refuse, and nothing is written. Returns the version
 * id. Throws StoreError NoSuchBucket, InvalidRequest (bucket without Object Lock), NoSuchKey,
 * NoSuchVersion, MethodNotAllowed (a delete marker), InvalidArgument (malformed id).
 */
async function updateLock(
  repo: Repository,
  bucket: string,
  key: string,
  versionId: string | undefined,
  fn: (lock: ObjectLock | undefined, now: number) => ObjectLock | undefined
): Promise<string> {
  checkKey(key);
  return repo.run(async (tx) => {
    tx.requireBucket(bucket);
    if (!lockEnabledIn(tx, bucket)) throw notLockEnabled();
    const next = await stageUpdateVersion(tx, bucket, key, versionId, (v) => {
      const { lock: old, ...rest } = v;
      const lock = fn(old, tx.time);
      return lock ? { ...rest, lock } : rest;
    }, true);
    return next.versionId;
  });
}

/**
 * The version `versionId` of `key` (undefined: the current one) of a lock-enabled bucket.
 * Throws StoreError NoSuchBucket, InvalidRequest (bucket without Object Lock), NoSuchKey,
 * NoSuchVersion, MethodNotAllowed (the version named is a delete marker), InvalidArgument.
 */
export async function lockedVersion(repo: Repository, bucket: string, key: string, versionId: string | undefined): Promise<ObjectVersion> {
  checkKey(key);
  const b = repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  if (!b.configs.has(OBJECT_LOCK_CONFIG)) throw notLockEnabled();
  if (versionId === undefined) return liveVersion(repo, bucket, key);
  const { version } = await getVersion(repo, bucket, key, versionId);
  if (version.deleteMarker) {
    throw new StoreError('MethodNotAllowed', 'The specified method is not allowed against this resource.', { detail: { Method: 'GET', ResourceType: 'DeleteMarker' } });
  }
  return version;
}

/**
 * Sets (or with undefined removes) the retention of a version, at the commit's time:
 * `retention` must end in the future (InvalidArgument), and the change must be allowed by
 * the version's current retention (AccessDenied: shortening, removing or changing the mode
 * of an active COMPLIANCE retention, or of a GOVERNANCE one without `bypassGovernance`).
 * The legal hold is kept. Returns the version id. Also the errors of {@link lockedVersion}.
 */
export async function putObjectRetention(
  repo: Repository,
  bucket: string,
  key: string,
  versionId: string | undefined,
  retention: Retention | undefined,
  opts: { bypassGovernance: boolean }
): Promise<string> {
  return updateLock(repo, bucket, key, versionId, (lock, now) => {
    if (retention) checkRetainUntil(retention.retainUntil, now);
    assertRetentionChange(lock, retention, { now, bypassGovernance: opts.bypassGovernance });
    return withRetention(lock, retention);
  });
}

/**
 * Sets the legal hold of a version ON (`on`) or OFF; the retention is kept. Anyone allowed
 * to call it may clear a hold (S3: the s3:PutObjectLegalHold permission decides). Returns
 * the version id. Errors of {@link lockedVersion}.
 */
export async function putObjectLegalHold(repo: Repository, bucket: string, key: string, versionId: string | undefined, on: boolean): Promise<string> {
  return updateLock(repo, bucket, key, versionId, (lock) => withLegalHold(lock, on));
}

/**
 * Whether the completed object of upload `uploadId` will carry an Object Lock (requested at
 * creation, or the bucket's default then): its parts must then prove their integrity.
 * False for a bucket without Object Lock (no lookup). Throws StoreError NoSuchBucket,
 * NoSuchUpload.
 */
export async function uploadLocked(repo: Repository, bucket: string, key: string, uploadId: string): Promise<boolean> {
  const b = repo.state.buckets.get(bucket);
  if (!b?.configs.has(OBJECT_LOCK_CONFIG)) return false;
  return (await openUpload(repo, bucket, key, uploadId)).record.lock !== undefined;
}
