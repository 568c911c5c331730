/**
 * @module Object key rules: any UTF-8 string of 1..1024 bytes. `.`/`..` segments, `//` and
 * leading or trailing spaces are all legal and kept exactly.
 */
import { S3Error } from '../errors.js';
import { MAX_KEY_BYTES } from '../limits.js';

/** Throws S3Error `KeyTooLongError` (with MaxSizeAllowed and Size) for keys over 1024 bytes. */
export function validateKey(key: string): void {
  const size = Buffer.byteLength(key, 'utf8');
  if (size > MAX_KEY_BYTES)
    throw new S3Error('KeyTooLongError', undefined, { MaxSizeAllowed: MAX_KEY_BYTES, Size: size });
}
