/**
 * @module Names the store accepts: bucket names (S3 rules) and object keys (any UTF-8, at
 * most 1024 bytes).
 */
import { StoreError } from './errors.js';

/** S3's object-key limit, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const IPV4_RE = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Throws StoreError 'InvalidBucketName' unless `name` follows S3's bucket naming rules. */
export function checkBucketName(name: string): void {
  const ok =
    BUCKET_RE.test(name) &&
    !name.includes('..') &&
    !name.includes('.-') &&
    !name.includes('-.') &&
    !IPV4_RE.test(name) &&
    !name.startsWith('xn--') &&
    !name.startsWith('sthree-') &&
    !name.endsWith('-s3alias') &&
    !name.endsWith('--ol-s3');
  if (!ok) throw new StoreError('InvalidBucketName', 'The specified bucket is not valid.', { detail: { BucketName: name } });
}

/** Throws StoreError 'KeyTooLong' / 'InvalidArgument' unless `key` is a storable S3 key. */
export function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new StoreError('InvalidArgument', 'Object key must not be empty');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) {
    throw new StoreError('KeyTooLong', 'Your key is too long', { detail: { MaxSizeAllowed: MAX_KEY_BYTES } });
  }
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(key)) {
    throw new StoreError('InvalidArgument', 'Object key is not valid UTF-8');
  }
}
