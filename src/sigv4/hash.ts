/**
 * @module Hashing primitives of Signature Version 4, on node:crypto.
 *
 * SigV4 uses exactly two: SHA-256 (of the payload and of the canonical request, as
 * lowercase hex) and HMAC-SHA256 (key derivation and the final signature).
 */
import * as nodeCrypto from 'node:crypto';
import { createHash, createHmac } from 'node:crypto';

/** `x-amz-content-sha256` of an empty body (SHA-256 of zero bytes). */
export const EMPTY_PAYLOAD_SHA256 =
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** `x-amz-content-sha256` for a body that is not covered by the signature (S3 only). */
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/**
 * Node's one-shot digest (`crypto.hash`, Node >= 20.12): about half the cost of a
 * createHash object for the few hundred bytes of a canonical request. Undefined on older
 * runtimes (and Bun builds without it), where createHash is used.
 */
const oneShot = (nodeCrypto as { hash?: (alg: string, data: string | Uint8Array, enc: 'hex') => string }).hash;

/** Lowercase hex SHA-256 of a UTF-8 string or of bytes (chunks are hashed in order). */
export function sha256Hex(data: string | Uint8Array | readonly Uint8Array[]): string {
  if (oneShot && (typeof data === 'string' || data instanceof Uint8Array)) return oneShot('sha256', data, 'hex');
  const hash = createHash('sha256');
  if (typeof data === 'string' || data instanceof Uint8Array) hash.update(data);
  else for (const chunk of data) hash.update(chunk);
  return hash.digest('hex');
}

/** SHA-256's block size: HMAC pads its key (hashed first when longer) to this many bytes. */
const HMAC_BLOCK = 64;

const oneShotBytes = oneShot as ((alg: string, data: Uint8Array, enc: 'buffer') => Buffer) | undefined;

/** Scratch for (K ^ ipad) || data, reused (every use is synchronous) up to this many bytes;
 * longer data (a large POST policy) gets a buffer of its own. */
const HMAC_SCRATCH_BYTES = 16 * 1024;
const innerScratch = Buffer.allocUnsafe(HMAC_SCRATCH_BYTES);
/** Scratch for (K ^ opad) || H(inner). */
const outerScratch = Buffer.allocUnsafe(HMAC_BLOCK + 32);

/** The one-shot digest as a latin1 string (one character per byte) or as lowercase hex:
 * answered as a string, with no Buffer made for it. */
const oneShotText = oneShot as ((alg: string, data: Uint8Array, enc: 'latin1' | 'hex') => string) | undefined;

/**
 * Fills the outer scratch with (K ^ opad) || H((K ^ ipad) || data) and returns it, for
 * hmacSha256 and hmacSha256Hex (only with the one-shot digest). The inner digest is taken as
 * latin1 text and written into the scratch: no Buffer is made for it (a Buffer per digest
 * was most of an HMAC's cost: 3.2 against 0.9 us per signature check, hmacSha256 then
 * toHex against hmacSha256Hex, in a loop on this machine).
 */
function outerBlock(key: string | Uint8Array, data: string | Uint8Array): Buffer {
  let k: Uint8Array = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  if (k.length > HMAC_BLOCK) k = oneShotBytes!('sha256', k, 'buffer');
  const most = HMAC_BLOCK + (typeof data === 'string' ? data.length * 3 : data.length);
  const inner = most <= HMAC_SCRATCH_BYTES ? innerScratch : Buffer.allocUnsafe(most);
  const outer = outerScratch;
  for (let i = 0; i < HMAC_BLOCK; i++) {
    const b = i < k.length ? k[i]! : 0;
    inner[i] = b ^ 0x36;
    outer[i] = b ^ 0x5c;
  }
  const length = typeof data === 'string' ? inner.write(data, HMAC_BLOCK, 'utf8') : (inner.set(data, HMAC_BLOCK), data.length);
  outer.write(oneShotText!('sha256', inner.subarray(0, HMAC_BLOCK + length), 'latin1'), HMAC_BLOCK, 'latin1');
  return outer;
}

/**
 * Raw 32-byte HMAC-SHA256 of `data` (UTF-8 when a string) under `key` (RFC 2104). With Node's
 * one-shot digest it is two digests over reused scratch, H((K ^ opad) || H((K ^ ipad) || data)),
 * not an Hmac object: every SigV4 request computes one, and on the server the object cost
 * 6-16% of a 4 KiB PUT's or GET's CPU (bench:http, old and new build side by side).
 * createHmac where the one-shot digest is missing. Returns a fresh buffer.
 */
export function hmacSha256(key: string | Uint8Array, data: string | Uint8Array): Buffer {
  if (!oneShotBytes) return createHmac('sha256', key).update(data).digest();
  return oneShotBytes('sha256', outerBlock(key, data), 'buffer');
}

/** toHex(hmacSha256(key, data)), computed without a Buffer for either digest: what a
 * signature check compares and a signer sends. */
export function hmacSha256Hex(key: string | Uint8Array, data: string | Uint8Array): string {
  if (!oneShotText) return createHmac('sha256', key).update(data).digest('hex');
  return oneShotText('sha256', outerBlock(key, data), 'hex');
}

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Compares two signatures (hex strings) in time independent of where they differ,
 * for the server side: every character is compared (no early exit), with no copy of either.
 * Returns false for different lengths without comparing.
 */
export function signaturesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Whether `provided` (hex text from the request) is the signature `expected` (the 32 raw
 * HMAC bytes, or their 64 lower-case hex digits from hmacSha256Hex), the only form a SigV4
 * signature is computed in. Compared as text by signaturesEqual (every character, no early
 * exit); a text of another length is false at once. (One native hex encoding and that loop: a
 * regex check, a hex decode into a new buffer and timingSafeEqual cost ~2% of a 4 KiB GET's
 * server CPU.)
 */
export function signatureMatches(expected: Uint8Array | string, provided: string): boolean {
  const hex = typeof expected === 'string' ? expected : expected.length === 32 ? toHex(expected) : '';
  return hex.length === 64 && provided.length === 64 && signaturesEqual(hex, provided);
}
