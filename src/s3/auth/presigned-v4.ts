/**
 * @module SigV4 query-string authentication (presigned URLs).
 *
 * Parameters: X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-Expires (1..604800 s),
 * X-Amz-SignedHeaders, X-Amz-Signature; the canonical query is every parameter except
 * X-Amz-Signature (SDK v3 adds x-id, x-amz-checksum-*, X-Amz-Content-Sha256 …: all signed).
 * The payload is UNSIGNED-PAYLOAD unless X-Amz-Content-Sha256 (query) or a signed
 * x-amz-content-sha256 header says otherwise.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 */
import { parseAmzDate } from '../../sigv4/canonical.js';
import { UNSIGNED_PAYLOAD } from '../../sigv4/hash.js';
import { S3Error } from '../errors.js';
import { MAX_CLOCK_SKEW_MS, MAX_PRESIGNED_EXPIRES_SECONDS } from '../limits.js';
import { SIGV4_ALGORITHM } from './header-v4.js';
import { classifyPayloadHash } from './payload.js';
import { queryParam, type ReadTarget } from './target.js';
import type { AuthRequest, AuthResult, SecretLookup, VerifyOptions } from './types.js';
import { parseCredential, secretOf, verifySignature } from './v4-core.js';

const SIGV4A_ALGORITHM = 'AWS4-ECDSA-P256-SHA256';

function queryError(message: string): S3Error {
  return new S3Error('AuthorizationQueryParametersError', message);
}

/**
 * Verifies a presigned SigV4 request. Pure apart from the signing-key cache. Throws S3Error:
 * `AuthorizationQueryParametersError` (missing/invalid parameters, bad scope, a non-numeric
 * expiry), `AccessDenied` ("Request has expired", "Request is not yet valid", an expiry out
 * of 1..604800 s, unsigned x-amz-* headers), `InvalidAccessKeyId`, `SignatureDoesNotMatch`, `NotImplemented`
 * (SigV4a).
 */
export function verifyPresignedV4(
  req: AuthRequest,
  target: ReadTarget,
  lookup: SecretLookup,
  options: VerifyOptions
): AuthResult {
  const q = (name: string) => queryParam(target.query, name);
  const algorithm = q('X-Amz-Algorithm');
  if (algorithm === SIGV4A_ALGORITHM)
    throw new S3Error('NotImplemented', 'Signature Version 4A is not implemented');
  const credentialRaw = q('X-Amz-Credential');
  const amzDate = q('X-Amz-Date');
  const expiresRaw = q('X-Amz-Expires');
  const signedHeaders = q('X-Amz-SignedHeaders');
  const signature = q('X-Amz-Signature');
  if (!algorithm || !credentialRaw || !amzDate || !expiresRaw || !signedHeaders || !signature)
    throw queryError(
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, ' +
        'X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.'
    );
  if (algorithm !== SIGV4_ALGORITHM)
    throw queryError('X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
  const requestTime = parseAmzDate(amzDate);
  if (!requestTime)
    throw queryError("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
  if (!/^-?[0-9]{1,10}$/.test(expiresRaw)) throw queryError('X-Amz-Expires should be a number');
  const expires = Number(expiresRaw);
  // A validity of zero or less has expired whenever it arrives; one beyond a week is refused
  // outright. Both are 403, as S3 answers them (a malformed value is the 400 above).
  if (expires < 1)
    throw new S3Error('AccessDenied', 'Request has expired', {
      'X-Amz-Expires': expiresRaw,
      ServerTime: req.now.toISOString(),
    });
  if (expires > MAX_PRESIGNED_EXPIRES_SECONDS)
    throw new S3Error(
      'AccessDenied',
      'X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires ' +
        `must be less than ${MAX_PRESIGNED_EXPIRES_SECONDS} seconds`,
      { 'X-Amz-Expires': expiresRaw }
    );

  const credential = parseCredential(credentialRaw, 'presigned', amzDate, options.region);
  const now = req.now.getTime();
  const expiresAt = new Date(requestTime.getTime() + expires * 1000);
  if (requestTime.getTime() - now > (options.maxSkewMs ?? MAX_CLOCK_SKEW_MS))
    throw new S3Error('AccessDenied', 'Request is not yet valid', {
      'X-Amz-Date': amzDate,
      Expires: expiresAt.toISOString(),
      ServerTime: req.now.toISOString(),
    });
  if (now > expiresAt.getTime())
    throw new S3Error('AccessDenied', 'Request has expired', {
      'X-Amz-Expires': expires,
      Expires: expiresAt.toISOString(),
      ServerTime: req.now.toISOString(),
    });
  const secret = secretOf(lookup, credential.accessKeyId);

  const headerHash = req.headers['x-amz-content-sha256']?.trim();
  const headerHashSigned = signedHeaders.split(';').includes('x-amz-content-sha256');
  const payloadHash =
    q('X-Amz-Content-Sha256') ??
    (headerHash !== undefined && headerHashSigned ? headerHash : UNSIGNED_PAYLOAD);
  const kind = classifyPayloadHash(payloadHash);
  if (kind.kind !== 'sha256' && kind.kind !== 'unsigned')
    throw new S3Error('InvalidRequest', 'Presigned requests cannot carry a streaming payload');

  verifySignature(req, target, {
    form: 'presigned',
    credential,
    secret,
    amzDate,
    signedHeaders,
    signature,
    payloadHash,
    query: target.query.filter(([k]) => k !== 'X-Amz-Signature'),
    // An unsigned x-amz-content-sha256 header has no effect here (the payload is unsigned).
    exemptHeaders: new Set(['x-amz-content-sha256']),
  });
  return {
    accessKeyId: credential.accessKeyId,
    region: credential.region,
    signatureVersion: 4,
    form: 'presigned',
    signedHeaders: signedHeaders.split(';'),
    payload: kind.kind === 'sha256' ? { mode: 'sha256', hex: kind.hex } : { mode: 'unsigned' },
  };
}
