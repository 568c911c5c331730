/**
 * @module SigV4 signing-key derivation, with a small cache.
 *
 *   kDate    = HMAC("AWS4" + secret, yyyymmdd)
 *   kRegion  = HMAC(kDate, region)
 *   kService = HMAC(kRegion, service)
 *   kSigning = HMAC(kService, "aws4_request")
 *
 * A key is valid for one (secret, day, region, service); deriving it costs four
 * HMACs, so clients and servers that sign or verify many requests cache it.
 */
import { createHash } from 'node:crypto';
import { hmacSha256 } from './hash.js';

/** Derived keys kept; one per (credential, day, region, service) in active use is plenty. */
const SIGNING_KEY_CACHE_ENTRIES = 64;

const cache = new Map<string, Buffer>();

/**
 * Returns the 32-byte signing key for `date` (`yyyymmdd`), `region` and `service`.
 * Mutates only the module's cache (bounded at {@link SIGNING_KEY_CACHE_ENTRIES},
 * oldest evicted first). The cache is keyed by a SHA-256 of the secret, never by
 * the secret itself. The returned buffer is shared: do not modify it.
 */
export function deriveSigningKey(
  secretAccessKey: string,
  date: string,
  region: string,
  service: string
): Buffer {
  const id = createHash('sha256').update(secretAccessKey).digest('base64');
  const cacheKey = `${id}\n${date}\n${region}\n${service}`;
  const hit = cache.get(cacheKey);
  if (hit) {
    cache.delete(cacheKey); // re-insert: Map order doubles as recency order
    cache.set(cacheKey, hit);
    return hit;
  }
  const kDate = hmacSha256('AWS4' + secretAccessKey, date);
  const kRegion = hmacSha256(kDate, region);
  const kService = hmacSha256(kRegion, service);
  const key = hmacSha256(kService, 'aws4_request');
  cache.set(cacheKey, key);
  if (cache.size > SIGNING_KEY_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  return key;
}

/** Number of cached keys (for tests). */
export function signingKeyCacheSize(): number {
  return cache.size;
}
