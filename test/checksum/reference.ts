/**
 * @module Plain-TS references for the checksum tests, written from the definitions and
 * sharing nothing with the kernels (no slicing, no lanes, no reflected GF(2) math).
 */

/** Bit-at-a-time reflected CRC-32 with init and xorout all ones (CRC32, CRC32C). */
export function bitwiseCrc32(poly: number, data: Uint8Array, crc = 0): number {
  let r = ~crc >>> 0;
  for (const byte of data) {
    r ^= byte;
    for (let k = 0; k < 8; k++) r = r & 1 ? (r >>> 1) ^ poly : r >>> 1;
  }
  return ~r >>> 0;
}

/** Byte-at-a-time table-driven twin of bitwiseCrc32 (tables made bitwise): for big inputs. */
export function bytewiseCrc32(poly: number): (data: Uint8Array, crc?: number) => number {
  const t = new Uint32Array(256);
  for (let b = 0; b < 256; b++) t[b] = ~bitwiseCrc32(poly, Uint8Array.of(b), ~0 >>> 0) >>> 0;
  return (data, crc = 0) => {
    let r = ~crc >>> 0;
    for (let i = 0; i < data.length; i++) r = (r >>> 8) ^ t[(r ^ data[i]!) & 255]!;
    return ~r >>> 0;
  };
}

/** Bit-at-a-time reflected CRC-64 with init and xorout all ones, on two uint32 halves. */
export function bitwiseCrc64(poly: bigint, data: Uint8Array, crc = 0n): bigint {
  const pHi = Number(poly >> 32n) >>> 0;
  const pLo = Number(poly & 0xffffffffn) >>> 0;
  let hi = ~Number(crc >> 32n) >>> 0;
  let lo = ~Number(crc & 0xffffffffn) >>> 0;
  for (const byte of data) {
    lo = (lo ^ byte) >>> 0;
    for (let k = 0; k < 8; k++) {
      const carry = lo & 1;
      lo = ((lo >>> 1) | ((hi & 1) << 31)) >>> 0;
      hi = hi >>> 1;
      if (carry) {
        hi = (hi ^ pHi) >>> 0;
        lo = (lo ^ pLo) >>> 0;
      }
    }
  }
  return (BigInt(~hi >>> 0) << 32n) | BigInt(~lo >>> 0);
}

/** Byte-at-a-time table-driven twin of bitwiseCrc64 (tables made bitwise). */
export function bytewiseCrc64(poly: bigint): (data: Uint8Array, crc?: bigint) => bigint {
  const tHi = new Uint32Array(256);
  const tLo = new Uint32Array(256);
  for (let b = 0; b < 256; b++) {
    const v = BigInt.asUintN(64, ~bitwiseCrc64(poly, Uint8Array.of(b), BigInt.asUintN(64, ~0n)));
    tHi[b] = Number(v >> 32n);
    tLo[b] = Number(v & 0xffffffffn);
  }
  return (data, crc = 0n) => {
    let hi = ~Number(crc >> 32n) >>> 0;
    let lo = ~Number(crc & 0xffffffffn) >>> 0;
    for (let i = 0; i < data.length; i++) {
      const j = (lo ^ data[i]!) & 255;
      lo = (((lo >>> 8) | (hi << 24)) ^ tLo[j]!) >>> 0;
      hi = ((hi >>> 8) ^ tHi[j]!) >>> 0;
    }
    return (BigInt(~hi >>> 0) << 32n) | BigInt(~lo >>> 0);
  };
}

/** Reverses the low `width` bits of v. */
function reflect(v: bigint, width: number): bigint {
  let r = 0n;
  for (let i = 0; i < width; i++) if ((v >> BigInt(i)) & 1n) r |= 1n << BigInt(width - 1 - i);
  return r;
}

/** a * b mod g over GF(2), in the usual bit order (bit i = coefficient of x^i); deg g = width. */
function polyMulMod(a: bigint, b: bigint, g: bigint, width: number): bigint {
  let product = 0n;
  for (let i = 0; b >> BigInt(i); i++) if ((b >> BigInt(i)) & 1n) product ^= a << BigInt(i);
  for (let d = 2 * width; d >= width; d--)
    if ((product >> BigInt(d)) & 1n) product ^= g << BigInt(d - width);
  return product;
}

/**
 * crc(A || B) from crc(A), crc(B), len(B) in normal bit order, for reflected CRCs with init =
 * xorout = all ones: crc(A) * x^(8 lenB) mod G  XOR  crc(B), where G = x^width + reflect(poly).
 */
export function referenceCombine(
  poly: bigint,
  width: number,
  crcA: bigint,
  crcB: bigint,
  lenB: bigint
): bigint {
  const g = (1n << BigInt(width)) | reflect(poly, width);
  let power = 1n; // x^(8 lenB) mod G by square-and-multiply over the bits of 8 lenB
  let square = 2n; // x
  for (let e = 8n * lenB; e > 0n; e >>= 1n) {
    if (e & 1n) power = polyMulMod(power, square, g, width);
    square = polyMulMod(square, square, g, width);
  }
  const a = reflect(crcA, width);
  return reflect(polyMulMod(a, power, g, width), width) ^ crcB;
}

export const CRC32_POLY = 0xedb88320;
export const CRC32C_POLY = 0x82f63b78;
export const CRC64NVME_POLY = 0x9a6c9329ac4bc9b5n;
