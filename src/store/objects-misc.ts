/**
 * @module DeleteObject, DeleteObjects, CopyObject and object tagging: all metadata-only,
 * except a copy that changes the body's encryption (objects-copy-encrypted.ts).
 */
import type { BudgetAccount } from './budget.js';
import type { Repository } from './repository.js';
import { currentVersion, makeVersion } from './objects-write.js';
import { bodyDecryptor, liveVersion } from './objects-read.js';
import { copyNeedsReencryption, copyWithReencryption } from './objects-copy-encrypted.js';
import type { EncryptionRequest, KeyRing } from './crypto/envelope.js';
import { unsealVersionChecksums } from './crypto/sealed-checksums.js';
import { checkRead, checkWrite, type ReadConditions, type WriteConditions } from './conditions.js';
import { type ChecksumName, type ObjectAccess, type ObjectVersion } from './records.js';
import { checkKey } from './validate.js';
import { StoreError } from './errors.js';
import type { LockRequest } from './object-lock-config.js';
import type { Tx } from './tx.js';
import { stageDelete, stageVersion } from './versions-write.js';
import { stageRemoveVersion, type RemoveOptions } from './versions-remove.js';
import { markerNotAllowed, stageUpdateVersion, updateVersion } from './versions-update.js';
import { findVersion, getVersion, noSuchVersion } from './versions-read.js';

/** S3 allows at most 1000 keys per DeleteObjects request. */
export const MAX_DELETE_KEYS = 1000;

export interface DeleteResult {
  key: string;
  /** False when the key (or the version named) did not exist (S3 still reports success). */
  existed: boolean;
  /** The delete marker made, or the version named. */
  versionId?: string;
  /** A delete marker was made, or the version removed was one. */
  deleteMarker?: boolean;
  error?: StoreError;
}

/** What DELETE asks besides the key. */
export interface DeleteOptions {
  /** Remove this version permanently (versions-remove.ts) instead of deleting the key. */
  versionId?: string;
  /** Object lock: x-amz-bypass-governance-retention from a key allowed to bypass. */
  bypassGovernance?: boolean;
  /** The owner recorded on a delete marker made (not the bucket owner). */
  access?: ObjectAccess;
}

/**
 * Deletes `key` (S3 semantics: success whether or not it exists): in a versioned bucket a
 * delete marker, else the key's removal (versions-write.ts stageDelete); with a versionId, the
 * permanent removal of that version (versions-remove.ts). An If-Match condition is checked
 * against the current object, or the named version. Throws StoreError 'NoSuchBucket',
 * 'InvalidArgument' (malformed id), 'PreconditionFailed'.
 */
export async function deleteObject(
  repo: Repository,
  bucket: string,
  key: string,
  conditions?: WriteConditions,
  opts: DeleteOptions = {}
): Promise<DeleteResult> {
  checkKey(key);
  return repo.run((tx) => stageDeleteTarget(tx, bucket, { key, ...(opts.versionId !== undefined ? { versionId: opts.versionId } : {}), ...(conditions?.ifMatch !== undefined ? { etag: conditions.ifMatch } : {}) }, opts));
}

async function stageDeleteTarget(tx: Tx, bucket: string, t: DeleteTarget, opts: DeleteOptions): Promise<DeleteResult> {
  tx.requireBucket(bucket);
  if (t.versionId !== undefined) {
    const bypass = t.bypassGovernance ?? opts.bypassGovernance;
    const removeOpts: RemoveOptions = { ...(bypass ? { bypassGovernance: true } : {}) };
    if (t.etag !== undefined) {
      const etag = t.etag;
      removeOpts.check = (v) => checkWrite(v.deleteMarker ? undefined : v, { ifMatch: etag });
    }
    const out = await stageRemoveVersion(tx, bucket, t.key, t.versionId, removeOpts);
    if (!out.removed && t.etag !== undefined) checkWrite(undefined, { ifMatch: t.etag });
    return { key: t.key, existed: out.removed, versionId: t.versionId, deleteMarker: out.deleteMarker };
  }
  if (t.etag !== undefined) checkWrite(await currentVersion(tx, bucket, t.key), { ifMatch: t.etag });
  const out = await stageDelete(tx, bucket, t.key, opts.access);
  const res: DeleteResult = { key: t.key, existed: out.existed };
  if (out.marker) {
    res.deleteMarker = true;
    res.versionId = out.marker.versionId;
  }
  return res;
}

/** One entry of a DeleteObjects request. */
export interface DeleteTarget {
  key: string;
  /** Remove this version permanently instead of deleting the key. */
  versionId?: string;
  /** Delete only if the current ETag (or the named version's) is this one. */
  etag?: string;
  /** Object lock: this target may bypass governance retention (the key is allowed for it); default: the request's. */
  bypassGovernance?: boolean;
}

/** The version id S3 gives objects of a bucket that was never versioned. */
export const NULL_VERSION_ID = 'null';

/**
 * Deletes up to 1000 keys or versions in one commit, each as deleteObject does; per-key
 * failures are reported, not thrown (a malformed version id: InvalidArgument; an ETag that
 * does not match: PreconditionFailed; with an ETag and nothing current: NoSuchKey).
 */
export async function deleteObjects(
  repo: Repository,
  bucket: string,
  targets: readonly (string | DeleteTarget)[],
  opts: Omit<DeleteOptions, 'versionId'> = {}
): Promise<DeleteResult[]> {
  if (targets.length > MAX_DELETE_KEYS) throw new StoreError('InvalidArgument', `at most ${MAX_DELETE_KEYS} keys per request`);
  return repo.run(async (tx) => {
    tx.requireBucket(bucket);
    const out: DeleteResult[] = [];
    for (const target of targets) {
      const t = typeof target === 'string' ? { key: target } : target;
      try {
        checkKey(t.key);
        out.push(await stageDeleteTarget(tx, bucket, t, opts));
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
  /** What a copy that rewrites the body reserves memory from (default the whole pending budget;
   * a request's access-key share: s3/key-share.ts), and whose bulk writes they are. */
  budget?: BudgetAccount;
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
  src: { bucket: string; key: string; versionId?: string },
  dst: { bucket: string; key: string },
  opts: CopyOptions = {}
): Promise<CopyResult> {
  checkKey(src.key);
  checkKey(dst.key);
  const replace = opts.metadataDirective === 'REPLACE';
  const changesMeta = replace || opts.taggingDirective === 'REPLACE' || opts.encryptionExplicit === true;
  const self = src.bucket === dst.bucket && src.key === dst.key && src.versionId === undefined;
  const look = await copySource(repo, src);
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
  const sourceVersionId = look.versionId;
  if (reencrypt) {
    const decrypt = bodyDecryptor(look, opts.sourceKeys);
    return { ...(await copyWithReencryption(repo, look, decrypt, dst, metaOf(look), opts)), copySourceVersionId: sourceVersionId };
  }
  // The source's key is checked even when the body is shared (S3 asks for it).
  bodyDecryptor(look, opts.sourceKeys, false);
  const stored = await repo.run(async (tx) => {
    tx.requireBucket(src.bucket);
    tx.requireBucket(dst.bucket);
    const source = src.versionId === undefined ? await currentVersion(tx, src.bucket, src.key) : (await findVersion(tx.logSources(src.bucket, src.key), src.key, src.versionId))?.entry.record;
    if (!source) {
      if (src.versionId !== undefined) throw noSuchVersion(src.key, src.versionId);
      throw new StoreError('NoSuchKey', 'The specified key does not exist.', { detail: { Key: src.key } });
    }
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
    stageVersion(tx, dst.bucket, dst.key, version);
    return version;
  });
  // A shared SSE-C body keeps its sealed checksums; the answer shows them (same key).
  const key = stored.encryption?.sealedChecksums ? bodyDecryptor(stored, opts.sourceKeys, false)?.dataKey : undefined;
  return { ...(key ? unsealVersionChecksums(stored, key) : stored), copySourceVersionId: sourceVersionId };
}

/** A copy's new version, and the S3 id of the source version it copied. */
export type CopyResult = ObjectVersion & { copySourceVersionId: string };

/**
 * The version a copy (or UploadPartCopy) reads: the live one, or `src.versionId`. Throws
 * StoreError 'NoSuchBucket', 'NoSuchKey', 'NoSuchVersion', 'InvalidArgument' (malformed id),
 * and 'InvalidRequest' for a delete marker named by id (S3 refuses to copy one).
 */
export async function copySource(repo: Repository, src: { bucket: string; key: string; versionId?: string }): Promise<ObjectVersion> {
  if (src.versionId === undefined) return liveVersion(repo, src.bucket, src.key);
  const { version } = await getVersion(repo, src.bucket, src.key, src.versionId);
  if (version.deleteMarker) {
    throw new StoreError('InvalidRequest', 'The source of a copy request may not specifically refer to a delete marker by version id.');
  }
  return version;
}

/**
 * Sets the canned ACL of the live version, or of `versionId` (same version id, same body,
 * same owner); the name is the S3 layer's to validate. Returns the version's S3 id. Throws
 * what versions-update.ts stageUpdateVersion throws (NoSuchBucket, NoSuchKey, NoSuchVersion,
 * MethodNotAllowed for a delete marker).
 */
export async function putObjectAcl(repo: Repository, bucket: string, key: string, acl: string, versionId?: string): Promise<string> {
  return repo.run(async (tx) => {
    const v = await stageUpdateVersion(tx, bucket, key, versionId, (old) => {
      const { access: prev, ...rest } = old;
      const owner = prev?.owner;
      // The defaults (bucket owner, private) are stored as nothing.
      const access: ObjectAccess | undefined = owner === undefined && acl === 'private' ? undefined : owner === undefined ? { acl } : { owner, acl };
      return access ? { ...rest, access } : rest;
    });
    return v.versionId;
  });
}

/** The tags of the live version, or of `versionId` (NoSuchKey / NoSuchVersion; a delete marker: MethodNotAllowed). */
export async function getObjectTagging(repo: Repository, bucket: string, key: string, versionId?: string): Promise<Record<string, string>> {
  if (versionId === undefined) return (await liveVersion(repo, bucket, key)).tags;
  const { version } = await getVersion(repo, bucket, key, versionId);
  if (version.deleteMarker) throw markerNotAllowed();
  return version.tags;
}

/** Replaces the tags of the live version, or of `versionId` (same version id, same body); returns its S3 id. */
export async function putObjectTagging(repo: Repository, bucket: string, key: string, tags: Record<string, string>, versionId?: string): Promise<string> {
  return (await updateVersion(repo, bucket, key, versionId, (v) => ({ ...v, tags }))).versionId;
}
