/**
 * @module Authenticated encryption of one body segment (AES-256-GCM, node:crypto).
 *
 * A body is encrypted as a *stream*: consecutive segments of SEGMENT_SIZE plaintext bytes
 * (the last one shorter), each sealed on its own so a ranged read opens only the segments
 * it touches. Every stream has its own key (derived from the object's data key and the
 * stream's random id, see envelope.ts), so a segment moved to another object or another
 * part fails to open. Within a stream, the position is bound in two places:
 *
 *   nonce (12 B) = 00 00 00 00 || segment index (u64, big-endian)
 *   AAD          = "strata/sse/segment/v1" || final flag (1 byte: 1 on the stream's last segment)
 *
 * so reordering segments fails (wrong nonce), and so does truncating a stream or extending
 * it with a segment of its own (the final flag of the segment read would disagree). A sealed
 * segment is the ciphertext followed by the 16-byte GCM tag; nothing of the plaintext is
 * returned before the tag verified.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { StoreError } from '../errors.js';

/** GCM authentication tag appended to every sealed segment, bytes. */
export const SEGMENT_TAG_BYTES = 16;
/** AES-256 key length, bytes. */
export const SEGMENT_KEY_BYTES = 32;
/** Largest segment index: the nonce holds a u64, JavaScript numbers are exact to 2^53. */
const MAX_INDEX = Number.MAX_SAFE_INTEGER;

const AAD_LABEL = Buffer.from('strata/sse/segment/v1', 'ascii');
const AAD_FINAL = Buffer.concat([AAD_LABEL, Buffer.from([1])]);
const AAD_INNER = Buffer.concat([AAD_LABEL, Buffer.from([0])]);

function nonceOf(index: number): Buffer {
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_INDEX) throw new RangeError(`segment index ${index} out of range`);
  const n = Buffer.alloc(12);
  n.writeUInt32BE(Math.floor(index / 2 ** 32), 4);
  n.writeUInt32BE(index >>> 0, 8);
  return n;
}

function checkKey(key: Uint8Array): void {
  if (key.length !== SEGMENT_KEY_BYTES) throw new RangeError(`segment key must be ${SEGMENT_KEY_BYTES} bytes, got ${key.length}`);
}

/** Bytes a sealed segment takes for `plainLength` plaintext bytes. */
export function sealedLength(plainLength: number): number {
  return plainLength + SEGMENT_TAG_BYTES;
}

/**
 * Encrypts `plain` as segment `index` of a stream (`final` on its last segment) and returns
 * ciphertext || tag in a new array. `plain` is not modified. Throws RangeError for a key
 * that is not 32 bytes or an index outside 0..2^53-1.
 */
export function sealSegment(key: Uint8Array, index: number, final: boolean, plain: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(plain.length + SEGMENT_TAG_BYTES);
  sealSegmentInto(key, index, final, plain, out);
  return out;
}

/**
 * As sealSegment, writing ciphertext || tag into `target` (exactly sealedLength(plain.length)
 * bytes, not overlapping `plain`): for a writer that lays sealed segments out in one buffer
 * with their framing. Throws RangeError as sealSegment, and for a target of another length.
 */
export function sealSegmentInto(key: Uint8Array, index: number, final: boolean, plain: Uint8Array, target: Uint8Array): void {
  checkKey(key);
  if (target.length !== plain.length + SEGMENT_TAG_BYTES) throw new RangeError(`sealed segment ${index}: target is ${target.length} bytes, ${plain.length + SEGMENT_TAG_BYTES} expected`);
  const c = createCipheriv('aes-256-gcm', key, nonceOf(index));
  c.setAAD(final ? AAD_FINAL : AAD_INNER);
  const body = c.update(plain);
  target.set(body, 0);
  const rest = c.final(); // empty for GCM; kept so the layout never depends on it
  target.set(rest, body.length);
  target.set(c.getAuthTag(), body.length + rest.length);
}

/**
 * Decrypts a sealed segment (ciphertext || tag) expected at `index` of its stream, `final`
 * when it must be the stream's last. Returns the plaintext only once the tag verified.
 * Throws StoreError 'Corrupt' when it does not (wrong key, wrong position, a flipped bit, a
 * truncated or extended stream) or when `sealed` is shorter than a tag; never returns
 * unauthenticated bytes.
 */
export function openSegment(key: Uint8Array, index: number, final: boolean, sealed: Uint8Array): Uint8Array {
  checkKey(key);
  if (sealed.length < SEGMENT_TAG_BYTES) {
    throw new StoreError('Corrupt', `encrypted segment ${index}: ${sealed.length} bytes is shorter than its tag`);
  }
  const body = sealed.subarray(0, sealed.length - SEGMENT_TAG_BYTES);
  const d = createDecipheriv('aes-256-gcm', key, nonceOf(index));
  d.setAAD(final ? AAD_FINAL : AAD_INNER);
  d.setAuthTag(sealed.subarray(sealed.length - SEGMENT_TAG_BYTES));
  // GCM's update() returns all of the plaintext (final() adds nothing) before the tag is
  // checked: it is returned only if final() verifies, and wiped otherwise.
  const out = d.update(body);
  try {
    d.final();
    return out;
  } catch {
    out.fill(0);
    throw new StoreError('Corrupt', `encrypted segment ${index} failed authentication (tampered, misplaced or wrong key)`);
  }
}
