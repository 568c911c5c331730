/**
 * @module Resident gf256 memory: regions of wasm memory handed out to callers, so that shards
 * can be filled, encoded and read in place (no copy into or out of the kernel's memory).
 *
 * An arena is one gf256 instance with its own memory. Its regions are carved from the memory
 * past the kernel's fixed tables by a first-fit free list (64-byte aligned, neighbours
 * coalesced on release).
 *
 * Memory growth: growing a WebAssembly.Memory detaches its old ArrayBuffer, and with it every
 * Uint8Array a caller holds. An arena therefore grows only while none of its regions is live
 * (so the only views it can detach are views of released regions, which must not be used
 * anyway: detaching makes such a use fail instead of writing into someone else's region).
 * When no arena has room, a new arena (a new instance) is made; a region's views stay valid
 * from alloc to release whatever else is allocated meanwhile. Region.bytes re-derives its
 * view from the current buffer on every access all the same.
 *
 * The pool is bounded by a byte budget: alloc past it throws ArenaBudgetError, and the caller
 * uses ordinary heap buffers and the copying kernel instead.
 */
import { instantiate, defaultFlavor, type Flavor } from './loader.js';

/** Region starts and sizes are multiples of a cache line. */
const ALIGN = 64;
/** Smallest memory an arena grows to when it is created or regrown, bytes: a few stripes of
 * the erasure provider's default geometry ((10,4) x 256 KiB cells, ~3.5 MiB each). */
const ARENA_MIN_BYTES = 16 * 1024 * 1024;
/** Resident bytes all arenas of a pool may hold (the memory of their instances): 256 MiB
 * bounds what concurrent writes and degraded reads can pin; past it they use the heap. */
export const DEFAULT_BUDGET_BYTES = 256 * 1024 * 1024;
/** Empty arenas kept for reuse; further ones are dropped (their memory goes to the GC). */
const IDLE_ARENAS = 2;
const PAGE = 65536;

interface ArenaExports {
  memory: WebAssembly.Memory;
  coefPtr(): number;
  maxCoefs(): number;
  arenaPtr(): number;
  srcListPtr(): number;
  dstListPtr(): number;
  maxList(): number;
  prepare(rows: number, cols: number): number;
  mulList(rows: number, cols: number, len: number, acc: number): number;
}

/** The pool refused an allocation: it would exceed the pool's byte budget. */
export class ArenaBudgetError extends RangeError {
  readonly code = 'ERR_ARENA_BUDGET';
  constructor(message: string) {
    super(message);
    this.name = 'ArenaBudgetError';
  }
}

/**
 * The pool was within its budget but its wasm memory could not be had: a new instance or
 * memory.grow failed (the runtime or the OS refused the memory, or an arena's maximum size).
 * A subclass of ArenaBudgetError, so callers that fall back to the heap when the budget is
 * spent do the same here.
 */
export class ArenaMemoryError extends ArenaBudgetError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'ArenaMemoryError';
    if (options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** A region was used after release, or released twice. */
export class ArenaRegionError extends Error {
  readonly code = 'ERR_ARENA_REGION';
  constructor(message: string) {
    super(message);
    this.name = 'ArenaRegionError';
  }
}

/** One gf256 instance and the regions carved from its memory. */
class Arena {
  readonly x: ArenaExports;
  readonly base: number;
  live = 0;
  /** Free extents [start, end), sorted by start, never adjacent. */
  #free: [number, number][];
  #prepared: Uint8Array | null = null;

  constructor(flavor: Flavor, bytes: number) {
    this.x = instantiate('gf256', flavor).exports as unknown as ArenaExports;
    this.base = roundUp(this.x.arenaPtr(), ALIGN);
    this.#grow(bytes);
    this.#free = [[this.base, this.end]];
  }

  get end(): number {
    return this.x.memory.buffer.byteLength;
  }

  get capacity(): number {
    return this.end - this.base;
  }

  /** Grows memory so that `bytes` fit past base. Only while no region is live. */
  regrow(bytes: number): boolean {
    if (this.live !== 0) return false;
    try {
      this.#grow(bytes);
    } catch {
      return false;
    }
    this.#free = [[this.base, this.end]];
    return true;
  }

  #grow(bytes: number): void {
    const want = this.base + Math.max(bytes, ARENA_MIN_BYTES);
    const have = this.end;
    if (want > have) this.x.memory.grow(Math.ceil((want - have) / PAGE));
  }

  /** The start of a new region of `size` bytes (a multiple of ALIGN), or -1 when none fits. */
  take(size: number): number {
    for (let i = 0; i < this.#free.length; i++) {
      const f = this.#free[i]!;
      if (f[1] - f[0] < size) continue;
      const at = f[0];
      if (f[1] - f[0] === size) this.#free.splice(i, 1);
      else f[0] += size;
      this.live++;
      return at;
    }
    return -1;
  }

  give(at: number, size: number): void {
    const free = this.#free;
    let i = 0;
    while (i < free.length && free[i]![0] < at) i++;
    free.splice(i, 0, [at, at + size]);
    // Coalesce with the next, then with the previous extent.
    if (i + 1 < free.length && free[i]![1] === free[i + 1]![0]) {
      free[i]![1] = free[i + 1]![1];
      free.splice(i + 1, 1);
    }
    if (i > 0 && free[i - 1]![1] === free[i]![0]) {
      free[i - 1]![1] = free[i]![1];
      free.splice(i, 1);
    }
    this.live--;
  }

  /** Writes the coefficients and expands their tables unless `matrix` is the prepared one. */
  prepare(matrix: Uint8Array, rows: number, cols: number): void {
    if (this.#prepared === matrix) return;
    if (rows * cols > this.x.maxCoefs()) {
      throw new RangeError(`matrix ${rows}x${cols} exceeds ${this.x.maxCoefs()} coefficients`);
    }
    new Uint8Array(this.x.memory.buffer).set(matrix.subarray(0, rows * cols), this.x.coefPtr());
    if (!this.x.prepare(rows, cols)) throw new RangeError(`gf256 prepare(${rows}, ${cols}) refused`);
    this.#prepared = matrix;
  }
}

/**
 * A region of resident memory: `size` bytes at a fixed address of one arena, valid from
 * alloc to release. Its bytes are undefined when allocated (a reused region keeps old
 * contents).
 */
export class ArenaRegion {
  readonly size: number;
  readonly #arena: Arena;
  readonly #at: number;
  readonly #pool: Gf256ArenaPool;
  #released = false;
  #view: Uint8Array | null = null;

  /** @internal made by Gf256ArenaPool.alloc only */
  constructor(pool: Gf256ArenaPool, arena: Arena, at: number, size: number) {
    this.#pool = pool;
    this.#arena = arena;
    this.#at = at;
    this.size = size;
  }

  get released(): boolean {
    return this.#released;
  }

  /** A view of the region's `size` bytes (throws ArenaRegionError once released). */
  get bytes(): Uint8Array {
    this.#check();
    const buf = this.#arena.x.memory.buffer;
    if (this.#view === null || this.#view.buffer !== buf) this.#view = new Uint8Array(buf, this.#at, this.size);
    return this.#view;
  }

  /** Returns the region to its arena. Throws ArenaRegionError when already released. */
  release(): void {
    this.#check();
    this.#released = true;
    this.#view = null;
    this.#pool.free(this.#arena, this.#at, this.size);
  }

  /**
   * outputs[r][0..length) = XOR_j matrix[r * cols + j] * sources[j][0..length) (or XORed into
   * the outputs when `accumulate`), in place: sources[j] and outputs[r] are byte offsets into
   * this region. Writes exactly `length` bytes of each output and nothing else. Throws
   * ArenaRegionError when released, RangeError when an operand leaves the region, when an
   * output overlaps a source or another output, or when the shape is out of range.
   */
  mulRows(
    matrix: Uint8Array,
    rows: number,
    cols: number,
    sources: readonly number[],
    outputs: readonly number[],
    length: number,
    accumulate = false
  ): void {
    this.#check();
    const x = this.#arena.x;
    if (!Number.isInteger(length) || length < 0 || length > this.size) throw new RangeError(`length ${length} outside the region`);
    if (sources.length !== cols || outputs.length !== rows) throw new RangeError('operand count does not match the matrix');
    if (rows > x.maxList() || cols > x.maxList()) throw new RangeError(`${rows}x${cols} exceeds ${x.maxList()} shards`);
    if (matrix.length < rows * cols) throw new RangeError('matrix is smaller than rows x cols');
    if (rows === 0 || length === 0) return;
    for (const o of [...sources, ...outputs]) {
      if (!Number.isInteger(o) || o < 0 || o + length > this.size) throw new RangeError(`operand at ${o} + ${length} leaves the region of ${this.size} bytes`);
    }
    const sorted = [...outputs].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) if (sorted[i]! < sorted[i - 1]! + length) throw new RangeError('outputs overlap');
    for (const o of outputs) {
      for (const s of sources) if (s < o + length && o < s + length) throw new RangeError('an output overlaps a source');
    }
    this.#arena.prepare(matrix, rows, cols);
    const words = new Uint32Array(x.memory.buffer);
    const sl = x.srcListPtr() >>> 2;
    const dl = x.dstListPtr() >>> 2;
    for (let j = 0; j < cols; j++) words[sl + j] = this.#at + sources[j]!;
    for (let r = 0; r < rows; r++) words[dl + r] = this.#at + outputs[r]!;
    if (!x.mulList(rows, cols, length, accumulate ? 1 : 0)) throw new RangeError(`gf256 mulList(${rows}, ${cols}) refused`);
  }

  #check(): void {
    if (this.#released) throw new ArenaRegionError('resident region used after release');
  }
}

export interface ArenaPoolStats {
  arenas: number;
  /** Bytes of wasm memory the pool's arenas hold. */
  bytes: number;
  liveRegions: number;
}

/** Resident regions of one kernel flavor, bounded by a byte budget (see module doc). */
export class Gf256ArenaPool {
  readonly flavor: Flavor;
  readonly budgetBytes: number;
  #arenas: Arena[] = [];

  constructor(flavor: Flavor = defaultFlavor('gf256'), budgetBytes = DEFAULT_BUDGET_BYTES) {
    this.flavor = flavor;
    this.budgetBytes = budgetBytes;
  }

  get stats(): ArenaPoolStats {
    return {
      arenas: this.#arenas.length,
      bytes: this.#arenas.reduce((n, a) => n + a.end, 0),
      liveRegions: this.#arenas.reduce((n, a) => n + a.live, 0),
    };
  }

  /**
   * A region of `bytes` (rounded up to 64) resident in wasm memory. Never grows an arena that
   * has live regions, so views of other live regions stay valid. Throws RangeError for a
   * size that is not a positive integer, ArenaBudgetError past the pool's budget, and its
   * subclass ArenaMemoryError when a new arena's memory could not be had.
   */
  alloc(bytes: number): ArenaRegion {
    if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new RangeError(`region size ${bytes} is not a positive integer`);
    const size = roundUp(bytes, ALIGN);
    for (const a of this.#arenas) {
      const at = a.take(size);
      if (at >= 0) return new ArenaRegion(this, a, at, size);
    }
    const used = this.stats.bytes;
    // An empty arena too small for this region may grow: nothing of it is in use.
    for (const a of this.#arenas) {
      if (a.live !== 0 || a.capacity >= size) continue;
      const extra = roundUp(Math.max(size, ARENA_MIN_BYTES) - a.capacity, PAGE);
      if (used + extra > this.budgetBytes || !a.regrow(size)) continue;
      return new ArenaRegion(this, a, a.take(size), size);
    }
    const fresh = roundUp(Math.max(size, ARENA_MIN_BYTES), PAGE) + PAGE * 2;
    if (used + fresh > this.budgetBytes) {
      throw new ArenaBudgetError(`resident region of ${size} bytes would exceed the ${this.budgetBytes}-byte budget (${used} held)`);
    }
    let a: Arena;
    try {
      a = new Arena(this.flavor, size);
    } catch (err) {
      throw new ArenaMemoryError(`resident region of ${size} bytes: wasm memory could not be had (${(err as Error).message})`, { cause: err });
    }
    this.#arenas.push(a);
    return new ArenaRegion(this, a, a.take(size), size);
  }

  /** @internal called by ArenaRegion.release */
  free(arena: Arena, at: number, size: number): void {
    arena.give(at, size);
    if (arena.live !== 0) return;
    const idle = this.#arenas.filter((a) => a.live === 0);
    if (idle.length > IDLE_ARENAS) this.#arenas.splice(this.#arenas.indexOf(arena), 1);
  }
}

function roundUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

const pools = new Map<Flavor, Gf256ArenaPool>();

/** The shared resident pool of `flavor` (default: the best this runtime validates). */
export function gf256ArenaPool(flavor: Flavor = defaultFlavor('gf256')): Gf256ArenaPool {
  let p = pools.get(flavor);
  if (!p) pools.set(flavor, (p = new Gf256ArenaPool(flavor)));
  return p;
}
