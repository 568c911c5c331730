/**
 * @module Who signed a POST Object form: the form carries its own credentials, since a
 * browser cannot sign the request it sends.
 *
 *   SigV4  x-amz-algorithm=AWS4-HMAC-SHA256, x-amz-credential=AKID/date/region/s3/aws4_request,
 *          x-amz-date, x-amz-signature = hex(HMAC-SHA256(signing key, policy))
 *   SigV2  AWSAccessKeyId, signature = base64(HMAC-SHA1(secret, policy))
 *   none   anonymous (no policy either): authorized as an anonymous PutObject
 *
 * The signature covers the policy field exactly as sent (its base64 text).
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-post-example.html
 */
import { createHmac } from 'node:crypto';
import { parseAmzDate } from '../../sigv4/canonical.js';
import { hmacSha256Hex, signaturesEqual } from '../../sigv4/hash.js';
import { deriveSigningKey } from '../../sigv4/signing-key.js';
import { S3Error } from '../errors.js';
import { parseCredential, secretOf } from '../auth/v4-core.js';
import type { SecretLookup } from '../auth/types.js';

const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';
/** Fields that make a form authenticated (lower-case names). */
const AUTH_FIELDS = ['policy', 'awsaccesskeyid', 'signature', 'x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-signature'];

export type FormSigner =
  | { kind: 'anonymous' }
  | { kind: 'signed'; accessKeyId: string; signatureVersion: 2 | 4; policy: string };

function missing(field: string): S3Error {
  return new S3Error('InvalidArgument', `Bucket POST must contain a field named '${field}'.  If it is specified, please check the order of the fields.`, {
    ArgumentName: field,
    ArgumentValue: '',
  });
}

function required(fields: ReadonlyMap<string, string>, name: string, label: string): string {
  const v = fields.get(name);
  if (v === undefined || v === '') throw missing(label);
  return v;
}

/**
 * Authenticates a form from its fields (lower-case names). Pure apart from the signing-key
 * cache. Throws S3Error InvalidArgument (a missing or malformed authentication field, an
 * unknown algorithm), InvalidAccessKeyId, SignatureDoesNotMatch (403).
 */
export function verifyFormSignature(fields: ReadonlyMap<string, string>, lookup: SecretLookup, region: string | undefined): FormSigner {
  if (!AUTH_FIELDS.some((f) => fields.has(f))) return { kind: 'anonymous' };
  const policy = required(fields, 'policy', 'policy');
  const v4 = fields.has('x-amz-algorithm') || fields.has('x-amz-credential') || fields.has('x-amz-signature');
  if (!v4) {
    const accessKeyId = required(fields, 'awsaccesskeyid', 'AWSAccessKeyId');
    const signature = required(fields, 'signature', 'Signature');
    const secret = secretOf(lookup, accessKeyId);
    const expected = createHmac('sha1', secret).update(policy, 'utf8').digest('base64');
    if (!signaturesEqual(expected, signature.replace(/ /g, '+'))) {
      throw new S3Error('SignatureDoesNotMatch', undefined, { AWSAccessKeyId: accessKeyId, StringToSign: policy, SignatureProvided: signature });
    }
    return { kind: 'signed', accessKeyId, signatureVersion: 2, policy };
  }
  const algorithm = required(fields, 'x-amz-algorithm', 'X-Amz-Algorithm');
  if (algorithm !== SIGV4_ALGORITHM) {
    throw new S3Error('InvalidArgument', `X-Amz-Algorithm only supports "${SIGV4_ALGORITHM}"`, { ArgumentName: 'x-amz-algorithm', ArgumentValue: algorithm });
  }
  const credentialRaw = required(fields, 'x-amz-credential', 'X-Amz-Credential');
  const amzDate = required(fields, 'x-amz-date', 'X-Amz-Date');
  const signature = required(fields, 'x-amz-signature', 'X-Amz-Signature');
  if (!parseAmzDate(amzDate)) {
    throw new S3Error('InvalidArgument', "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"", { ArgumentName: 'x-amz-date', ArgumentValue: amzDate });
  }
  let credential;
  try {
    credential = parseCredential(credentialRaw, 'presigned', amzDate, region);
  } catch (err) {
    const why = err instanceof S3Error ? err.message.replace(/^Error parsing the X-Amz-Credential parameter; /, '') : 'malformed';
    throw new S3Error('InvalidArgument', `Invalid X-Amz-Credential: ${why}`, { ArgumentName: 'x-amz-credential', ArgumentValue: credentialRaw });
  }
  const secret = secretOf(lookup, credential.accessKeyId);
  const key = deriveSigningKey(secret, credential.date, credential.region, 's3');
  const expected = hmacSha256Hex(key, policy);
  if (!signaturesEqual(expected, signature.toLowerCase())) {
    throw new S3Error('SignatureDoesNotMatch', undefined, { AWSAccessKeyId: credential.accessKeyId, StringToSign: policy, SignatureProvided: signature });
  }
  return { kind: 'signed', accessKeyId: credential.accessKeyId, signatureVersion: 4, policy };
}
