/**
 * @module Coding matrices over GF(2^8): construction, sub-selection, inversion, product.
 *
 * A matrix is a row-major `Uint8Array` with its row and column counts passed alongside.
 */
import { gfInv, gfMul } from './gf.js';
import { SingularMatrixError } from './errors.js';

/**
 * The m x k parity part of the systematic generator [I_k ; C], where C is the Cauchy
 * matrix C[i][j] = 1 / (x_i + y_j) with x_i = k + i and y_j = j (ISA-L gf_gen_cauchy1).
 * The x's and y's are 256 distinct field elements at most, so every square submatrix of C
 * is non-singular and *every* k-subset of the k + m shards decodes.
 */
export function cauchyParity(k: number, m: number): Uint8Array {
  const out = new Uint8Array(m * k);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < k; j++) out[i * k + j] = gfInv((k + i) ^ j);
  }
  return out;
}

/** Row `r` of the full (k + m) x k generator: a unit row for data, a Cauchy row for parity. */
export function generatorRow(parity: Uint8Array, k: number, r: number): Uint8Array {
  if (r < k) {
    const row = new Uint8Array(k);
    row[r] = 1;
    return row;
  }
  return parity.subarray((r - k) * k, (r - k + 1) * k);
}

/**
 * Inverse of the n x n matrix `a` by Gauss-Jordan elimination. `a` is left unchanged.
 * Throws SingularMatrixError if it has no inverse.
 */
export function invert(a: Uint8Array, n: number): Uint8Array {
  const w = 2 * n;
  const aug = new Uint8Array(n * w);
  for (let r = 0; r < n; r++) {
    aug.set(a.subarray(r * n, r * n + n), r * w);
    aug[r * w + n + r] = 1;
  }
  for (let col = 0; col < n; col++) {
    let pivot = col;
    while (pivot < n && aug[pivot * w + col] === 0) pivot++;
    if (pivot === n) throw new SingularMatrixError(`matrix of order ${n} is singular`);
    if (pivot !== col) {
      const tmp = aug.slice(col * w, col * w + w);
      aug.copyWithin(col * w, pivot * w, pivot * w + w);
      aug.set(tmp, pivot * w);
    }
    const scale = gfInv(aug[col * w + col]!);
    for (let c = 0; c < w; c++) aug[col * w + c] = gfMul(aug[col * w + c]!, scale);
    for (let r = 0; r < n; r++) {
      const f = aug[r * w + col]!;
      if (r === col || f === 0) continue;
      for (let c = 0; c < w; c++) aug[r * w + c]! ^= gfMul(f, aug[col * w + c]!);
    }
  }
  const inv = new Uint8Array(n * n);
  for (let r = 0; r < n; r++) inv.set(aug.subarray(r * w + n, r * w + w), r * n);
  return inv;
}

/** (1 x n row) times (n x n matrix): a new row of n. */
export function rowTimes(row: Uint8Array, mat: Uint8Array, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let j = 0; j < n; j++) {
    let acc = 0;
    for (let t = 0; t < n; t++) acc ^= gfMul(row[t]!, mat[t * n + j]!);
    out[j] = acc;
  }
  return out;
}
