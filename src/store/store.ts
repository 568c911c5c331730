/**
 * @module The Store API: what the S3 layer calls. One method per operation family; all
 * state changes go through the repository's group commit.
 *
 * Errors are StoreError with stable codes (errors.ts); nothing here knows HTTP.
 */
import type { Provider } from '../provider/provider.js';
import { Repository, type RepositoryOptions } from './repository.js';
import * as buckets from './buckets.js';
import { putObject, type PutOptions, type PutResult } from './objects-write.js';
import { putObjectUnsized, type UnsizedPutOptions } from './objects-unsized.js';
import { getObject, headObject, liveVersion, type GetOptions, type GetResult } from './objects-read.js';
import * as misc from './objects-misc.js';
import { listObjects, type ListOptions, type ListResult } from './list.js';
import * as mp from './multipart.js';
import * as ul from './upload-list.js';
import { expireUploads, type ExpiryOptions, type ExpiryResult } from './upload-expiry.js';
import type { WriteConditions } from './conditions.js';
import type { ObjectVersion } from './records.js';
import * as keys from './keys.js';
import type { KeyRecord } from './keys-record.js';
import { forkBucket, type ForkOptions, type ForkResult } from './fork.js';

export type StoreOptions = RepositoryOptions;

export class Store {
  readonly repo: Repository;
  readonly #release: (() => Promise<void>) | undefined;

  private constructor(repo: Repository, release?: () => Promise<void>) {
    this.repo = repo;
    this.#release = release;
  }

  /**
   * Opens (initialising if empty) the repository on `provider`. See Repository.open.
   * `release` runs after close() (e.g. closing the provider and a directory lock).
   */
  static async open(provider: Provider, options: StoreOptions = {}, release?: () => Promise<void>): Promise<Store> {
    return new Store(await Repository.open(provider, options), release);
  }

  // Buckets
  /**
   * See buckets.createBucket: `owner` (an access key id) and `configs` are recorded in the
   * commit that creates the bucket.
   */
  createBucket(name: string, owner?: string, configs?: ReadonlyArray<readonly [string, Uint8Array]>): Promise<buckets.BucketInfo> {
    return buckets.createBucket(this.repo, name, owner, configs);
  }
  deleteBucket(name: string): Promise<void> {
    return buckets.deleteBucket(this.repo, name);
  }
  listBuckets(): buckets.BucketInfo[] {
    return buckets.listBuckets(this.repo);
  }
  headBucket(name: string): buckets.BucketInfo {
    return buckets.headBucket(this.repo, name);
  }
  /** Forks bucket `source` into the new bucket `name` in O(1) (see fork.ts for what it takes and throws). */
  forkBucket(source: string, name: string, opts?: ForkOptions): Promise<ForkResult> {
    return forkBucket(this.repo, source, name, opts);
  }
  getBucketConfig(bucket: string, name: string): Uint8Array | undefined {
    return buckets.getBucketConfig(this.repo, bucket, name);
  }
  putBucketConfig(bucket: string, name: string, value: Uint8Array | null): Promise<void> {
    return buckets.putBucketConfig(this.repo, bucket, name, value);
  }

  // Objects
  putObject(bucket: string, key: string, body: AsyncIterable<Uint8Array>, opts: PutOptions): Promise<PutResult> {
    return putObject(this.repo, bucket, key, body, opts);
  }
  /** PutObject for a body of unknown length (chunked transfer, POST Object). */
  putObjectUnsized(bucket: string, key: string, body: AsyncIterable<Uint8Array>, opts: UnsizedPutOptions): Promise<PutResult> {
    return putObjectUnsized(this.repo, bucket, key, body, opts);
  }
  getObject(bucket: string, key: string, opts?: GetOptions): Promise<GetResult> {
    return getObject(this.repo, bucket, key, opts);
  }
  headObject(bucket: string, key: string, opts?: GetOptions): Promise<GetResult> {
    return headObject(this.repo, bucket, key, opts);
  }
  /** The live version of a key (NoSuchBucket / NoSuchKey). */
  version(bucket: string, key: string): Promise<ObjectVersion> {
    return liveVersion(this.repo, bucket, key);
  }
  deleteObject(bucket: string, key: string, conditions?: WriteConditions): Promise<misc.DeleteResult> {
    return misc.deleteObject(this.repo, bucket, key, conditions);
  }
  deleteObjects(bucket: string, targets: readonly (string | misc.DeleteTarget)[]): Promise<misc.DeleteResult[]> {
    return misc.deleteObjects(this.repo, bucket, targets);
  }
  copyObject(src: { bucket: string; key: string }, dst: { bucket: string; key: string }, opts?: misc.CopyOptions): Promise<ObjectVersion> {
    return misc.copyObject(this.repo, src, dst, opts);
  }
  listObjects(bucket: string, opts?: ListOptions): Promise<ListResult> {
    return listObjects(this.repo, bucket, opts);
  }
  getObjectTagging(bucket: string, key: string): Promise<Record<string, string>> {
    return misc.getObjectTagging(this.repo, bucket, key);
  }
  putObjectTagging(bucket: string, key: string, tags: Record<string, string>): Promise<string> {
    return misc.putObjectTagging(this.repo, bucket, key, tags);
  }
  /** Sets the live version's canned ACL (see objects-misc.putObjectAcl). */
  putObjectAcl(bucket: string, key: string, acl: string): Promise<string> {
    return misc.putObjectAcl(this.repo, bucket, key, acl);
  }

  // Multipart
  createMultipartUpload(bucket: string, key: string, opts?: mp.CreateUploadOptions): Promise<string> {
    return mp.createMultipartUpload(this.repo, bucket, key, opts);
  }
  uploadPart(
    bucket: string,
    key: string,
    uploadId: string,
    partNumber: number,
    body: AsyncIterable<Uint8Array>,
    opts: Parameters<typeof mp.uploadPart>[6]
  ): Promise<mp.PartResult> {
    return mp.uploadPart(this.repo, bucket, key, uploadId, partNumber, body, opts);
  }
  completeMultipartUpload(
    bucket: string,
    key: string,
    uploadId: string,
    parts: readonly mp.CompletePart[],
    opts?: Parameters<typeof mp.completeMultipartUpload>[5]
  ): Promise<ObjectVersion> {
    return mp.completeMultipartUpload(this.repo, bucket, key, uploadId, parts, opts);
  }
  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    return mp.abortMultipartUpload(this.repo, bucket, key, uploadId);
  }
  listParts(bucket: string, key: string, uploadId: string, opts?: Parameters<typeof ul.listParts>[4]): Promise<ul.ListPartsResult> {
    return ul.listParts(this.repo, bucket, key, uploadId, opts);
  }
  listMultipartUploads(bucket: string, opts?: ul.ListUploadsOptions): Promise<ul.ListUploadsResult> {
    return ul.listMultipartUploads(this.repo, bucket, opts);
  }
  /** Aborts uploads in progress and drops completion records older than opts.maxAgeMs (upload-expiry.ts). */
  expireUploads(opts: ExpiryOptions): Promise<ExpiryResult> {
    return expireUploads(this.repo, opts);
  }

  // Access keys (keys.ts)
  createKey(k: keys.NewKey): Promise<KeyRecord> {
    return keys.createKey(this.repo, k);
  }
  changeKey(id: string, mode: 'grant' | 'revoke', change: keys.KeyChange): Promise<KeyRecord> {
    return keys.changeKey(this.repo, id, mode, change);
  }
  deleteKey(id: string): Promise<{ key: KeyRecord; owned: string[] }> {
    return keys.deleteKey(this.repo, id);
  }
  getKey(id: string): KeyRecord | undefined {
    return keys.getKey(this.repo, id);
  }
  listKeys(): KeyRecord[] {
    return keys.listKeys(this.repo);
  }
  /** The access key id owning `bucket`, or undefined (missing bucket, or owned by nobody). */
  bucketOwner(bucket: string): string | undefined {
    return keys.bucketOwner(this.repo, bucket);
  }

  /** Forces a checkpoint (overlay -> runs, new root). */
  checkpoint(): Promise<void> {
    return this.repo.checkpoint();
  }

  async close(): Promise<void> {
    await this.repo.close();
    await this.#release?.();
  }
}
