/**
 * @module The request context bucket policy conditions are evaluated against: condition
 * key -> request values, built lazily from the request being authorized.
 *
 * Where each key comes from:
 * - aws:SourceIp: the TCP peer address (never X-Forwarded-For: a client writes that header);
 *   aws:SecureTransport: whether the connection is TLS; aws:CurrentTime / aws:EpochTime: now;
 *   aws:Referer / aws:UserAgent: the request headers; aws:PrincipalType: Anonymous or User;
 * - s3:prefix / s3:delimiter / s3:max-keys: the listing's query parameters (present only when
 *   the request sends them);
 * - s3:authType (REST-HEADER, REST-QUERY-STRING, POST) and s3:signatureversion (AWS4-HMAC-SHA256,
 *   AWS): how the request was signed; both absent for anonymous requests;
 * - s3:x-amz-*: the request header of that name; s3:x-amz-copy-source: the decoded
 *   `bucket/key` of the copy source;
 * - s3:RequestObjectTagKeys / s3:RequestObjectTag/<k>: the `x-amz-tagging` header; for
 *   PutObjectTagging the tags are in a body not read yet, so they are UNKNOWN;
 * - s3:ExistingObjectTag/<k>: the stored object's tags (the caller loads the object).
 */
import type { TLSSocket } from 'node:tls';
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import type { ObjectVersion } from '../../store/records.js';
import { percentDecode } from '../../sigv4/raw-target.js';
import { UNKNOWN, type ConditionContext, type ContextValue } from './policy-conditions.js';

export interface ContextOptions {
  principal: string | null;
  /**
   * The stored object, for s3:ExistingObjectTag: a version, null when there is none, or
   * undefined when it was not looked up (the tags are then UNKNOWN).
   */
  object?: ObjectVersion | null;
  /** s3:prefix to use instead of the query's (a GET/HEAD of a missing key asks ListBucket with the key as prefix). */
  prefix?: string;
  /** Where the s3:x-amz-* values come from, when not the request's headers (a POST form's fields). */
  headers?: Readonly<Record<string, string | undefined>>;
}

/** Tags of an `x-amz-tagging` header, or UNKNOWN when it does not parse. */
function headerTags(value: string): Map<string, string> | typeof UNKNOWN {
  const tags = new Map<string, string>();
  try {
    for (const part of value.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      tags.set(percentDecode(eq < 0 ? part : part.slice(0, eq), true), eq < 0 ? '' : percentDecode(part.slice(eq + 1), true));
    }
  } catch {
    return UNKNOWN;
  }
  return tags;
}

const LIST_OPS: ReadonlySet<string> = new Set(['ListObjects', 'ListObjectsV2']);

/** The condition context of request `r` performing `e`. Reads the request only. */
export function conditionContext(r: RequestContext, e: Endpoint, opts: ContextOptions): ConditionContext {
  const amz = opts.headers ?? r.headers;
  let requestTags: Map<string, string> | typeof UNKNOWN | undefined | null = null;
  const tags = () => {
    if (requestTags === null) {
      const h = amz['x-amz-tagging'];
      requestTags = e.op === 'PutObjectTagging' ? UNKNOWN : h === undefined ? undefined : headerTags(h);
    }
    return requestTags;
  };
  const one = (v: string | undefined): ContextValue => (v === undefined ? undefined : [v]);
  return {
    get(key: string): ContextValue {
      if (key.startsWith('s3:existingobjecttag/')) {
        if (opts.object === undefined) return UNKNOWN;
        return one(opts.object?.tags[key.slice('s3:existingobjecttag/'.length)]);
      }
      if (key.startsWith('s3:requestobjecttag/')) {
        const t = tags();
        return t === UNKNOWN ? UNKNOWN : one(t?.get(key.slice('s3:requestobjecttag/'.length)));
      }
      if (key === 's3:requestobjecttagkeys') {
        const t = tags();
        return t === UNKNOWN ? UNKNOWN : t ? [...t.keys()] : undefined;
      }
      if (key === 's3:x-amz-copy-source') return 'source' in e ? [`${e.source.bucket}/${e.source.key}`] : undefined;
      if (key.startsWith('s3:x-amz-')) return one(amz[key.slice(3)]);
      switch (key) {
        case 'aws:sourceip':
          return one(r.incoming.socket?.remoteAddress);
        case 'aws:securetransport':
          return [(r.incoming.socket as TLSSocket | undefined)?.encrypted ? 'true' : 'false'];
        case 'aws:currenttime':
          return [new Date().toISOString()];
        case 'aws:epochtime':
          return [String(Math.floor(Date.now() / 1000))];
        case 'aws:referer':
          return one(r.headers.referer);
        case 'aws:useragent':
          return one(r.headers['user-agent']);
        case 'aws:principaltype':
          return [opts.principal === null ? 'Anonymous' : 'User'];
        case 's3:prefix':
          if (opts.prefix !== undefined) return [opts.prefix];
          return LIST_OPS.has(e.op) ? one(r.query.get('prefix')) : undefined;
        case 's3:delimiter':
          return LIST_OPS.has(e.op) ? one(r.query.get('delimiter')) : undefined;
        case 's3:max-keys':
          return LIST_OPS.has(e.op) ? one(r.query.get('max-keys')) : undefined;
        case 's3:authtype':
          if (!r.auth || r.auth.accessKeyId === null) return undefined;
          return [r.auth.form === 'header' ? 'REST-HEADER' : r.auth.form === 'post-form' ? 'POST' : 'REST-QUERY-STRING'];
        case 's3:signatureversion':
          if (!r.auth || r.auth.accessKeyId === null) return undefined;
          return [r.auth.signatureVersion === 4 ? 'AWS4-HMAC-SHA256' : 'AWS'];
        default:
          // A key the parser accepted but nothing here provides: never "absent" by accident.
          return UNKNOWN;
      }
    },
  };
}
