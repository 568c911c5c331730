/**
 * @module ListParts and ListMultipartUploads over a bucket's uploads keyspace.
 *
 * Both are a seek and a scan of the merged overlay and runs (upload-keys.ts orders uploads by
 * key then initiation, and parts by number), so a page costs what it returns: an upload's parts
 * are stepped over with one seek, a common prefix with one seek past everything under it.
 */
import type { Repository } from './repository.js';
import { mergeSources } from './index/merge.js';
import { compareKeys } from './index/compare.js';
import { blobError } from './body-reader.js';
import { prefixSuccessor } from './list.js';
import type { ChecksumName, ChecksumType, ObjectAccess } from './records.js';
import { decodeUpload, type UploadRecord } from './uploads.js';
import { openUpload, requireBucketState } from './multipart.js';
import { StoreError } from './errors.js';
import { corruptKey, resolveUpload, uploadParts } from './upload-index.js';
import { afterUpload, escapeKey, escapePrefix, isGone, parseEntryKey, parseUploadId, UPLOAD_PREFIX, type UploadRef } from './upload-keys.js';

/** S3 returns at most this many parts, or uploads + common prefixes, per page. */
export const MAX_LIST_PAGE = 1000;

export interface ListedPart {
  partNumber: number;
  etag: string;
  size: number;
  lastModified: number;
  values: Partial<Record<ChecksumName, Uint8Array>>;
}

export interface ListPartsResult {
  upload: UploadRecord;
  parts: ListedPart[];
  isTruncated: boolean;
  nextPartNumberMarker?: number;
}

/**
 * One page of the parts of an upload in progress, numbered after `partNumberMarker`, in order.
 * Throws StoreError 'NoSuchBucket', 'NoSuchUpload'.
 */
export async function listParts(
  repo: Repository,
  bucket: string,
  key: string,
  uploadId: string,
  opts: { maxParts?: number; partNumberMarker?: number } = {}
): Promise<ListPartsResult> {
  const { state, ref, record } = await openUpload(repo, bucket, key, uploadId);
  const max = Math.max(0, Math.min(opts.maxParts ?? MAX_LIST_PAGE, MAX_LIST_PAGE));
  const out: ListPartsResult = { upload: record, parts: [], isTruncated: false };
  for await (const [n, p] of uploadParts(state.uploads, ref, (opts.partNumberMarker ?? 0) + 1)) {
    if (out.parts.length === max) {
      out.isTruncated = true;
      break;
    }
    out.parts.push({ partNumber: n, etag: Buffer.from(p.md5).toString('hex'), size: p.size, lastModified: p.lastModified, values: p.values });
  }
  const last = out.parts[out.parts.length - 1];
  if (out.isTruncated && last) out.nextPartNumberMarker = last.partNumber;
  return out;
}

export interface ListedUpload {
  key: string;
  uploadId: string;
  initiated: number;
  checksumAlgorithm?: ChecksumName;
  checksumType?: ChecksumType;
  /** Owner and ACL the completed object will have (the initiator, when not the bucket owner). */
  access?: ObjectAccess;
}

export interface ListUploadsOptions {
  prefix?: string;
  delimiter?: string;
  keyMarker?: string;
  uploadIdMarker?: string;
  maxUploads?: number;
}

export interface ListUploadsResult {
  uploads: ListedUpload[];
  commonPrefixes: string[];
  isTruncated: boolean;
  nextKeyMarker?: string;
  nextUploadIdMarker?: string;
}

/** True if `marker` is a common prefix this listing could have returned (then resume past it). */
function isCommonPrefix(marker: string, prefix: string, delimiter: string): boolean {
  return delimiter !== '' && marker.startsWith(prefix) && marker.endsWith(delimiter) && marker.indexOf(delimiter, prefix.length) === marker.length - delimiter.length;
}

/**
 * Where a listing resumes: the first index key it may return, and for a marker upload that
 * cannot be placed (an old-style id no longer present, or a malformed one) a filter that keeps
 * only the marker key's uploads whose id sorts after it, as S3 documents upload-id-marker.
 */
async function resumeAt(repo: Repository, bucket: string, opts: ListUploadsOptions, prefix: string, delimiter: string): Promise<{ from: string; keep?: (u: UploadRef) => boolean }> {
  const start = UPLOAD_PREFIX + escapePrefix(prefix);
  const km = opts.keyMarker;
  if (km === undefined || km === '') return { from: start };
  let after: { from: string; keep?: (u: UploadRef) => boolean };
  if (isCommonPrefix(km, prefix, delimiter)) {
    after = { from: UPLOAD_PREFIX + escapePrefix(prefixSuccessor(km)) };
  } else if (opts.uploadIdMarker) {
    const idm = opts.uploadIdMarker;
    const parsed = parseUploadId(idm);
    const ref =
      parsed === undefined ? undefined : parsed === 'legacy' ? await resolveUpload(requireBucketState(repo, bucket).uploads, km, idm) : { key: km, initiated: parsed.initiated, uploadId: idm };
    after = ref ? { from: afterUpload(ref) } : { from: UPLOAD_PREFIX + escapeKey(km), keep: (u) => u.key !== km || u.uploadId > idm };
  } else {
    // Past every upload of the marker key itself: its entries end where the key + NUL begins.
    after = { from: `${UPLOAD_PREFIX}${escapePrefix(km)}\0\x01` };
  }
  return compareKeys(after.from, start) > 0 ? after : { from: start, ...(after.keep ? { keep: after.keep } : {}) };
}

/**
 * One page of the uploads in progress of `bucket`, by key then initiation time (S3's order),
 * with prefix, delimiter (common prefixes), key-marker and upload-id-marker as S3 defines them.
 * When truncated, nextKeyMarker (and for an upload nextUploadIdMarker) resume after the last
 * entry returned. Throws StoreError 'NoSuchBucket'; 'Corrupt' / 'MissingBlob' if the index
 * cannot be read.
 */
export async function listMultipartUploads(repo: Repository, bucket: string, opts: ListUploadsOptions = {}): Promise<ListUploadsResult> {
  const state = requireBucketState(repo, bucket);
  const prefix = opts.prefix ?? '';
  const delimiter = opts.delimiter ?? '';
  const max = Math.max(0, Math.min(opts.maxUploads ?? MAX_LIST_PAGE, MAX_LIST_PAGE));
  const result: ListUploadsResult = { uploads: [], commonPrefixes: [], isTruncated: false };
  const { from, keep } = await resumeAt(repo, bucket, opts, prefix, delimiter);
  const scope = UPLOAD_PREFIX + escapePrefix(prefix);
  const it = mergeSources(state.uploads.sources(), { key: from, inclusive: true });
  let last: { key: string; uploadId?: string } | undefined;
  try {
    for (;;) {
      let e;
      try {
        const r = await it.next();
        e = r.done ? undefined : r.value;
      } catch (err) {
        throw blobError(err, `bucket ${bucket} uploads index`);
      }
      if (!e || !e.key.startsWith(scope)) break;
      const p = parseEntryKey(e.key);
      if (!p) throw corruptKey(e.key);
      if (p.part !== undefined) {
        it.seek(afterUpload(p)); // parts of an upload already passed (or of an ended one)
        continue;
      }
      if (isGone(e.value) || (keep && !keep(p))) continue;
      const cut = delimiter ? p.key.indexOf(delimiter, prefix.length) : -1;
      if (result.uploads.length + result.commonPrefixes.length === max) {
        result.isTruncated = true;
        break;
      }
      if (cut >= 0) {
        const cp = p.key.slice(0, cut + delimiter.length);
        result.commonPrefixes.push(cp);
        last = { key: cp };
        it.seek(UPLOAD_PREFIX + escapePrefix(prefixSuccessor(cp)));
        continue;
      }
      const rec = decodeUpload(e.value);
      if (rec.key !== p.key) throw new StoreError('Corrupt', `uploads keyspace: the record under ${JSON.stringify(e.key)} is for key ${JSON.stringify(rec.key)}`);
      const u: ListedUpload = { key: p.key, uploadId: p.uploadId, initiated: rec.initiated };
      if (rec.checksumAlgorithm) {
        u.checksumAlgorithm = rec.checksumAlgorithm;
        u.checksumType = rec.checksumType;
      }
      if (rec.access) u.access = rec.access;
      result.uploads.push(u);
      last = { key: p.key, uploadId: p.uploadId };
      it.seek(afterUpload(p));
    }
  } finally {
    await it.return();
  }
  if (result.isTruncated && last) {
    result.nextKeyMarker = last.key;
    if (last.uploadId !== undefined) result.nextUploadIdMarker = last.uploadId;
  }
  return result;
}
