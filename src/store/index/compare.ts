/**
 * @module Index key order and byte form.
 *
 * Keys order by their UTF-8 bytes, which is Unicode code point order and S3's listing
 * order. JavaScript's `<` compares UTF-16 code units instead, and the two disagree when a
 * character above U+FFFF (a surrogate pair, units 0xD800..0xDFFF) meets one in
 * U+E000..U+FFFF: `'\u{10000}' < '\uFFFF'` is true in JS, but U+10000 sorts after U+FFFF.
 *
 * Keys must be well-formed UTF-16 (no lone surrogate): such a string has no UTF-8 form.
 * compareKeys still gives lone surrogates a consistent total order (as if they were code
 * points above U+FFFF); the run writer refuses them (encodeKeyInto).
 */
import { IndexError } from './errors.js';

/** First UTF-16 surrogate code unit: below it, code-unit order equals code-point order. */
const SURROGATE_MIN = 0xd800;
/** First code unit of the private-use area that JS orders below surrogates. */
const PRIVATE_USE_MIN = 0xe000;
/** Most UTF-8 bytes one UTF-16 code unit can need (U+0800..U+FFFF take 3 bytes for 1 unit). */
export const MAX_UTF8_BYTES_PER_UNIT = 3;

/** Rank of a code unit >= SURROGATE_MIN in code point order: U+E000..U+FFFF below surrogates. */
function highRank(unit: number): number {
  return unit >= PRIVATE_USE_MIN ? unit - 0x800 : unit + 0x2000;
}

/**
 * Compares two keys by the bytes of their UTF-8 encodings: negative if `a` sorts first, 0 if
 * equal, positive if `b` sorts first. A key sorts before every longer key it is a prefix of.
 * Pure; O(length of the common prefix).
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Fast path (all ASCII and most text): a unit below 0xD800 orders the same either way.
    if (x < SURROGATE_MIN || y < SURROGATE_MIN) return x - y;
    return highRank(x) - highRank(y);
  }
  return a.length - b.length;
}

/**
 * Writes the UTF-8 form of `key` into `out` from `offset` and returns the offset after it.
 * `out` must have `key.length * MAX_UTF8_BYTES_PER_UNIT` bytes of room from `offset`.
 * Throws IndexError 'ERR_RUN_ENTRY' if the key holds a lone surrogate (nothing to encode).
 */
export function encodeKeyInto(key: string, out: Uint8Array, offset: number): number {
  let o = offset;
  const n = key.length;
  for (let i = 0; i < n; i++) {
    let c = key.charCodeAt(i);
    if (c < 0x80) {
      out[o++] = c;
    } else if (c < 0x800) {
      out[o++] = 0xc0 | (c >> 6);
      out[o++] = 0x80 | (c & 0x3f);
    } else if (c < SURROGATE_MIN || c >= PRIVATE_USE_MIN) {
      out[o++] = 0xe0 | (c >> 12);
      out[o++] = 0x80 | ((c >> 6) & 0x3f);
      out[o++] = 0x80 | (c & 0x3f);
    } else {
      const low = i + 1 < n ? key.charCodeAt(i + 1) : 0;
      if (c >= 0xdc00 || low < 0xdc00 || low > 0xdfff) {
        throw new IndexError('ERR_RUN_ENTRY', `key has a lone surrogate at index ${i}`);
      }
      c = 0x10000 + ((c - SURROGATE_MIN) << 10) + (low - 0xdc00);
      i++;
      out[o++] = 0xf0 | (c >> 18);
      out[o++] = 0x80 | ((c >> 12) & 0x3f);
      out[o++] = 0x80 | ((c >> 6) & 0x3f);
      out[o++] = 0x80 | (c & 0x3f);
    }
  }
  return o;
}

/** Scratch buffer reused by keyBytes (calls are synchronous, so never shared). */
let scratch = new Uint8Array(256);

/**
 * The UTF-8 bytes of `key` as a view into a shared scratch buffer, valid only until the next
 * call. Throws like encodeKeyInto.
 */
export function keyBytes(key: string): Uint8Array {
  const room = key.length * MAX_UTF8_BYTES_PER_UNIT;
  if (room > scratch.length) scratch = new Uint8Array(Math.max(room, scratch.length * 2));
  return scratch.subarray(0, encodeKeyInto(key, scratch, 0));
}

/** Decodes UTF-8 `bytes[start, end)` into a key (native decoder; invalid bytes become U+FFFD). */
export function decodeKey(bytes: Buffer, start: number, end: number): string {
  return bytes.toString('utf8', start, end);
}

/** Largest Unicode code point; a prefix ending in it cannot be incremented in place. */
const MAX_CODE_POINT = 0x10ffff;

/**
 * The smallest key that sorts after every key starting with `prefix`, or undefined if there
 * is none (the prefix is empty or all U+10FFFF). Seeking to it (inclusive) skips the whole
 * prefix in one step: how LIST with a delimiter jumps past a common prefix.
 */
export function keyAfterPrefix(prefix: string): string | undefined {
  let end = prefix.length;
  while (end > 0) {
    // A low surrogate at end-1 belongs to a pair starting at end-2.
    const unit = prefix.charCodeAt(end - 1);
    const pair = unit >= 0xdc00 && unit <= 0xdfff && end >= 2 && isHighSurrogate(prefix, end - 2);
    const start = pair ? end - 2 : end - 1;
    const whole = prefix.codePointAt(start)!;
    if (whole < MAX_CODE_POINT) {
      const next = whole + 1 === SURROGATE_MIN ? PRIVATE_USE_MIN : whole + 1;
      return prefix.slice(0, start) + String.fromCodePoint(next);
    }
    end = start;
  }
  return undefined;
}

function isHighSurrogate(s: string, i: number): boolean {
  const u = s.charCodeAt(i);
  return u >= SURROGATE_MIN && u < 0xdc00;
}
