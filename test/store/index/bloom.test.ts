import { describe, expect, test } from 'vitest';
import { BloomBuilder, BloomFilter, murmur3 } from '../../../src/store/index/bloom.js';
import { keyBytes } from '../../../src/store/index/compare.js';
import { IndexError } from '../../../src/store/index/errors.js';
import { prng, randomKey } from './support.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

function build(keys: Iterable<string>, bitsPerKey?: number): BloomFilter {
  const b = new BloomBuilder();
  for (const k of keys) b.addKeyBytes(keyBytes(k));
  return b.build(bitsPerKey);
}

describe('murmur3', () => {
  test('matches the published MurmurHash3_x86_32 test vectors', () => {
    expect(murmur3(utf8(''), 0)).toBe(0);
    expect(murmur3(utf8(''), 1)).toBe(0x514e28b7);
    expect(murmur3(utf8(''), 0xffffffff)).toBe(0x81f16f39);
    expect(murmur3(Uint8Array.of(0x21, 0x43, 0x65, 0x87), 0)).toBe(0xf55b516b);
    expect(murmur3(Uint8Array.of(0x21, 0x43, 0x65), 0)).toBe(0x7e4a8634);
    expect(murmur3(Uint8Array.of(0x21, 0x43), 0)).toBe(0xa0f7b07a);
    expect(murmur3(Uint8Array.of(0x21), 0)).toBe(0x72661cf4);
    expect(murmur3(utf8('The quick brown fox jumps over the lazy dog'), 0x9747b28c)).toBe(
      0x2fa826cd
    );
  });
});

describe('BloomFilter', () => {
  test('never misses an added key, and false positives stay near 1% at 10 bits per key', () => {
    const next = prng(21);
    const added = new Set<string>();
    while (added.size < 20_000) added.add(randomKey(next, 16, 0.8));
    const filter = build(added);
    for (const k of added) expect(filter.mayContain(k)).toBe(true);
    let fp = 0;
    let probes = 0;
    while (probes < 20_000) {
      const k = randomKey(next, 16, 0.8) + '#';
      if (added.has(k)) continue;
      probes++;
      if (filter.mayContain(k)) fp++;
    }
    expect(fp / probes).toBeLessThan(0.02);
    expect(filter.byteLength).toBe(Math.ceil((20_000 * 10) / 8));
  });

  test('an empty filter rejects everything; encode/decode round-trips', () => {
    expect(build([]).mayContain('x')).toBe(false);
    const keys = ['a', 'b/c', '😀', ''];
    const decoded = BloomFilter.decode(build(keys, 12).encode());
    for (const k of keys) expect(decoded.mayContain(k)).toBe(true);
    expect(decoded.encode()).toEqual(build(keys, 12).encode());
  });

  test('decode rejects a header that does not fit the bytes', () => {
    const good = build(['a', 'b']).encode();
    const cases = [
      good.subarray(0, 3),
      good.subarray(0, good.length - 1),
      Uint8Array.of(0, ...good.subarray(1)),
    ];
    const tooManyProbes = good.slice();
    tooManyProbes[0] = 31;
    for (const bad of [...cases, tooManyProbes]) {
      expect(() => BloomFilter.decode(bad)).toThrow(IndexError);
    }
  });
});
