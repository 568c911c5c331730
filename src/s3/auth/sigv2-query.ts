/**
 * @module SigV2 query-string authentication (`?AWSAccessKeyId=…&Expires=…&Signature=…`).
 *
 * botocore (aws-cli v1 `aws s3 presign`, boto3 `generate_presigned_url`) still produces
 * SigV2 URLs by default (s3-clients.md §2.4), so Strata accepts them for any method. Only
 * the query form is implemented; an `Authorization: AWS …` header is refused by
 * verifyRequest. Algorithm (S3 developer guide, "Signing and authenticating REST requests",
 * query string request authentication):
 *
 *   Signature    = Base64(HMAC-SHA1(secret, StringToSign))
 *   StringToSign = Method \n Content-MD5 \n Content-Type \n Expires \n
 *                  CanonicalizedAmzHeaders CanonicalizedResource
 *   CanonicalizedAmzHeaders = for each x-amz-* header, sorted: name:trimmed-value \n
 *   CanonicalizedResource   = [/bucket when virtual-hosted] + raw path +
 *                             [? sorted sub-resources, names and values decoded]
 *
 * A query parameter left out of the signature must not be able to change what the request
 * does (a URL presigned for PutObject turned into PutObjectAcl by appending `?acl`): every
 * parameter the router dispatches on is a signed sub-resource here, S3's list plus the
 * sub-resources S3 added since (which it serves with SigV4 only), and parameter names are
 * decoded exactly as the router decodes them (`?%61cl` is `acl` to both).
 *
 * The payload is not signed. A URL may not stay valid for more than 7 days from the moment
 * it is used (SigV4's bound; SigV2 URLs name only their end).
 */
import { createHmac } from 'node:crypto';
import { percentDecode } from '../../sigv4/raw-target.js';
import { signaturesEqual } from '../../sigv4/hash.js';
import { S3Error } from '../errors.js';
import { MAX_PRESIGNED_EXPIRES_SECONDS } from '../limits.js';
import { bucketFromHost } from '../router/virtual-host.js';
import { BUCKET_NOT_IMPLEMENTED, OBJECT_NOT_IMPLEMENTED } from '../router/subresources.js';
import { queryParam, type ReadTarget } from './target.js';
import type { AuthRequest, AuthResult, SecretLookup, VerifyOptions } from './types.js';
import { secretOf } from './v4-core.js';

/** Region reported for SigV2 requests when no region is configured. */
const DEFAULT_REGION = 'us-east-1';

/**
 * Query parameters that are part of the SigV2 CanonicalizedResource: S3's sub-resources and
 * the response-header overrides (the list botocore signs), and every other sub-resource the
 * router reads (see the module header).
 */
export const SIGV2_SUBRESOURCES: ReadonlySet<string> = new Set([
  'accelerate',
  'acl',
  'analytics',
  'cors',
  'defaultObjectAcl',
  'delete',
  'inventory',
  'lifecycle',
  'location',
  'logging',
  'metrics',
  'notification',
  'object-lock',
  'partNumber',
  'policy',
  'replication',
  'requestPayment',
  'response-cache-control',
  'response-content-disposition',
  'response-content-encoding',
  'response-content-language',
  'response-content-type',
  'response-expires',
  'restore',
  'select',
  'select-type',
  'storageClass',
  'tagging',
  'torrent',
  'uploadId',
  'uploads',
  'versionId',
  'versioning',
  'versions',
  'website',
  // Sub-resources the router also dispatches on (S3 signs them with SigV4 only): left
  // unsigned, they would turn a URL presigned for one operation into another.
  'attributes',
  'encryption',
  'ownershipControls',
  'policyStatus',
  'publicAccessBlock',
  ...BUCKET_NOT_IMPLEMENTED,
  ...OBJECT_NOT_IMPLEMENTED,
]);

/**
 * The CanonicalizedResource of a SigV2 request. Names and values are decoded as the router
 * decodes them (form decoding: `+` is a space), so what is signed is what is used. Throws
 * S3Error `InvalidURI` on bad escapes.
 */
export function sigV2Resource(target: ReadTarget, virtualHostBucket: string | undefined): string {
  const subresources: [string, string][] = [];
  for (const part of target.rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = percentDecode(eq < 0 ? part : part.slice(0, eq), true);
      value = eq < 0 ? '' : '=' + percentDecode(part.slice(eq + 1), true);
    } catch {
      throw new S3Error('InvalidURI');
    }
    if (!SIGV2_SUBRESOURCES.has(name)) continue;
    subresources.push([name, name + value]);
  }
  subresources.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const bucketPrefix = virtualHostBucket === undefined ? '' : '/' + virtualHostBucket;
  const query = subresources.length === 0 ? '' : '?' + subresources.map(([, s]) => s).join('&');
  return bucketPrefix + target.rawPath + query;
}

/** The header-derived lines of a SigV2 StringToSign (everything before the resource). */
function sigV2HeaderLines(req: AuthRequest, expires: string): string {
  const amz = Object.entries(req.headers)
    .filter(([name, v]) => name.startsWith('x-amz-') && v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, v]) => `${name}:${v!.trim()}\n`)
    .join('');
  const md5 = req.headers['content-md5'] ?? '';
  const type = req.headers['content-type'] ?? '';
  return `${req.method.toUpperCase()}\n${md5}\n${type}\n${expires}\n${amz}`;
}

/** The SigV2 StringToSign of a query-authenticated request. Pure. */
export function sigV2StringToSign(req: AuthRequest, expires: string, resource: string): string {
  return sigV2HeaderLines(req, expires) + resource;
}

/**
 * The bytes the SigV2 signature covers: header values as they came on the wire (the
 * server reads them one character per byte, so latin1 restores the bytes; a UTF-8 value
 * stays UTF-8), then the resource, whose decoded sub-resource values are UTF-8. Pure.
 */
function sigV2Bytes(req: AuthRequest, expires: string, resource: string): Buffer {
  return Buffer.concat([Buffer.from(sigV2HeaderLines(req, expires), 'latin1'), Buffer.from(resource, 'utf8')]);
}

/**
 * Verifies a SigV2 presigned request. Pure. Throws S3Error `AccessDenied` (missing
 * parameters, bad or past Expires), `InvalidAccessKeyId`, `SignatureDoesNotMatch` (with
 * StringToSign).
 */
export function verifySigV2Query(
  req: AuthRequest,
  target: ReadTarget,
  lookup: SecretLookup,
  options: VerifyOptions
): AuthResult {
  const accessKeyId = queryParam(target.query, 'AWSAccessKeyId');
  // Base64 never contains spaces: a space is a '+' that was sent unescaped.
  const signature = queryParam(target.query, 'Signature')?.replace(/ /g, '+');
  const expires = queryParam(target.query, 'Expires');
  if (!accessKeyId || !signature || expires === undefined)
    throw new S3Error(
      'AccessDenied',
      'Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters'
    );
  if (!/^[0-9]{1,12}$/.test(expires))
    throw new S3Error('AccessDenied', `Invalid date (should be seconds since epoch): ${expires}`);
  const expiresAt = new Date(Number(expires) * 1000);
  if (req.now.getTime() > expiresAt.getTime())
    throw new S3Error('AccessDenied', 'Request has expired', {
      Expires: expiresAt.toISOString(),
      ServerTime: req.now.toISOString(),
    });
  // SigV2 URLs carry no signing time: bound them from now, with SigV4's longest validity,
  // so that no URL stays valid for longer than a week from any moment.
  if (expiresAt.getTime() - req.now.getTime() > MAX_PRESIGNED_EXPIRES_SECONDS * 1000)
    throw new S3Error(
      'AccessDenied',
      `Expires must be at most ${MAX_PRESIGNED_EXPIRES_SECONDS} seconds (7 days) after the current time`,
      { Expires: expiresAt.toISOString(), ServerTime: req.now.toISOString() }
    );
  const secret = secretOf(lookup, accessKeyId);
  const bucket = bucketFromHost(req.headers.host, options.baseDomain);
  const resource = sigV2Resource(target, bucket);
  const sts = sigV2StringToSign(req, expires, resource);
  const expected = createHmac('sha1', secret).update(sigV2Bytes(req, expires, resource)).digest('base64');
  if (!signaturesEqual(expected, signature))
    throw new S3Error('SignatureDoesNotMatch', undefined, {
      AWSAccessKeyId: accessKeyId,
      StringToSign: sts,
      SignatureProvided: signature,
    });
  return {
    accessKeyId,
    region: options.region ?? DEFAULT_REGION,
    signatureVersion: 2,
    form: 'presigned',
    payload: { mode: 'unsigned' },
  };
}
