/**
 * @module Server-side request authentication for S3.
 *
 * {@link verifyRequest} accepts SigV4 in the Authorization header, SigV4 presigned URLs and
 * SigV2 presigned URLs, and returns who signed and how the body must be checked. It never
 * reads the body: hex payload hashes and aws-chunked signatures are verified by the body
 * pipeline from the returned {@link PayloadMode}.
 */
import { S3Error } from '../errors.js';
import { SIGV4_ALGORITHM, verifyHeaderV4 } from './header-v4.js';
import { verifyPresignedV4 } from './presigned-v4.js';
import { verifySigV2Query } from './sigv2-query.js';
import { readTarget } from './target.js';
import { anonymousPayload } from './payload.js';
import type { AnonymousAuth, AuthRequest, AuthResult, SecretLookup, VerifyOptions } from './types.js';

export type { AnonymousAuth, AuthRequest, AuthResult, PayloadMode, SecretLookup, SignedAuth, VerifyOptions } from './types.js';
export {
  classifyPayloadHash,
  STREAMING_SIGNED,
  STREAMING_SIGNED_TRAILER,
  STREAMING_UNSIGNED_TRAILER,
} from './payload.js';
export { parseAuthorizationV4, SIGV4_ALGORITHM } from './header-v4.js';
export { sigV2Resource, sigV2StringToSign, SIGV2_SUBRESOURCES } from './sigv2-query.js';

const V4_QUERY_PARAMS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Signature'];
const V2_QUERY_PARAMS = ['AWSAccessKeyId', 'Signature'];

/**
 * Authenticates `req`. Pure apart from the SigV4 signing-key cache; `lookup` is called at
 * most once. A request with no authentication at all is anonymous (`accessKeyId: null`):
 * authorization decides whether it may proceed. Throws S3Error:
 * - `AccessDenied`: an expired or not-yet-valid presigned URL, an unsigned `x-amz-*` header,
 *   no valid date, an anonymous request with a streaming-signed body;
 * - `InvalidArgument`: more than one mechanism (header and query), a bad
 *   `x-amz-content-sha256`;
 * - `InvalidRequest`: header auth without `x-amz-content-sha256`, SigV2 header auth;
 * - `AuthorizationHeaderMalformed` / `AuthorizationQueryParametersError`: unparseable
 *   authentication, wrong scope (service, terminator, date, strict region), bad expiry;
 * - `RequestTimeTooSkewed` (header auth, > `maxSkewMs`), `InvalidAccessKeyId`,
 *   `SignatureDoesNotMatch`, `InvalidURI` (bad escapes in the target),
 *   `NotImplemented` (SigV4a).
 */
export function verifyRequest(
  req: AuthRequest,
  lookup: SecretLookup,
  options: VerifyOptions = {}
): AuthResult {
  const target = readTarget(req.rawTarget);
  const names = new Set(target.query.map(([k]) => k));
  const authorization = req.headers.authorization;
  const mechanisms =
    (authorization !== undefined ? 1 : 0) +
    (V4_QUERY_PARAMS.some((p) => names.has(p)) ? 1 : 0) +
    (V2_QUERY_PARAMS.some((p) => names.has(p)) ? 1 : 0);
  if (mechanisms > 1)
    throw new S3Error(
      'InvalidArgument',
      'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature ' +
        'query string parameter or the Authorization header should be specified',
      { ArgumentName: 'Authorization', ArgumentValue: authorization ?? '' }
    );
  if (mechanisms === 0) {
    const anonymous: AnonymousAuth = {
      accessKeyId: null,
      region: options.region ?? 'us-east-1',
      signatureVersion: null,
      form: 'anonymous',
      payload: anonymousPayload(req.headers['x-amz-content-sha256']),
    };
    return anonymous;
  }

  if (authorization === undefined) {
    return V4_QUERY_PARAMS.some((p) => names.has(p))
      ? verifyPresignedV4(req, target, lookup, options)
      : verifySigV2Query(req, target, lookup, options);
  }
  const value = authorization.trim();
  const space = value.indexOf(' ');
  const scheme = space < 0 ? value : value.slice(0, space);
  if (scheme === SIGV4_ALGORITHM)
    return verifyHeaderV4(req, target, value.slice(space + 1), lookup, options);
  if (scheme === 'AWS4-ECDSA-P256-SHA256')
    throw new S3Error('NotImplemented', 'Signature Version 4A is not implemented');
  if (scheme === 'AWS')
    throw new S3Error(
      'InvalidRequest',
      'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.'
    );
  throw new S3Error('InvalidArgument', 'Unsupported Authorization Type', {
    ArgumentName: 'Authorization',
    ArgumentValue: value,
  });
}
