/**
 * @module GF(2^8) arithmetic in TypeScript, for matrices (construction and inversion).
 *
 * Same field as the wasm kernels (assembly/gf256/field.ts): polynomial 0x11d, generator 2.
 * Bulk shard arithmetic never happens here; it runs in the wasm kernels.
 */

const POLY = 0x11d;
const EXP = new Uint8Array(510);
const LOG = new Uint8Array(256);

{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    EXP[i] = x;
    EXP[i + 255] = x;
    LOG[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= POLY;
  }
}

export function gfMul(a: number, b: number): number {
  if (a === 0 || b === 0) return 0;
  return EXP[LOG[a]! + LOG[b]!]!;
}

/** Multiplicative inverse; `a` must be non-zero. */
export function gfInv(a: number): number {
  if (a === 0) throw new RangeError('0 has no inverse in GF(2^8)');
  return EXP[255 - LOG[a]!]!;
}

export function gfDiv(a: number, b: number): number {
  return gfMul(a, gfInv(b));
}
