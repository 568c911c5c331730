/**
 * @module Typed boundary of the gf256 wasm module: the only code that touches its memory.
 *
 * One kernel instance per flavor, shared by every encoder of that flavor. Calls are
 * synchronous, so the single arena is never used by two operations at once.
 *
 * Shards of any length stream through the arena in slices:
 *
 *   arena: [src 0 slice][src 1 slice]..[src cols-1][out 0 slice]..[out rows-1]
 *           <- stride ->      (stride = slice rounded up to 64, plus a skew of a few cache lines)
 */
import { instantiate, defaultFlavor, type Flavor } from './loader.js';

/** Bytes of arena all lanes of one slice should fit in: about the L2 share one core gets,
 * so sources and outputs stay cached between the copy-in, the kernel and the copy-out. */
const SLICE_BUDGET = 768 * 1024;
/** Per-lane slice bounds: below 16 KiB call overhead shows; above 128 KiB nothing is gained. */
const SLICE_MIN = 16 * 1024;
const SLICE_MAX = 128 * 1024;
/** Kernel vectors are 16 bytes; strides are kept 64-byte aligned for cache lines. */
const ALIGN = 64;
/** Extra bytes between lanes (5 cache lines), so that lane starts fall in different cache sets. */
const LANE_SKEW = 5 * 64;

interface Gf256Exports {
  memory: WebAssembly.Memory;
  coefPtr(): number;
  maxCoefs(): number;
  arenaPtr(): number;
  arenaSize(): number;
  simd(): number;
  prepare(rows: number, cols: number): number;
  mulRows(rows: number, cols: number, src: number, srcStride: number, dst: number, dstStride: number, len: number, acc: number): number;
}

export class Gf256Kernel {
  readonly flavor: Flavor;
  readonly maxCoefficients: number;
  #x: Gf256Exports;
  #mem: Uint8Array;
  #arena: number;
  #arenaSize: number;
  #prepared: Uint8Array | null = null;

  constructor(flavor: Flavor) {
    this.flavor = flavor;
    this.#x = instantiate('gf256', flavor).exports as unknown as Gf256Exports;
    this.#mem = new Uint8Array(this.#x.memory.buffer);
    this.#arena = this.#x.arenaPtr();
    this.#arenaSize = this.#x.arenaSize();
    this.maxCoefficients = this.#x.maxCoefs();
  }

  /**
   * outputs[r][0..length) = XOR_j matrix[r * cols + j] * sources[j][0..length), for r < rows
   * (or XORed into the old outputs when `accumulate`). Reads `sources`, writes only the
   * first `length` bytes of each output. The caller guarantees shapes and lengths (the
   * encoder validates them); `matrix` must not be mutated after its first use here.
   */
  mulRows(
    matrix: Uint8Array,
    rows: number,
    cols: number,
    sources: readonly Uint8Array[],
    outputs: readonly Uint8Array[],
    length: number,
    accumulate = false
  ): void {
    if (rows === 0 || length === 0) return;
    this.#prepare(matrix, rows, cols);
    const mem = this.#mem;
    const lanes = rows + cols;
    const fit = Math.floor((this.#arenaSize - lanes * LANE_SKEW) / lanes / ALIGN) * ALIGN;
    const want = Math.max(SLICE_MIN, Math.min(SLICE_MAX, Math.floor(SLICE_BUDGET / lanes / ALIGN) * ALIGN));
    // Equal slices, not full ones and a small remainder: 64 KiB at 14 lanes is two 32 KiB
    // slices rather than 54.8 + 9.2 KiB (2-6% faster measured, fewer short kernel calls).
    const cap = Math.min(want, fit);
    const slice = Math.min(cap, roundUp(Math.ceil(length / Math.ceil(length / cap)), ALIGN));
    // Lanes a power of two apart would all map to the same cache sets; skew them.
    const stride = slice + LANE_SKEW;
    const src = this.#arena;
    const dst = src + cols * stride;
    const acc = accumulate ? 1 : 0;
    for (let off = 0; off < length; off += slice) {
      const n = Math.min(slice, length - off);
      for (let j = 0; j < cols; j++) mem.set(sources[j]!.subarray(off, off + n), src + j * stride);
      if (accumulate) {
        for (let r = 0; r < rows; r++) mem.set(outputs[r]!.subarray(off, off + n), dst + r * stride);
      }
      this.#x.mulRows(rows, cols, src, stride, dst, stride, roundUp(n, 16), acc);
      for (let r = 0; r < rows; r++) {
        const at = dst + r * stride;
        outputs[r]!.set(mem.subarray(at, at + n), off);
      }
    }
  }

  #prepare(matrix: Uint8Array, rows: number, cols: number): void {
    if (this.#prepared === matrix) return;
    if (rows * cols > this.maxCoefficients) {
      throw new RangeError(`matrix ${rows}x${cols} exceeds ${this.maxCoefficients} coefficients`);
    }
    this.#mem.set(matrix.subarray(0, rows * cols), this.#x.coefPtr());
    if (!this.#x.prepare(rows, cols)) throw new RangeError(`gf256 prepare(${rows}, ${cols}) refused`);
    this.#prepared = matrix;
  }
}

function roundUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

const kernels = new Map<Flavor, Gf256Kernel>();

/** The shared kernel of `flavor` (default: the best this runtime validates). */
export function gf256Kernel(flavor: Flavor = defaultFlavor('gf256')): Gf256Kernel {
  let k = kernels.get(flavor);
  if (!k) {
    k = new Gf256Kernel(flavor);
    kernels.set(flavor, k);
  }
  return k;
}
