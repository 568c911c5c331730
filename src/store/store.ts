/**
 * @module The Store API: what the S3 layer calls. One method per operation family; all
 * state changes go through the repository's group commit.
 *
 * Errors are StoreError with stable codes (errors.ts); nothing here knows HTTP. Provider
 * errors are wrapped in StoreErrors at this boundary (boundary.ts, applied below the class).
 */
// Node-only: installs the hardware CRC32C (when it loads and checks out) for every flavorless
// CRC32C of the store: pack entries, index runs, stored segments.
import '../checksum/native-crc32c.js';
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
import * as lockConfig from './object-lock-config.js';
import * as lockOps from './object-lock-ops.js';
import type { Retention } from './object-lock.js';
import { getVersion, versionAt, type PastState } from './versions-read.js';
import { listVersions, type ListVersionsOptions, type ListVersionsResult } from './versions-list.js';
import { removeVersion, type RemoveOptions, type RemoveOutcome } from './versions-remove.js';
import { updateVersion } from './versions-update.js';
import { getVersioning, putVersioning, type VersioningStatus } from './versioning.js';
import { forkBucket, type ForkOptions, type ForkResult } from './fork.js';
import { clearHistoryWindow, getHistoryWindow, hasOwnHistoryWindow, putHistoryWindow } from './history-window.js';
import { expireHistory, type HistoryExpiryOptions, type ExpiryReport } from './expiry.js';
import { stateAsOf, type AsOfState } from './as-of.js';
import { listObjectsAsOf, type AsOfListOptions } from './as-of-list.js';
import { restoreBucket, type RestoreOptions, type RestoreResult } from './restore.js';
import { listHistory, type HistoryOptions, type HistoryPage } from './history.js';
import { guardGetResult, guardMethods } from './boundary.js';

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
  /** DELETE: a delete marker, the key's removal, or (opts.versionId) one version's removal (objects-misc.ts). */
  deleteObject(bucket: string, key: string, conditions?: WriteConditions, opts?: misc.DeleteOptions): Promise<misc.DeleteResult> {
    return misc.deleteObject(this.repo, bucket, key, conditions, opts);
  }
  deleteObjects(bucket: string, targets: readonly (string | misc.DeleteTarget)[], opts?: Omit<misc.DeleteOptions, 'versionId'>): Promise<misc.DeleteResult[]> {
    return misc.deleteObjects(this.repo, bucket, targets, opts);
  }
  copyObject(src: { bucket: string; key: string; versionId?: string }, dst: { bucket: string; key: string }, opts?: misc.CopyOptions): Promise<misc.CopyResult> {
    return misc.copyObject(this.repo, src, dst, opts);
  }
  /** The version a copy reads (the live one, or src.versionId; see objects-misc.copySource). */
  copySource(src: { bucket: string; key: string; versionId?: string }): Promise<ObjectVersion> {
    return misc.copySource(this.repo, src);
  }

  // Versions (versions-*.ts, versioning.ts)
  getVersioning(bucket: string): VersioningStatus | undefined {
    return getVersioning(this.repo, bucket);
  }
  putVersioning(bucket: string, status: VersioningStatus): Promise<void> {
    return putVersioning(this.repo, bucket, status);
  }
  /** One version or delete marker by id (`null` included), and whether it is the latest. */
  getVersion(bucket: string, key: string, versionId: string): Promise<{ version: ObjectVersion; isLatest: boolean }> {
    return getVersion(this.repo, bucket, key, versionId);
  }
  listVersions(bucket: string, opts?: ListVersionsOptions): Promise<ListVersionsResult> {
    return listVersions(this.repo, bucket, opts);
  }
  /** The one permanent removal of a version (versions-remove.ts). */
  removeVersion(bucket: string, key: string, versionId: string, opts?: RemoveOptions): Promise<RemoveOutcome> {
    return removeVersion(this.repo, bucket, key, versionId, opts);
  }
  /** Rewrites one version's record (the current one when versionId is undefined; versions-update.ts). */
  updateVersion(bucket: string, key: string, versionId: string | undefined, fn: (v: ObjectVersion) => ObjectVersion): Promise<ObjectVersion> {
    return updateVersion(this.repo, bucket, key, versionId, fn);
  }
  /** The write of `key` current at `time` (ms), for point-in-time reads (versions-read.ts versionAt). */
  versionAt(bucket: string, key: string, time: number): Promise<PastState | undefined> {
    return versionAt(this.repo, bucket, key, time);
  }
  listObjects(bucket: string, opts?: ListOptions): Promise<ListResult> {
    return listObjects(this.repo, bucket, opts);
  }

  // History (history-window.ts, as-of*.ts)
  /** The bucket's history window, ms: its own, else the server default (repository option retentionMs, 30 days). */
  getHistoryWindow(bucket: string): number {
    return getHistoryWindow(this.repo, bucket);
  }
  putHistoryWindow(bucket: string, ms: number): Promise<void> {
    return putHistoryWindow(this.repo, bucket, ms);
  }
  /** Whether the bucket set its own window (false: it follows the server default, --retention). */
  hasOwnHistoryWindow(bucket: string): boolean {
    return hasOwnHistoryWindow(this.repo, bucket);
  }
  clearHistoryWindow(bucket: string): Promise<void> {
    return clearHistoryWindow(this.repo, bucket);
  }
  /** See expiry.ts expireHistory. */
  expireHistory(opts?: HistoryExpiryOptions): Promise<ExpiryReport> {
    return expireHistory(this.repo, opts);
  }
  /** What `key` was at `at` (ms), inside the history window (as-of.ts). */
  stateAsOf(bucket: string, key: string, at: number): Promise<AsOfState> {
    return stateAsOf(this.repo, bucket, key, at);
  }
  /** ListObjects as of `opts.at` (as-of-list.ts). */
  listObjectsAsOf(bucket: string, opts: AsOfListOptions): Promise<ListResult> {
    return listObjectsAsOf(this.repo, bucket, opts);
  }
  /** One page of what changed when in the bucket (history.ts). */
  listHistory(bucket: string, opts?: HistoryOptions): Promise<HistoryPage> {
    return listHistory(this.repo, bucket, opts);
  }
  /** Restores the bucket (or a prefix) to its state at opts.to, as new writes (restore.ts). */
  restore(bucket: string, opts: RestoreOptions): Promise<RestoreResult> {
    return restoreBucket(this.repo, bucket, opts);
  }
  getObjectTagging(bucket: string, key: string, versionId?: string): Promise<Record<string, string>> {
    return misc.getObjectTagging(this.repo, bucket, key, versionId);
  }
  putObjectTagging(bucket: string, key: string, tags: Record<string, string>, versionId?: string): Promise<string> {
    return misc.putObjectTagging(this.repo, bucket, key, tags, versionId);
  }
  /** Sets the canned ACL of the live version or of `versionId` (see objects-misc.putObjectAcl). */
  putObjectAcl(bucket: string, key: string, acl: string, versionId?: string): Promise<string> {
    return misc.putObjectAcl(this.repo, bucket, key, acl, versionId);
  }

  // Object Lock (object-lock-config.ts, object-lock-ops.ts)
  /** The bucket's Object Lock configuration; undefined when lock is not enabled (NoSuchBucket). */
  bucketLockConfig(bucket: string): lockConfig.BucketLockConfig | undefined {
    return lockConfig.bucketLockConfig(this.repo, bucket);
  }
  putBucketLockConfig(bucket: string, config: lockConfig.BucketLockConfig): Promise<void> {
    return lockConfig.putBucketLockConfig(this.repo, bucket, config);
  }
  lockedVersion(bucket: string, key: string, versionId: string | undefined): Promise<ObjectVersion> {
    return lockOps.lockedVersion(this.repo, bucket, key, versionId);
  }
  putObjectRetention(bucket: string, key: string, versionId: string | undefined, retention: Retention | undefined, opts: { bypassGovernance: boolean }): Promise<string> {
    return lockOps.putObjectRetention(this.repo, bucket, key, versionId, retention, opts);
  }
  putObjectLegalHold(bucket: string, key: string, versionId: string | undefined, on: boolean): Promise<string> {
    return lockOps.putObjectLegalHold(this.repo, bucket, key, versionId, on);
  }
  /** Whether the object an upload completes will carry an Object Lock (its parts then need a digest). */
  uploadLocked(bucket: string, key: string, uploadId: string): Promise<boolean> {
    return lockOps.uploadLocked(this.repo, bucket, key, uploadId);
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

// The error boundary: a ProviderError never leaves a Store method (nor a GET body) unwrapped.
guardMethods(Store.prototype, { getObject: guardGetResult });
