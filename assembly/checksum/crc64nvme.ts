// CRC64NVME (the S3 "CRC64NVME" checksum, NVM Express base spec 2.0, section 5.2.1.3.3):
// reflected polynomial 0x9A6C9329AC4BC9B5, initial value and final XOR all ones; check
// value crc64nvme("123456789") = 0xAE8B14860A799888.
//
// Same kernel shape as crc32c.ts (slicing-by-8 over three lanes joined by the "append n
// zero bytes" operator), with 64-bit tables. All 8 bytes of a word meet the 64-bit register,
// so every index is shifted out of the register.
//
//   TABLES  0      16 KiB  slicing tables 0..7, u64[256] each
//           16384   2 KiB  nibble tables of x^(8 LONG_LANE)   (16 nibbles x 16 x u64)
//           18432   2 KiB  nibble tables of x^(8 SHORT_LANE)
import { fillShift64, fillSlices64, xpow8n64 } from './crc-math';

/** Reflected CRC64NVME polynomial. */
export const CRC64NVME_POLY: u64 = 0x9a6c9329ac4bc9b5;
const POLY = CRC64NVME_POLY;
/** Lane lengths in bytes; see crc32c.ts. */
const LONG_LANE: usize = 4096;
const SHORT_LANE: usize = 256;

const T: usize = memory.data(16384 + 4096, 64);
const SHIFT_LONG: usize = T + 16384;
const SHIFT_SHORT: usize = T + 18432;

fillSlices64(T, POLY, 8);
fillShift64(SHIFT_LONG, xpow8n64(LONG_LANE, POLY), POLY);
fillShift64(SHIFT_SHORT, xpow8n64(SHORT_LANE, POLY), POLY);

/** The register after the 8 bytes at p. */
// @ts-ignore: decorator
@inline function step(reg: u64, p: usize): u64 {
  const v = reg ^ load<u64>(p);
  const x = <u32>v;
  const y = <u32>(v >> 32);
  return load<u64>(<usize>(y >> 24) << 3, T)
    ^ load<u64>(<usize>((y >> 16) & 255) << 3, T + 2048)
    ^ load<u64>(<usize>((y >> 8) & 255) << 3, T + 4096)
    ^ load<u64>(<usize>(y & 255) << 3, T + 6144)
    ^ load<u64>(<usize>(x >> 24) << 3, T + 8192)
    ^ load<u64>(<usize>((x >> 16) & 255) << 3, T + 10240)
    ^ load<u64>(<usize>((x >> 8) & 255) << 3, T + 12288)
    ^ load<u64>(<usize>(x & 255) << 3, T + 14336);
}

/** a * x^(8 lane) mod P through the nibble tables at s. */
// @ts-ignore: decorator
@inline function shift(s: usize, a: u64): u64 {
  const lo = <u32>a;
  const hi = <u32>(a >> 32);
  return load<u64>(s + (<usize>(lo & 15) << 3), 0)
    ^ load<u64>(s + (<usize>((lo >> 4) & 15) << 3), 128)
    ^ load<u64>(s + (<usize>((lo >> 8) & 15) << 3), 256)
    ^ load<u64>(s + (<usize>((lo >> 12) & 15) << 3), 384)
    ^ load<u64>(s + (<usize>((lo >> 16) & 15) << 3), 512)
    ^ load<u64>(s + (<usize>((lo >> 20) & 15) << 3), 640)
    ^ load<u64>(s + (<usize>((lo >> 24) & 15) << 3), 768)
    ^ load<u64>(s + (<usize>(lo >> 28) << 3), 896)
    ^ load<u64>(s + (<usize>(hi & 15) << 3), 1024)
    ^ load<u64>(s + (<usize>((hi >> 4) & 15) << 3), 1152)
    ^ load<u64>(s + (<usize>((hi >> 8) & 15) << 3), 1280)
    ^ load<u64>(s + (<usize>((hi >> 12) & 15) << 3), 1408)
    ^ load<u64>(s + (<usize>((hi >> 16) & 15) << 3), 1536)
    ^ load<u64>(s + (<usize>((hi >> 20) & 15) << 3), 1664)
    ^ load<u64>(s + (<usize>((hi >> 24) & 15) << 3), 1792)
    ^ load<u64>(s + (<usize>(hi >> 28) << 3), 1920);
}

/** The register after `blocks` superblocks of 3 x `lane` bytes at p. */
// @ts-ignore: decorator
@inline function lanes(reg: u64, p: usize, blocks: usize, lane: usize, s: usize): u64 {
  while (blocks--) {
    let a = reg;
    let b: u64 = 0;
    let c: u64 = 0;
    const end = p + lane;
    while (p < end) {
      a = step(a, p);
      b = step(b, p + lane);
      c = step(c, p + 2 * lane);
      p += 8;
    }
    reg = shift(s, shift(s, a) ^ b) ^ c;
    p += 2 * lane;
  }
  return reg;
}

/** The register after len (< 3 * SHORT_LANE) bytes at p: 8 at a time, then bytewise. */
function tail(reg: u64, p: usize, len: usize): u64 {
  const words = p + (len & ~7);
  while (p < words) {
    reg = step(reg, p);
    p += 8;
  }
  const end = p + (len & 7);
  while (p < end) {
    reg = (reg >> 8) ^ load<u64>(<usize>((<u32>reg ^ load<u8>(p)) & 255) << 3, T);
    p++;
  }
  return reg;
}

/**
 * CRC64NVME of the len bytes at ptr, continuing from `crc` (a finished value, 0 to start):
 * crc64nvmeUpdate(crc64nvmeUpdate(0, A), B) = CRC64NVME(A || B). Reads memory only.
 */
export function crc64nvmeUpdate(crc: u64, ptr: usize, len: usize): u64 {
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
