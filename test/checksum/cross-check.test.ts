import { createHash } from 'node:crypto';
import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { checksum, crc32, crc32c, crc64nvme } from '../../src/checksum/index.js';
import { availableFlavors } from '../../src/wasm/loader.js';
import { randomBytes } from '../support/random.js';
import {
  CRC32C_POLY,
  CRC32_POLY,
  CRC64NVME_POLY,
  bitwiseCrc32,
  bitwiseCrc64,
  bytewiseCrc32,
  bytewiseCrc64,
} from './reference.js';

const FLAVORS = availableFlavors('checksum') as ('simd' | 'scalar')[];
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const zlibCrc32 = (zlib as { crc32?: (d: Uint8Array, v?: number) => number }).crc32;
const refCrc32 = bytewiseCrc32(CRC32_POLY);
const refCrc32c = bytewiseCrc32(CRC32C_POLY);
const refCrc64 = bytewiseCrc64(CRC64NVME_POLY);

/** Every length 0..200, odd sizes around the kernels' block and lane boundaries, and sizes
 * that cross the 64 KiB input slices several times (klauspost's 10001/100003/1000055). */
const SIZES = [
  ...Array.from({ length: 201 }, (_, i) => i),
  255,
  256,
  767,
  768,
  769,
  1023,
  1025,
  4095,
  4096,
  4097,
  12287,
  12288,
  12289,
  10001,
  65535,
  65536,
  65537,
  100003,
  1000055,
  3 * 1024 * 1024 + 7,
  9 * 1024 * 1024 + 13,
];

it('the byte-at-a-time references agree with the bit-at-a-time definitions', () => {
  for (let n = 0; n < 70; n++) {
    const d = randomBytes(n, 900 + n);
    expect(refCrc32c(d)).toBe(bitwiseCrc32(CRC32C_POLY, d));
    expect(refCrc32(d)).toBe(bitwiseCrc32(CRC32_POLY, d));
    expect(refCrc64(d)).toBe(bitwiseCrc64(CRC64NVME_POLY, d));
  }
  expect(bitwiseCrc64(CRC64NVME_POLY, new TextEncoder().encode('123456789'))).toBe(
    0xae8b14860a799888n
  );
});

describe.each(FLAVORS)('agreement with independent implementations (%s kernels)', (flavor) => {
  const opts = { flavor };

  it('SHA-256, MD5 and SHA-1 equal node:crypto for every test size', () => {
    for (const [i, n] of SIZES.entries()) {
      const d = randomBytes(n, 11 + i);
      for (const alg of ['sha256', 'md5', 'sha1'] as const) {
        expect(hex(checksum(alg, d, opts)), `${alg} of ${n} bytes`).toBe(
          createHash(alg).update(d).digest('hex')
        );
      }
    }
  });

  it('CRC32 equals node:zlib (or the reference without it) for every test size', () => {
    const oracle = zlibCrc32 ?? refCrc32;
    for (const [i, n] of SIZES.entries()) {
      const d = randomBytes(n, 211 + i);
      expect(crc32(d, 0, opts), `crc32 of ${n} bytes`).toBe(oracle(d));
    }
  });

  it('CRC32C and CRC64NVME equal the plain-TS references for every test size', () => {
    for (const [i, n] of SIZES.entries()) {
      const d = randomBytes(n, 411 + i);
      expect(crc32c(d, 0, opts), `crc32c of ${n} bytes`).toBe(refCrc32c(d));
      expect(crc64nvme(d, 0n, opts), `crc64nvme of ${n} bytes`).toBe(refCrc64(d));
    }
  });

  it('CRC digests are the big-endian bytes of the numeric values', () => {
    const d = randomBytes(12345, 5);
    expect(hex(checksum('crc32', d, opts))).toBe(crc32(d).toString(16).padStart(8, '0'));
    expect(hex(checksum('crc32c', d, opts))).toBe(crc32c(d).toString(16).padStart(8, '0'));
    expect(hex(checksum('crc64nvme', d, opts))).toBe(crc64nvme(d).toString(16).padStart(16, '0'));
  });

  it('numeric CRCs chain like zlib: crc(B, crc(A)) === crc(A || B), including non-zero seeds', () => {
    for (const [na, nb] of [
      [0, 0],
      [0, 7],
      [9, 0],
      [1, 1],
      [100, 37],
      [40000, 70001],
      [65536, 65536],
    ]) {
      const a = randomBytes(na!, na! + 1);
      const b = randomBytes(nb!, nb! + 2);
      const ab = new Uint8Array([...a, ...b]);
      expect(crc32(b, crc32(a, 0, opts), opts)).toBe(crc32(ab, 0, opts));
      expect(crc32c(b, crc32c(a, 0, opts), opts)).toBe(refCrc32c(ab));
      expect(crc64nvme(b, crc64nvme(a, 0n, opts), opts)).toBe(refCrc64(ab));
      expect(crc32c(b, 0xdeadbeef, opts)).toBe(refCrc32c(b, 0xdeadbeef));
      expect(crc64nvme(b, 0xfedcba9876543210n, opts)).toBe(refCrc64(b, 0xfedcba9876543210n));
    }
  });

  it('reads views at any byte offset into a larger buffer (subarrays, Buffers)', () => {
    const big = randomBytes(70000, 77);
    for (let off = 0; off < 16; off++) {
      const view = big.subarray(off, off + 50000 + off);
      const copy = view.slice();
      expect(crc32c(view, 0, opts)).toBe(refCrc32c(copy));
      expect(crc64nvme(view, 0n, opts)).toBe(refCrc64(copy));
      expect(
        hex(checksum('sha256', Buffer.from(view.buffer, view.byteOffset, view.length), opts))
      ).toBe(createHash('sha256').update(copy).digest('hex'));
    }
  });
});
