/**
 * @module Resident stripes: the k + m shards of one stripe kept in the codec's wasm memory,
 * so that a caller fills the data shards in place and encode / reconstruct run on them with
 * no copy into or out of the kernel (ISA-L's shape: the library works on the caller's
 * buffers). Made by ReedSolomon.allocStripe, released explicitly.
 *
 *   region: [shard 0 ..... ][pad][shard 1 ..... ][pad] .. [shard k+m-1 ..... ][pad]
 *            <----------- stride ----------->
 *
 * Views: shard(i) and bytes return Uint8Arrays over wasm memory, valid until release().
 * The pool never grows memory under a live stripe (src/wasm/gf256-arena.ts), so a view taken
 * before an await is still valid after it; after release every method throws, and a view
 * kept past release must not be used (its bytes may belong to the next stripe).
 */
import { ArenaRegionError, type ArenaRegion } from '../wasm/gf256-arena.js';
import { InvalidIndexError, ShardSizeError } from './errors.js';

export { ArenaBudgetError, ArenaMemoryError, ArenaRegionError } from '../wasm/gf256-arena.js';

/** Shard starts are multiples of a cache line. */
const ALIGN = 64;
/** Bytes added between shards of 4 KiB or more (5 cache lines), so that shard starts do not
 * all fall in the same cache sets: at a power-of-two stride 14 streams alias in an 8-way L1.
 * Measured with RS(10,4): 64 KiB shards 3.4 -> 4.8 GB/s, 1 MiB 5.0 -> 5.5 GB/s. */
const SKEW = 5 * 64;
/** Shards below this size get no skew (they are too small for aliasing to matter). */
const SKEW_FROM = 4096;

export class ResidentStripe {
  /** Shards in the stripe: k + m of the codec that made it. */
  readonly shardCount: number;
  /** Bytes of each shard. */
  readonly shardSize: number;
  /** Bytes from the start of one shard to the next (>= shardSize, a multiple of 64). */
  readonly stride: number;
  readonly #region: ArenaRegion;

  /** @internal made by ReedSolomon.allocStripe */
  constructor(region: ArenaRegion, shardCount: number, shardSize: number, stride: number) {
    this.#region = region;
    this.shardCount = shardCount;
    this.shardSize = shardSize;
    this.stride = stride;
  }

  get released(): boolean {
    return this.#region.released;
  }

  /** Shard `i` (shardSize bytes, contents undefined until written). Throws InvalidIndexError
   * for an index outside 0..shardCount-1, ArenaRegionError once released. */
  shard(i: number): Uint8Array {
    if (!Number.isInteger(i) || i < 0 || i >= this.shardCount) {
      throw new InvalidIndexError(`shard index ${i} outside 0..${this.shardCount - 1}`);
    }
    const at = i * this.stride;
    return this.#region.bytes.subarray(at, at + this.shardSize);
  }

  /** Every shard, in order (see shard). */
  shards(): Uint8Array[] {
    return Array.from({ length: this.shardCount }, (_, i) => this.shard(i));
  }

  /** The whole stripe, shardCount * stride bytes: shard i starts at i * stride. */
  get bytes(): Uint8Array {
    return this.#region.bytes.subarray(0, this.shardCount * this.stride);
  }

  /** Returns the stripe's memory to the pool. Throws ArenaRegionError when already released. */
  release(): void {
    this.#region.release();
  }

  /** @internal the region, for the codec */
  get region(): ArenaRegion {
    if (this.#region.released) throw new ArenaRegionError('resident stripe used after release');
    return this.#region;
  }
}

/** The byte range of every shard an operation covers: [offset, offset + length). */
export interface ShardRange {
  offset?: number;
  length?: number;
}

/** Validates `range` against `stripe` and returns it resolved. Throws ShardSizeError. */
export function resolveRange(stripe: ResidentStripe, range: ShardRange | undefined): { offset: number; length: number } {
  const offset = range?.offset ?? 0;
  const length = range?.length ?? stripe.shardSize - offset;
  if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < 0 || length < 0 || offset + length > stripe.shardSize) {
    throw new ShardSizeError(`range ${offset}+${length} is outside shards of ${stripe.shardSize} bytes`);
  }
  return { offset, length };
}

/** The stride for shards of `size` bytes: the size rounded up to a cache line plus SKEW from
 * 4 KiB up, or `stride` when given (checked: at least the size, a multiple of 64). Throws
 * ShardSizeError. */
export function strideFor(size: number, stride?: number): number {
  if (!Number.isSafeInteger(size) || size <= 0) throw new ShardSizeError(`shard size ${size} is not a positive integer`);
  const s = stride ?? Math.ceil(size / ALIGN) * ALIGN + (size >= SKEW_FROM ? SKEW : 0);
  if (!Number.isSafeInteger(s) || s < size || s % ALIGN !== 0) {
    throw new ShardSizeError(`stride ${s} must be >= the shard size ${size} and a multiple of ${ALIGN}`);
  }
  return s;
}
