/**
 * @module `x-amz-*` request headers sent as query parameters.
 *
 * Presigned URLs carry their `x-amz-*` headers in the query string: the SDKs' presigners
 * move every `x-amz-*` header there by default (SDK v3 keeps only the SSE ones as headers),
 * so a presigned PutObject asking for Object Lock, an ACL, a storage class, tags or
 * metadata, or a presigned CopyObject naming its source, arrives as
 * `?x-amz-object-lock-mode=...`, `?x-amz-copy-source=...`. Read from headers only, those
 * requests were carried out as if nothing had been asked (a presigned CopyObject even
 * became a PutObject of an empty body). So, where the signature covers the query, each such
 * parameter is taken as the header it stands for, and every header check applies to it.
 *
 *   SigV4 (header or presigned)   the whole query is signed: parameters become headers
 *   anonymous                     nothing is signed: the sender could as well send headers
 *   SigV2 (header or query)       the query's x-amz-* are NOT signed: refused (a third party
 *                                 could add one to a captured URL)
 *
 * The authentication parameters (X-Amz-Algorithm, -Credential, -Date, -Expires,
 * -SignedHeaders, -Signature, -Security-Token, -Content-Sha256) stay what they are.
 */
import type { AuthResult } from './auth/index.js';
import { S3Error } from './errors.js';
import { parseQueryPairs, splitTarget } from '../sigv4/raw-target.js';

/** Query parameters that authenticate the request (compared lower-cased), never headers. */
const AUTH_PARAMS: ReadonlySet<string> = new Set([
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-signedheaders',
  'x-amz-signature',
  'x-amz-security-token',
  'x-amz-content-sha256',
]);

/** The `x-amz-*` parameters of `rawQuery` that stand for headers: [lower-case name, value]. */
function headerParams(rawQuery: string): [string, string][] {
  let pairs: [string, string][];
  try {
    pairs = parseQueryPairs(rawQuery);
  } catch {
    throw new S3Error('InvalidURI');
  }
  return pairs.map(([k, v]): [string, string] => [k.toLowerCase(), v]).filter(([k]) => k.startsWith('x-amz-') && !AUTH_PARAMS.has(k));
}

/**
 * Adds the `x-amz-*` query parameters of `rawTarget` to `headers` (lower-case names; the
 * value as a header would carry its UTF-8 bytes, one character per byte) when `auth`'s
 * signature covers the query. Mutates `headers` only. Throws S3Error `InvalidRequest` for
 * such a parameter on a SigV2 request, for one given twice with different values, or for
 * one that contradicts the header of the same name.
 */
export function hoistQueryHeaders(rawTarget: string, auth: AuthResult, headers: Record<string, string | undefined>): void {
  const params = headerParams(splitTarget(rawTarget).rawQuery);
  if (params.length === 0) return;
  if (auth.signatureVersion === 2) {
    throw new S3Error('InvalidRequest', `Signature Version 2 does not sign the query parameter ${params[0]![0]}: send it as a header.`);
  }
  const seen = new Map<string, string>();
  for (const [name, value] of params) {
    const asHeader = Buffer.from(value, 'utf8').toString('latin1');
    const before = seen.get(name) ?? headers[name];
    if (before !== undefined && before !== asHeader) {
      throw new S3Error('InvalidRequest', `${name} is given twice with different values (query string and headers).`);
    }
    seen.set(name, asHeader);
  }
  for (const [name, value] of seen) headers[name] = value;
}
