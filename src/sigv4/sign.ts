/**
 * @module Client-side SigV4: the Authorization header and presigned URLs.
 *
 * Built only from the shared canonicalisation (encode.ts, canonical.ts) so a server
 * verifying a request recomputes exactly what a client signed.
 */
import {
  ALGORITHM,
  canonicalHeaders,
  canonicalRequest,
  credentialScope,
  formatAmzDate,
  lowerCaseHeaders,
  stringToSign,
  type HeaderInput,
} from './canonical.js';
import { canonicalQuery, canonicalUri, type QueryInput } from './encode.js';
import { EMPTY_PAYLOAD_SHA256, hmacSha256Hex, UNSIGNED_PAYLOAD } from './hash.js';
import { deriveSigningKey } from './signing-key.js';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials: sent (and signed) as `x-amz-security-token`. */
  sessionToken?: string;
}

export interface SigningScope {
  credentials: Credentials;
  region: string;
  /** `s3` for S3; other names get the general rules (double-encoded path, no content hash header). */
  service: string;
  /** Signing instant; default now. */
  date?: Date;
}

export interface SignableRequest {
  method: string;
  /** Decoded absolute path, e.g. `/bucket/a key`; encoded here. */
  path: string;
  /** Decoded query parameters. */
  query?: QueryInput;
  /** Headers to send; must include `host`. All are signed except {@link UNSIGNED_HEADERS}. */
  headers: HeaderInput;
  /**
   * Hex SHA-256 of the body, or UNSIGNED-PAYLOAD. Default: the empty-body hash.
   * For S3 it is also sent as `x-amz-content-sha256`.
   */
  payloadHash?: string;
}

/** Headers that proxies may add, drop or rewrite, so signing them would break requests. */
export const UNSIGNED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'connection',
  'expect',
  'keep-alive',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);

export interface SignedRequest {
  /** Headers to add to the request (lower-case names): x-amz-date, authorization, … */
  headers: Record<string, string>;
  /** The wire path (single-encoded); use it as the request path. */
  encodedPath: string;
  /** The wire query string without `?` (canonical order), possibly empty. */
  encodedQuery: string;
  signature: string;
  /** For debugging signature mismatches; never log alongside secrets. */
  canonicalRequest: string;
  stringToSign: string;
}

/** Computes the hex signature of a string to sign; pure apart from the key cache. */
export function computeSignature(
  secretAccessKey: string,
  amzDate: string,
  region: string,
  service: string,
  toSign: string
): string {
  return hmacSha256Hex(deriveSigningKey(secretAccessKey, amzDate.slice(0, 8), region, service), toSign);
}

/**
 * Signs a request with the Authorization header. Does not mutate `request`; returns
 * the headers to add (which are themselves part of what is signed) and the encoded
 * path and query to put on the wire. Throws Error if `host` is missing.
 */
export function signRequest(request: SignableRequest, scope: SigningScope): SignedRequest {
  const amzDate = formatAmzDate(scope.date ?? new Date());
  const isS3 = scope.service === 's3';
  const payloadHash = request.payloadHash ?? EMPTY_PAYLOAD_SHA256;
  const added: Record<string, string> = { 'x-amz-date': amzDate };
  if (isS3) added['x-amz-content-sha256'] = payloadHash;
  if (scope.credentials.sessionToken)
    added['x-amz-security-token'] = scope.credentials.sessionToken;

  const all = lowerCaseHeaders(Object.assign({}, request.headers, added));
  if (!all.has('host')) throw new Error('signRequest: the host header is required');
  const signedNames = [...all.keys()].filter((n) => !UNSIGNED_HEADERS.has(n));
  const { canonical, signedHeaders } = canonicalHeaders(all, signedNames);
  const query = canonicalQuery(request.query);
  const creq = canonicalRequest({
    method: request.method,
    canonicalUri: canonicalUri(request.path, { doubleEncode: !isS3 }),
    canonicalQuery: query,
    canonicalHeaders: canonical,
    signedHeaders,
    payloadHash,
  });
  const scopeText = credentialScope(amzDate, scope.region, scope.service);
  const sts = stringToSign(amzDate, scopeText, creq);
  const signature = computeSignature(
    scope.credentials.secretAccessKey,
    amzDate,
    scope.region,
    scope.service,
    sts
  );
  added.authorization =
    `${ALGORITHM} Credential=${scope.credentials.accessKeyId}/${scopeText}, ` +
    `SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return {
    headers: added,
    encodedPath: canonicalUri(request.path),
    encodedQuery: query,
    signature,
    canonicalRequest: creq,
    stringToSign: sts,
  };
}

/** Longest validity SigV4 allows for a presigned URL: 7 days, in seconds. */
export const MAX_PRESIGN_EXPIRES_SECONDS = 7 * 24 * 3600;

export interface PresignRequest {
  method: string;
  /** `http:` or `https:`. */
  protocol: string;
  /** Host with port when not the default; signed as the `host` header. */
  host: string;
  /** Decoded absolute path. */
  path: string;
  /** Extra decoded query parameters (e.g. response-content-type). */
  query?: QueryInput;
  /** Extra headers the holder of the URL must send exactly (signed). */
  headers?: HeaderInput;
  /** Validity in seconds, 1 to {@link MAX_PRESIGN_EXPIRES_SECONDS}. */
  expiresSeconds: number;
}

/**
 * Returns a URL carrying query-string authentication (`X-Amz-Signature` last). The
 * payload is UNSIGNED-PAYLOAD for S3. Pure apart from the key cache. Throws
 * RangeError for an out-of-range expiry.
 */
export function presignUrl(request: PresignRequest, scope: SigningScope): string {
  const expires = request.expiresSeconds;
  if (!Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGN_EXPIRES_SECONDS) {
    throw new RangeError(
      `presignUrl: expiresSeconds must be 1..${MAX_PRESIGN_EXPIRES_SECONDS}, got ${expires}`
    );
  }
  const amzDate = formatAmzDate(scope.date ?? new Date());
  const scopeText = credentialScope(amzDate, scope.region, scope.service);
  const headers = lowerCaseHeaders({ ...(request.headers ?? {}), host: request.host });
  const signedNames = [...headers.keys()].filter((n) => !UNSIGNED_HEADERS.has(n));
  const { canonical, signedHeaders } = canonicalHeaders(headers, signedNames);
  const params: [string, string][] = request.query
    ? Symbol.iterator in request.query
      ? [...(request.query as Iterable<[string, string]>)]
      : Object.entries(request.query)
    : [];
  params.push(
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Credential', `${scope.credentials.accessKeyId}/${scopeText}`],
    ['X-Amz-Date', amzDate],
    ['X-Amz-Expires', String(expires)],
    ['X-Amz-SignedHeaders', signedHeaders]
  );
  if (scope.credentials.sessionToken)
    params.push(['X-Amz-Security-Token', scope.credentials.sessionToken]);
  const isS3 = scope.service === 's3';
  const query = canonicalQuery(params);
  const creq = canonicalRequest({
    method: request.method,
    canonicalUri: canonicalUri(request.path, { doubleEncode: !isS3 }),
    canonicalQuery: query,
    canonicalHeaders: canonical,
    signedHeaders,
    payloadHash: isS3 ? UNSIGNED_PAYLOAD : EMPTY_PAYLOAD_SHA256,
  });
  const sts = stringToSign(amzDate, scopeText, creq);
  const signature = computeSignature(
    scope.credentials.secretAccessKey,
    amzDate,
    scope.region,
    scope.service,
    sts
  );
  return `${request.protocol}//${request.host}${canonicalUri(request.path)}?${query}&X-Amz-Signature=${signature}`;
}
