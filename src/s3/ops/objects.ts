/**
 * @module Object operations: PutObject, GetObject, HeadObject, DeleteObject, DeleteObjects.
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { requestBody } from '../body.js';
import { metadataFromRequest, objectHeaders, quotedEtag, validatorHeaders } from '../object-headers.js';
import { readConditions, readRange, writeConditions } from '../conditions.js';
import { sendEmpty, sendError, sendStream, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { parseDelete, renderDeleteResult, MAX_XML_BODY_BYTES } from '../xml/index.js';
import { StoreError } from '../../store/errors.js';
import { s3ErrorOf } from '../store-errors.js';
import { S3Error } from '../errors.js';
import { refusedDeletes } from '../authorize.js';
import type { ChecksumName, ObjectVersion } from '../../store/records.js';
import { encryptionHeaders, readKeys, writeEncryption } from '../sse.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** x-amz-checksum-* response headers echoing what a write stored for `alg`. */
export function checksumEcho(v: ObjectVersion, alg: ChecksumName | undefined): Record<string, string> {
  const name = alg ?? v.checksums?.primary;
  const value = name && v.checksums?.values[name];
  if (!name || !value) return {};
  return { [`x-amz-checksum-${name}`]: Buffer.from(value).toString('base64'), 'x-amz-checksum-type': 'FULL_OBJECT' };
}

export async function handlePutObject(r: RequestContext, e: Op<'PutObject'>): Promise<void> {
  const meta = metadataFromRequest(r, e.bucket);
  // Encryption is settled (headers validated, bucket default read) before any body byte.
  const enc = writeEncryption(r, e.bucket);
  const body = requestBody(r);
  const opts: Parameters<typeof r.store.putObject>[3] = { ...meta, ...body };
  if (enc.request) opts.encryption = enc.request;
  const cond = writeConditions(r.headers);
  if (cond) opts.conditions = cond;
  const result = await r.store.putObject(e.bucket, e.key, body.body, opts);
  sendEmpty(r, 200, {
    etag: `"${result.etag}"`,
    ...checksumEcho(result.version, body.checksumAlgorithm),
    ...encryptionHeaders(result.version.encryption?.mode, enc.customer),
  });
}

async function get(r: RequestContext, e: Op<'GetObject'> | Op<'HeadObject'>, head: boolean): Promise<void> {
  const range = e.partNumber === undefined ? readRange(r.headers.range) : undefined;
  const { keys, customer } = readKeys(r);
  const opts: Parameters<typeof r.store.getObject>[2] = { keys };
  const cond = readConditions(r.headers);
  if (cond) opts.conditions = cond;
  if (range) opts.range = range;
  if (e.partNumber !== undefined) opts.partNumber = e.partNumber;
  let g;
  try {
    g = head ? await r.store.headObject(e.bucket, e.key, opts) : await r.store.getObject(e.bucket, e.key, opts);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'NotModified') {
      // 304 still carries the validators.
      const v = await r.store.version(e.bucket, e.key);
      r.errorCode = 'NotModified';
      sendEmpty(r, 304, validatorHeaders(v));
      return;
    }
    throw err;
  }
  const headers = { ...objectHeaders(r, g, e.overrides, e.partNumber), ...encryptionHeaders(g.version.encryption?.mode, customer) };
  await sendStream(r, g.range ? 206 : 200, headers, g.body);
}

export const handleGetObject = (r: RequestContext, e: Op<'GetObject'>) => get(r, e, false);
export const handleHeadObject = (r: RequestContext, e: Op<'HeadObject'>) => get(r, e, true);

export async function handleDeleteObject(r: RequestContext, e: Op<'DeleteObject'>): Promise<void> {
  const cond = writeConditions(r.headers);
  await r.store.deleteObject(e.bucket, e.key, cond?.ifMatch !== undefined ? { ifMatch: cond.ifMatch } : undefined);
  sendEmpty(r, 204);
}

export async function handleDeleteObjects(r: RequestContext, e: Op<'DeleteObjects'>): Promise<void> {
  // S3 requires an integrity header on DeleteObjects: Content-MD5 or any x-amz-checksum-*.
  const hasDigest = r.headers['content-md5'] !== undefined || Object.keys(r.headers).some((h) => h.startsWith('x-amz-checksum-') && h !== 'x-amz-checksum-mode');
  const bytes = await readBody(r, MAX_XML_BODY_BYTES);
  if (!hasDigest) throw new S3Error('InvalidRequest', 'Missing required header for this request: Content-MD5 or x-amz-checksum-*');
  const req = parseDelete(bytes);
  // Each key is authorized on its own (a policy may allow or deny some keys only).
  const refused = await refusedDeletes(r, e.bucket, req.objects.map((o) => o.key), r.auth?.accessKeyId ?? null);
  const keys = req.objects.map((o) => o.key).filter((k) => !refused.has(k));
  const results = keys.length > 0 ? await r.store.deleteObjects(e.bucket, keys) : [];
  const deleted = results.filter((x) => !x.error).map((x) => ({ key: x.key }));
  const errors = results.filter((x) => x.error).map((x) => {
    const s3 = s3ErrorOf(x.error);
    return { key: x.key, code: s3.code, message: s3.message };
  });
  for (const key of refused) errors.push({ key, code: 'AccessDenied', message: 'Access Denied' });
  sendXml(r, 200, renderDeleteResult({ deleted: req.quiet ? [] : deleted, errors }));
}

export { quotedEtag, sendError };
