// SIMD dot-product kernels: dst_r = XOR_j c[r][j] * src_j over GF(2^8), for 1..4 output
// rows per pass over the sources (ISA-L gf_{1..4}vect_dot_prod technique).
//
// Per 16-byte column of a source, the nibbles are looked up in the coefficient's nibble
// tables with i8x16.swizzle (the relaxed build uses relaxed_swizzle: indices are always
// 0..15, so the out-of-range rule does not matter):
//
//   src bytes   b0 b1 .. b15
//   lo = b & 0x0f            hi = b >>> 4            (u8 lanes, 0..15)
//   prod = swizzle(tblLo, lo) ^ swizzle(tblHi, hi)   = c * b per lane
//
// Table layout (written by prepare): rows are taken in groups of 4 (the last group holds
// the remainder); inside a group, tables are ordered by source then row, 32 bytes each:
//
//   group g:  [src 0: row0 lo|hi, row1 lo|hi, ..][src 1: ...] ... [src cols-1: ...]
//
// so one pass walks its tables strictly forward. Sources sit `srcStride` bytes apart,
// outputs `dstStride` apart; len is a multiple of 16 (the loader pads slices).

// @ts-ignore: decorator
@inline function lookup(tbl: usize, lo: v128, hi: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return v128.xor(
      i8x16.relaxed_swizzle(v128.load(tbl), lo),
      i8x16.relaxed_swizzle(v128.load(tbl, 16), hi)
    );
  }
  return v128.xor(i8x16.swizzle(v128.load(tbl), lo), i8x16.swizzle(v128.load(tbl, 16), hi));
}

// @ts-ignore: decorator
@inline function loOf(v: v128): v128 {
  return v128.and(v, i8x16.splat(0x0f));
}

// @ts-ignore: decorator
@inline function hiOf(v: v128): v128 {
  return i8x16.shr_u(v, 4);
}

export function dot4Simd(tbl: usize, cols: i32, src: usize, srcStride: usize, dst: usize, dstStride: usize, len: usize, acc: bool): void {
  const d1 = dst + dstStride;
  const d2 = d1 + dstStride;
  const d3 = d2 + dstStride;
  let pos: usize = 0;
  for (; pos + 32 <= len; pos += 32) {
    let a0 = acc ? v128.load(dst + pos) : i64x2.splat(0);
    let a1 = acc ? v128.load(d1 + pos) : i64x2.splat(0);
    let a2 = acc ? v128.load(d2 + pos) : i64x2.splat(0);
    let a3 = acc ? v128.load(d3 + pos) : i64x2.splat(0);
    let b0 = acc ? v128.load(dst + pos, 16) : i64x2.splat(0);
    let b1 = acc ? v128.load(d1 + pos, 16) : i64x2.splat(0);
    let b2 = acc ? v128.load(d2 + pos, 16) : i64x2.splat(0);
    let b3 = acc ? v128.load(d3 + pos, 16) : i64x2.splat(0);
    let s = src + pos;
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(s);
      const w = v128.load(s, 16);
      const vlo = loOf(v);
      const vhi = hiOf(v);
      const wlo = loOf(w);
      const whi = hiOf(w);
      a0 = v128.xor(a0, lookup(t, vlo, vhi));
      b0 = v128.xor(b0, lookup(t, wlo, whi));
      a1 = v128.xor(a1, lookup(t + 32, vlo, vhi));
      b1 = v128.xor(b1, lookup(t + 32, wlo, whi));
      a2 = v128.xor(a2, lookup(t + 64, vlo, vhi));
      b2 = v128.xor(b2, lookup(t + 64, wlo, whi));
      a3 = v128.xor(a3, lookup(t + 96, vlo, vhi));
      b3 = v128.xor(b3, lookup(t + 96, wlo, whi));
      s += srcStride;
      t += 128;
    }
    v128.store(dst + pos, a0);
    v128.store(dst + pos, b0, 16);
    v128.store(d1 + pos, a1);
    v128.store(d1 + pos, b1, 16);
    v128.store(d2 + pos, a2);
    v128.store(d2 + pos, b2, 16);
    v128.store(d3 + pos, a3);
    v128.store(d3 + pos, b3, 16);
  }
  for (; pos < len; pos += 16) {
    let a0 = acc ? v128.load(dst + pos) : i64x2.splat(0);
    let a1 = acc ? v128.load(d1 + pos) : i64x2.splat(0);
    let a2 = acc ? v128.load(d2 + pos) : i64x2.splat(0);
    let a3 = acc ? v128.load(d3 + pos) : i64x2.splat(0);
    let s = src + pos;
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(s);
      const lo = loOf(v);
      const hi = hiOf(v);
      a0 = v128.xor(a0, lookup(t, lo, hi));
      a1 = v128.xor(a1, lookup(t + 32, lo, hi));
      a2 = v128.xor(a2, lookup(t + 64, lo, hi));
      a3 = v128.xor(a3, lookup(t + 96, lo, hi));
      s += srcStride;
      t += 128;
    }
    v128.store(dst + pos, a0);
    v128.store(d1 + pos, a1);
    v128.store(d2 + pos, a2);
    v128.store(d3 + pos, a3);
  }
}

export function dot3Simd(tbl: usize, cols: i32, src: usize, srcStride: usize, dst: usize, dstStride: usize, len: usize, acc: bool): void {
  const d1 = dst + dstStride;
  const d2 = d1 + dstStride;
  for (let pos: usize = 0; pos < len; pos += 16) {
    let a0 = acc ? v128.load(dst + pos) : i64x2.splat(0);
    let a1 = acc ? v128.load(d1 + pos) : i64x2.splat(0);
    let a2 = acc ? v128.load(d2 + pos) : i64x2.splat(0);
    let s = src + pos;
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(s);
      const lo = loOf(v);
      const hi = hiOf(v);
      a0 = v128.xor(a0, lookup(t, lo, hi));
      a1 = v128.xor(a1, lookup(t + 32, lo, hi));
      a2 = v128.xor(a2, lookup(t + 64, lo, hi));
      s += srcStride;
      t += 96;
    }
    v128.store(dst + pos, a0);
    v128.store(d1 + pos, a1);
    v128.store(d2 + pos, a2);
  }
}

export function dot2Simd(tbl: usize, cols: i32, src: usize, srcStride: usize, dst: usize, dstStride: usize, len: usize, acc: bool): void {
  const d1 = dst + dstStride;
  // Two 16-byte columns per iteration: with only two outputs there are registers to spare,
  // and each table pair is loaded once for 32 bytes.
  let pos: usize = 0;
  for (; pos + 32 <= len; pos += 32) {
    let a0 = acc ? v128.load(dst + pos) : i64x2.splat(0);
    let a1 = acc ? v128.load(d1 + pos) : i64x2.splat(0);
    let b0 = acc ? v128.load(dst + pos, 16) : i64x2.splat(0);
    let b1 = acc ? v128.load(d1 + pos, 16) : i64x2.splat(0);
    let s = src + pos;
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(s);
      const w = v128.load(s, 16);
      const vlo = loOf(v);
      const vhi = hiOf(v);
      const wlo = loOf(w);
      const whi = hiOf(w);
      a0 = v128.xor(a0, lookup(t, vlo, vhi));
      b0 = v128.xor(b0, lookup(t, wlo, whi));
      a1 = v128.xor(a1, lookup(t + 32, vlo, vhi));
      b1 = v128.xor(b1, lookup(t + 32, wlo, whi));
      s += srcStride;
      t += 64;
    }
    v128.store(dst + pos, a0);
    v128.store(dst + pos, b0, 16);
    v128.store(d1 + pos, a1);
    v128.store(d1 + pos, b1, 16);
  }
  for (; pos < len; pos += 16) {
    let a0 = acc ? v128.load(dst + pos) : i64x2.splat(0);
    let a1 = acc ? v128.load(d1 + pos) : i64x2.splat(0);
    let s = src + pos;
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(s);
      const lo = loOf(v);
      const hi = hiOf(v);
      a0 = v128.xor(a0, lookup(t, lo, hi));
      a1 = v128.xor(a1, lookup(t + 32, lo, hi));
      s += srcStride;
      t += 64;
    }
    v128.store(dst + pos, a0);
    v128.store(d1 + pos, a1);
  }
}

export function dot1Simd(tbl: usize, cols: i32, src: usize, srcStride: usize, dst: usize, dstStride: usize, len: usize, acc: bool): void {
  let pos: usize = 0;
  for (; pos + 32 <= len; pos += 32) {
    let a0 = acc ? v128.load(dst + pos) : i64x2.splat(0);
    let b0 = acc ? v128.load(dst + pos, 16) : i64x2.splat(0);
    let s = src + pos;
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(s);
      const w = v128.load(s, 16);
      a0 = v128.xor(a0, lookup(t, loOf(v), hiOf(v)));
      b0 = v128.xor(b0, lookup(t, loOf(w), hiOf(w)));
      s += srcStride;
      t += 32;
    }
    v128.store(dst + pos, a0);
    v128.store(dst + pos, b0, 16);
  }
  for (; pos < len; pos += 16) {
    let a0 = acc ? v128.load(dst + pos) : i64x2.splat(0);
    let s = src + pos;
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(s);
      a0 = v128.xor(a0, lookup(t, loOf(v), hiOf(v)));
      s += srcStride;
      t += 32;
    }
    v128.store(dst + pos, a0);
  }
}
