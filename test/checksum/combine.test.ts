import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { combine, crc32, crc32c, crc64nvme } from '../../src/checksum/index.js';
import { availableFlavors } from '../../src/wasm/loader.js';
import { prng, randInt, randomBytes } from '../support/random.js';
import { CRC32C_POLY, CRC32_POLY, CRC64NVME_POLY, referenceCombine } from './reference.js';

const FLAVORS = availableFlavors('checksum') as ('simd' | 'scalar')[];
const zlibCrc32 = (zlib as { crc32?: (d: Uint8Array, v?: number) => number }).crc32;
const concat = (a: Uint8Array, b: Uint8Array) => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/** Lengths past 2^32 (S3 objects reach 5 TiB; the math must not truncate). */
const HUGE = [2n ** 32n, 2n ** 32n + 1n, 5n * 2n ** 40n + 12345n, 2n ** 63n + 7n, 2n ** 64n - 1n];

/** A, and zlib's crc32 of B = 2^32 + 5 zero bytes and of A || B, streamed (once per run). */
const hugeZlibCase = (() => {
  let cached: { a: Uint8Array; lenB: number; crcB: number; crcAB: number } | undefined;
  return () => {
    if (cached) return cached;
    const zeros = new Uint8Array(64 << 20);
    const feed = (crc: number, len: number) => {
      for (let left = len; left > 0; left -= zeros.length) {
        crc = zlibCrc32!(zeros.subarray(0, Math.min(left, zeros.length)), crc);
      }
      return crc;
    };
    const a = randomBytes(1001, 3);
    const lenB = 2 ** 32 + 5;
    cached = { a, lenB, crcB: feed(0, lenB), crcAB: feed(zlibCrc32!(a), lenB) };
    return cached;
  };
})();

describe.each(FLAVORS)('combine (%s kernels)', (flavor) => {
  const opts = { flavor };

  it('equals the CRC of the concatenation for random splits, empty A and empty B', () => {
    const next = prng(2024);
    for (let t = 0; t < 60; t++) {
      const data = randomBytes(randInt(next, 0, 40000), 300 + t);
      const cut = t === 0 ? 0 : t === 1 ? data.length : randInt(next, 0, data.length);
      const a = data.subarray(0, cut);
      const b = data.subarray(cut);
      const n = b.length;
      expect(combine('crc32', crc32(a, 0, opts), crc32(b, 0, opts), n, opts)).toBe(
        crc32(data, 0, opts)
      );
      expect(combine('crc32c', crc32c(a, 0, opts), crc32c(b, 0, opts), n, opts)).toBe(
        crc32c(data, 0, opts)
      );
      const c64 = combine(
        'crc64nvme',
        crc64nvme(a, 0n, opts),
        crc64nvme(b, 0n, opts),
        BigInt(n),
        opts
      );
      expect(c64).toBe(crc64nvme(data, 0n, opts));
    }
  });

  it('folds multipart-style part CRCs into the whole-object CRC', () => {
    const parts = [70001, 5, 0, 65536, 123457].map((n, i) => randomBytes(n, 40 + i));
    let whole = crc64nvme(parts[0]!, 0n, opts);
    for (const p of parts.slice(1))
      whole = combine('crc64nvme', whole, crc64nvme(p, 0n, opts), p.length, opts);
    expect(whole).toBe(crc64nvme(parts.reduce(concat), 0n, opts));
  });

  it('agrees with the BigInt polynomial reference, which itself agrees with real data', () => {
    const a = randomBytes(1000, 1);
    const b = randomBytes(333, 2);
    const ab = concat(a, b);
    // the reference is right on data we can hash...
    const ref = referenceCombine(
      BigInt(CRC32C_POLY),
      32,
      BigInt(crc32c(a)),
      BigInt(crc32c(b)),
      333n
    );
    expect(ref).toBe(BigInt(crc32c(ab)));
    expect(referenceCombine(CRC64NVME_POLY, 64, crc64nvme(a), crc64nvme(b), 333n)).toBe(
      crc64nvme(ab)
    );
    // ...and the kernels match it for lengths we cannot
    const next = prng(7);
    for (const len of [0n, 1n, 4096n, ...HUGE]) {
      const x = next() >>> 0;
      const y = next() >>> 0;
      const X = (BigInt(next() >>> 0) << 32n) | BigInt(next() >>> 0);
      const Y = (BigInt(next() >>> 0) << 32n) | BigInt(next() >>> 0);
      const ref32 = referenceCombine(BigInt(CRC32_POLY), 32, BigInt(x), BigInt(y), len);
      const ref32c = referenceCombine(BigInt(CRC32C_POLY), 32, BigInt(x), BigInt(y), len);
      const ref64 = referenceCombine(CRC64NVME_POLY, 64, X, Y, len);
      expect(BigInt(combine('crc32', x, y, len, opts)), `crc32 ${len}`).toBe(ref32);
      expect(BigInt(combine('crc32c', x, y, len, opts)), `crc32c ${len}`).toBe(ref32c);
      expect(combine('crc64nvme', X, Y, len, opts), `crc64nvme ${len}`).toBe(ref64);
    }
  });

  it('is associative over huge lengths: (a+b)+c === a+(b+c)', () => {
    const next = prng(8);
    for (let t = 0; t < 10; t++) {
      const [a, b, c] = [next() >>> 0, next() >>> 0, next() >>> 0];
      const lb = HUGE[t % 3]!;
      const lc = BigInt(next()) * 4099n;
      const left = combine('crc32c', combine('crc32c', a, b, lb, opts), c, lc, opts);
      expect(combine('crc32c', a, combine('crc32c', b, c, lc, opts), lb + lc, opts)).toBe(left);
      const [A, B, C] = [BigInt(a) << 31n, BigInt(b) * 3n, BigInt(c) << 30n];
      const L = combine('crc64nvme', combine('crc64nvme', A, B, lb, opts), C, lc, opts);
      expect(combine('crc64nvme', A, combine('crc64nvme', B, C, lc, opts), lb + lc, opts)).toBe(L);
    }
  });

  it('takes lengths as numbers or bigints alike', () => {
    expect(combine('crc32', 1, 2, 2 ** 40 + 3, opts)).toBe(
      combine('crc32', 1, 2, 2n ** 40n + 3n, opts)
    );
    expect(combine('crc64nvme', 1n, 2n, 12345, opts)).toBe(
      combine('crc64nvme', 1n, 2n, 12345n, opts)
    );
  });

  it.runIf(zlibCrc32)(
    'CRC32 of a real 4 GiB + 5 byte B matches node:zlib streamed over the bytes',
    () => {
      const { a, lenB, crcB, crcAB } = hugeZlibCase();
      expect(combine('crc32', crc32(a, 0, opts), crcB, lenB, opts)).toBe(crcAB);
    }
  );
});
