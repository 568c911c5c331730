// GF(2) polynomial arithmetic for reflected CRCs, and the table builders the CRC kernels
// use. Nothing here runs in a hot loop: tables are filled once at module start, combine is
// called once per multipart part, and shift32 once per lane join (every few KiB).
//
// Representation (zlib's crc32_combine, Mark Adler): a CRC register is a polynomial of
// degree < W with x^0 in the most significant bit and x^(W-1) in bit 0, so "multiply by x"
// is a right shift and the reflected polynomial constant is the reduction. With that,
// feeding n zero bytes into a register r gives r * x^(8n) mod P, and for CRCs whose initial
// value and final XOR are both all ones (CRC32, CRC32C, CRC64NVME):
//
//   crc(A || B) = crc(A) * x^(8 len(B)) mod P  XOR  crc(B)
//
// which is what crc*Combine compute, and what the lane kernels use to join lanes.

/** a * b mod P for 32-bit reflected CRC polynomials. */
export function mulmod32(a: u32, b: u32, poly: u32): u32 {
  let m: u32 = 0x80000000;
  let p: u32 = 0;
  while (true) {
    if (a & m) p ^= b;
    if ((a & (m - 1)) == 0) break;
    m >>= 1;
    b = b & 1 ? (b >> 1) ^ poly : b >> 1;
  }
  return p;
}

/** a * b mod P for 64-bit reflected CRC polynomials. */
export function mulmod64(a: u64, b: u64, poly: u64): u64 {
  let m: u64 = 0x8000000000000000;
  let p: u64 = 0;
  while (true) {
    if (a & m) p ^= b;
    if ((a & (m - 1)) == 0) break;
    m >>= 1;
    b = b & 1 ? (b >> 1) ^ poly : b >> 1;
  }
  return p;
}

/** x^(8n) mod P (the operator "append n zero bytes"), by square-and-multiply over n's bits. */
export function xpow8n32(n: u64, poly: u32): u32 {
  let r: u32 = 0x80000000; // x^0
  let sq: u32 = 0x00800000; // x^8
  while (n) {
    if (n & 1) r = mulmod32(r, sq, poly);
    sq = mulmod32(sq, sq, poly);
    n >>= 1;
  }
  return r;
}

/** x^(8n) mod P for a 64-bit polynomial. */
export function xpow8n64(n: u64, poly: u64): u64 {
  let r: u64 = 0x8000000000000000;
  let sq: u64 = 0x0080000000000000;
  while (n) {
    if (n & 1) r = mulmod64(r, sq, poly);
    sq = mulmod64(sq, sq, poly);
    n >>= 1;
  }
  return r;
}

/**
 * Fills `count` slicing tables of 256 u32 at t: table k maps a byte b to the register after
 * b followed by k zero bytes (Intel's slicing-by-8, Kounavis and Berry 2005).
 */
export function fillSlices32(t: usize, poly: u32, count: usize): void {
  for (let b: u32 = 0; b < 256; b++) {
    let c = b;
    for (let i = 0; i < 8; i++) c = c & 1 ? (c >> 1) ^ poly : c >> 1;
    store<u32>(t + (<usize>b << 2), c);
  }
  for (let k: usize = 1; k < count; k++) {
    for (let b: usize = 0; b < 256; b++) {
      const prev = load<u32>(t + ((k - 1) << 10) + (b << 2));
      store<u32>(t + (k << 10) + (b << 2), (prev >> 8) ^ load<u32>(t + (<usize>(prev & 255) << 2)));
    }
  }
}

/** 64-bit twin of fillSlices32: `count` tables of 256 u64 at t. */
export function fillSlices64(t: usize, poly: u64, count: usize): void {
  for (let b: u64 = 0; b < 256; b++) {
    let c = b;
    for (let i = 0; i < 8; i++) c = c & 1 ? (c >> 1) ^ poly : c >> 1;
    store<u64>(t + (<usize>b << 3), c);
  }
  for (let k: usize = 1; k < count; k++) {
    for (let b: usize = 0; b < 256; b++) {
      const prev = load<u64>(t + ((k - 1) << 11) + (b << 3));
      store<u64>(t + (k << 11) + (b << 3), (prev >> 8) ^ load<u64>(t + (<usize>(prev & 255) << 3)));
    }
  }
}

/**
 * Fills the 8 x 16 u32 nibble tables (512 bytes) at s for "multiply by the constant K":
 * s[j][v] = (v << 4j) * K mod P, so a * K = XOR_j s[j][(a >> 4j) & 15] by linearity.
 */
export function fillShift32(s: usize, k: u32, poly: u32): void {
  for (let j: u32 = 0; j < 8; j++) {
    for (let v: u32 = 0; v < 16; v++) {
      store<u32>(s + (<usize>j << 6) + (<usize>v << 2), mulmod32(v << (j << 2), k, poly));
    }
  }
}

/** 64-bit twin of fillShift32: 16 x 16 u64 nibble tables (2 KiB) at s. */
export function fillShift64(s: usize, k: u64, poly: u64): void {
  for (let j: u64 = 0; j < 16; j++) {
    for (let v: u64 = 0; v < 16; v++) {
      store<u64>(s + (<usize>j << 7) + (<usize>v << 3), mulmod64(v << (j << 2), k, poly));
    }
  }
}

/** a * K mod P through the nibble tables fillShift32 wrote at s (eight lookups). */
// @ts-ignore: decorator
@inline export function shift32(s: usize, a: u32): u32 {
  return load<u32>(s + (<usize>(a & 15) << 2))
    ^ load<u32>(s + (<usize>((a >> 4) & 15) << 2), 64)
    ^ load<u32>(s + (<usize>((a >> 8) & 15) << 2), 128)
    ^ load<u32>(s + (<usize>((a >> 12) & 15) << 2), 192)
    ^ load<u32>(s + (<usize>((a >> 16) & 15) << 2), 256)
    ^ load<u32>(s + (<usize>((a >> 20) & 15) << 2), 320)
    ^ load<u32>(s + (<usize>((a >> 24) & 15) << 2), 384)
    ^ load<u32>(s + (<usize>(a >> 28) << 2), 448);
}
