/**
 * @module Object metadata in HTTP headers: what a PUT/Copy/CreateMultipartUpload request
 * stores (Content-Type, the standard entity headers, x-amz-meta-*, x-amz-tagging), and
 * what GET/HEAD answer (ETag, Last-Modified, ranges, checksums, overrides).
 */
import type { ObjectMetadata } from '../store/objects-write.js';
import { etagOf, type ObjectVersion } from '../store/records.js';
import type { GetResult } from '../store/objects-read.js';
import { percentDecode } from '../sigv4/raw-target.js';
import type { RequestContext } from './context.js';
import { validateTags } from './xml/index.js';
import type { ResponseOverrides } from './router/endpoint.js';
import { S3Error } from './errors.js';
import { requestedAcl } from './authz/acl.js';
import { checkAclAllowed } from './authz/acl-ownership.js';
import { objectAccessFor } from './authz/acl-object.js';
import { bucketSettings } from './authz/policy-settings.js';
import { OBJECT_WRITE_HEADERS_NOT_IMPLEMENTED, refuseHeaders } from './router/subresources.js';
import { metadataValueIn, metadataValueOut } from './header-text.js';
import { MAX_REQUEST_HEADER_BYTES } from './limits.js';
import { checkStorageClass } from './storage-class.js';
import { lockRequestFromHeaders } from './object-lock-headers.js';

/** Standard headers S3 stores with an object and returns on GET/HEAD. */
export const SYSTEM_HEADERS = ['cache-control', 'content-disposition', 'content-encoding', 'content-language', 'expires', 'x-amz-website-redirect-location'];
/** S3's limit on user-defined metadata: 2 KB of names and values. */
export const MAX_USER_METADATA_BYTES = 2048;

/**
 * The tags of an `x-amz-tagging` header (`k1=v1&k2=v2`, URL-encoded). Throws S3Error
 * `InvalidArgument` for a malformed escape or non-UTF-8 bytes, `InvalidTag` for the tag rules.
 */
export function tagsFromQueryString(value: string): Record<string, string> {
  const tags: Record<string, string> = {};
  const list: { key: string; value: string }[] = [];
  for (const part of value.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    let key: string;
    let v: string;
    try {
      key = percentDecode(eq < 0 ? part : part.slice(0, eq), true);
      v = eq < 0 ? '' : percentDecode(part.slice(eq + 1), true);
    } catch {
      throw new S3Error('InvalidArgument', 'The header \'x-amz-tagging\' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.', {
        ArgumentName: 'x-amz-tagging',
        ArgumentValue: value,
      });
    }
    list.push({ key, value: v });
  }
  validateTags(list);
  for (const t of list) tags[t.key] = t.value;
  return tags;
}

/**
 * The Content-Encoding an object keeps: the header as sent, minus the `aws-chunked` tokens
 * (transfer framing, never part of the object) and the commas that separated them; the
 * other tokens keep their spelling and spacing. Undefined when nothing remains. Pure.
 */
export function storedContentEncoding(value: string): string | undefined {
  const tokens = value.split(',');
  const kept = tokens.filter((t) => t.trim().toLowerCase() !== 'aws-chunked');
  const out = (kept.length === tokens.length ? value : kept.join(',')).trim();
  return out === '' || kept.every((t) => t.trim() === '') ? undefined : out;
}

/**
 * The metadata a write request carries in its headers (or a POST form's fields, which
 * have no header section to bound them), its canned ACL included (as `access`, without an
 * owner: see {@link metadataFromRequest}). Throws S3Error `NotImplemented` for headers
 * asking for what Strata does not do (an append offset, ACL grants
 * to other users, a storage class other than STANDARD) before anything is written
 * (`InvalidStorageClass` for a class S3 does not know); `MetadataTooLarge` past {@link MAX_USER_METADATA_BYTES} of
 * x-amz-meta-* names and values, and `RequestHeaderSectionTooLarge` when everything stored
 * (standard headers, Content-Type and user metadata) passes {@link MAX_REQUEST_HEADER_BYTES}:
 * no header is stored beyond what S3 accepts in one request; the x-amz-tagging / x-amz-acl
 * errors. Pure.
 */
export function metadataFromHeaders(h: Record<string, string | undefined>): ObjectMetadata {
  refuseHeaders(OBJECT_WRITE_HEADERS_NOT_IMPLEMENTED, h);
  checkStorageClass(h);
  const acl = requestedAcl(h);
  const system: Record<string, string> = {};
  for (const name of SYSTEM_HEADERS) {
    const v = h[name];
    if (v === undefined) continue;
    if (name === 'content-encoding') {
      const rest = storedContentEncoding(v);
      if (rest !== undefined) system[name] = rest;
    } else {
      system[name] = v;
    }
  }
  const userMetadata: Record<string, string> = {};
  let bytes = 0;
  for (const [name, v] of Object.entries(h)) {
    if (!name.startsWith('x-amz-meta-') || v === undefined) continue;
    const k = name.slice('x-amz-meta-'.length);
    const value = metadataValueIn(v);
    userMetadata[k] = value;
    bytes += Buffer.byteLength(k) + Buffer.byteLength(value);
  }
  if (bytes > MAX_USER_METADATA_BYTES) throw new S3Error('MetadataTooLarge', undefined, { MaxSizeAllowed: String(MAX_USER_METADATA_BYTES) });
  const meta: ObjectMetadata = { system, userMetadata };
  if (h['content-type'] !== undefined) meta.contentType = h['content-type'];
  let stored = bytes + Buffer.byteLength(meta.contentType ?? '');
  for (const [k, v] of Object.entries(system)) stored += k.length + Buffer.byteLength(v);
  if (stored > MAX_REQUEST_HEADER_BYTES) {
    throw new S3Error('RequestHeaderSectionTooLarge', undefined, { MaxSizeAllowed: MAX_REQUEST_HEADER_BYTES });
  }
  if (h['x-amz-tagging'] !== undefined) meta.tags = tagsFromQueryString(h['x-amz-tagging']);
  if (acl !== undefined && acl !== 'private') meta.access = { acl };
  return meta;
}

/**
 * {@link metadataFromHeaders} (of `headers`: the request's, or a POST form's fields) for
 * request `r` writing into `bucket`: the object is owned by
 * the requesting key (recorded only when that is not the bucket owner; the bucket's Object
 * Ownership may give it to the bucket owner) with the requested canned ACL, and the Object
 * Lock it asks for or the bucket's default retention (object-lock-headers.ts). Same errors,
 * `AccessControlListNotSupported` for an ACL on a bucket with ACLs disabled, and those of
 * lockRequestFromHeaders.
 */
export function metadataFromRequest(r: RequestContext, bucket: string, headers: Record<string, string | undefined> = r.headers): ObjectMetadata {
  const meta = metadataFromHeaders(headers);
  const principal = r.auth?.accessKeyId ?? null;
  const acl = requestedAcl(headers);
  const settings = bucketSettings(r.store, bucket);
  checkAclAllowed(settings?.ownership, acl, 'object');
  const access = objectAccessFor(principal, settings?.owner, acl, settings?.ownership);
  if (access) meta.access = access;
  else delete meta.access;
  const lock = lockRequestFromHeaders(r, bucket, headers);
  if (lock) meta.lock = lock;
  return meta;
}

/** The ETag header value (quoted). */
export const quotedEtag = (v: Pick<ObjectVersion, 'md5' | 'partCount'>) => `"${etagOf(v)}"`;

/** HTTP-dates kept by whole second; objects written together share one (bounded, see below). */
const httpDates = new Map<number, string>();
/** Entries of httpDates: a burst of writes spans few seconds; past this the cache starts over. */
const HTTP_DATE_CACHE_ENTRIES = 1024;

/** `new Date(ms).toUTCString()` (an HTTP-date: whole seconds), formatted once per second value. */
export function httpDateOf(ms: number): string {
  const second = Math.floor(ms / 1000);
  let text = httpDates.get(second);
  if (text === undefined) {
    text = new Date(ms).toUTCString();
    if (httpDates.size >= HTTP_DATE_CACHE_ENTRIES) httpDates.clear();
    httpDates.set(second, text);
  }
  return text;
}

/** Validators every GET/HEAD answer carries, also on 304. */
export function validatorHeaders(v: ObjectVersion): Record<string, string> {
  return { etag: quotedEtag(v), 'last-modified': httpDateOf(v.lastModified) };
}

function checksumHeaders(r: RequestContext, g: GetResult, partNumber: number | undefined): Record<string, string> {
  if ((r.headers['x-amz-checksum-mode'] ?? r.query.get('x-amz-checksum-mode'))?.toUpperCase() !== 'ENABLED') return {};
  const v = g.version;
  const c = v.checksums;
  if (!c) return {};
  if (partNumber !== undefined && v.parts?.length) {
    const part = v.parts[partNumber - 1];
    const value = part?.checksums[c.primary];
    // The part's own checksum, typed as the object's (what S3 answers for a part GET/HEAD).
    return value ? { [`x-amz-checksum-${c.primary}`]: Buffer.from(value).toString('base64'), 'x-amz-checksum-type': c.type } : {};
  }
  // Never a whole-object checksum on a partial body: clients would validate it and fail.
  if (g.range && !(g.range.start === 0 && g.range.end === v.size - 1)) return {};
  const value = c.values[c.primary];
  if (!value) return {};
  const text = Buffer.from(value).toString('base64') + (c.type === 'COMPOSITE' ? `-${c.parts}` : '');
  return { [`x-amz-checksum-${c.primary}`]: text, 'x-amz-checksum-type': c.type };
}

/** Response headers of a GET/HEAD for `g`, with response-* overrides applied. */
export function objectHeaders(r: RequestContext, g: GetResult, overrides: ResponseOverrides, partNumber?: number): Record<string, string | number> {
  const v = g.version;
  const headers: Record<string, string | number> = {
    etag: quotedEtag(v),
    'last-modified': httpDateOf(v.lastModified),
    'content-type': v.contentType ?? 'binary/octet-stream',
    'accept-ranges': 'bytes',
  };
  for (const [k, val] of Object.entries(v.system)) headers[k] = val;
  for (const [k, val] of Object.entries(v.userMetadata)) headers[`x-amz-meta-${k}`] = metadataValueOut(val);
  const tagCount = Object.keys(v.tags).length;
  if (tagCount) headers['x-amz-tagging-count'] = tagCount;
  if (g.partsCount) headers['x-amz-mp-parts-count'] = g.partsCount;
  Object.assign(headers, checksumHeaders(r, g, partNumber));
  for (const [k, val] of Object.entries(overrides)) if (val !== undefined) headers[k] = val;
  if (g.range) {
    headers['content-length'] = g.range.end - g.range.start + 1;
    headers['content-range'] = `bytes ${g.range.start}-${g.range.end}/${v.size}`;
  } else {
    headers['content-length'] = v.size;
  }
  return headers;
}
