/**
 * @module Buckets: create, delete-if-empty, list, head, and per-bucket configuration
 * (opaque bytes by name, e.g. 'cors').
 */
import type { Repository } from './repository.js';
import { mergeSources } from './index/merge.js';
import { isTombstone } from './records.js';
import { newId } from './layout.js';
import { checkBucketName } from './validate.js';
import { StoreError } from './errors.js';
import { ownerIn, stageOwner } from './keys.js';
import { VERSIONING_CONFIG } from './versioning.js';
import { hasVisibleVersions } from './versions-list.js';

export interface BucketInfo {
  name: string;
  created: number;
}

const noSuchBucket = (name: string) =>
  new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: name } });

/**
 * Creates `name`, owned by access key `owner` when given (recorded in the same commit, see
 * keys.ts), with the configuration blobs `configs` (e.g. its ACL) set in that commit too.
 * Throws StoreError 'InvalidBucketName'; for an existing bucket 'BucketAlreadyOwnedByYou'
 * when `owner` owns it (or no owner is given), else 'BucketAlreadyExists'.
 */
export async function createBucket(
  repo: Repository,
  name: string,
  owner?: string,
  configs: ReadonlyArray<readonly [string, Uint8Array]> = []
): Promise<BucketInfo> {
  checkBucketName(name);
  return repo.run(async (tx) => {
    if (tx.bucket(name)) {
      if (owner !== undefined && ownerIn(tx, name) !== owner) {
        throw new StoreError(
          'BucketAlreadyExists',
          'The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.',
          { detail: { BucketName: name } }
        );
      }
      throw new StoreError('BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.', {
        detail: { BucketName: name },
      });
    }
    tx.createBucket(name, newId(8), tx.time);
    if (owner !== undefined) stageOwner(tx, name, owner);
    for (const [config, value] of configs) tx.setConfig(name, config, value);
    return { name, created: tx.time };
  });
}

/**
 * Deletes `name` if it holds no object, and when versioned no version or delete marker either
 * ('BucketNotEmpty', 'NoSuchBucket'). Its history (version log runs) is not deleted. Multipart uploads
 * still in progress do not keep a bucket alive (as in S3): they go with it, and their parts'
 * chunks are deleted once the deletion is durable (Repository: onBucketDropped).
 */
export async function deleteBucket(repo: Repository, name: string): Promise<void> {
  await repo.run(async (tx) => {
    const b = tx.bucket(name);
    if (!b) throw noSuchBucket(name);
    const notEmpty = () => new StoreError('BucketNotEmpty', 'The bucket you tried to delete is not empty', { detail: { BucketName: name } });
    if (tx.stagedKeys(name).some(([, v]) => !isTombstone(v))) throw notEmpty();
    if (b.state) {
      const it = mergeSources(b.state.sources());
      try {
        for (;;) {
          const r = await it.next();
          if (r.done) break;
          if (!isTombstone(r.value.value) && !tx.stagedKeys(name).some(([k, v]) => k === r.value.key && isTombstone(v))) throw notEmpty();
        }
      } finally {
        await it.return();
      }
    }
    // A versioned bucket is not empty while it holds any version or delete marker (S3).
    if (b.state && tx.config(name, VERSIONING_CONFIG) && (await hasVisibleVersions(b.state))) throw notEmpty();
    tx.deleteBucket(name);
  });
}

export function listBuckets(repo: Repository): BucketInfo[] {
  return [...repo.state.buckets.values()]
    .map((b) => ({ name: b.name, created: b.created }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function headBucket(repo: Repository, name: string): BucketInfo {
  const b = repo.state.buckets.get(name);
  if (!b) throw noSuchBucket(name);
  return { name: b.name, created: b.created };
}

/** A bucket configuration blob by name, or undefined when not set. */
export function getBucketConfig(repo: Repository, bucket: string, name: string): Uint8Array | undefined {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw noSuchBucket(bucket);
  return b.configs.get(name);
}

/** Sets (or with null removes) a bucket configuration blob. */
export async function putBucketConfig(repo: Repository, bucket: string, name: string, value: Uint8Array | null): Promise<void> {
  await repo.run(async (tx) => {
    if (!tx.bucket(bucket)) throw noSuchBucket(bucket);
    tx.setConfig(bucket, name, value);
  });
}
