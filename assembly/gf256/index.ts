// gf256 module: Reed-Solomon GF(2^8) matrix-times-shards kernels.
//
// Memory (fixed; initial = maximum pages, never grown):
//
//   __heap_base ─┬─ COEF    MAX_COEFS bytes   coefficient matrix, row-major rows x cols
//                ├─ TABLES  MAX_COEFS * 32    nibble tables in kernel order (see simd.ts)
//                └─ ARENA   the rest          source slices, then output slices
//
// The TypeScript boundary (src/wasm/gf256.ts) writes the coefficients, calls prepare once
// per matrix, then for each slice copies sources into ARENA, calls mulRows, copies out.
import { initField, expandCoefficient } from './field';
import { mad1Simd, mad2Simd, mad3Simd, mad4Simd } from './simd';
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

const COEF: usize = (__heap_base + 63) & ~63;
const TABLES: usize = COEF + MAX_COEFS;
const ARENA: usize = TABLES + (MAX_COEFS << 5);

// Runs once, when the module is instantiated.
initField();

export function coefPtr(): usize { return COEF; }
export function maxCoefs(): usize { return MAX_COEFS; }
export function arenaPtr(): usize { return ARENA; }
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
 * from dst; acc keeps the old output (XOR into it) instead of overwriting it. len must be
 * a multiple of 16; the caller pads.
 *
 * SIMD builds walk the columns in BLOCK-sized blocks; inside a block, each group of up to
 * 4 rows takes every source in turn (one load of each source vector per group, the group's
 * tables held in registers, outputs in L1). The scalar build computes one row at a time.
 */
export function mulRows(rows: i32, cols: i32, src: usize, srcStride: usize, dst: usize, dstStride: usize, len: usize, acc: bool): void {
  if (!ASC_FEATURE_SIMD) {
    for (let g = 0; g < rows; g += ROWS_PER_PASS) {
      const n = min(ROWS_PER_PASS, rows - g);
      const tbl = TABLES + ((<usize>g * <usize>cols) << 5);
      dotScalar(n, tbl, cols, src, srcStride, dst + <usize>g * dstStride, dstStride, len, acc);
    }
    return;
  }
  for (let b: usize = 0; b < len; b += BLOCK) {
    const w = min(BLOCK, len - b);
    for (let g = 0; g < rows; g += ROWS_PER_PASS) {
      const n = min(ROWS_PER_PASS, rows - g);
      const step = <usize>n << 5;
      const out = dst + <usize>g * dstStride + b;
      let tbl = TABLES + ((<usize>g * <usize>cols) << 5);
      let s = src + b;
      for (let j = 0; j < cols; j++) {
        const first = j == 0 && !acc;
        switch (n) {
          case 4: mad4Simd(tbl, s, out, dstStride, w, first); break;
          case 3: mad3Simd(tbl, s, out, dstStride, w, first); break;
          case 2: mad2Simd(tbl, s, out, dstStride, w, first); break;
          default: mad1Simd(tbl, s, out, dstStride, w, first);
        }
        tbl += step;
        s += srcStride;
      }
    }
  }
}
