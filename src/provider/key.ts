/**
 * @module Key validation and ordering shared by every provider.
 *
 * A key is any non-empty string whose UTF-8 form is at most MAX_KEY_BYTES bytes and
 * which has no lone UTF-16 surrogate (such a string has no UTF-8 form, so it could
 * not round-trip). Keys order by their UTF-8 bytes, which is S3's listing order and
 * differs from JavaScript's `<` (UTF-16 units) once characters above U+FFFF meet
 * characters in U+E000..U+FFFF.
 */
import { MAX_KEY_BYTES, ProviderError } from './provider.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Returns the UTF-8 bytes of `key`. Throws ProviderError 'InvalidKey' if the key is
 * empty, holds a lone surrogate, or is longer than MAX_KEY_BYTES bytes.
 */
export function keyBytes(key: string): Buffer {
  if (typeof key !== 'string' || key.length === 0)
    throw new ProviderError('InvalidKey', 'key must be a non-empty string');
  if (LONE_SURROGATE.test(key))
    throw new ProviderError(
      'InvalidKey',
      'key holds a lone UTF-16 surrogate (not UTF-8 encodable)'
    );
  const bytes = Buffer.from(key, 'utf8');
  if (bytes.length > MAX_KEY_BYTES) {
    throw new ProviderError(
      'InvalidKey',
      `key is ${bytes.length} UTF-8 bytes; the limit is ${MAX_KEY_BYTES}`
    );
  }
  return bytes;
}

/** Throws like keyBytes; for call sites that only need the check. */
export function validateKey(key: string): void {
  keyBytes(key);
}

/** Compares two keys by their UTF-8 bytes (negative, zero, positive). */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Default and maximum page size of `list`. */
export const MAX_LIST_LIMIT = 1000;

/** Resolves `ListOptions.limit`: default and cap MAX_LIST_LIMIT. Throws RangeError unless a positive integer. */
export function listLimit(limit: number | undefined): number {
  if (limit === undefined) return MAX_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`list limit must be a positive integer, got ${limit}`);
  return Math.min(limit, MAX_LIST_LIMIT);
}
