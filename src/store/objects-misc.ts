/**
 * @module DeleteObject, DeleteObjects, CopyObject and object tagging: all metadata-only,
 * except a copy that changes the body's encryption (objects-copy-encrypted.ts).
 */
import type { Repository } from './repository.js';
import { currentVersion, makeVersion } from './objects-write.js';
import { bodyDecryptor, liveVersion } from './objects-read.js';
import { copyNeedsReencryption, copyWithReencryption } from './objects-copy-encrypted.js';
import type { EncryptionRequest, KeyRing } from './crypto/envelope.js';
import { unsealVersionChecksums } from './crypto/sealed-checksums.js';
import { checkRead, checkWrite, type ReadConditions, type WriteConditions } from './conditions.js';
import { encodeVersions, TOMBSTONE, type ChecksumName, type ObjectAccess, type ObjectVersion } from './records.js';
import { checkKey } from './validate.js';
import { StoreError } from './errors.js';
import type { LockRequest } from './object-lock-config.js';

/** S3 allows at most 1000 keys per DeleteObjects request. */
export const MAX_DELETE_KEYS = 1000;

export interface DeleteResult {
  key: string;
  /** False when the key did not exist (S3 still reports success). */
  existed: boolean;
  error?: StoreError;
}

/** Deletes `key`; succeeds whether or not it exists (S3 semantics). */
export async function deleteObject(repo: Repository, bucket: string, key: string, conditions?: WriteConditions): Promise<DeleteResult> {
  checkKey(key);
  return repo.run(async (tx) => {
    tx.requireBucket(bucket);
    const cur = await currentVersion(tx, bucket, key);
    if (conditions?.ifMatch !== undefined) checkWrite(cur, { ifMatch: conditions.ifMatch });
    if (cur) tx.put(bucket, key, TOMBSTONE);
    return { key, existed: !!cur };
  });
}

/** One entry of a DeleteObjects request. */
export interface DeleteTarget {
  key: string;
  /** Only the current version may be named, and buckets are unversioned: it is `null`. */
  versionId?: string;
  /** Delete only if the current ETag is this one (conditional delete). */
  etag?: string;
}

/** The version id S3 gives objects of a bucket that was never versioned. */
export const NULL_VERSION_ID = 'null';

/**
 * Deletes up to 1000 keys in one commit; per-key failures are reported, not thrown. A
 * target naming a version other than the current (`null`) one fails with NoSuchVersion
 * and deletes nothing; one with an ETag fails with PreconditionFailed when the current
 * ETag differs, NoSuchKey when there is no current object.
 */
export async function deleteObjects(repo: Repository, bucket: string, targets: readonly (string | DeleteTarget)[]): Promise<DeleteResult[]> {
  if (targets.length > MAX_DELETE_KEYS) throw new StoreError('InvalidArgument', `at most ${MAX_DELETE_KEYS} keys per request`);
  return repo.run(async (tx) => {
    tx.requireBucket(bucket);
    const out: DeleteResult[] = [];
    for (const target of targets) {
      const t = typeof target === 'string' ? { key: target } : target;
      try {
        checkKey(t.key);
        if (t.versionId !== undefined && t.versionId !== NULL_VERSION_ID) {
          throw new StoreError('NoSuchVersion', 'The specified version does not exist.', { detail: { Key: t.key, VersionId: t.versionId } });
        }
        const cur = await currentVersion(tx, bucket, t.key);
        if (t.etag !== undefined) checkWrite(cur, { ifMatch: t.etag });
        if (cur) tx.put(bucket, t.key, TOMBSTONE);
        out.push({ key: t.key, existed: !!cur });
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        out.push({ key: t.key, existed: false, error: err });
      }
    }
    return out;
  });
}

export interface CopyOptions {
  /** 'COPY' keeps the source metadata; 'REPLACE' uses `metadata`. */
  metadataDirective?: 'COPY' | 'REPLACE';
  taggingDirective?: 'COPY' | 'REPLACE';
  metadata?: Pick<ObjectVersion, 'system' | 'userMetadata'> & { contentType?: string };
  tags?: Record<string, string>;
  sourceConditions?: ReadConditions;
  conditions?: WriteConditions;
  /** Keys that open the source (SSE-S3 root; the copy-source customer key for SSE-C). */
  sourceKeys?: KeyRing;
  /** How the copy is encrypted (undefined: plaintext). */
  encryption?: EncryptionRequest;
  /** The request named the destination's encryption itself (a copy onto itself is then a change). */
  encryptionExplicit?: boolean;
  /** The copy's owner and ACL (never the source's: S3 gives a copy the request's ACL). */
  access?: ObjectAccess;
  /** The checksum algorithm the copy must carry (x-amz-checksum-algorithm); default: the source's. */
  checksumAlgorithm?: ChecksumName;
  /** The copy's Object Lock (never the source's: S3 gives a copy the request's, or the bucket default). */
  lock?: LockRequest;
}

/**
 * Whether a copy asking for checksum `alg` can keep the source's checksums: the source
 * carries a full-object `alg` as its primary one. Otherwise the body is read and hashed
 * again. Pure.
 */
export function copyKeepsChecksum(source: ObjectVersion, alg: ChecksumName | undefined): boolean {
  return alg === undefined || (source.checksums?.type === 'FULL_OBJECT' && source.checksums.primary === alg);
}

const COPY_SELF =
  "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.";

function checkSourceConditions(source: ObjectVersion, conditions: ReadConditions | undefined): void {
  // S3 maps failed copy-source conditions to 412 (never 304).
  try {
    checkRead(source, conditions);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'NotModified') throw new StoreError('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
    throw err;
  }
}

/**
 * Copies the live source version to `dstKey`. When the encryption stays the same (and the
 * source carries the checksum asked for) the new version points at the same body (no byte
 * is copied); otherwise the body is written again, re-encrypted and re-hashed (see
 * objects-copy-encrypted.ts). Source preconditions -> 'PreconditionFailed'; an SSE-C
 * source without its key -> 'InvalidRequest', with another key -> 'AccessDenied'; copying
 * an object onto itself without changing anything -> 'InvalidRequest' (as S3 does).
 */
export async function copyObject(
  repo: Repository,
  src: { bucket: string; key: string },
  dst: { bucket: string; key: string },
  opts: CopyOptions = {}
): Promise<ObjectVersion> {
  checkKey(src.key);
  checkKey(dst.key);
  const replace = opts.metadataDirective === 'REPLACE';
  const changesMeta = replace || opts.taggingDirective === 'REPLACE' || opts.encryptionExplicit === true;
  const self = src.bucket === dst.bucket && src.key === dst.key;
  const look = await liveVersion(repo, src.bucket, src.key);
  if (!repo.state.buckets.has(dst.bucket)) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: dst.bucket } });
  // The body is written again when its encryption changes or the copy asks for a checksum
  // the source does not carry (never a copy claiming a checksum nobody computed).
  const rewrite = (v: ObjectVersion) => copyNeedsReencryption(v, opts.encryption) || !copyKeepsChecksum(v, opts.checksumAlgorithm);
  const reencrypt = rewrite(look);
  if (self && !changesMeta && !reencrypt) throw new StoreError('InvalidRequest', COPY_SELF);
  checkSourceConditions(look, opts.sourceConditions);
  const metaOf = (source: ObjectVersion) => {
    const meta = replace ? opts.metadata ?? { system: {}, userMetadata: {} } : source;
    const tags = opts.taggingDirective === 'REPLACE' ? opts.tags ?? {} : source.tags;
    return {
      ...(meta.contentType !== undefined ? { contentType: meta.contentType } : {}),
      system: meta.system,
      userMetadata: meta.userMetadata,
      tags,
      ...(opts.access ? { access: opts.access } : {}),
      ...(opts.lock ? { lock: opts.lock } : {}),
    };
  };
  if (reencrypt) {
    const decrypt = bodyDecryptor(look, opts.sourceKeys);
    return copyWithReencryption(repo, look, decrypt, dst, metaOf(look), opts);
  }
  // The source's key is checked even when the body is shared (S3 asks for it).
  bodyDecryptor(look, opts.sourceKeys, false);
  const stored = await repo.run(async (tx) => {
    tx.requireBucket(src.bucket);
    tx.requireBucket(dst.bucket);
    const source = await currentVersion(tx, src.bucket, src.key);
    if (!source) throw new StoreError('NoSuchKey', 'The specified key does not exist.', { detail: { Key: src.key } });
    checkSourceConditions(source, opts.sourceConditions);
    if (source.versionId !== look.versionId) {
      // Overwritten since the look: it must still be shareable, and opened by the same key.
      if (rewrite(source)) {
        throw new StoreError('ConditionalRequestConflict', 'The copy source changed during the copy; retry the request.');
      }
      bodyDecryptor(source, opts.sourceKeys, false);
    }
    checkWrite(await currentVersion(tx, dst.bucket, dst.key), opts.conditions);
    const version = makeVersion(
      tx,
      metaOf(source),
      { size: source.size, md5: source.md5, partCount: source.partCount, location: source.location },
      source.checksums
    );
    if (source.parts) version.parts = source.parts;
    if (source.encryption) version.encryption = source.encryption;
    tx.put(dst.bucket, dst.key, encodeVersions([version]));
    return version;
  });
  // A shared SSE-C body keeps its sealed checksums; the answer shows them (same key).
  const key = stored.encryption?.sealedChecksums ? bodyDecryptor(stored, opts.sourceKeys, false)?.dataKey : undefined;
  return key ? unsealVersionChecksums(stored, key) : stored;
}

/**
 * Sets the canned ACL of the live version (same version id, same body, same owner); the
 * name is the S3 layer's to validate. Throws StoreError NoSuchBucket / NoSuchKey.
 */
export async function putObjectAcl(repo: Repository, bucket: string, key: string, acl: string): Promise<string> {
  return repo.run(async (tx) => {
    tx.requireBucket(bucket);
    const v = await currentVersion(tx, bucket, key);
    if (!v) throw new StoreError('NoSuchKey', 'The specified key does not exist.', { detail: { Key: key } });
    const { access: old, ...rest } = v;
    const owner = old?.owner;
    // The defaults (bucket owner, private) are stored as nothing.
    const access: ObjectAccess | undefined = owner === undefined && acl === 'private' ? undefined : owner === undefined ? { acl } : { owner, acl };
    tx.put(bucket, key, encodeVersions([access ? { ...rest, access } : rest]));
    return v.versionId;
  });
}

/** The tags of the live version. */
export async function getObjectTagging(repo: Repository, bucket: string, key: string): Promise<Record<string, string>> {
  return (await liveVersion(repo, bucket, key)).tags;
}

/** Replaces the tags of the live version (same version id, same body). */
export async function putObjectTagging(repo: Repository, bucket: string, key: string, tags: Record<string, string>): Promise<string> {
  return repo.run(async (tx) => {
    tx.requireBucket(bucket);
    const v = await currentVersion(tx, bucket, key);
    if (!v) throw new StoreError('NoSuchKey', 'The specified key does not exist.', { detail: { Key: key } });
    tx.put(bucket, key, encodeVersions([{ ...v, tags }]));
    return v.versionId;
  });
}
