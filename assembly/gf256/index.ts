// gf256 module: Reed-Solomon GF(2^8) matrix-times-shards kernels.
//
// Memory (fixed; initial = maximum pages, never grown):
//
//   __heap_base ─┬─ COEF    MAX_COEFS bytes   coefficient matrix, row-major rows x cols
//                ├─ TABLES  MAX_COEFS * 32    nibble tables in kernel order (see simd.ts)
//                ├─ SRCS    MAX_LIST * 4      source addresses for mulList (u32 each)
//                ├─ DSTS    MAX_LIST * 4      output addresses for mulList
//                └─ ARENA   the rest          shard bytes, placed by the TypeScript side
//
// Memory has a fixed initial size; only the TypeScript boundary grows it (src/wasm/
// gf256-arena.ts, and only while none of its regions is handed out). The copying boundary
// (src/wasm/gf256.ts) writes the coefficients, calls prepare once per matrix, then for each
// slice copies sources into ARENA, calls mulRows, copies out; the resident one keeps shards
// in ARENA and calls mulList on them in place.
import { initField, expandCoefficient } from './field';
import { dot1Simd, dot2Simd, dot3Simd, dot4x2Simd, mad1Simd, mad2Simd, mad3Simd, mad4Simd } from './simd';
import { dotScalar } from './scalar';

/** Largest rows * cols a single matrix may have: 128 parity x 128 data, or 56 x 200. */
const MAX_COEFS: usize = 16384;
const ROWS_PER_PASS = 4;
/**
 * Columns per cache block, bytes: a block of one source (4 KiB) and of up to 4 outputs
 * (16 KiB) fit together in a 32 KiB L1 data cache, so the outputs are read and written in
 * L1 while every source of the block goes through them. Measured on Zen 4 (RS(10,4),
 * kernel alone): 4 KiB beat 16 KiB by ~10%. A multiple of 32 (the kernels' unroll).
 */
const BLOCK: usize = 4096;

/** Entries of the address lists: GF(2^8) codes have at most 256 shards. */
const MAX_LIST: usize = 256;

const COEF: usize = (__heap_base + 63) & ~63;
const TABLES: usize = COEF + MAX_COEFS;
const SRCS: usize = TABLES + (MAX_COEFS << 5);
const DSTS: usize = SRCS + (MAX_LIST << 2);
const ARENA: usize = (DSTS + (MAX_LIST << 2) + 63) & ~63;

// Runs once, when the module is instantiated.
initField();

export function coefPtr(): usize { return COEF; }
export function maxCoefs(): usize { return MAX_COEFS; }
export function arenaPtr(): usize { return ARENA; }
export function srcListPtr(): usize { return SRCS; }
export function dstListPtr(): usize { return DSTS; }
export function maxList(): usize { return MAX_LIST; }
export function arenaSize(): usize { return (<usize>memory.size() << 16) - ARENA; }
export function simd(): bool { return ASC_FEATURE_SIMD; }

/**
 * Expands the rows x cols coefficients at COEF into TABLES, grouped for the kernels.
 * Returns false (and writes nothing) if rows * cols exceeds MAX_COEFS.
 */
export function prepare(rows: i32, cols: i32): bool {
  if (rows < 1 || cols < 1 || <usize>rows * <usize>cols > MAX_COEFS) return false;
  for (let g = 0; g < rows; g += ROWS_PER_PASS) {
    const n = min(ROWS_PER_PASS, rows - g);
    const base = TABLES + ((<usize>g * <usize>cols) << 5);
    for (let j = 0; j < cols; j++) {
      for (let r = 0; r < n; r++) {
        const c = <u32>load<u8>(COEF + <usize>(g + r) * <usize>cols + <usize>j);
        expandCoefficient(c, base + ((<usize>(j * n + r)) << 5));
      }
    }
  }
  return true;
}

/**
 * dst_r[0..len) (^)= XOR_j coef[r][j] * src_j[0..len) for r < rows, with the tables of the
 * last prepare(rows, cols). Sources are srcStride apart from src, outputs dstStride apart
 * from dst; acc keeps the old output (XOR into it) instead of overwriting it. Writes exactly
 * len bytes of each output (any len). Returns false (nothing written) when rows or cols
 * exceed MAX_LIST.
 */
export function mulRows(rows: i32, cols: i32, src: usize, srcStride: usize, dst: usize, dstStride: usize, len: usize, acc: bool): bool {
  if (rows < 1 || cols < 1 || <usize>rows > MAX_LIST || <usize>cols > MAX_LIST) return false;
  for (let j = 0; j < cols; j++) store<u32>(SRCS + (<usize>j << 2), <u32>(src + <usize>j * srcStride));
  for (let r = 0; r < rows; r++) store<u32>(DSTS + (<usize>r << 2), <u32>(dst + <usize>r * dstStride));
  return mulList(rows, cols, len, acc);
}

/**
 * Like mulRows, with the address of source j at SRCS[j] and of output r at DSTS[r] (u32
 * each), so that shards can sit anywhere (a reconstruction reads whichever k shards
 * survive). Outputs must not overlap sources or each other. Writes exactly len bytes of each
 * output: SIMD builds run the first len & ~15 bytes through the vector kernels and the rest
 * through the scalar twin, so nothing past an output is touched (shards are used in place).
 *
 * SIMD builds walk the columns in BLOCK-sized blocks; inside a block, each group of up to 4
 * rows that overwrites its outputs runs a dot-product kernel (outputs in registers, every
 * source streamed at once); accumulating groups (encodeIdx) take every source in turn (one load of each source vector per group, the group's tables held in registers,
 * outputs in L1). The scalar build computes one row at a time.
 */
export function mulList(rows: i32, cols: i32, len: usize, acc: bool): bool {
  if (rows < 1 || cols < 1 || <usize>rows > MAX_LIST || <usize>cols > MAX_LIST) return false;
  const vlen: usize = ASC_FEATURE_SIMD ? len & ~(<usize>15) : 0;
  if (ASC_FEATURE_SIMD) madBlocks(rows, cols, vlen, acc);
  if (vlen < len) {
    for (let g = 0; g < rows; g += ROWS_PER_PASS) {
      const n = min(ROWS_PER_PASS, rows - g);
      const tbl = TABLES + ((<usize>g * <usize>cols) << 5);
      dotScalar(n, tbl, cols, SRCS, DSTS + (<usize>g << 2), vlen, len, acc);
    }
  }
  return true;
}

/** The SIMD part of mulList: bytes [0, vlen) of every output, vlen a multiple of 16. */
function madBlocks(rows: i32, cols: i32, vlen: usize, acc: bool): void {
  for (let b: usize = 0; b < vlen; b += BLOCK) {
    const w = min(BLOCK, vlen - b);
    for (let g = 0; g < rows; g += ROWS_PER_PASS) {
      const n = min(ROWS_PER_PASS, rows - g);
      const step = <usize>n << 5;
      const dl = DSTS + (<usize>g << 2);
      const d0 = <usize>load<u32>(dl) + b;
      const d1 = n > 1 ? <usize>load<u32>(dl, 4) + b : 0;
      const d2 = n > 2 ? <usize>load<u32>(dl, 8) + b : 0;
      const d3 = n > 3 ? <usize>load<u32>(dl, 12) + b : 0;
      let tbl = TABLES + ((<usize>g * <usize>cols) << 5);
      if (!acc) {
        // A group that overwrites: outputs accumulate in registers (simd.ts, dot-product form).
        switch (n) {
          case 4: dot4x2Simd(tbl, cols, SRCS, d0 - b, d1 - b, d2 - b, d3 - b, b, b + w); break;
          case 3: dot3Simd(tbl, cols, SRCS, d0 - b, d1 - b, d2 - b, b, b + w); break;
          case 2: dot2Simd(tbl, cols, SRCS, d0 - b, d1 - b, b, b + w); break;
          default: dot1Simd(tbl, cols, SRCS, d0 - b, b, b + w);
        }
        continue;
      }
      for (let j = 0; j < cols; j++) {
        const first = j == 0 && !acc;
        const s = <usize>load<u32>(SRCS + (<usize>j << 2)) + b;
        switch (n) {
          case 4: mad4Simd(tbl, s, d0, d1, d2, d3, w, first); break;
          case 3: mad3Simd(tbl, s, d0, d1, d2, w, first); break;
          case 2: mad2Simd(tbl, s, d0, d1, w, first); break;
          default: mad1Simd(tbl, s, d0, w, first);
        }
        tbl += step;
      }
    }
  }
}
