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
import { dot1Simd, dot2Simd, dot3Simd, dot4Simd } from './simd';
import { dotScalar } from './scalar';

/** Largest rows * cols a single matrix may have: 128 parity x 128 data, or 56 x 200. */
const MAX_COEFS: usize = 16384;
const ROWS_PER_PASS = 4;

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
 */
export function mulRows(rows: i32, cols: i32, src: usize, srcStride: usize, dst: usize, dstStride: usize, len: usize, acc: bool): void {
  for (let g = 0; g < rows; g += ROWS_PER_PASS) {
    const n = min(ROWS_PER_PASS, rows - g);
    const tbl = TABLES + ((<usize>g * <usize>cols) << 5);
    const out = dst + <usize>g * dstStride;
    if (ASC_FEATURE_SIMD) {
      switch (n) {
        case 4: dot4Simd(tbl, cols, src, srcStride, out, dstStride, len, acc); break;
        case 3: dot3Simd(tbl, cols, src, srcStride, out, dstStride, len, acc); break;
        case 2: dot2Simd(tbl, cols, src, srcStride, out, dstStride, len, acc); break;
        default: dot1Simd(tbl, cols, src, srcStride, out, dstStride, len, acc);
      }
    } else {
      dotScalar(n, tbl, cols, src, srcStride, out, dstStride, len, acc);
    }
  }
}
