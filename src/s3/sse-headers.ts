/**
 * @module The server-side-encryption request headers, parsed and validated before anything
 * is read or written.
 *
 *   x-amz-server-side-encryption                      AES256 (SSE-S3) | aws:kms | aws:kms:dsse
 *   x-amz-server-side-encryption-aws-kms-key-id       } SSE-KMS only
 *   x-amz-server-side-encryption-context              }
 *   x-amz-server-side-encryption-bucket-key-enabled   true | false
 *   x-amz-server-side-encryption-customer-algorithm   AES256      } SSE-C: all three, the key
 *   x-amz-server-side-encryption-customer-key         base64(32)  } 32 bytes, its MD5 must
 *   x-amz-server-side-encryption-customer-key-md5     base64(16)  } match
 *   x-amz-copy-source-server-side-encryption-customer-*            the same, for a copy's source
 *
 * Answers follow S3: a malformed or contradictory set is 400 InvalidArgument (a customer
 * algorithm other than AES256: InvalidEncryptionAlgorithmError); SSE-KMS, which Strata does
 * not implement, is 501 NotImplemented — refused, never ignored.
 */
import { createHash } from 'node:crypto';
import { S3Error } from './errors.js';

export const SSE_HEADER = 'x-amz-server-side-encryption';
const KMS_KEY_HEADER = 'x-amz-server-side-encryption-aws-kms-key-id';
const KMS_CONTEXT_HEADER = 'x-amz-server-side-encryption-context';
const BUCKET_KEY_HEADER = 'x-amz-server-side-encryption-bucket-key-enabled';
export const CUSTOMER_PREFIX = 'x-amz-server-side-encryption-customer-';
export const COPY_SOURCE_CUSTOMER_PREFIX = 'x-amz-copy-source-server-side-encryption-customer-';

/** Headers that ask for server-side encryption of what a request writes (not SSE-C). */
export const SSE_WRITE_HEADERS = [SSE_HEADER, KMS_KEY_HEADER, KMS_CONTEXT_HEADER, BUCKET_KEY_HEADER] as const;

/** SSE-C key length: AES-256. */
const CUSTOMER_KEY_BYTES = 32;

type Headers = Readonly<Record<string, string | undefined>>;

/** A validated customer key (SSE-C). */
export interface CustomerKey {
  key: Buffer;
  /** base64 MD5 of the key, as S3 echoes it in x-amz-server-side-encryption-customer-key-md5. */
  md5: string;
}

const invalid = (message: string, name: string, value = '') =>
  new S3Error('InvalidArgument', message, { ArgumentName: name, ArgumentValue: value });
const SSE_C = 'Requests specifying Server Side Encryption with Customer provided keys must provide';

/** Strict base64 (standard alphabet, canonical padding) or undefined. */
function base64(text: string): Buffer | undefined {
  const t = text.trim();
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(t)) return undefined;
  return Buffer.from(t, 'base64');
}

/**
 * The customer key named by the three `prefix*` headers (algorithm, key, key-md5), or
 * undefined when none is present. Throws S3Error InvalidArgument for a partial set, a key
 * that is not 32 bytes of base64, a missing or wrong MD5; InvalidEncryptionAlgorithmError
 * for an algorithm other than AES256. The key is never logged or echoed.
 */
export function customerKeyFrom(h: Headers, prefix = CUSTOMER_PREFIX): CustomerKey | undefined {
  const alg = h[`${prefix}algorithm`];
  const keyText = h[`${prefix}key`];
  const md5Text = h[`${prefix}key-md5`];
  if (alg === undefined && keyText === undefined && md5Text === undefined) return undefined;
  if (alg === undefined) {
    throw invalid(`${SSE_C} a valid encryption algorithm.`, `${prefix}algorithm`);
  }
  if (alg.trim() !== 'AES256') {
    throw new S3Error('InvalidEncryptionAlgorithmError', undefined, {
      ArgumentName: `${prefix}algorithm`,
      ArgumentValue: alg.slice(0, 64),
    });
  }
  if (keyText === undefined) {
    throw invalid(`${SSE_C} an appropriate secret key.`, `${prefix}key`);
  }
  const key = base64(keyText);
  if (!key || key.length !== CUSTOMER_KEY_BYTES) {
    throw invalid('The secret key was invalid for the specified algorithm.', `${prefix}key`);
  }
  if (md5Text === undefined) {
    throw invalid(`${SSE_C} the client calculated MD5 of the secret key.`, `${prefix}key-md5`);
  }
  const md5 = createHash('md5').update(key).digest();
  const claimed = base64(md5Text);
  if (!claimed || !claimed.equals(md5)) {
    throw invalid('The calculated MD5 hash of the key did not match the hash that was provided.', `${prefix}key-md5`);
  }
  return { key, md5: md5.toString('base64') };
}

/** True when any of `names` is present. */
export function hasAny(h: Headers, names: readonly string[]): boolean {
  return names.some((n) => h[n] !== undefined);
}

/** What a write request asks for: SSE-S3, SSE-C (with its key), or nothing. */
export type WriteSse = { kind: 'sse-s3' } | { kind: 'sse-c'; customer: CustomerKey } | { kind: 'none' };

/**
 * The encryption a PutObject / CopyObject / CreateMultipartUpload request asks for in its
 * headers (the bucket default is applied by the caller when this is 'none'). Throws S3Error:
 * InvalidArgument for SSE-S3 and SSE-C together, KMS headers without aws:kms, an unknown
 * x-amz-server-side-encryption value or a bad bucket-key flag; NotImplemented (501) for
 * aws:kms and aws:kms:dsse; and what {@link customerKeyFrom} throws.
 */
export function writeSseFrom(h: Headers): WriteSse {
  const sse = h[SSE_HEADER];
  const customerAsked = hasAny(h, ['algorithm', 'key', 'key-md5'].map((n) => `${CUSTOMER_PREFIX}${n}`));
  if (sse !== undefined && customerAsked) {
    const message = 'Server Side Encryption with Customer provided key is incompatible with the encryption method specified';
    throw invalid(message, SSE_HEADER, sse);
  }
  const value = sse?.trim();
  const kms = value === 'aws:kms' || value === 'aws:kms:dsse';
  if (!kms && hasAny(h, [KMS_KEY_HEADER, KMS_CONTEXT_HEADER])) {
    const message = 'Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms';
    throw invalid(message, SSE_HEADER, sse ?? '');
  }
  const bucketKey = h[BUCKET_KEY_HEADER];
  if (bucketKey !== undefined && !/^(true|false)$/i.test(bucketKey.trim())) {
    throw invalid('Invalid value for x-amz-server-side-encryption-bucket-key-enabled', BUCKET_KEY_HEADER, bucketKey);
  }
  if (kms) {
    throw new S3Error('NotImplemented', `Server-side encryption with AWS KMS keys (${value}) is not implemented; use AES256 (SSE-S3) or SSE-C.`);
  }
  if (value !== undefined && value !== 'AES256') throw invalid('The encryption method specified is not supported', SSE_HEADER, sse ?? '');
  if (value === 'AES256') return { kind: 'sse-s3' };
  const customer = customerKeyFrom(h);
  return customer ? { kind: 'sse-c', customer } : { kind: 'none' };
}
