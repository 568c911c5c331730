// SIMD multiply-accumulate kernels over one cache block: for one source column j and 1..4
// output rows, dst_r[0..len) ^= c[r][j] * src_j[0..len) over GF(2^8) (or = on the first
// source). mulRows (index.ts) walks a block of every source through these, so the block's
// outputs stay in L1 while each source vector is loaded once per group of 4 rows.
//
// Per 16-byte column of a source, the nibbles are looked up in the coefficient's nibble
// tables with i8x16.swizzle (the relaxed build uses relaxed_swizzle: indices are always
// 0..15, so the out-of-range rule does not matter):
//
//   src bytes   b0 b1 .. b15
//   lo = b & 0x0f            hi = (b >> 4) & 0x0f        (u8 lanes, 0..15)
//   prod = swizzle(tblLo, lo) ^ swizzle(tblHi, hi)   = c * b per lane
//
// The 2 * rows tables of the (source, rows) pair are loaded into registers once per call
// and stay there for the whole block; the outputs are loaded, XORed and stored (L1 hits).
// Plain wasm SIMD clamps every swizzle index on x64 (an extra add per lookup), so keeping
// the tables out of the inner loop's loads is what pays here. `hi` uses a 16-bit shift and
// a mask: i8x16.shr_u has no x64 instruction and costs more.
//
// Table layout (written by prepare): rows are taken in groups of 4 (the last group holds
// the remainder); inside a group, tables are ordered by source then row, 32 bytes each, so
// the tables of (source j, group) are `rows * 32` contiguous bytes at `tbl`.
// len is a multiple of 16 (mulList in index.ts runs the remainder through the scalar twin).

// @ts-ignore: decorator
@inline function swz(t: v128, i: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i8x16.relaxed_swizzle(t, i);
  return i8x16.swizzle(t, i);
}

// @ts-ignore: decorator
@inline function mulv(tlo: v128, thi: v128, lo: v128, hi: v128): v128 {
  return v128.xor(swz(tlo, lo), swz(thi, hi));
}

// @ts-ignore: decorator
@inline function loOf(v: v128): v128 {
  return v128.and(v, i8x16.splat(0x0f));
}

// @ts-ignore: decorator
@inline function hiOf(v: v128): v128 {
  return v128.and(i16x8.shr_u(v, 4), i8x16.splat(0x0f));
}

// Stores p at d, XORed with what is there unless `first` (a constant at every call site,
// so each loop below is compiled twice: once storing, once accumulating).
// @ts-ignore: decorator
@inline function put(d: usize, p: v128, first: bool): void {
  v128.store(d, first ? p : v128.xor(p, v128.load(d)));
}

// @ts-ignore: decorator
@inline function loop4(t0l: v128, t0h: v128, t1l: v128, t1h: v128, t2l: v128, t2h: v128, t3l: v128, t3h: v128, src: usize, dst: usize, d1: usize, d2: usize, d3: usize, len: usize, first: bool): void {
  let pos: usize = 0;
  for (; pos + 32 <= len; pos += 32) {
    const v = v128.load(src + pos);
    const w = v128.load(src + pos, 16);
    const vl = loOf(v), vh = hiOf(v), wl = loOf(w), wh = hiOf(w);
    put(dst + pos, mulv(t0l, t0h, vl, vh), first);
    put(dst + pos + 16, mulv(t0l, t0h, wl, wh), first);
    put(d1 + pos, mulv(t1l, t1h, vl, vh), first);
    put(d1 + pos + 16, mulv(t1l, t1h, wl, wh), first);
    put(d2 + pos, mulv(t2l, t2h, vl, vh), first);
    put(d2 + pos + 16, mulv(t2l, t2h, wl, wh), first);
    put(d3 + pos, mulv(t3l, t3h, vl, vh), first);
    put(d3 + pos + 16, mulv(t3l, t3h, wl, wh), first);
  }
  if (pos < len) {
    const v = v128.load(src + pos);
    const vl = loOf(v), vh = hiOf(v);
    put(dst + pos, mulv(t0l, t0h, vl, vh), first);
    put(d1 + pos, mulv(t1l, t1h, vl, vh), first);
    put(d2 + pos, mulv(t2l, t2h, vl, vh), first);
    put(d3 + pos, mulv(t3l, t3h, vl, vh), first);
  }
}

/** Four rows: outputs at dst, d1, d2, d3, tables at tbl (128 bytes). */
export function mad4Simd(tbl: usize, src: usize, dst: usize, d1: usize, d2: usize, d3: usize, len: usize, first: bool): void {
  const t0l = v128.load(tbl, 0), t0h = v128.load(tbl, 16);
  const t1l = v128.load(tbl, 32), t1h = v128.load(tbl, 48);
  const t2l = v128.load(tbl, 64), t2h = v128.load(tbl, 80);
  const t3l = v128.load(tbl, 96), t3h = v128.load(tbl, 112);
  if (first) loop4(t0l, t0h, t1l, t1h, t2l, t2h, t3l, t3h, src, dst, d1, d2, d3, len, true);
  else loop4(t0l, t0h, t1l, t1h, t2l, t2h, t3l, t3h, src, dst, d1, d2, d3, len, false);
}

// @ts-ignore: decorator
@inline function loop3(t0l: v128, t0h: v128, t1l: v128, t1h: v128, t2l: v128, t2h: v128, src: usize, dst: usize, d1: usize, d2: usize, len: usize, first: bool): void {
  let pos: usize = 0;
  for (; pos + 32 <= len; pos += 32) {
    const v = v128.load(src + pos);
    const w = v128.load(src + pos, 16);
    const vl = loOf(v), vh = hiOf(v), wl = loOf(w), wh = hiOf(w);
    put(dst + pos, mulv(t0l, t0h, vl, vh), first);
    put(dst + pos + 16, mulv(t0l, t0h, wl, wh), first);
    put(d1 + pos, mulv(t1l, t1h, vl, vh), first);
    put(d1 + pos + 16, mulv(t1l, t1h, wl, wh), first);
    put(d2 + pos, mulv(t2l, t2h, vl, vh), first);
    put(d2 + pos + 16, mulv(t2l, t2h, wl, wh), first);
  }
  if (pos < len) {
    const v = v128.load(src + pos);
    const vl = loOf(v), vh = hiOf(v);
    put(dst + pos, mulv(t0l, t0h, vl, vh), first);
    put(d1 + pos, mulv(t1l, t1h, vl, vh), first);
    put(d2 + pos, mulv(t2l, t2h, vl, vh), first);
  }
}

/** Three rows. */
export function mad3Simd(tbl: usize, src: usize, dst: usize, d1: usize, d2: usize, len: usize, first: bool): void {
  const t0l = v128.load(tbl, 0), t0h = v128.load(tbl, 16);
  const t1l = v128.load(tbl, 32), t1h = v128.load(tbl, 48);
  const t2l = v128.load(tbl, 64), t2h = v128.load(tbl, 80);
  if (first) loop3(t0l, t0h, t1l, t1h, t2l, t2h, src, dst, d1, d2, len, true);
  else loop3(t0l, t0h, t1l, t1h, t2l, t2h, src, dst, d1, d2, len, false);
}

// @ts-ignore: decorator
@inline function loop2(t0l: v128, t0h: v128, t1l: v128, t1h: v128, src: usize, dst: usize, d1: usize, len: usize, first: bool): void {
  let pos: usize = 0;
  for (; pos + 32 <= len; pos += 32) {
    const v = v128.load(src + pos);
    const w = v128.load(src + pos, 16);
    const vl = loOf(v), vh = hiOf(v), wl = loOf(w), wh = hiOf(w);
    put(dst + pos, mulv(t0l, t0h, vl, vh), first);
    put(dst + pos + 16, mulv(t0l, t0h, wl, wh), first);
    put(d1 + pos, mulv(t1l, t1h, vl, vh), first);
    put(d1 + pos + 16, mulv(t1l, t1h, wl, wh), first);
  }
  if (pos < len) {
    const v = v128.load(src + pos);
    const vl = loOf(v), vh = hiOf(v);
    put(dst + pos, mulv(t0l, t0h, vl, vh), first);
    put(d1 + pos, mulv(t1l, t1h, vl, vh), first);
  }
}

/** Two rows. */
export function mad2Simd(tbl: usize, src: usize, dst: usize, d1: usize, len: usize, first: bool): void {
  const t0l = v128.load(tbl, 0), t0h = v128.load(tbl, 16);
  const t1l = v128.load(tbl, 32), t1h = v128.load(tbl, 48);
  if (first) loop2(t0l, t0h, t1l, t1h, src, dst, d1, len, true);
  else loop2(t0l, t0h, t1l, t1h, src, dst, d1, len, false);
}

// @ts-ignore: decorator
@inline function loop1(t0l: v128, t0h: v128, src: usize, dst: usize, len: usize, first: bool): void {
  let pos: usize = 0;
  for (; pos + 32 <= len; pos += 32) {
    const v = v128.load(src + pos);
    const w = v128.load(src + pos, 16);
    const vl = loOf(v), vh = hiOf(v), wl = loOf(w), wh = hiOf(w);
    put(dst + pos, mulv(t0l, t0h, vl, vh), first);
    put(dst + pos + 16, mulv(t0l, t0h, wl, wh), first);
  }
  if (pos < len) {
    const v = v128.load(src + pos);
    const vl = loOf(v), vh = hiOf(v);
    put(dst + pos, mulv(t0l, t0h, vl, vh), first);
  }
}

/** One row. */
export function mad1Simd(tbl: usize, src: usize, dst: usize, len: usize, first: bool): void {
  const t0l = v128.load(tbl, 0), t0h = v128.load(tbl, 16);
  if (first) loop1(t0l, t0h, src, dst, len, true);
  else loop1(t0l, t0h, src, dst, len, false);
}
