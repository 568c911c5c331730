import { describe, expect, test } from 'vitest';
import {
  compareKeys,
  decodeKey,
  encodeKeyInto,
  keyAfterPrefix,
  keyBytes,
} from '../../../src/store/index/compare.js';
import { IndexError } from '../../../src/store/index/errors.js';
import { TRICKY, byteOrder, prng, randomKey } from './support.js';

const sign = (x: number) => Math.sign(x);

describe('compareKeys', () => {
  test('agrees with Buffer.compare of UTF-8 on 20,000 random pairs with tricky characters', () => {
    const next = prng(11);
    for (let i = 0; i < 20_000; i++) {
      const a = randomKey(next, 8, 0.3);
      // Half the pairs share a prefix so the difference lands mid-string.
      const b =
        i % 2
          ? a.slice(0, next() % (a.length + 1)) + randomKey(next, 4, 0.3)
          : randomKey(next, 8, 0.3);
      expect(sign(compareKeys(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(
        sign(byteOrder(a, b))
      );
    }
  });

  test('every pair of tricky characters, alone and after a common prefix', () => {
    for (const x of TRICKY) {
      for (const y of TRICKY) {
        expect(sign(compareKeys(x, y))).toBe(sign(byteOrder(x, y)));
        expect(sign(compareKeys(`k/${x}z`, `k/${y}`))).toBe(sign(byteOrder(`k/${x}z`, `k/${y}`)));
      }
    }
  });

  test('orders a pair above U+FFFF after U+E000..U+FFFF, unlike JS <', () => {
    expect('\u{10000}' < '\uffff').toBe(true);
    expect(compareKeys('\u{10000}', '\uffff')).toBeGreaterThan(0);
    expect(compareKeys('\ue000', '😀')).toBeLessThan(0);
  });

  test('the empty string sorts first; a prefix sorts before its extensions', () => {
    expect(compareKeys('', '')).toBe(0);
    expect(compareKeys('', '\u0000')).toBeLessThan(0);
    expect(compareKeys('ab', 'abc')).toBeLessThan(0);
    expect(compareKeys('abc', 'ab')).toBeGreaterThan(0);
  });
});

describe('key bytes', () => {
  test('encodeKeyInto equals Buffer.from(key, "utf8") and decodeKey inverts it', () => {
    const next = prng(12);
    for (let i = 0; i < 5_000; i++) {
      const key = randomKey(next, 10, 0.3);
      const out = new Uint8Array(key.length * 3);
      const n = encodeKeyInto(key, out, 0);
      expect(Buffer.from(out.subarray(0, n)).equals(Buffer.from(key, 'utf8'))).toBe(true);
      expect(decodeKey(Buffer.from(out.buffer, 0, n), 0, n)).toBe(key);
    }
  });

  test('a lone surrogate has no UTF-8 form: ERR_RUN_ENTRY', () => {
    for (const bad of ['\ud800', 'a\udc00', 'x\ud83d', '\ud83d\ud83d\ude00'.slice(1, 2) + 'z']) {
      expect(() => keyBytes(bad)).toThrow(IndexError);
    }
    expect(keyBytes('\ud83d\ude00').length).toBe(4);
  });
});

describe('keyAfterPrefix', () => {
  test('is above every extension of the prefix and below the next key outside it', () => {
    const next = prng(13);
    for (let i = 0; i < 3_000; i++) {
      const prefix = randomKey(next, 5, 0.3);
      const end = keyAfterPrefix(prefix);
      if (prefix === '' || [...prefix].every((c) => c === '\u{10ffff}')) {
        expect(end).toBeUndefined();
        continue;
      }
      expect(end).toBeDefined();
      const inside = prefix + randomKey(next, 4, 0.3) + '\u{10ffff}';
      expect(compareKeys(inside, end!)).toBeLessThan(0);
      expect(compareKeys(prefix, end!)).toBeLessThan(0);
      const other = randomKey(next, 6, 0.3);
      if (!other.startsWith(prefix) && compareKeys(other, prefix) > 0) {
        expect(compareKeys(other, end!)).toBeGreaterThanOrEqual(0);
      }
    }
  });

  test('steps over the surrogate range and drops trailing U+10FFFF', () => {
    expect(keyAfterPrefix('a\ud7ff')).toBe('a\ue000');
    expect(keyAfterPrefix('a\u{10ffff}')).toBe('b');
    expect(keyAfterPrefix('a😀')).toBe('a\u{1f601}');
    expect(keyAfterPrefix('photos/')).toBe('photos0');
  });
});
