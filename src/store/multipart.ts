/**
 * @module Multipart uploads: create, upload part (a carrier), complete (metadata only: the
 * object lists the parts' chunks), abort. Uploads, parts and completions live in the bucket's
 * uploads keyspace (upload-keys.ts); listing them is upload-list.ts, expiry upload-expiry.ts.
 *
 * Checksums: every part is hashed with MD5, CRC64NVME and the upload's algorithm even when
 * the client sent none, so Complete can build either form S3 offers: COMPOSITE (the
 * algorithm over the concatenated part digests, "-N") or FULL_OBJECT (CRCs combined).
 *
 * Carrier chunks of parts that become unreachable (an aborted upload's, a replaced part's,
 * the parts a Complete leaves out) are deleted once the commit that orphans them is durable
 * (carrier-reaper.ts).
 */
import type { BudgetAccount } from './budget.js';
import { stageVersion } from './versions-write.js';
import type { Repository } from './repository.js';
import type { BucketState } from './state.js';
import { abandonChunks, carrierIo, ExactReader, writeCarrier } from './carrier.js';
import { checkDigests, finishDigest, startDigest, type BodyDigests, type ClaimOptions } from './digest.js';
import { openSlabHashing, writeSlabCarrier } from './carrier-slabs.js';
import type { HashPool } from '../checksum/hash-pool.js';
import { SEGMENT_SIZE } from './layout.js';
import { checkWrite, type WriteConditions } from './conditions.js';
import { currentVersion, hashPoolOf, makeVersion, type ObjectMetadata } from './objects-write.js';
import {
  completionVersion,
  decodeCompletion,
  decodePart,
  decodeUpload,
  encodeCompletion,
  encodePart,
  encodeUpload,
  partListDigest,
  type PartRecord,
  type UploadRecord,
} from './uploads.js';
import { encodeVersions, type ChecksumName, type ChecksumType, type ChunkRef, type ObjectVersion, type PartInfo } from './records.js';
import { checkObjectClaims, composeChecksums } from './multipart-checksums.js';
import { checkKey } from './validate.js';
import { StoreError } from './errors.js';
import { COMPLETION_PREFIX, completionKey, makeUploadId, partKey, uploadKey, type UploadRef } from './upload-keys.js';
import { partChunkBlobs, resolveUpload } from './upload-index.js';
import { completedEncryption, partCrypt, uploadDataKey, uploadEnvelope } from './crypto/upload-keys.js';
import type { EncryptionRequest, KeyRing, SseMode } from './crypto/envelope.js';
import { sealedLength } from './crypto/segment-cipher.js';
import { openDigests, sealDigests, sealVersionChecksums } from './crypto/sealed-checksums.js';

/** S3 limits: part numbers 1..10000; every part but the last at least 5 MiB; 5 GiB per part. */
export const MAX_PART_NUMBER = 10000;
export const MIN_PART_BYTES = 5 * 1024 * 1024;
export const MAX_PART_BYTES = 5 * 1024 ** 3;

export interface CreateUploadOptions extends ObjectMetadata {
  checksumAlgorithm?: ChecksumName;
  checksumType?: ChecksumType;
  /** Encrypt every part at rest (SSE-S3 / SSE-C) under this request's root key. */
  encryption?: EncryptionRequest;
}

export const noSuchUpload = (id: string) =>
  new StoreError('NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.', {
    detail: { UploadId: id },
  });

/** The committed state of `bucket`; StoreError 'NoSuchBucket'. */
export function requireBucketState(repo: Repository, bucket: string): BucketState {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  return b;
}

/**
 * Starts an upload of `bucket`/`key` and returns its id. Throws StoreError 'NoSuchBucket',
 * 'KeyTooLong' / 'InvalidArgument' (key), 'InvalidRequest' (checksum type and algorithm that
 * S3 does not combine), 'TooManyUploads' (the bucket already holds maxUploadsPerBucket uploads
 * in progress).
 */
export async function createMultipartUpload(repo: Repository, bucket: string, key: string, opts: CreateUploadOptions = {}): Promise<string> {
  checkKey(key);
  if (opts.checksumType === 'COMPOSITE' && opts.checksumAlgorithm === 'crc64nvme') {
    throw new StoreError('InvalidRequest', 'The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.');
  }
  if (opts.checksumType === 'FULL_OBJECT' && (opts.checksumAlgorithm === 'sha1' || opts.checksumAlgorithm === 'sha256')) {
    throw new StoreError('InvalidRequest', `The FULL_OBJECT checksum type cannot be used with the ${opts.checksumAlgorithm} checksum algorithm.`);
  }
  const record: UploadRecord = {
    key,
    initiated: 0,
    system: opts.system ?? {},
    userMetadata: opts.userMetadata ?? {},
    tags: opts.tags ?? {},
    // S3's defaults: CRC64NVME is full-object only; the other algorithms are composite.
    checksumType: opts.checksumType ?? (!opts.checksumAlgorithm || opts.checksumAlgorithm === 'crc64nvme' ? 'FULL_OBJECT' : 'COMPOSITE'),
  };
  if (opts.contentType !== undefined) record.contentType = opts.contentType;
  if (opts.checksumAlgorithm) record.checksumAlgorithm = opts.checksumAlgorithm;
  if (opts.encryption) record.encryption = uploadEnvelope(opts.encryption);
  if (opts.access) record.access = opts.access;
  if (opts.lock) record.lock = opts.lock;
  const cap = repo.maxUploadsPerBucket;
  return repo.run(async (tx) => {
    tx.requireBucket(bucket);
    if (tx.uploadsInProgress(bucket) >= cap) {
      throw new StoreError(
        'TooManyUploads',
        `Bucket ${bucket} already has ${cap} multipart uploads in progress, the most this server allows per bucket. ` +
          'Complete or abort some (ListMultipartUploads shows them); unfinished uploads are also aborted once they expire.',
        { detail: { BucketName: bucket, MaxUploads: cap } }
      );
    }
    const u: UploadRef = { key, initiated: tx.time, uploadId: makeUploadId(tx.time) };
    tx.beginUpload(bucket, u, encodeUpload({ ...record, initiated: tx.time }));
    return u.uploadId;
  });
}

/**
 * The upload `uploadId` of bucket/key as committed, with its record. Throws StoreError
 * 'NoSuchBucket', 'NoSuchUpload' (unknown id, ended, or of another key).
 */
export async function openUpload(repo: Repository, bucket: string, key: string, uploadId: string): Promise<{ state: BucketState; ref: UploadRef; record: UploadRecord }> {
  const state = requireBucketState(repo, bucket);
  const ref = await resolveUpload(state.uploads, key, uploadId);
  const raw = ref && (await state.uploads.lookup(uploadKey(ref)));
  if (!ref || !raw) throw noSuchUpload(uploadId);
  const record = decodeUpload(raw);
  if (record.key !== key) throw noSuchUpload(uploadId);
  return { state, ref, record };
}

export interface PartResult {
  etag: string;
  values: Partial<Record<ChecksumName, Uint8Array>>;
  /** How the upload's parts are encrypted, when they are. */
  mode?: SseMode;
}

/**
 * Stores part `partNumber` of the upload (replacing an earlier one): the body streamed into
 * carrier chunks, sealed under the upload's data key when it is encrypted, hashed with MD5,
 * CRC64NVME and the upload's (or the client's) algorithm, claims verified. Nothing is read
 * before the part number, size, upload, SSE-C key and checksum algorithm are checked.
 * Throws StoreError InvalidArgument / EntityTooLarge / NoSuchUpload / InvalidRequest (the
 * upload's key missing or another, or a checksum algorithm other than the upload's) /
 * BadDigest, and what the body stream throws; chunks written are deleted on failure.
 */
export async function uploadPart(
  repo: Repository,
  bucket: string,
  key: string,
  uploadId: string,
  partNumber: number,
  body: AsyncIterable<Uint8Array>,
  opts: ClaimOptions & { size: number; signal?: AbortSignal; keys?: KeyRing; hashPool?: HashPool | null; budget?: BudgetAccount }
): Promise<PartResult> {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
    throw new StoreError('InvalidArgument', `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`, {
      detail: { ArgumentName: 'partNumber', ArgumentValue: String(partNumber) },
    });
  }
  if (opts.size > MAX_PART_BYTES) throw new StoreError('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size');
  // Admission first (synchronously, as PutObject does): nothing is read before it.
  const segment = Math.min(opts.size, SEGMENT_SIZE);
  const budget = opts.budget ?? repo.budget;
  const release = budget.reserve(segment);
  let releaseSealed: (() => void) | undefined;
  const reader = new ExactReader(body);
  let chunks: ChunkRef[] = [];
  const inflight = repo.inflight.open();
  let failure: unknown; // a failure that may yet commit keeps the ticket (closeTicket)
  try {
    const { ref, record: rec } = await openUpload(repo, bucket, key, uploadId);
    // An encrypted upload's key is checked before any byte is read.
    const dataKey = uploadDataKey(rec.encryption, opts.keys);
    const crypt = rec.encryption && dataKey ? partCrypt(rec.encryption, dataKey, opts.size) : undefined;
    // An encrypted part also holds its sealed segment.
    if (crypt) releaseSealed = budget.reserve(sealedLength(segment));
    // A part checksummed with another algorithm than the upload's would lack the one its
    // Complete combines: refused before any byte, as S3 refuses it.
    if (rec.checksumAlgorithm && opts.checksumAlgorithm && opts.checksumAlgorithm !== rec.checksumAlgorithm) {
      throw new StoreError(
        'InvalidRequest',
        `Checksum Type mismatch occurred, expected checksum Type: ${rec.checksumAlgorithm}, actual checksum Type: ${opts.checksumAlgorithm}`
      );
    }
    // Every part is hashed with the upload's algorithm too, even if the client sent none.
    const claimOpts: ClaimOptions = { ...opts };
    const alg = opts.checksumAlgorithm ?? rec.checksumAlgorithm;
    if (alg) claimOpts.checksumAlgorithm = alg;
    const digest = startDigest(claimOpts);
    // A large part is hashed on a worker (carrier-slabs.ts; an encrypted one sealed here meanwhile), else here.
    const slabs = openSlabHashing(hashPoolOf(opts), budget, opts.size, claimOpts, crypt?.sealer, repo.provider);
    let hashed: BodyDigests | undefined;
    if (slabs) {
      try {
        const out = await writeSlabCarrier(repo.provider, reader, opts.size, slabs, carrierIo(opts), inflight);
        chunks = out.refs;
        hashed = out.digests;
      } finally {
        slabs.close();
      }
    } else {
      chunks = await writeCarrier(repo.provider, reader, opts.size, (c) => digest.update(c), carrierIo(opts), crypt?.sealer, inflight);
    }
    const { digests: d } = hashed ? checkDigests(hashed, claimOpts) : finishDigest(digest, claimOpts);
    const md5 = crypt ? crypt.etagDigest(d.md5) : d.md5;
    const part: PartRecord = { size: d.size, md5, values: d.values, chunks, lastModified: 0 };
    if (crypt) part.stream = crypt.stream;
    if (crypt && dataKey && rec.encryption?.mode === 'sse-c') {
      // An SSE-C part's checksums are kept sealed until Complete (which has the key).
      part.sealedValues = sealDigests(dataKey, [d.values]);
      part.values = {};
    }
    const replaced = await repo.run(async (tx) => {
      if (!(await tx.uploadGet(bucket, uploadKey(ref)))) throw noSuchUpload(uploadId);
      const old = await tx.uploadGet(bucket, partKey(ref, partNumber));
      tx.setPart(bucket, ref, partNumber, encodePart(Object.assign({}, part, { lastModified: tx.time })));
      return old ? decodePart(old) : undefined;
    });
    // The part it replaced was never completed (the upload is still open): nothing names it.
    if (replaced && replaced.chunks.length > 0) {
      repo.reaper.background(`part ${partNumber} of upload ${uploadId} (replaced)`, replaced.chunks.map((c) => c.blob));
    }
    const out: PartResult = { etag: Buffer.from(md5).toString('hex'), values: d.values };
    if (rec.encryption) out.mode = rec.encryption.mode;
    return out;
  } catch (err) {
    failure = err;
    await abandonChunks(repo.provider, reader, chunks, err);
    throw err;
  } finally {
    repo.closeTicket(inflight, failure);
    release();
    releaseSealed?.();
  }
}

export interface CompletePart {
  partNumber: number;
  /** ETag as the client sent it (quotes already stripped by the caller or not). */
  etag: string;
  checksums?: Partial<Record<ChecksumName, string>>;
}

export interface CompleteOptions {
  conditions?: WriteConditions;
  /** The whole object's checksums as the client claims them (x-amz-checksum-*). */
  claims?: Partial<Record<ChecksumName, string>>;
  checksumType?: ChecksumType;
  keys?: KeyRing;
  /** The object size the client expects (x-amz-mp-object-size), bytes. */
  expectedSize?: number;
}

/** Throws StoreError InvalidRequest when the completed object is not `expected` bytes long. */
function checkExpectedSize(size: number, expected: number | undefined): void {
  if (expected !== undefined && size !== expected) {
    throw new StoreError('InvalidRequest', `The parts hold ${size} bytes, not the ${expected} of x-amz-mp-object-size.`);
  }
}

/**
 * The answer to a Complete repeated after it succeeded (`v`: the version it wrote, as its
 * completion record keeps it), checked as the first one was: an SSE-C upload's key (its
 * checksums, sealed, are answered only to that key's holder), the expected size, the
 * checksum type and the whole-object claims. Nothing is written either way. Throws what
 * uploadDataKey, checkExpectedSize and checkObjectClaims throw; InvalidRequest for
 * another checksum type.
 */
function retriedCompletion(v: ObjectVersion, opts: CompleteOptions): ObjectVersion {
  const dataKey = uploadDataKey(v.encryption, opts.keys);
  checkExpectedSize(v.size, opts.expectedSize);
  if (opts.checksumType && v.checksums && opts.checksumType !== v.checksums.type) {
    throw new StoreError('InvalidRequest', `The upload was created using the ${v.checksums.type} checksum mode. The complete request must use the same checksum mode.`);
  }
  const sealed = v.encryption?.sealedChecksums;
  const out: ObjectVersion = sealed && dataKey && v.checksums ? { ...v, checksums: { ...v.checksums, values: openDigests(dataKey, sealed)[0] ?? {} } } : v;
  if (out.checksums) checkObjectClaims(out.checksums, opts.claims);
  return out;
}

const normEtag = (e: string) => e.trim().replace(/&quot;|&#34;/g, '"').replace(/^"+|"+$/g, '').toLowerCase();

/**
 * Completes the upload from the listed parts: validates order, existence, ETags, part
 * checksums and sizes, then writes one object version whose body is the parts' chunks in
 * order (metadata only), ends the upload and keeps a completion record. A Complete of an
 * upload already completed with the same part list answers with the version it wrote then
 * (an SDK retrying after a lost response); with a different list it is InvalidPart. Throws
 * StoreError InvalidPartOrder / InvalidPart (also for a part checksum in an algorithm
 * the part was not hashed with) / EntityTooSmall / NoSuchUpload / PreconditionFailed /
 * BadDigest / InvalidRequest (a size other than `expectedSize`, see composeChecksums) /
 * MalformedXML / NoSuchBucket.
 */
export async function completeMultipartUpload(
  repo: Repository,
  bucket: string,
  key: string,
  uploadId: string,
  parts: readonly CompletePart[],
  opts: CompleteOptions = {}
): Promise<ObjectVersion> {
  const state = requireBucketState(repo, bucket);
  if (parts.length === 0) throw new StoreError('MalformedXML', 'You must specify at least one part');
  for (let i = 1; i < parts.length; i++) {
    if (parts[i]!.partNumber <= parts[i - 1]!.partNumber) {
      throw new StoreError('InvalidPartOrder', 'The list of parts was not in ascending order. The parts list must be specified in order by part number.');
    }
  }
  const ref = (await resolveUpload(state.uploads, key, uploadId)) ?? (await resolveUpload(state.uploads, key, uploadId, COMPLETION_PREFIX));
  if (!ref) throw noSuchUpload(uploadId);
  const digest = partListDigest(parts.map((p) => ({ partNumber: p.partNumber, etag: normEtag(p.etag) })));
  const outcome = await repo.run(async (tx) => {
    const raw = await tx.uploadGet(bucket, uploadKey(ref));
    if (!raw) {
      const done = await tx.uploadGet(bucket, completionKey(ref));
      if (!done) throw noSuchUpload(uploadId);
      const c = decodeCompletion(done);
      if (Buffer.compare(c.partsDigest, digest) !== 0) {
        throw new StoreError('InvalidPart', 'This multipart upload was already completed with a different list of parts.', { detail: { UploadId: uploadId } });
      }
      return { version: retriedCompletion(c.version, opts), retry: true };
    }
    const rec = decodeUpload(raw);
    if (rec.key !== key) throw noSuchUpload(uploadId);
    // An SSE-C upload is completed only by the holder of its key.
    const dataKey = uploadDataKey(rec.encryption, opts.keys);
    const chosen: { number: number; part: PartRecord }[] = [];
    for (const p of parts) {
      const raw = p.partNumber >= 1 && p.partNumber <= MAX_PART_NUMBER ? await tx.uploadGet(bucket, partKey(ref, p.partNumber)) : undefined;
      const part = raw ? decodePart(raw) : undefined;
      if (part?.sealedValues) {
        if (!dataKey) throw new StoreError('Corrupt', `upload ${uploadId}: part ${p.partNumber} is sealed, the upload is not`);
        part.values = openDigests(dataKey, part.sealedValues)[0] ?? {};
      }
      if (!part || normEtag(p.etag) !== Buffer.from(part.md5).toString('hex')) {
        throw new StoreError('InvalidPart', 'One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part\'s entity tag.', {
          detail: { PartNumber: p.partNumber, ETag: p.etag },
        });
      }
      for (const [name, b64] of Object.entries(p.checksums ?? {}) as [ChecksumName, string][]) {
        const have = part.values[name];
        // A part checksum in an algorithm the part was not hashed with cannot be checked.
        if (!have) {
          throw new StoreError('InvalidPart', `Part ${p.partNumber} has no ${name.toUpperCase()} checksum to compare: it was not uploaded with that algorithm.`, {
            detail: { PartNumber: p.partNumber },
          });
        }
        if (Buffer.from(have).toString('base64') !== b64.trim()) {
          throw new StoreError('InvalidPart', `The ${name.toUpperCase()} of part ${p.partNumber} does not match the uploaded part.`, { detail: { PartNumber: p.partNumber } });
        }
      }
      // A part stored without the upload's algorithm (before parts with another one were
      // refused) cannot be combined: the client must upload it again.
      if (rec.checksumAlgorithm && !part.values[rec.checksumAlgorithm]) {
        throw new StoreError('InvalidPart', `Part ${p.partNumber} has no ${rec.checksumAlgorithm.toUpperCase()} checksum, the upload's algorithm: upload it again.`, {
          detail: { PartNumber: p.partNumber },
        });
      }
      chosen.push({ number: p.partNumber, part });
    }
    chosen.forEach((c, i) => {
      if (i < chosen.length - 1 && c.part.size < MIN_PART_BYTES) {
        throw new StoreError('EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.', {
          detail: { PartNumber: c.number, ProposedSize: c.part.size, MinSizeAllowed: MIN_PART_BYTES },
        });
      }
    });
    checkWrite(await currentVersion(tx, bucket, key), opts.conditions);
    const { md5, checksums } = composeChecksums(rec, chosen.map((c) => c.part), opts.checksumType, opts.claims);
    const size = chosen.reduce((n, c) => n + c.part.size, 0);
    checkExpectedSize(size, opts.expectedSize);
    const version = makeVersion(
      tx,
      rec,
      { size, md5, partCount: chosen.length, location: { kind: 'chunks', chunks: chosen.flatMap((c) => c.part.chunks) } },
      checksums
    );
    version.parts = chosen.map((c): PartInfo => ({ number: c.number, size: c.part.size, md5: c.part.md5, checksums: c.part.values }));
    if (rec.encryption) version.encryption = completedEncryption(rec.encryption, chosen.map((c) => c.part));
    // An SSE-C object's checksums are stored sealed, in the object and in the completion record.
    const stored = dataKey ? sealVersionChecksums(version, dataKey) : version;
    // The new version first: its id is fixed by its position, and the completion keeps it.
    Object.assign(version, stageVersion(tx, bucket, key, stored));
    const completion = encodeCompletion({ partsDigest: digest, completed: tx.time, version: completionVersion(stored) });
    tx.closeUpload(bucket, ref, { time: tx.time, record: completion });
    return { version, retry: false };
  });
  if (!outcome.retry) {
    // Parts uploaded but left out of the object: nothing can name them any more.
    const kept = new Set(parts.map((p) => p.partNumber));
    repo.reaper.background(`parts left out of upload ${uploadId}`, partChunkBlobs(state.uploads, ref, kept));
  }
  return outcome.version;
}

/**
 * Aborts the upload and deletes its parts' carrier chunks (after the abort is durable).
 * Throws StoreError 'NoSuchBucket', 'NoSuchUpload'.
 */
export async function abortMultipartUpload(repo: Repository, bucket: string, key: string, uploadId: string): Promise<void> {
  const { state, ref } = await openUpload(repo, bucket, key, uploadId);
  await repo.run(async (tx) => {
    if (!(await tx.uploadGet(bucket, uploadKey(ref)))) throw noSuchUpload(uploadId);
    tx.closeUpload(bucket, ref);
  });
  await repo.reaper.reap(`aborted upload ${uploadId}`, partChunkBlobs(state.uploads, ref));
}

