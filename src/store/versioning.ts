/**
 * @module A bucket's S3 versioning state: the bucket configuration `versioning`, UTF-8
 * `Enabled` or `Suspended`; absent when versioning was never enabled (CONTRACT: the object
 * lock helper's CreateBucket sets it too). Which id a write gets follows from it: a version
 * id in an Enabled bucket, S3's `null` otherwise (version-id.ts).
 */
import type { Tx } from './tx.js';
import type { Repository } from './repository.js';
import { StoreError } from './errors.js';
import { assertVersioningChange } from './object-lock-config.js';

/** The bucket configuration name (CONTRACT.md). */
export const VERSIONING_CONFIG = 'versioning';

export type VersioningStatus = 'Enabled' | 'Suspended';

const utf8 = new TextDecoder();

/** Decodes the stored status; undefined when unset; StoreError 'Corrupt' for anything else. */
export function decodeVersioning(value: Uint8Array | undefined): VersioningStatus | undefined {
  if (value === undefined) return undefined;
  const s = utf8.decode(value);
  if (s !== 'Enabled' && s !== 'Suspended') throw new StoreError('Corrupt', `bucket versioning config ${JSON.stringify(s)}`);
  return s;
}

/** The bytes stored for `status`. */
export function encodeVersioning(status: VersioningStatus): Uint8Array {
  return new TextEncoder().encode(status);
}

/** The versioning status of `bucket` as transaction `tx` sees it. */
export function versioningIn(tx: Tx, bucket: string): VersioningStatus | undefined {
  return decodeVersioning(tx.config(bucket, VERSIONING_CONFIG));
}

/** The committed versioning status of `bucket` (StoreError 'NoSuchBucket'). */
export function getVersioning(repo: Repository, bucket: string): VersioningStatus | undefined {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  return decodeVersioning(b.configs.get(VERSIONING_CONFIG));
}

/**
 * Sets the status of `bucket` in one commit. Versioning once enabled can only be suspended,
 * never removed (S3), which this API cannot express anyway. Throws StoreError 'NoSuchBucket'.
 */
export async function putVersioning(repo: Repository, bucket: string, status: VersioningStatus): Promise<void> {
  await repo.run(async (tx) => {
    tx.requireBucket(bucket);
    // A bucket with Object Lock stays Enabled (checked in the same commit: object-lock-config.ts).
    assertVersioningChange(tx, bucket, status);
    tx.setConfig(bucket, VERSIONING_CONFIG, encodeVersioning(status));
  });
}
