/**
 * @module Multipart operations: Create, UploadPart, UploadPartCopy, Complete, Abort,
 * ListParts.
 */
import { abortHeaders, expirationHeader } from './lifecycle.js';
import { copySourceVersionHeader, writtenVersionHeader } from './versions.js';
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { checksumName, requestBody } from '../body.js';
import { metadataFromRequest } from '../object-headers.js';
import { readConditions, writeConditions } from '../conditions.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import {
  parseCompleteMultipartUpload,
  renderCompleteMultipartUploadResult,
  renderCopyPartResult,
  renderInitiateMultipartUploadResult,
  renderListPartsResult,
  type ChecksumValues,
} from '../xml/index.js';
import { S3Error } from '../errors.js';
import { objectOwners } from '../authz/acl-object.js';
import { CHECKSUM_NAMES, etagOf, type ChecksumName, type ChecksumType, type ObjectVersion } from '../../store/records.js';
import { StoreError } from '../../store/errors.js';
import { encryptionHeaders, readKeys, writeEncryption } from '../sse.js';
import { COPY_SOURCE_CUSTOMER_PREFIX } from '../sse-headers.js';
import { hasIntegrityHeader } from '../object-lock-headers.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** CompleteMultipartUpload bodies list up to 10,000 parts with checksums: allow 8 MiB. */
const MAX_COMPLETE_BODY_BYTES = 8 * 1024 * 1024;

const b64 = (v: Uint8Array) => Buffer.from(v).toString('base64');

function checksumType(v: string | undefined): ChecksumType | undefined {
  if (v === undefined) return undefined;
  const t = v.trim().toUpperCase();
  if (t !== 'COMPOSITE' && t !== 'FULL_OBJECT') throw new S3Error('InvalidRequest', 'Value for x-amz-checksum-type header is invalid.');
  return t;
}

export async function handleCreateMultipartUpload(r: RequestContext, e: Op<'CreateMultipartUpload'>): Promise<void> {
  const opts: Parameters<typeof r.store.createMultipartUpload>[2] = metadataFromRequest(r, e.bucket);
  const alg = checksumName(r.headers['x-amz-checksum-algorithm'], 'x-amz-checksum-algorithm');
  const type = checksumType(r.headers['x-amz-checksum-type']);
  if (alg) opts.checksumAlgorithm = alg;
  if (type) opts.checksumType = type;
  const enc = writeEncryption(r, e.bucket);
  if (enc.request) opts.encryption = enc.request;
  const uploadId = await r.store.createMultipartUpload(e.bucket, e.key, opts);
  const headers: Record<string, string> = encryptionHeaders(enc.request?.mode, enc.customer);
  if (alg) headers['x-amz-checksum-algorithm'] = alg.toUpperCase();
  if (alg || type) headers['x-amz-checksum-type'] = type ?? (alg === 'crc64nvme' ? 'FULL_OBJECT' : 'COMPOSITE');
  Object.assign(headers, abortHeaders(r, e.bucket, e.key, uploadId));
  sendXml(r, 200, renderInitiateMultipartUploadResult({ bucket: e.bucket, key: e.key, uploadId }), headers);
}

export async function handleUploadPart(r: RequestContext, e: Op<'UploadPart'>): Promise<void> {
  // An SSE-C upload's key is validated here and checked against the upload before the body.
  const { keys, customer } = readKeys(r);
  // Parts of an object that will be locked must come with a digest (S3 requires it).
  if (!hasIntegrityHeader(r.headers) && (await r.store.uploadLocked(e.bucket, e.key, e.uploadId))) {
    throw new S3Error('InvalidRequest', 'Content-MD5 OR x-amz-checksum- HTTP header is required for Put Part requests with Object Lock parameters');
  }
  const body = requestBody(r);
  const res = await r.store.uploadPart(e.bucket, e.key, e.uploadId, e.partNumber, body.body, Object.assign({}, body, { keys, budget: r.budget }));
  const headers: Record<string, string> = { etag: `"${res.etag}"`, ...encryptionHeaders(res.mode, customer) };
  // Echo the client's algorithm (SDK v3 lib-storage then lists it in Complete).
  const alg = body.checksumAlgorithm;
  if (alg && res.values[alg]) headers[`x-amz-checksum-${alg}`] = b64(res.values[alg]!);
  sendEmpty(r, 200, headers);
}

export async function handleUploadPartCopy(r: RequestContext, e: Op<'UploadPartCopy'>): Promise<void> {
  // Both keys are validated before anything is read: the part's (SSE-C uploads) and the source's.
  const dest = readKeys(r);
  const opts: Parameters<typeof r.store.getObject>[2] = { keys: readKeys(r, COPY_SOURCE_CUSTOMER_PREFIX).keys };
  const cond = readConditions(r.headers, 'x-amz-copy-source-');
  if (cond) opts.conditions = cond;
  if (e.sourceRange) opts.range = { start: e.sourceRange.first, end: e.sourceRange.last };
  if (e.source.versionId !== undefined) opts.versionId = e.source.versionId;
  let g;
  try {
    g = await r.store.getObject(e.source.bucket, e.source.key, opts);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'NotModified') throw new S3Error('PreconditionFailed');
    // A range outside the source object is S3's InvalidRange (as a GET's would be).
    if (err instanceof StoreError && err.code === 'InvalidRange') throw new S3Error('InvalidRange');
    // A delete marker named by id cannot be a copy source (S3: 400).
    if (err instanceof StoreError && err.code === 'MethodNotAllowed') {
      throw new S3Error('InvalidRequest', 'The source of a copy request may not specifically refer to a delete marker by version id.');
    }
    throw err;
  }
  if (e.sourceRange && g.range && g.range.end !== e.sourceRange.last) {
    await drain(g.body);
    throw new S3Error('InvalidRange');
  }
  const size = g.range ? g.range.end - g.range.start + 1 : g.version.size;
  const res = await r.store.uploadPart(e.bucket, e.key, e.uploadId, e.partNumber, g.body, { size, keys: dest.keys, budget: r.budget });
  const checksums: ChecksumValues = {};
  for (const n of CHECKSUM_NAMES) if (res.values[n]) checksums[n] = b64(res.values[n]!);
  sendXml(r, 200, renderCopyPartResult({ etag: res.etag, lastModified: new Date(), checksums }), {
    ...encryptionHeaders(res.mode, dest.customer),
    ...copySourceVersionHeader(r, e.source, g.version.versionId),
  });
}

/** Stops a body stream the handler will not read (releases its reader). */
async function drain(body: AsyncIterable<Uint8Array>): Promise<void> {
  await body[Symbol.asyncIterator]().return?.();
}

/** The checksum values an object's version reports (primary algorithm, with "-N" if composite). */
export function versionChecksums(v: ObjectVersion): { checksums: ChecksumValues; checksumType?: ChecksumType } {
  const c = v.checksums;
  if (!c || !c.values[c.primary]) return { checksums: {} };
  const text = b64(c.values[c.primary]!) + (c.type === 'COMPOSITE' ? `-${c.parts}` : '');
  return { checksums: { [c.primary]: text }, checksumType: c.type };
}

/**
 * `x-amz-mp-object-size`: the object size a Complete expects, or undefined. Throws S3Error
 * InvalidArgument for anything but a decimal byte count. Pure.
 */
export function expectedObjectSize(h: Record<string, string | undefined>): number | undefined {
  const raw = h['x-amz-mp-object-size'];
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (!/^[0-9]{1,16}$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw new S3Error('InvalidArgument', 'x-amz-mp-object-size must be the object size in bytes', { ArgumentName: 'x-amz-mp-object-size', ArgumentValue: raw.slice(0, 64) });
  }
  return Number(v);
}

export async function handleCompleteMultipartUpload(r: RequestContext, e: Op<'CompleteMultipartUpload'>): Promise<void> {
  // SSE-C headers are validated before the body is read (the store checks the key itself).
  const { keys, customer } = readKeys(r);
  const expectedSize = expectedObjectSize(r.headers);
  // x-amz-checksum-<alg> on Complete is the object's checksum (checked by the store below).
  const doc = parseCompleteMultipartUpload(await readBody(r, MAX_COMPLETE_BODY_BYTES, { objectChecksumHeaders: true }));
  const claims: Partial<Record<ChecksumName, string>> = {};
  for (const n of CHECKSUM_NAMES) {
    const v = r.headers[`x-amz-checksum-${n}`];
    if (v !== undefined) claims[n] = v;
  }
  const opts: NonNullable<Parameters<typeof r.store.completeMultipartUpload>[4]> = { claims, keys };
  // Compared with the parts' total inside the commit: a mismatch completes nothing.
  if (expectedSize !== undefined) opts.expectedSize = expectedSize;
  const cond = writeConditions(r.headers);
  if (cond) opts.conditions = cond;
  const type = checksumType(r.headers['x-amz-checksum-type']);
  if (type) opts.checksumType = type;
  const v = await r.store.completeMultipartUpload(
    e.bucket,
    e.key,
    e.uploadId,
    doc.parts.map((p) => ({ partNumber: p.partNumber, etag: p.etag, checksums: p.checksums })),
    opts
  );
  const host = r.headers.host ?? 'localhost';
  const { checksums, checksumType: ct } = versionChecksums(v);
  const out: Parameters<typeof renderCompleteMultipartUploadResult>[0] = {
    location: `http://${host}/${e.bucket}/${encodeURIComponent(e.key).replace(/%2F/g, '/')}`,
    bucket: e.bucket,
    key: e.key,
    etag: etagOf(v),
    checksums,
  };
  if (ct) out.checksumType = ct;
  sendXml(r, 200, renderCompleteMultipartUploadResult(out), {
    ...encryptionHeaders(v.encryption?.mode, customer),
    ...writtenVersionHeader(v.versionId),
    ...expirationHeader(r, e.bucket, e.key, v),
  });
}

export async function handleAbortMultipartUpload(r: RequestContext, e: Op<'AbortMultipartUpload'>): Promise<void> {
  await r.store.abortMultipartUpload(e.bucket, e.key, e.uploadId);
  sendEmpty(r, 204);
}

export async function handleListParts(r: RequestContext, e: Op<'ListParts'>): Promise<void> {
  const res = await r.store.listParts(e.bucket, e.key, e.uploadId, { maxParts: e.params.maxParts, partNumberMarker: e.params.partNumberMarker });
  // The upload's owner: its initiator (or the bucket owner, as the completed object will be).
  const owner = objectOwners(r, e.bucket)(res.upload.access);
  const out: Parameters<typeof renderListPartsResult>[0] = {
    bucket: e.bucket,
    key: e.key,
    uploadId: e.uploadId,
    partNumberMarker: e.params.partNumberMarker,
    maxParts: e.params.maxParts,
    isTruncated: res.isTruncated,
    initiator: owner,
    owner,
    parts: res.parts.map((p) => {
      const checksums: ChecksumValues = {};
      const alg = res.upload.checksumAlgorithm;
      if (alg && p.values[alg]) checksums[alg] = b64(p.values[alg]!);
      return { partNumber: p.partNumber, lastModified: new Date(p.lastModified), etag: p.etag, size: p.size, checksums };
    }),
  };
  if (res.nextPartNumberMarker !== undefined) out.nextPartNumberMarker = res.nextPartNumberMarker;
  if (res.upload.checksumAlgorithm) {
    out.checksumAlgorithm = res.upload.checksumAlgorithm.toUpperCase();
    out.checksumType = res.upload.checksumType;
  }
  sendXml(r, 200, renderListPartsResult(out));
}
