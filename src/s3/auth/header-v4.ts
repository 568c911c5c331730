/**
 * @module SigV4 with the Authorization header:
 * `AWS4-HMAC-SHA256 Credential=AKID/yyyymmdd/region/s3/aws4_request, SignedHeaders=a;b, Signature=hex`
 * (components separated by `,` with or without spaces: s3cmd sends none).
 */
import { parseAmzDate } from '../../sigv4/canonical.js';
import { S3Error } from '../errors.js';
import { MAX_CLOCK_SKEW_MS } from '../limits.js';
import { classifyPayloadHash, type PayloadKind } from './payload.js';
import type { ReadTarget } from './target.js';
import type { AuthRequest, AuthResult, PayloadMode, SecretLookup, VerifyOptions } from './types.js';
import {
  amzDateFromHttpDate,
  checkSkew,
  malformedAuth,
  parseCredential,
  secretOf,
  verifySignature,
} from './v4-core.js';

export const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';

export interface AuthorizationHeaderV4 {
  credential: string;
  signedHeaders: string;
  signature: string;
}

/**
 * Parses the value after `AWS4-HMAC-SHA256 `. Pure. Throws `AuthorizationHeaderMalformed`
 * when a component is missing, repeated or unknown.
 */
export function parseAuthorizationV4(value: string): AuthorizationHeaderV4 {
  let credential: string | undefined;
  let signedHeaders: string | undefined;
  let signature: string | undefined;
  for (const part of value.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    const name = eq < 0 ? item : item.slice(0, eq).trim();
    const text = item.slice(eq + 1).trim();
    if (eq >= 0 && name === 'Credential' && credential === undefined) credential = text;
    else if (eq >= 0 && name === 'SignedHeaders' && signedHeaders === undefined) signedHeaders = text;
    else if (eq >= 0 && name === 'Signature' && signature === undefined) signature = text;
    else throw malformedAuth('header', `unexpected component "${name}".`);
  }
  if (!credential || !signedHeaders || !signature)
    throw malformedAuth(
      'header',
      'the authorization header requires three components: Credential, SignedHeaders, and Signature.'
    );
  return { credential, signedHeaders, signature };
}

/**
 * Verifies a header-signed SigV4 request. `authorization` is the header value after the
 * algorithm. Pure apart from the signing-key cache. Throws S3Error (see verifyRequest).
 */
export function verifyHeaderV4(
  req: AuthRequest,
  target: ReadTarget,
  authorization: string,
  lookup: SecretLookup,
  options: VerifyOptions
): AuthResult {
  const auth = parseAuthorizationV4(authorization);
  const xAmzDate = req.headers['x-amz-date'];
  const httpDate = req.headers['date'];
  const amzDate =
    xAmzDate !== undefined
      ? xAmzDate.trim()
      : httpDate !== undefined
        ? amzDateFromHttpDate(httpDate)
        : undefined;
  const requestTime = amzDate === undefined ? undefined : parseAmzDate(amzDate);
  if (amzDate === undefined || requestTime === undefined)
    throw new S3Error(
      'AccessDenied',
      'AWS authentication requires a valid Date or x-amz-date header'
    );

  const credential = parseCredential(auth.credential, 'header', amzDate, options.region);
  checkSkew(requestTime, amzDate, req.now, options.maxSkewMs ?? MAX_CLOCK_SKEW_MS);
  const secret = secretOf(lookup, credential.accessKeyId);

  const payloadHash = req.headers['x-amz-content-sha256']?.trim();
  if (payloadHash === undefined)
    throw new S3Error(
      'InvalidRequest',
      'Missing required header for this request: x-amz-content-sha256'
    );
  const kind = classifyPayloadHash(payloadHash);

  const { signingKey, scope } = verifySignature(req, target, {
    form: 'header',
    credential,
    secret,
    amzDate,
    signedHeaders: auth.signedHeaders,
    signature: auth.signature,
    payloadHash,
    query: target.query,
  });
  return {
    accessKeyId: credential.accessKeyId,
    region: credential.region,
    signatureVersion: 4,
    form: 'header',
    signedHeaders: auth.signedHeaders.split(';'),
    payload: headerPayload(kind, auth.signature, signingKey, scope, amzDate),
  };
}

/** The body contract of a header-signed request whose x-amz-content-sha256 is `kind`. */
function headerPayload(kind: PayloadKind, seedSignature: string, signingKey: Buffer, scope: string, amzDate: string): PayloadMode {
  switch (kind.kind) {
    case 'sha256':
      return { mode: 'sha256', hex: kind.hex };
    case 'unsigned':
      return { mode: 'unsigned' };
    case 'streaming-unsigned-trailer':
      return { mode: 'streaming-unsigned-trailer' };
    case 'streaming-signed':
      return { mode: 'streaming-signed', trailer: kind.trailer, seedSignature, signingKey, scope, amzDate };
  }
}
