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
 * The key returned last, with what it was derived from: a server verifying a client's requests
 * asks for the same (secret, day, region, service) again and again, and this answers that
 * with four string compares, before the cache key is built and hashed and the cache's recency
 * order is rewritten (a Map delete and set per request).
 */
let last: { secret: string; date: string; region: string; service: string; key: Buffer } | undefined;

/** SHA-256 of each secret in use, memoised so that a cache hit costs no hashing. (It holds
 * the secrets its callers hold anyway; derived keys are cached under the hash.) */
const secretIds = new Map<string, string>();

function secretId(secret: string): string {
  let id = secretIds.get(secret);
  if (id === undefined) {
    id = createHash('sha256').update(secret).digest('base64');
    secretIds.set(secret, id);
    if (secretIds.size > SIGNING_KEY_CACHE_ENTRIES) secretIds.delete(secretIds.keys().next().value!);
  }
  return id;
}

/**
 * Returns the 32-byte signing key for `date` (`yyyymmdd`), `region` and `service`.
 * Mutates only the module's caches (bounded at {@link SIGNING_KEY_CACHE_ENTRIES},
 * oldest evicted first). Keys are cached by a SHA-256 of the secret. The returned
 * buffer is shared: do not modify it.
 */
export function deriveSigningKey(
  secretAccessKey: string,
  date: string,
  region: string,
  service: string
): Buffer {
  const l = last;
  if (l !== undefined && l.date === date && l.secret === secretAccessKey && l.region === region && l.service === service) return l.key;
  const cacheKey = `${secretId(secretAccessKey)}\n${date}\n${region}\n${service}`;
  const hit = cache.get(cacheKey);
  if (hit) {
    cache.delete(cacheKey); // re-insert: Map order doubles as recency order
    cache.set(cacheKey, hit);
    last = { secret: secretAccessKey, date, region, service, key: hit };
    return hit;
  }
  const kDate = hmacSha256('AWS4' + secretAccessKey, date);
  const kRegion = hmacSha256(kDate, region);
  const kService = hmacSha256(kRegion, service);
  const key = hmacSha256(kService, 'aws4_request');
  cache.set(cacheKey, key);
  if (cache.size > SIGNING_KEY_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  last = { secret: secretAccessKey, date, region, service, key };
  return key;
}

/** Number of cached keys (for tests). */
export function signingKeyCacheSize(): number {
  return cache.size;
}
