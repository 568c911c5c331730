/**
 * @module Multipart uploads: create, upload part (a carrier), complete (metadata only:
 * the object lists the parts' chunks), abort, list parts, list uploads.
 *
 * Checksums: every part is hashed with MD5, CRC64NVME and the upload's algorithm even when
 * the client sent none, so Complete can build either form S3 offers: COMPOSITE (the
 * algorithm over the concatenated part digests, "-N") or FULL_OBJECT (CRCs combined).
 */
import type { Repository } from './repository.js';
import { ExactReader, writeCarrier } from './carrier.js';
import { finishDigest, startDigest, type ClaimOptions } from './digest.js';
import { SEGMENT_SIZE, newId } from './layout.js';
import { checkWrite, type WriteConditions } from './conditions.js';
import { currentVersion, makeVersion, type ObjectMetadata } from './objects-write.js';
import { decodePart, decodeUpload, encodePart, encodeUpload, type PartRecord, type UploadRecord } from './uploads.js';
import { encodeVersions, type ChecksumName, type ChecksumType, type ChunkRef, type ObjectAccess, type ObjectVersion, type PartInfo } from './records.js';
import { composeChecksums } from './multipart-checksums.js';
import { checkKey } from './validate.js';
import { isStoreError, StoreError } from './errors.js';

/** S3 limits: part numbers 1..10000; every part but the last at least 5 MiB; 5 GiB per part. */
export const MAX_PART_NUMBER = 10000;
export const MIN_PART_BYTES = 5 * 1024 * 1024;
export const MAX_PART_BYTES = 5 * 1024 ** 3;

export interface CreateUploadOptions extends ObjectMetadata {
  checksumAlgorithm?: ChecksumName;
  checksumType?: ChecksumType;
}

const noSuchUpload = (id: string) =>
  new StoreError('NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.', {
    detail: { UploadId: id },
  });

export async function createMultipartUpload(repo: Repository, bucket: string, key: string, opts: CreateUploadOptions = {}): Promise<string> {
  checkKey(key);
  if (opts.checksumType === 'COMPOSITE' && opts.checksumAlgorithm === 'crc64nvme') {
    throw new StoreError('InvalidRequest', 'The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.');
  }
  if (opts.checksumType === 'FULL_OBJECT' && (opts.checksumAlgorithm === 'sha1' || opts.checksumAlgorithm === 'sha256')) {
    throw new StoreError('InvalidRequest', `The FULL_OBJECT checksum type cannot be used with the ${opts.checksumAlgorithm} checksum algorithm.`);
  }
  const uploadId = newId(16);
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
  if (opts.access) record.access = opts.access;
  await repo.run(async (tx) => {
    tx.requireBucket(bucket);
    tx.createUpload(bucket, uploadId, encodeUpload({ ...record, initiated: tx.time }));
  });
  return uploadId;
}

/** The upload's record, checking it belongs to bucket/key. */
function upload(repo: Repository, bucket: string, key: string, uploadId: string): UploadRecord {
  if (!repo.state.buckets.has(bucket)) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  const u = repo.state.uploads.get(uploadId);
  if (!u || u.bucket !== bucket) throw noSuchUpload(uploadId);
  const rec = decodeUpload(u.record);
  if (rec.key !== key) throw noSuchUpload(uploadId);
  return rec;
}

export interface PartResult {
  etag: string;
  values: Partial<Record<ChecksumName, Uint8Array>>;
}

export async function uploadPart(
  repo: Repository,
  bucket: string,
  key: string,
  uploadId: string,
  partNumber: number,
  body: AsyncIterable<Uint8Array>,
  opts: ClaimOptions & { size: number; signal?: AbortSignal }
): Promise<PartResult> {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
    throw new StoreError('InvalidArgument', `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`, {
      detail: { ArgumentName: 'partNumber', ArgumentValue: String(partNumber) },
    });
  }
  if (opts.size > MAX_PART_BYTES) throw new StoreError('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size');
  const rec = upload(repo, bucket, key, uploadId);
  const release = repo.budget.reserve(Math.min(opts.size, SEGMENT_SIZE));
  const reader = new ExactReader(body);
  let chunks: ChunkRef[] = [];
  try {
    // Every part is hashed with the upload's algorithm too, even if the client sent none.
    const claimOpts: ClaimOptions = { ...opts };
    const alg = opts.checksumAlgorithm ?? rec.checksumAlgorithm;
    if (alg) claimOpts.checksumAlgorithm = alg;
    const digest = startDigest(claimOpts);
    chunks = await writeCarrier(repo.provider, reader, opts.size, (c) => digest.update(c), opts.signal);
    const { digests: d } = finishDigest(digest, claimOpts);
    const part: PartRecord = { size: d.size, md5: d.md5, values: d.values, chunks, lastModified: 0 };
    await repo.run(async (tx) => {
      if (!tx.upload(uploadId)) throw noSuchUpload(uploadId);
      tx.putPart(bucket, uploadId, partNumber, encodePart({ ...part, lastModified: tx.time }));
    });
    return { etag: Buffer.from(d.md5).toString('hex'), values: d.values };
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    // Keep the chunks when the commit's outcome is unknown ('Unsafe'): they may be live.
    if (!isStoreError(err, 'Unsafe')) {
      await Promise.all(chunks.map((c) => repo.provider.delete(c.blob).catch(() => undefined)));
    }
    throw err;
  } finally {
    release();
  }
}

export interface CompletePart {
  partNumber: number;
  /** ETag as the client sent it (quotes already stripped by the caller or not). */
  etag: string;
  checksums?: Partial<Record<ChecksumName, string>>;
}

const normEtag = (e: string) => e.trim().replace(/&quot;|&#34;/g, '"').replace(/^"+|"+$/g, '').toLowerCase();

/**
 * Completes the upload from the listed parts: validates order, existence, ETags, part
 * checksums and sizes, then writes one object version whose body is the parts' chunks in
 * order. Metadata only. Throws StoreError InvalidPartOrder / InvalidPart / EntityTooSmall /
 * NoSuchUpload / PreconditionFailed / BadDigest.
 */
export async function completeMultipartUpload(
  repo: Repository,
  bucket: string,
  key: string,
  uploadId: string,
  parts: readonly CompletePart[],
  opts: { conditions?: WriteConditions; claims?: Partial<Record<ChecksumName, string>>; checksumType?: ChecksumType } = {}
): Promise<ObjectVersion> {
  upload(repo, bucket, key, uploadId);
  if (parts.length === 0) throw new StoreError('MalformedXML', 'You must specify at least one part');
  for (let i = 1; i < parts.length; i++) {
    if (parts[i]!.partNumber <= parts[i - 1]!.partNumber) {
      throw new StoreError('InvalidPartOrder', 'The list of parts was not in ascending order. The parts list must be specified in order by part number.');
    }
  }
  return repo.run(async (tx) => {
    const u = tx.upload(uploadId);
    if (!u) throw noSuchUpload(uploadId);
    const rec = decodeUpload(u.record);
    const chosen: { number: number; part: PartRecord }[] = [];
    for (const p of parts) {
      const raw = u.parts.get(p.partNumber);
      const part = raw ? decodePart(raw) : undefined;
      if (!part || normEtag(p.etag) !== Buffer.from(part.md5).toString('hex')) {
        throw new StoreError('InvalidPart', 'One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part\'s entity tag.', {
          detail: { PartNumber: p.partNumber, ETag: p.etag },
        });
      }
      for (const [name, b64] of Object.entries(p.checksums ?? {}) as [ChecksumName, string][]) {
        const have = part.values[name];
        if (have && Buffer.from(have).toString('base64') !== b64.trim()) {
          throw new StoreError('InvalidPart', `The ${name.toUpperCase()} of part ${p.partNumber} does not match the uploaded part.`, { detail: { PartNumber: p.partNumber } });
        }
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
    const version = makeVersion(
      tx,
      rec,
      { size, md5, partCount: chosen.length, location: { kind: 'chunks', chunks: chosen.flatMap((c) => c.part.chunks) } },
      checksums
    );
    version.parts = chosen.map((c): PartInfo => ({ number: c.number, size: c.part.size, md5: c.part.md5, checksums: c.part.values }));
    tx.endUpload(bucket, uploadId);
    tx.put(bucket, key, encodeVersions([version]));
    return version;
  });
}

export async function abortMultipartUpload(repo: Repository, bucket: string, key: string, uploadId: string): Promise<void> {
  upload(repo, bucket, key, uploadId);
  await repo.run(async (tx) => {
    if (!tx.upload(uploadId)) throw noSuchUpload(uploadId);
    tx.endUpload(bucket, uploadId);
  });
}

export interface ListedPart {
  partNumber: number;
  etag: string;
  size: number;
  lastModified: number;
  values: Partial<Record<ChecksumName, Uint8Array>>;
}

export function listParts(
  repo: Repository,
  bucket: string,
  key: string,
  uploadId: string,
  opts: { maxParts?: number; partNumberMarker?: number } = {}
): { upload: UploadRecord; parts: ListedPart[]; isTruncated: boolean; nextPartNumberMarker?: number } {
  const rec = upload(repo, bucket, key, uploadId);
  const max = Math.min(opts.maxParts ?? 1000, 1000);
  const all = [...repo.state.uploads.get(uploadId)!.parts.entries()]
    .filter(([n]) => n > (opts.partNumberMarker ?? 0))
    .sort((a, b) => a[0] - b[0]);
  const page = all.slice(0, max).map(([n, raw]) => {
    const p = decodePart(raw);
    return { partNumber: n, etag: Buffer.from(p.md5).toString('hex'), size: p.size, lastModified: p.lastModified, values: p.values };
  });
  const out: ReturnType<typeof listParts> = { upload: rec, parts: page, isTruncated: all.length > max };
  if (out.isTruncated) out.nextPartNumberMarker = page[page.length - 1]!.partNumber;
  return out;
}

export interface ListedUpload {
  key: string;
  uploadId: string;
  initiated: number;
  /** Owner and ACL the completed object will have (the initiator, when not the bucket owner). */
  access?: ObjectAccess;
}

/** Uploads in progress in `bucket`, by key then initiation time (S3 order). */
export function listMultipartUploads(
  repo: Repository,
  bucket: string,
  opts: { prefix?: string; delimiter?: string; keyMarker?: string; uploadIdMarker?: string; maxUploads?: number } = {}
): { uploads: ListedUpload[]; commonPrefixes: string[]; isTruncated: boolean; nextKeyMarker?: string; nextUploadIdMarker?: string } {
  if (!repo.state.buckets.has(bucket)) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  const prefix = opts.prefix ?? '';
  const max = Math.min(opts.maxUploads ?? 1000, 1000);
  const all: ListedUpload[] = [];
  for (const u of repo.state.uploads.values()) {
    if (u.bucket !== bucket) continue;
    const r = decodeUpload(u.record);
    if (r.key.startsWith(prefix)) all.push({ key: r.key, uploadId: u.uploadId, initiated: r.initiated, ...(r.access ? { access: r.access } : {}) });
  }
  all.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.initiated - b.initiated || (a.uploadId < b.uploadId ? -1 : 1)));
  const afterMarker = all.filter((u) => {
    if (opts.keyMarker === undefined) return true;
    if (u.key > opts.keyMarker) return true;
    return u.key === opts.keyMarker && opts.uploadIdMarker !== undefined && u.uploadId > opts.uploadIdMarker;
  });
  const uploads: ListedUpload[] = [];
  const prefixes: string[] = [];
  let isTruncated = false;
  for (const u of afterMarker) {
    const cut = opts.delimiter ? u.key.indexOf(opts.delimiter, prefix.length) : -1;
    const cp = cut >= 0 ? u.key.slice(0, cut + opts.delimiter!.length) : undefined;
    if (cp && prefixes[prefixes.length - 1] === cp) continue;
    if (uploads.length + prefixes.length === max) {
      isTruncated = true;
      break;
    }
    if (cp) prefixes.push(cp);
    else uploads.push(u);
  }
  const out: ReturnType<typeof listMultipartUploads> = { uploads, commonPrefixes: prefixes, isTruncated };
  if (isTruncated) {
    const last = uploads[uploads.length - 1];
    if (last) {
      out.nextKeyMarker = last.key;
      out.nextUploadIdMarker = last.uploadId;
    }
  }
  return out;
}
