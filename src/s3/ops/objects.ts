/**
 * @module Object operations: PutObject, GetObject, HeadObject, DeleteObject, DeleteObjects.
 */
import { versionIdHeader, writtenVersionHeader } from './versions.js';
import type { DeleteOptions } from '../../store/objects-misc.js';
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { requestBodyMaybeSized, type MaybeSizedBody } from '../body.js';
import { metadataFromRequest, objectHeaders, quotedEtag, validatorHeaders } from '../object-headers.js';
import { readConditions, readRange, writeConditions } from '../conditions.js';
import { sendEmpty, sendError, sendStream, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { parseDelete, renderDeleteResult, MAX_XML_BODY_BYTES, type DeleteErrorEntry, type DeletedEntry } from '../xml/index.js';
import { StoreError } from '../../store/errors.js';
import { s3ErrorOf } from '../store-errors.js';
import { S3Error } from '../errors.js';
import { refusedDeletes } from '../authorize.js';
import type { ChecksumName, ObjectVersion } from '../../store/records.js';
import type { PutOptions, PutResult } from '../../store/objects-write.js';
import type { UnsizedPutOptions } from '../../store/objects-unsized.js';
import type { ClaimOptions } from '../../store/digest.js';
import { encryptionHeaders, readKeys, writeEncryption, type WriteEncryption } from '../sse.js';
import { lockRequestFromHeaders, lockResponseHeaders, requireLockIntegrity } from '../object-lock-headers.js';
import { mayBypassGovernance } from '../authz/bypass-governance.js';
import { expirationHeader } from './lifecycle.js';
import { GET_HELD_BYTES } from '../../store/chunk-scatter-read.js';
import { BUDGET_WAIT_MS } from '../../store/budget.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** x-amz-checksum-* response headers echoing what a write stored for `alg`. */
export function checksumEcho(v: ObjectVersion, alg: ChecksumName | undefined): Record<string, string> {
  const name = alg ?? v.checksums?.primary;
  const value = name && v.checksums?.values[name];
  if (!name || !value) return {};
  return { [`x-amz-checksum-${name}`]: Buffer.from(value).toString('base64'), 'x-amz-checksum-type': 'FULL_OBJECT' };
}

/** Size bounds a caller puts on a write (POST Object's content-length-range). */
export interface WriteBounds {
  maxBytes?: number;
  minBytes?: number;
}

/**
 * The one write path of an object body, described by a header record: PutObject passes
 * the request's headers, POST Object its form fields under the header names they stand
 * for. Everything keyed on request headers (metadata, conditions, encryption, and the
 * header checks of ACLs and fail-closed refusals) must read `h`, never `r.headers`, so that
 * it applies to both. Encryption is settled (headers validated, bucket default read)
 * before any body byte. A body without a size goes through the store's unsized path.
 * Throws S3Error / StoreError as the store does.
 */
export async function putFromHeaders(
  r: RequestContext,
  bucket: string,
  key: string,
  h: Record<string, string | undefined>,
  body: MaybeSizedBody,
  bounds: WriteBounds = {}
): Promise<{ result: PutResult; enc: WriteEncryption }> {
  // Metadata, the canned ACL and the object's owner (the ACL checks read `h` too).
  const meta = metadataFromRequest(r, bucket, h);
  const enc = writeEncryption(r, bucket, h);
  const claims: ClaimOptions = {};
  if (body.claims) claims.claims = body.claims;
  if (body.trailingClaims) claims.trailingClaims = body.trailingClaims;
  if (body.checksumAlgorithm) claims.checksumAlgorithm = body.checksumAlgorithm;
  const cond = writeConditions(h);
  if (body.size === undefined) {
    // Object.assign, not `{ ...meta, ...claims, budget }`: on Node 20 an object literal that
    // starts with a spread and goes on (more spreads or properties) takes ~1 us to build, one
    // that starts with a property or Object.assign ~0.05 us (a loop here, 2026-12-05).
    const opts: UnsizedPutOptions = Object.assign({}, meta, claims, bounds, { budget: r.budget });
    if (enc.request) opts.encryption = enc.request;
    if (cond) opts.conditions = cond;
    return { result: await r.store.putObjectUnsized(bucket, key, body.body, opts), enc };
  }
  const opts: PutOptions = Object.assign({}, meta, claims, { size: body.size, budget: r.budget });
  if (enc.request) opts.encryption = enc.request;
  if (cond) opts.conditions = cond;
  return { result: await r.store.putObject(bucket, key, body.body, opts), enc };
}

export async function handlePutObject(r: RequestContext, e: Op<'PutObject'>): Promise<void> {
  // A body that will be locked must come with a digest (S3 requires it), checked first.
  requireLockIntegrity(r.headers, lockRequestFromHeaders(r, e.bucket, r.headers), 'Put Object');
  const body = requestBodyMaybeSized(r);
  const { result, enc } = await putFromHeaders(r, e.bucket, e.key, r.headers, body);
  sendEmpty(r, 200, {
    etag: `"${result.etag}"`,
    ...writtenVersionHeader(result.versionId),
    ...checksumEcho(result.version, body.checksumAlgorithm),
    ...encryptionHeaders(result.version.encryption?.mode, enc.customer),
    ...expirationHeader(r, e.bucket, e.key, result.version),
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
  if (e.versionId !== undefined) opts.versionId = e.versionId;
  if (r.asOf !== undefined) opts.asOf = r.asOf;
  // A version named, or the one current at the time asked (s3/as-of.ts): its id is always sent.
  const named = e.versionId !== undefined || r.asOf !== undefined;
  let g;
  try {
    g = head ? await r.store.headObject(e.bucket, e.key, opts) : await r.store.getObject(e.bucket, e.key, opts);
  } catch (err) {
    // A part number past the object's parts: S3 answers 400 InvalidPart.
    if (err instanceof StoreError && err.code === 'InvalidPartNumber') {
      throw new S3Error('InvalidPart', 'The requested partnumber is not satisfiable', { PartNumberRequested: e.partNumber ?? '' });
    }
    if (err instanceof StoreError && err.code === 'NotModified') {
      // 304 still carries the validators.
      const v =
        r.asOf !== undefined
          ? (await r.store.stateAsOf(e.bucket, e.key, r.asOf)).version!
          : e.versionId === undefined
            ? await r.store.version(e.bucket, e.key)
            : (await r.store.getVersion(e.bucket, e.key, e.versionId)).version;
      r.errorCode = 'NotModified';
      sendEmpty(r, 304, Object.assign(validatorHeaders(v), versionIdHeader(r, e.bucket, v.versionId, named)));
      return;
    }
    throw err;
  }
  // One object, filled in order (later names win, as spreads would): no copies per GET, and
  // no await unless the object carries a lock.
  const headers = objectHeaders(r, g, e.overrides, e.partNumber);
  Object.assign(headers, versionIdHeader(r, e.bucket, g.version.versionId, named), encryptionHeaders(g.version.encryption?.mode, customer));
  if (g.version.lock) Object.assign(headers, await lockResponseHeaders(r, e.bucket, e.key, g.version.lock));
  Object.assign(headers, expirationHeader(r, e.bucket, e.key, g.version, !named));
  if (head) return sendStream(r, g.range ? 206 : 200, headers, g.body);
  const release = await holdBodyBytes(r, g.range ? g.range.end - g.range.start + 1 : g.version.size);
  try {
    await sendStream(r, g.range ? 206 : 200, headers, g.body);
  } finally {
    // A response that never had a socket (queued behind a pipelined one whose connection
    // died) never emits 'close': nothing of it is held any more, so its bytes go back now.
    if (!r.res.socket || r.res.socket.destroyed) release();
  }
}

/**
 * Reserves, in the in-flight byte budget (store/budget.ts), what a GET of `bytes` body bytes
 * holds while the body goes out: the bytes themselves up to {@link GET_HELD_BYTES} (a carrier
 * is read a few spans at a time). Released when the response closes (all bytes taken by the
 * socket, or the connection gone), so a client that stops reading keeps them counted and
 * many of them cannot take more memory than the budget. When they do not fit, the GET waits
 * up to {@link BUDGET_WAIT_MS} for room (a GET writes nothing, and a browser on a presigned
 * URL does not retry a 503), then is refused with StoreError 'SlowDown' (503, before the
 * status line; nothing reserved). A budget smaller than GET_HELD_BYTES is reserved whole.
 * Returns the (idempotent) release.
 */
async function holdBodyBytes(r: RequestContext, bytes: number): Promise<() => void> {
  if (bytes <= 0) return () => undefined;
  const budget = r.budget;
  // A budget (or key share) smaller than what one large GET holds takes the whole of it: the
  // GET then runs alone, as a write costlier than the erasure write gate does, rather than
  // being refused every time.
  const want = Math.min(bytes, GET_HELD_BYTES, budget.limit);
  // Straight in when it fits and nobody waits; behind the waiters otherwise (no overtaking).
  let release = budget.waiting === 0 ? budget.tryReserve(want) : undefined;
  if (release === undefined) {
    // A client that goes away while waiting gives up its place in the queue.
    const gone = new AbortController();
    const onClose = () => gone.abort(new S3Error('SlowDown', 'client closed the connection while waiting for the pending budget'));
    r.res.once('close', onClose);
    try {
      release = await budget.reserveWithin(want, BUDGET_WAIT_MS, gone.signal);
    } finally {
      r.res.off('close', onClose);
    }
  }
  r.res.once('close', release);
  return release;
}

export const handleGetObject = (r: RequestContext, e: Op<'GetObject'>) => get(r, e, false);
export const handleHeadObject = (r: RequestContext, e: Op<'HeadObject'>) => get(r, e, true);

export async function handleDeleteObject(r: RequestContext, e: Op<'DeleteObject'>): Promise<void> {
  const cond = writeConditions(r.headers);
  const opts: DeleteOptions = {};
  if (e.versionId !== undefined) opts.versionId = e.versionId;
  // Only a key allowed s3:BypassGovernanceRetention bypasses (asking is not enough).
  if (mayBypassGovernance(r, e, e.bucket, e.key, r.auth?.accessKeyId ?? null)) opts.bypassGovernance = true;
  const me = r.auth?.accessKeyId;
  if (me && me !== r.store.bucketOwner(e.bucket)) opts.access = { owner: me, acl: 'private' };
  const res = await r.store.deleteObject(e.bucket, e.key, cond?.ifMatch !== undefined ? { ifMatch: cond.ifMatch } : undefined, opts);
  const headers: Record<string, string> = {};
  if (res.versionId !== undefined) Object.assign(headers, versionIdHeader(r, e.bucket, res.versionId, e.versionId !== undefined));
  headers['x-amz-delete-marker'] = res.deleteMarker ? 'true' : 'false';
  sendEmpty(r, 204, headers);
}

export async function handleDeleteObjects(r: RequestContext, e: Op<'DeleteObjects'>): Promise<void> {
  // S3 requires an integrity header on DeleteObjects: Content-MD5 or any x-amz-checksum-*.
  const hasDigest = r.headers['content-md5'] !== undefined || Object.keys(r.headers).some((h) => h.startsWith('x-amz-checksum-') && h !== 'x-amz-checksum-mode');
  const bytes = await readBody(r, MAX_XML_BODY_BYTES);
  if (!hasDigest) throw new S3Error('InvalidRequest', 'Missing required header for this request: Content-MD5 or x-amz-checksum-*');
  const req = parseDelete(bytes);
  // Each key is authorized on its own (a policy may allow or deny some keys only).
  const refused = await refusedDeletes(r, e.bucket, req.objects.map((o) => o.key), r.auth?.accessKeyId ?? null);
  // Bypassing governance retention is decided per key, as the key's deletion is.
  const principal = r.auth?.accessKeyId ?? null;
  const allowed = req.objects
    .filter((o) => !refused.has(o.key))
    .map((o) => Object.assign({}, o, { bypassGovernance: mayBypassGovernance(r, { op: 'DeleteObject', bucket: e.bucket, key: o.key }, e.bucket, o.key, principal) }));
  // <VersionId> and <ETag> are honoured per key (see the store's deleteObjects).
  const me = r.auth?.accessKeyId;
  const delOpts: Omit<DeleteOptions, 'versionId'> = {};
  if (me && me !== r.store.bucketOwner(e.bucket)) delOpts.access = { owner: me, acl: 'private' };
  const results = allowed.length > 0 ? await r.store.deleteObjects(e.bucket, allowed, delOpts) : [];
  const deleted: DeletedEntry[] = [];
  const errors: DeleteErrorEntry[] = [];
  for (const o of req.objects) {
    if (refused.has(o.key)) errors.push({ key: o.key, ...(o.versionId !== undefined && { versionId: o.versionId }), code: 'AccessDenied', message: 'Access Denied' });
  }
  results.forEach((x, i) => {
    const versionId = allowed[i]!.versionId;
    if (!x.error) {
      const d: DeletedEntry = { key: x.key };
      if (versionId !== undefined) {
        d.versionId = versionId;
        if (x.deleteMarker) {
          d.deleteMarker = true;
          d.deleteMarkerVersionId = versionId;
        }
      } else if (x.deleteMarker && x.versionId !== undefined) {
        d.deleteMarker = true;
        d.deleteMarkerVersionId = x.versionId;
      }
      deleted.push(d);
      return;
    }
    const s3 = s3ErrorOf(x.error);
    errors.push({ key: x.key, ...(versionId !== undefined && { versionId }), code: s3.code, message: s3.message });
  });
  sendXml(r, 200, renderDeleteResult({ deleted: req.quiet ? [] : deleted, errors }));
}

export { quotedEtag, sendError };
