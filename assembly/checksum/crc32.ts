// CRC32 (IEEE 802.3, zlib, PNG): reflected polynomial 0xEDB88320, initial value and final
// XOR all ones; check value crc32("123456789") = 0xCBF43926.
//
// Twin of crc32c.ts (same kernel, another polynomial); see that file for the lane layout
// and why the two are kept as copies.
import { fillShift32, fillSlices32, shift32, xpow8n32 } from './crc-math';

/** Reflected CRC32 polynomial. */
export const CRC32_POLY: u32 = 0xedb88320;
const POLY = CRC32_POLY;
/** Lane length of big superblocks (3 x 4 KiB): long enough that joining costs < 1%. */
const LONG_LANE: usize = 4096;
/** Lane length for what remains (3 x 256 bytes), so 1-12 KiB inputs still run 3 lanes. */
const SHORT_LANE: usize = 256;

// TABLES: 8 slicing tables (8 KiB), then the nibble tables of the two lane shifts.
const T: usize = memory.data(8192 + 1024, 64);
const SHIFT_LONG: usize = T + 8192;
const SHIFT_SHORT: usize = T + 8704;

fillSlices32(T, POLY, 8);
fillShift32(SHIFT_LONG, xpow8n32(LONG_LANE, POLY), POLY);
fillShift32(SHIFT_SHORT, xpow8n32(SHORT_LANE, POLY), POLY);

/** The register after the 8 bytes at p. */
// @ts-ignore: decorator
@inline function step(reg: u32, p: usize): u32 {
  const x = reg ^ load<u32>(p);
  return load<u32>(<usize>load<u8>(p, 7) << 2, T)
    ^ load<u32>(<usize>load<u8>(p, 6) << 2, T + 1024)
    ^ load<u32>(<usize>load<u8>(p, 5) << 2, T + 2048)
    ^ load<u32>(<usize>load<u8>(p, 4) << 2, T + 3072)
    ^ load<u32>(<usize>(x >> 24) << 2, T + 4096)
    ^ load<u32>(<usize>((x >> 16) & 255) << 2, T + 5120)
    ^ load<u32>(<usize>((x >> 8) & 255) << 2, T + 6144)
    ^ load<u32>(<usize>(x & 255) << 2, T + 7168);
}

/** The register after `blocks` superblocks of 3 x `lane` bytes at p. */
// @ts-ignore: decorator
@inline function lanes(reg: u32, p: usize, blocks: usize, lane: usize, s: usize): u32 {
  while (blocks--) {
    let a = reg;
    let b: u32 = 0;
    let c: u32 = 0;
    const end = p + lane;
    while (p < end) {
      a = step(a, p);
      b = step(b, p + lane);
      c = step(c, p + 2 * lane);
      p += 8;
    }
    reg = shift32(s, shift32(s, a) ^ b) ^ c;
    p += 2 * lane;
  }
  return reg;
}

/** The register after len (< 3 * SHORT_LANE) bytes at p: 8 at a time, then bytewise. */
function tail(reg: u32, p: usize, len: usize): u32 {
  const words = p + (len & ~7);
  while (p < words) {
    reg = step(reg, p);
    p += 8;
  }
  const end = p + (len & 7);
  while (p < end) {
    reg = (reg >> 8) ^ load<u32>(<usize>((reg ^ load<u8>(p)) & 255) << 2, T);
    p++;
  }
  return reg;
}

/**
 * CRC32 of the len bytes at ptr, continuing from `crc`, zlib style: crc is a finished
 * CRC32 value (0 to start), and crc32Update(crc32Update(0, A), B) = CRC32(A || B).
 * Reads memory only; any alignment.
 */
export function crc32Update(crc: u32, ptr: usize, len: usize): u32 {
  let reg = ~crc;
  const long = len / (3 * LONG_LANE);
  reg = lanes(reg, ptr, long, LONG_LANE, SHIFT_LONG);
  ptr += long * 3 * LONG_LANE;
  len -= long * 3 * LONG_LANE;
  const short = len / (3 * SHORT_LANE);
  reg = lanes(reg, ptr, short, SHORT_LANE, SHIFT_SHORT);
  ptr += short * 3 * SHORT_LANE;
  len -= short * 3 * SHORT_LANE;
  return ~tail(reg, ptr, len);
}
