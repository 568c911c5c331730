// CRC32C over sixteen streams at once, for the SIMD build: crc32c.ts runs its superblocks of
// 4 KiB and more through here. The scalar build compiles none of its functions (the branch on
// ASC_FEATURE_SIMD is decided at compile time) and only reserves its 384 bytes of scratch.
// crc32c.ts owns the tables: its byte table (the nibble planes below are derived from it) and
// the join's nibble tables of x^(8 lane).
//
// Wasm has no carry-less multiply, but i8x16.swizzle is sixteen 4-bit table lookups in one
// instruction. The byte step of a reflected CRC,
//
//   reg = (reg >> 8) ^ T[(reg ^ byte) & 255]
//
// is linear, so T[x] = T[x & 15] ^ T[x & 0xf0]: two nibble lookups. Sixteen registers are kept
// as four byte planes (vector j holds byte j of every register; lane s is register s), and the
// 32-bit entries of the two 16-entry nibble tables as four byte planes too. One byte step of
// all sixteen registers is then 8 swizzles and 7 XORs, and the ">> 8" costs nothing: plane
// j + 1 becomes plane j.
//
// The registers run over sixteen adjacent streams of a superblock:
//
//   | stream 0 | stream 1 | ... | stream 15 |     `lane` bytes each
//
// A step needs byte t of every stream in one vector, so each round loads 16 bytes of each
// stream and transposes that 16 x 16 byte square (four stages of interleaves, 64 shuffles,
// written to COLUMNS), then runs 16 steps. Register 0 starts from the incoming register and the
// others from zero; at the end of the superblock they are joined like crc32c.ts joins its three
// lanes, reg = shift(... shift(shift(r0) ^ r1) ...) ^ r15, shift = multiply by x^(8 lane).
//
// Measured in Node 20 on this machine (bench:codec, through the public hasher): 3.8 GB/s at
// 64 KiB and 1 MiB, 1.7x hash-wasm, where the three-lane slicing-by-8 kernel of crc32c.ts runs
// at about 2.2 GB/s; 3.2 GB/s at 4 KiB. V8 lowers each swizzle to paddusb + pshufb (relaxed
// SIMD's swizzle would be one instruction, but Node 20 needs a flag for it).
import { shift32 } from './crc-math';

// NIBBLES: the nibble tables as byte planes, 16 bytes each: low nibble (T[v]) planes 0..3, then
// high nibble (T[v << 4]) planes 0..3. COLUMNS: the transposed square (16 x 16 bytes), and the
// register planes at the end of a superblock (reusing its first 64 bytes).
const NIBBLES: usize = memory.data(128, 16);
const COLUMNS: usize = memory.data(256, 16);

/** Fills the nibble planes from the byte table at t (u32[256]: T[b], the register after byte b
 * fed into a zero register). Once, at module start, before any superblock. */
export function fillNibbles(t: usize): void {
  for (let v: usize = 0; v < 16; v++) {
    const low = load<u32>(t + (v << 2));
    const high = load<u32>(t + (v << 6)); // T[v << 4]
    for (let j: usize = 0; j < 4; j++) {
      store<u8>(NIBBLES + 16 * j + v, <u8>(low >> (8 * <u32>j)));
      store<u8>(NIBBLES + 64 + 16 * j + v, <u8>(high >> (8 * <u32>j)));
    }
  }
}

// Interleaves of two vectors by 8, 16, 32 and 64 bits (x86 punpck{l,h}{bw,wd,dq,qdq}).
// @ts-ignore: decorator
@inline function lo8(a: v128, b: v128): v128 { return i8x16.shuffle(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23); }
// @ts-ignore: decorator
@inline function hi8(a: v128, b: v128): v128 { return i8x16.shuffle(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31); }
// @ts-ignore: decorator
@inline function lo16(a: v128, b: v128): v128 { return i8x16.shuffle(a, b, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23); }
// @ts-ignore: decorator
@inline function hi16(a: v128, b: v128): v128 { return i8x16.shuffle(a, b, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31); }
// @ts-ignore: decorator
@inline function lo32(a: v128, b: v128): v128 { return i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23); }
// @ts-ignore: decorator
@inline function hi32(a: v128, b: v128): v128 { return i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31); }
// @ts-ignore: decorator
@inline function lo64(a: v128, b: v128): v128 { return i8x16.shuffle(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23); }
// @ts-ignore: decorator
@inline function hi64(a: v128, b: v128): v128 { return i8x16.shuffle(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31); }

/**
 * Writes COLUMNS[t] (16 bytes at COLUMNS + 16 t) = byte t of the 16 bytes at p + s * lane, for
 * every stream s (lane s of the vector). Stage by stage, each vector holds: a = 8 positions of 2
 * streams, b = 4 positions of 4 streams, c = 2 positions of 8 streams, then 1 position of 16.
 */
// @ts-ignore: decorator
@inline function transpose(p: usize, lane: usize): void {
  const v0 = v128.load(p + 0 * lane);
  const v1 = v128.load(p + 1 * lane);
  const v2 = v128.load(p + 2 * lane);
  const v3 = v128.load(p + 3 * lane);
  const v4 = v128.load(p + 4 * lane);
  const v5 = v128.load(p + 5 * lane);
  const v6 = v128.load(p + 6 * lane);
  const v7 = v128.load(p + 7 * lane);
  const v8 = v128.load(p + 8 * lane);
  const v9 = v128.load(p + 9 * lane);
  const v10 = v128.load(p + 10 * lane);
  const v11 = v128.load(p + 11 * lane);
  const v12 = v128.load(p + 12 * lane);
  const v13 = v128.load(p + 13 * lane);
  const v14 = v128.load(p + 14 * lane);
  const v15 = v128.load(p + 15 * lane);
  const a0 = lo8(v0, v1), a1 = hi8(v0, v1);
  const a2 = lo8(v2, v3), a3 = hi8(v2, v3);
  const a4 = lo8(v4, v5), a5 = hi8(v4, v5);
  const a6 = lo8(v6, v7), a7 = hi8(v6, v7);
  const a8 = lo8(v8, v9), a9 = hi8(v8, v9);
  const a10 = lo8(v10, v11), a11 = hi8(v10, v11);
  const a12 = lo8(v12, v13), a13 = hi8(v12, v13);
  const a14 = lo8(v14, v15), a15 = hi8(v14, v15);
  const b0 = lo16(a0, a2), b1 = hi16(a0, a2);
  const b2 = lo16(a1, a3), b3 = hi16(a1, a3);
  const b4 = lo16(a4, a6), b5 = hi16(a4, a6);
  const b6 = lo16(a5, a7), b7 = hi16(a5, a7);
  const b8 = lo16(a8, a10), b9 = hi16(a8, a10);
  const b10 = lo16(a9, a11), b11 = hi16(a9, a11);
  const b12 = lo16(a12, a14), b13 = hi16(a12, a14);
  const b14 = lo16(a13, a15), b15 = hi16(a13, a15);
  const c0 = lo32(b0, b4), c1 = hi32(b0, b4);
  const c2 = lo32(b1, b5), c3 = hi32(b1, b5);
  const c4 = lo32(b2, b6), c5 = hi32(b2, b6);
  const c6 = lo32(b3, b7), c7 = hi32(b3, b7);
  const c8 = lo32(b8, b12), c9 = hi32(b8, b12);
  const c10 = lo32(b9, b13), c11 = hi32(b9, b13);
  const c12 = lo32(b10, b14), c13 = hi32(b10, b14);
  const c14 = lo32(b11, b15), c15 = hi32(b11, b15);
  v128.store(COLUMNS, lo64(c0, c8), 0);
  v128.store(COLUMNS, hi64(c0, c8), 16);
  v128.store(COLUMNS, lo64(c1, c9), 32);
  v128.store(COLUMNS, hi64(c1, c9), 48);
  v128.store(COLUMNS, lo64(c2, c10), 64);
  v128.store(COLUMNS, hi64(c2, c10), 80);
  v128.store(COLUMNS, lo64(c3, c11), 96);
  v128.store(COLUMNS, hi64(c3, c11), 112);
  v128.store(COLUMNS, lo64(c4, c12), 128);
  v128.store(COLUMNS, hi64(c4, c12), 144);
  v128.store(COLUMNS, lo64(c5, c13), 160);
  v128.store(COLUMNS, hi64(c5, c13), 176);
  v128.store(COLUMNS, lo64(c6, c14), 192);
  v128.store(COLUMNS, hi64(c6, c14), 208);
  v128.store(COLUMNS, lo64(c7, c15), 224);
  v128.store(COLUMNS, hi64(c7, c15), 240);
}

/**
 * The register after `blocks` superblocks of 16 x `lane` bytes at p, from `reg` (a raw
 * register: the caller applies the initial and final inversions). `shift` holds the nibble
 * tables of x^(8 lane) (crc-math.ts fillShift32). Inlined, so `lane` is a constant at each
 * call site.
 */
// @ts-ignore: decorator
@inline export function superblocks(reg: u32, p: usize, blocks: usize, lane: usize, shift: usize): u32 {
  const low0 = v128.load(NIBBLES), low1 = v128.load(NIBBLES, 16), low2 = v128.load(NIBBLES, 32), low3 = v128.load(NIBBLES, 48);
  const high0 = v128.load(NIBBLES, 64), high1 = v128.load(NIBBLES, 80), high2 = v128.load(NIBBLES, 96), high3 = v128.load(NIBBLES, 112);
  const nibble = i8x16.splat(15);
  while (blocks--) {
    // Register 0 (lane 0 of every plane) continues from reg; the other fifteen start at zero.
    let r0 = i32x4.replace_lane(i32x4.splat(0), 0, reg & 255);
    let r1 = i32x4.replace_lane(i32x4.splat(0), 0, (reg >> 8) & 255);
    let r2 = i32x4.replace_lane(i32x4.splat(0), 0, (reg >> 16) & 255);
    let r3 = i32x4.replace_lane(i32x4.splat(0), 0, reg >> 24);
    for (let at: usize = 0; at < lane; at += 16) {
      transpose(p + at, lane);
      for (let t: usize = 0; t < 256; t += 16) {
        const x = v128.xor(r0, v128.load(COLUMNS + t));
        const lo = v128.and(x, nibble);
        const hi = v128.and(i16x8.shr_u(x, 4), nibble); // 16-bit shift: the mask drops what crossed bytes
        r0 = v128.xor(v128.xor(r1, i8x16.swizzle(low0, lo)), i8x16.swizzle(high0, hi));
        r1 = v128.xor(v128.xor(r2, i8x16.swizzle(low1, lo)), i8x16.swizzle(high1, hi));
        r2 = v128.xor(v128.xor(r3, i8x16.swizzle(low2, lo)), i8x16.swizzle(high2, hi));
        r3 = v128.xor(i8x16.swizzle(low3, lo), i8x16.swizzle(high3, hi));
      }
    }
    // Join: register s is bytes s, 16 + s, 32 + s and 48 + s of the stored planes.
    v128.store(COLUMNS, r0);
    v128.store(COLUMNS, r1, 16);
    v128.store(COLUMNS, r2, 32);
    v128.store(COLUMNS, r3, 48);
    reg = 0;
    for (let s: usize = 0; s < 16; s++) {
      const r = <u32>load<u8>(COLUMNS + s) | (<u32>load<u8>(COLUMNS + s, 16) << 8)
        | (<u32>load<u8>(COLUMNS + s, 32) << 16) | (<u32>load<u8>(COLUMNS + s, 48) << 24);
      reg = shift32(shift, reg) ^ r;
    }
    p += 16 * lane;
  }
  return reg;
}
