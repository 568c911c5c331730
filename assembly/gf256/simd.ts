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

// Dot-product form for a group of rows that overwrites its outputs (encode, reconstruct):
// each 32-byte column of the 4 outputs is accumulated in registers over every source and
// stored once, instead of being loaded, XORed and stored once per source (the mad kernels
// above). The tables come from memory (L1) per source. All sources stream at once, which
// keeps the hardware prefetchers busy on every source when shards are not in cache:
// measured +15-20% over mad4 on RS(10,4) with 1 MiB shards resident in wasm memory.
// Sources are at load<u32>(srcs + 4j); tables of source j at tbl + 128j (prepare's layout).

/** 16 bytes at a time, for the tail of dot4x2Simd: outputs[from..to) of 4 rows, to - from a multiple of 16. */
function dot4Simd(tbl: usize, cols: i32, srcs: usize, d0: usize, d1: usize, d2: usize, d3: usize, from: usize, to: usize): void {
  for (let pos = from; pos < to; pos += 16) {
    let a0 = i8x16.splat(0), a1 = i8x16.splat(0), a2 = i8x16.splat(0), a3 = i8x16.splat(0);
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(<usize>load<u32>(srcs + (<usize>j << 2)) + pos);
      const lo = loOf(v), hi = hiOf(v);
      a0 = v128.xor(a0, mulv(v128.load(t, 0), v128.load(t, 16), lo, hi));
      a1 = v128.xor(a1, mulv(v128.load(t, 32), v128.load(t, 48), lo, hi));
      a2 = v128.xor(a2, mulv(v128.load(t, 64), v128.load(t, 80), lo, hi));
      a3 = v128.xor(a3, mulv(v128.load(t, 96), v128.load(t, 112), lo, hi));
      t += 128;
    }
    v128.store(d0 + pos, a0);
    v128.store(d1 + pos, a1);
    v128.store(d2 + pos, a2);
    v128.store(d3 + pos, a3);
  }
}

/**
 * Four rows, dot-product form: output r at dr + [from, to) = XOR_j c[r][j] * src_j[from, to)
 * (overwritten, never accumulated), to - from a multiple of 16.
 */
export function dot4x2Simd(tbl: usize, cols: i32, srcs: usize, d0: usize, d1: usize, d2: usize, d3: usize, from: usize, to: usize): void {
  let pos = from;
  for (; pos + 32 <= to; pos += 32) {
    let a0 = i8x16.splat(0), a1 = i8x16.splat(0), a2 = i8x16.splat(0), a3 = i8x16.splat(0);
    let b0 = i8x16.splat(0), b1 = i8x16.splat(0), b2 = i8x16.splat(0), b3 = i8x16.splat(0);
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const s = <usize>load<u32>(srcs + (<usize>j << 2)) + pos;
      const v = v128.load(s), w = v128.load(s, 16);
      const vl = loOf(v), vh = hiOf(v), wl = loOf(w), wh = hiOf(w);
      let tl = v128.load(t, 0), th = v128.load(t, 16);
      a0 = v128.xor(a0, mulv(tl, th, vl, vh));
      b0 = v128.xor(b0, mulv(tl, th, wl, wh));
      tl = v128.load(t, 32); th = v128.load(t, 48);
      a1 = v128.xor(a1, mulv(tl, th, vl, vh));
      b1 = v128.xor(b1, mulv(tl, th, wl, wh));
      tl = v128.load(t, 64); th = v128.load(t, 80);
      a2 = v128.xor(a2, mulv(tl, th, vl, vh));
      b2 = v128.xor(b2, mulv(tl, th, wl, wh));
      tl = v128.load(t, 96); th = v128.load(t, 112);
      a3 = v128.xor(a3, mulv(tl, th, vl, vh));
      b3 = v128.xor(b3, mulv(tl, th, wl, wh));
      t += 128;
    }
    v128.store(d0 + pos, a0);
    v128.store(d0 + pos, b0, 16);
    v128.store(d1 + pos, a1);
    v128.store(d1 + pos, b1, 16);
    v128.store(d2 + pos, a2);
    v128.store(d2 + pos, b2, 16);
    v128.store(d3 + pos, a3);
    v128.store(d3 + pos, b3, 16);
  }
  if (pos < to) dot4Simd(tbl, cols, srcs, d0, d1, d2, d3, pos, to);
}

/**
 * Three rows, dot-product form (as dot4x2Simd): outputs at d0, d1, d2 + [from, to) overwritten,
 * tables of source j at tbl + 96j, to - from a multiple of 16.
 */
export function dot3Simd(tbl: usize, cols: i32, srcs: usize, d0: usize, d1: usize, d2: usize, from: usize, to: usize): void {
  let pos = from;
  for (; pos + 32 <= to; pos += 32) {
    let a0 = i8x16.splat(0), a1 = i8x16.splat(0), a2 = i8x16.splat(0);
    let b0 = i8x16.splat(0), b1 = i8x16.splat(0), b2 = i8x16.splat(0);
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const s = <usize>load<u32>(srcs + (<usize>j << 2)) + pos;
      const v = v128.load(s), w = v128.load(s, 16);
      const vl = loOf(v), vh = hiOf(v), wl = loOf(w), wh = hiOf(w);
      let tl = v128.load(t, 0), th = v128.load(t, 16);
      a0 = v128.xor(a0, mulv(tl, th, vl, vh));
      b0 = v128.xor(b0, mulv(tl, th, wl, wh));
      tl = v128.load(t, 32); th = v128.load(t, 48);
      a1 = v128.xor(a1, mulv(tl, th, vl, vh));
      b1 = v128.xor(b1, mulv(tl, th, wl, wh));
      tl = v128.load(t, 64); th = v128.load(t, 80);
      a2 = v128.xor(a2, mulv(tl, th, vl, vh));
      b2 = v128.xor(b2, mulv(tl, th, wl, wh));
      t += 96;
    }
    v128.store(d0 + pos, a0);
    v128.store(d0 + pos, b0, 16);
    v128.store(d1 + pos, a1);
    v128.store(d1 + pos, b1, 16);
    v128.store(d2 + pos, a2);
    v128.store(d2 + pos, b2, 16);
  }
  if (pos < to) {
    let a0 = i8x16.splat(0), a1 = i8x16.splat(0), a2 = i8x16.splat(0);
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(<usize>load<u32>(srcs + (<usize>j << 2)) + pos);
      const lo = loOf(v), hi = hiOf(v);
      a0 = v128.xor(a0, mulv(v128.load(t, 0), v128.load(t, 16), lo, hi));
      a1 = v128.xor(a1, mulv(v128.load(t, 32), v128.load(t, 48), lo, hi));
      a2 = v128.xor(a2, mulv(v128.load(t, 64), v128.load(t, 80), lo, hi));
      t += 96;
    }
    v128.store(d0 + pos, a0);
    v128.store(d1 + pos, a1);
    v128.store(d2 + pos, a2);
  }
}

/** Two rows, dot-product form (see dot3Simd); tables of source j at tbl + 64j. */
export function dot2Simd(tbl: usize, cols: i32, srcs: usize, d0: usize, d1: usize, from: usize, to: usize): void {
  let pos = from;
  for (; pos + 32 <= to; pos += 32) {
    let a0 = i8x16.splat(0), a1 = i8x16.splat(0);
    let b0 = i8x16.splat(0), b1 = i8x16.splat(0);
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const s = <usize>load<u32>(srcs + (<usize>j << 2)) + pos;
      const v = v128.load(s), w = v128.load(s, 16);
      const vl = loOf(v), vh = hiOf(v), wl = loOf(w), wh = hiOf(w);
      let tl = v128.load(t, 0), th = v128.load(t, 16);
      a0 = v128.xor(a0, mulv(tl, th, vl, vh));
      b0 = v128.xor(b0, mulv(tl, th, wl, wh));
      tl = v128.load(t, 32); th = v128.load(t, 48);
      a1 = v128.xor(a1, mulv(tl, th, vl, vh));
      b1 = v128.xor(b1, mulv(tl, th, wl, wh));
      t += 64;
    }
    v128.store(d0 + pos, a0);
    v128.store(d0 + pos, b0, 16);
    v128.store(d1 + pos, a1);
    v128.store(d1 + pos, b1, 16);
  }
  if (pos < to) {
    let a0 = i8x16.splat(0), a1 = i8x16.splat(0);
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(<usize>load<u32>(srcs + (<usize>j << 2)) + pos);
      const lo = loOf(v), hi = hiOf(v);
      a0 = v128.xor(a0, mulv(v128.load(t, 0), v128.load(t, 16), lo, hi));
      a1 = v128.xor(a1, mulv(v128.load(t, 32), v128.load(t, 48), lo, hi));
      t += 64;
    }
    v128.store(d0 + pos, a0);
    v128.store(d1 + pos, a1);
  }
}

/** One row, dot-product form (see dot3Simd); tables of source j at tbl + 32j. */
export function dot1Simd(tbl: usize, cols: i32, srcs: usize, d0: usize, from: usize, to: usize): void {
  let pos = from;
  for (; pos + 32 <= to; pos += 32) {
    let a0 = i8x16.splat(0), b0 = i8x16.splat(0);
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const s = <usize>load<u32>(srcs + (<usize>j << 2)) + pos;
      const v = v128.load(s), w = v128.load(s, 16);
      const tl = v128.load(t, 0), th = v128.load(t, 16);
      a0 = v128.xor(a0, mulv(tl, th, loOf(v), hiOf(v)));
      b0 = v128.xor(b0, mulv(tl, th, loOf(w), hiOf(w)));
      t += 32;
    }
    v128.store(d0 + pos, a0);
    v128.store(d0 + pos, b0, 16);
  }
  if (pos < to) {
    let a0 = i8x16.splat(0);
    let t = tbl;
    for (let j = 0; j < cols; j++) {
      const v = v128.load(<usize>load<u32>(srcs + (<usize>j << 2)) + pos);
      a0 = v128.xor(a0, mulv(v128.load(t, 0), v128.load(t, 16), loOf(v), hiOf(v)));
      t += 32;
    }
    v128.store(d0 + pos, a0);
  }
}
