// CRC32C (Castagnoli): reflected polynomial 0x82F63B78, initial value and final XOR all
// ones; check value crc32c("123456789") = 0xE3069283 (RFC 3720 appendix B.4).
//
// Self-contained apart from the cold helpers of crc-math.ts and the SIMD kernel of
// crc32c-simd.ts: the pack module compiles this file into its own wasm module and calls
// crc32cUpdate. crc32.ts is its twin for the IEEE
// polynomial; the two are kept as copies because the table address must be a compile-time
// constant to land in the loads' immediate offsets (about 8% faster than a pointer argument).
//
// The SIMD build runs every whole 4 KiB of an input through crc32c-simd.ts (sixteen registers
// in byte planes, about 1.7x faster) and only what remains through the kernel below; the
// scalar build runs everything through it.
//
// Kernel: slicing-by-8 over three lanes (three independent CRC registers over adjacent
// thirds of a superblock), joined with the "append n zero bytes" operator of crc-math.ts.
// Wasm has no carry-less multiply, so lanes are what buys instruction-level parallelism:
// one register is a chain of dependent table loads; three chains keep the load ports busy.
//
//   superblock = | lane 0 (reg a) | lane 1 (reg b) | lane 2 (reg c) |   each `lane` bytes
//   reg = shift(shift(a) ^ b) ^ c          shift = multiply by x^(8 lane) mod P
//
// The 4 high bytes of each 8-byte word do not meet the register, so they are read with
// byte loads instead of shifted out of a register (fewer ALU ops; measured ~12% faster).
import { fillShift32, fillSlices32, shift32, xpow8n32 } from './crc-math';
import { fillNibbles, superblocks } from './crc32c-simd';

/** Reflected CRC32C polynomial. */
export const CRC32C_POLY: u32 = 0x82f63b78;
const POLY = CRC32C_POLY;
/** Lane length of big superblocks (3 x 4 KiB): long enough that joining costs < 1%. In the SIMD
 * build, the stream length of its big superblocks (16 x 1 KiB; crc32c-simd.ts). */
const LONG_LANE: usize = ASC_FEATURE_SIMD ? 1024 : 4096;
/** Lane length for what remains (3 x 256 bytes), so 1-12 KiB inputs still run 3 lanes; in the
 * SIMD build also the stream length of its small superblocks (16 x 256 bytes). */
const SHORT_LANE: usize = 256;
/** Streams of a SIMD superblock (crc32c-simd.ts). */
const STREAMS: usize = 16;

// TABLES: 8 slicing tables (8 KiB), then the nibble tables of the two lane shifts.
const T: usize = memory.data(8192 + 1024, 64);
const SHIFT_LONG: usize = T + 8192;
const SHIFT_SHORT: usize = T + 8704;

fillSlices32(T, POLY, 8);
fillShift32(SHIFT_LONG, xpow8n32(LONG_LANE, POLY), POLY);
fillShift32(SHIFT_SHORT, xpow8n32(SHORT_LANE, POLY), POLY);
if (ASC_FEATURE_SIMD) fillNibbles(T);

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
 * CRC32C of the len bytes at ptr, continuing from `crc`, zlib style: crc is a finished
 * CRC32C value (0 to start), and crc32cUpdate(crc32cUpdate(0, A), B) = CRC32C(A || B).
 * Reads memory only; any alignment.
 */
export function crc32cUpdate(crc: u32, ptr: usize, len: usize): u32 {
  let reg = ~crc;
  if (ASC_FEATURE_SIMD) {
    // Sixteen streams per superblock (crc32c-simd.ts), 16 KiB then 4 KiB ones.
    const long = len / (STREAMS * LONG_LANE);
    reg = superblocks(reg, ptr, long, LONG_LANE, SHIFT_LONG);
    ptr += long * STREAMS * LONG_LANE;
    len -= long * STREAMS * LONG_LANE;
    const short = len / (STREAMS * SHORT_LANE);
    reg = superblocks(reg, ptr, short, SHORT_LANE, SHIFT_SHORT);
    ptr += short * STREAMS * SHORT_LANE;
    len -= short * STREAMS * SHORT_LANE;
  } else {
    const long = len / (3 * LONG_LANE);
    reg = lanes(reg, ptr, long, LONG_LANE, SHIFT_LONG);
    ptr += long * 3 * LONG_LANE;
    len -= long * 3 * LONG_LANE;
  }
  const short = len / (3 * SHORT_LANE);
  reg = lanes(reg, ptr, short, SHORT_LANE, SHIFT_SHORT);
  ptr += short * 3 * SHORT_LANE;
  len -= short * 3 * SHORT_LANE;
  return ~tail(reg, ptr, len);
}
