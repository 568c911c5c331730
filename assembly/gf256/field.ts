// GF(2^8) arithmetic with the primitive polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d),
// generator 2 -- the field of ISA-L, klauspost/reedsolomon and Backblaze's Java RS.
//
// exp/log tables are built once by the module start function; nothing here runs in a
// hot loop. The kernels only ever see the 32-byte nibble tables that expandTables writes.

const POLY: u32 = 0x11d;

// exp table doubled (510 entries) so that mul needs no modulo.
const EXP: usize = memory.data(512);
const LOG: usize = memory.data(256);

export function initField(): void {
  let x: u32 = 1;
  for (let i: u32 = 0; i < 255; i++) {
    store<u8>(EXP + i, <u8>x);
    store<u8>(EXP + i + 255, <u8>x);
    store<u8>(LOG + x, <u8>i);
    x <<= 1;
    if (x & 0x100) x ^= POLY;
  }
}

/** a * b in GF(2^8). */
// @ts-ignore: decorator
@inline export function gfMul(a: u32, b: u32): u32 {
  if (a == 0 || b == 0) return 0;
  return <u32>load<u8>(EXP + <usize>load<u8>(LOG + a) + <usize>load<u8>(LOG + b));
}

/**
 * Expands one coefficient c into its two 16-byte nibble tables at `out`:
 *
 *   out[ 0..15]  c * i        for i = 0x00..0x0f   (low nibble of the source byte)
 *   out[16..31]  c * (i << 4) for i = 0x00..0x0f   (high nibble)
 *
 * so that c * b = out[b & 15] ^ out[16 + (b >> 4)] (ISA-L's gf_vect_mul_init layout).
 */
export function expandCoefficient(c: u32, out: usize): void {
  for (let i: u32 = 0; i < 16; i++) {
    store<u8>(out + i, <u8>gfMul(c, i));
    store<u8>(out + 16 + i, <u8>gfMul(c, i << 4));
  }
}
