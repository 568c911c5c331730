/**
 * @module Reed-Solomon erasure coding over GF(2^8), systematic, Cauchy-derived.
 *
 * Shaped like klauspost/reedsolomon: `createEncoder(k, m)` then `encode`, `encodeIdx`,
 * `verify`, `reconstruct`, `reconstructData`, `split`, `join`. Shards are `Uint8Array`s of
 * one common size; indices 0..k-1 are data, k..k+m-1 parity. A shard is *missing* when its
 * slot is `null`, `undefined` or a zero-length array. Integrity is not checked by
 * reconstruction: use `verify`, or per-shard checksums, to know which shards to trust.
 *
 * Two ways in: the array methods above copy shards into and out of the kernel's wasm memory;
 * the resident ones (`allocStripe`, `encodeResident`, `reconstructResident`) work on shards
 * that already live there (resident-stripe.ts), with no copy at all.
 */
import { gf256Kernel, type Gf256Kernel } from '../wasm/gf256.js';
import { gf256ArenaPool, type Gf256ArenaPool } from '../wasm/gf256-arena.js';
import { ResidentStripe, resolveRange, strideFor, type ShardRange } from './resident-stripe.js';
import type { Flavor } from '../wasm/loader.js';
import { cauchyParity } from './matrix.js';
import { DecodeCache } from './decode-cache.js';
import {
  InvalidIndexError,
  InvalidShardNumberError,
  MaxShardNumberError,
  ShardCountError,
  ShardNoDataError,
  ShardSizeError,
  ShortDataError,
  TooFewShardsError,
} from './errors.js';

/** GF(2^8) has 256 elements, so at most 256 shards have distinct evaluation points. */
export const MAX_SHARDS = 256;

export interface EncoderOptions {
  /** Kernel build: 'simd' | 'scalar' | 'relaxed' (default: the best this runtime accepts). */
  flavor?: Flavor;
  /** Decode matrices kept, one per erasure pattern (0 disables the cache). */
  decodeCacheSize?: number;
}

export const DEFAULTS: Required<Omit<EncoderOptions, 'flavor'>> = {
  decodeCacheSize: 256,
};

export type Shard = Uint8Array | null | undefined;

export interface ReconstructOptions {
  /**
   * Buffers to rebuild into, indexed like `shards`: a rebuilt slot i whose `into[i]` is a
   * Uint8Array gets that array (filled completely) instead of a new allocation. Each must be
   * exactly the shard size and must not share memory with a present shard or another `into`
   * buffer (ShardSizeError otherwise, before anything is written). Reusing buffers spares the
   * allocation and first-touch page faults of fresh ones, which cost about as much as the
   * arithmetic at 1 MiB shards.
   */
  into?: readonly Shard[];
}

export class ReedSolomon {
  readonly dataShards: number;
  readonly parityShards: number;
  readonly totalShards: number;
  readonly flavor: Flavor;
  readonly #parity: Uint8Array;
  readonly #kernel: Gf256Kernel;
  readonly #cache: DecodeCache;
  readonly #rowMatrices: Uint8Array[];
  readonly #pool: Gf256ArenaPool;

  constructor(k: number, m: number, options: EncoderOptions = {}) {
    if (!Number.isInteger(k) || !Number.isInteger(m) || k < 1 || m < 0) {
      throw new InvalidShardNumberError(`need integer data shards >= 1 and parity shards >= 0, got k=${k} m=${m}`);
    }
    if (k + m > MAX_SHARDS) {
      throw new MaxShardNumberError(`k + m = ${k + m} exceeds ${MAX_SHARDS} shards`);
    }
    const opts = { ...DEFAULTS, ...options };
    this.dataShards = k;
    this.parityShards = m;
    this.totalShards = k + m;
    this.#kernel = gf256Kernel(opts.flavor);
    this.flavor = this.#kernel.flavor;
    this.#pool = gf256ArenaPool(this.flavor);
    this.#parity = cauchyParity(k, m);
    this.#cache = new DecodeCache(k, this.#parity, opts.decodeCacheSize);
    // Column j of the parity matrix, for encodeIdx: parity_i ^= C[i][j] * data_j.
    this.#rowMatrices = Array.from({ length: k }, (_, j) => {
      const col = new Uint8Array(m);
      for (let i = 0; i < m; i++) col[i] = this.#parity[i * k + j]!;
      return col;
    });
  }

  /** Decode-matrix cache statistics (for tests and metrics). */
  get decodeCacheStats(): { size: number; hits: number; misses: number } {
    return { size: this.#cache.size, hits: this.#cache.hits, misses: this.#cache.misses };
  }

  /**
   * Computes the parity shards from the data shards. `shards` has k + m entries; data
   * shards must all be present with one size; missing parity slots are allocated and
   * stored into `shards`, present ones are overwritten. Data shards are not modified.
   */
  encode(shards: Shard[]): void {
    const size = this.#checkCount(shards, this.totalShards);
    const data = this.#requireData(shards, size);
    if (this.parityShards === 0) return;
    const parity = this.#parityOutputs(shards, size);
    this.#kernel.mulRows(this.#parity, this.parityShards, this.dataShards, data, parity, size);
  }

  /**
   * Adds data shard `index`'s contribution to the m parity shards (XOR into them), so that
   * parity can be built one data shard at a time. Zero the parity before the first call.
   */
  encodeIdx(dataShard: Uint8Array, index: number, parity: Uint8Array[]): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.dataShards) {
      throw new InvalidIndexError(`data shard index ${index} outside 0..${this.dataShards - 1}`);
    }
    if (!Array.isArray(parity) || parity.length !== this.parityShards) {
      throw new ShardCountError(`need ${this.parityShards} parity shards, got ${parity?.length}`);
    }
    if (!(dataShard instanceof Uint8Array) || dataShard.length === 0) {
      throw new ShardNoDataError('data shard is empty');
    }
    for (const p of parity) {
      if (!(p instanceof Uint8Array) || p.length !== dataShard.length) {
        throw new ShardSizeError(`parity shards must be ${dataShard.length} bytes like the data shard`);
      }
    }
    this.#kernel.mulRows(this.#rowMatrices[index]!, this.parityShards, 1, [dataShard], parity, dataShard.length, true);
  }

  /** True if the parity shards match the data shards. All k + m shards must be present. */
  verify(shards: Shard[]): boolean {
    const size = this.#checkCount(shards, this.totalShards);
    const data = this.#requireData(shards, size);
    const given = shards.slice(this.dataShards) as Uint8Array[];
    given.forEach((p, i) => {
      if (!(p instanceof Uint8Array) || p.length !== size) {
        throw new ShardSizeError(`parity shard ${this.dataShards + i} is missing or not ${size} bytes`);
      }
    });
    if (this.parityShards === 0) return true;
    const computed = Array.from({ length: this.parityShards }, () => new Uint8Array(size));
    this.#kernel.mulRows(this.#parity, this.parityShards, this.dataShards, data, computed, size);
    return computed.every((c, i) => equalBytes(c, given[i]!));
  }

  /**
   * Rebuilds every missing shard (data and parity) from any k present ones, storing new
   * arrays (or the `options.into` buffers given for those slots) into the missing slots of
   * `shards`. Present shards are not modified. Throws TooFewShardsError if fewer than k are
   * present, ShardSizeError / ShardCountError for unusable `into` buffers; on any error
   * nothing is written.
   */
  reconstruct(shards: Shard[], options?: ReconstructOptions): void {
    this.#reconstruct(shards, false, options?.into);
  }

  /** Like reconstruct, but rebuilds only missing data shards; parity slots stay missing. */
  reconstructData(shards: Shard[], options?: ReconstructOptions): void {
    this.#reconstruct(shards, true, options?.into);
  }

  /**
   * A stripe of k + m shards of `shardSize` bytes resident in the codec's wasm memory, for
   * encodeResident / reconstructResident; `options.stride` spaces the shards further apart
   * (e.g. to leave room for framing between them). Contents are undefined. Release it when
   * done. Throws ShardSizeError for a bad size or stride, ArenaBudgetError when the resident
   * pool's budget is exhausted (use the array methods then).
   */
  allocStripe(shardSize: number, options: { stride?: number } = {}): ResidentStripe {
    const stride = strideFor(shardSize, options.stride);
    const region = this.#pool.alloc(stride * this.totalShards);
    return new ResidentStripe(region, this.totalShards, shardSize, stride);
  }

  /**
   * Computes bytes [offset, offset + length) of the m parity shards of `stripe` from the same
   * bytes of its k data shards, in place (default: whole shards). Writes nothing else.
   * Throws ShardCountError for a stripe of another shape, ShardSizeError for a range outside
   * the shards, ArenaRegionError for a released stripe.
   */
  encodeResident(stripe: ResidentStripe, range?: ShardRange): void {
    this.#checkStripe(stripe);
    const { offset, length } = resolveRange(stripe, range);
    if (this.parityShards === 0 || length === 0) return;
    const k = this.dataShards;
    const st = stripe.stride;
    const sources = Array.from({ length: k }, (_, j) => j * st + offset);
    const outputs = Array.from({ length: this.parityShards }, (_, r) => (k + r) * st + offset);
    stripe.region.mulRows(this.#parity, this.parityShards, k, sources, outputs, length);
  }

  /**
   * Rebuilds, in place, bytes [offset, offset + length) of every shard of `stripe` whose
   * `present[i]` is false (only data shards with `dataOnly`; only the shards `only` lists, when
   * given: each row costs a pass over the k sources, so a caller that needs one parity shard of
   * several absent asks for that one), from k present ones. Returns the indices rebuilt,
   * ascending. Present shards are not modified. Throws ShardCountError when `present` does not
   * have k + m entries, InvalidIndexError when `only` names a shard out of range or present,
   * TooFewShardsError with fewer than k present, ShardSizeError / ArenaRegionError like
   * encodeResident; on any error nothing is written.
   */
  reconstructResident(
    stripe: ResidentStripe,
    present: readonly boolean[],
    options: ShardRange & { dataOnly?: boolean; only?: readonly number[] } = {}
  ): number[] {
    this.#checkStripe(stripe);
    if (!Array.isArray(present) || present.length !== this.totalShards) {
      throw new ShardCountError(`present needs ${this.totalShards} entries, got ${Array.isArray(present) ? present.length : typeof present}`);
    }
    const { offset, length } = resolveRange(stripe, options);
    const k = this.dataShards;
    const only = options.only;
    if (only !== undefined) {
      for (const i of only) {
        if (!Number.isInteger(i) || i < 0 || i >= this.totalShards || present[i] === true) {
          throw new InvalidIndexError(`only: shard ${i} is not an absent shard of 0..${this.totalShards - 1}`);
        }
      }
    }
    const have: number[] = [];
    const wanted: number[] = [];
    present.forEach((p, i) => (p === true ? have.push(i) : (only ? only.includes(i) : !options.dataOnly || i < k) && wanted.push(i)));
    if (wanted.length === 0) return [];
    if (have.length < k) throw new TooFewShardsError(`${have.length} shards present, ${k} needed to reconstruct`);
    if (length === 0) return wanted;
    const sources = have.slice(0, k);
    const plan = this.#cache.plan(sources, wanted);
    const st = stripe.stride;
    stripe.region.mulRows(
      plan.matrix,
      wanted.length,
      k,
      sources.map((i) => i * st + offset),
      wanted.map((i) => i * st + offset),
      length
    );
    return wanted;
  }

  /**
   * One source's share of a rebuild, for sources that arrive one at a time through the same
   * bytes of the stripe: `sources` are the k present shards the rebuild uses (ascending, as
   * reconstructResident picks them) and `wanted` absent shards; multiplies `range.length` bytes
   * at region offset `at` (source `sources[j]`'s bytes over the range, wherever they lie in the
   * stripe, overlapping no wanted shard's range) by that source's coefficient for each wanted
   * shard, and XORs the products into bytes [offset, offset + length) of the wanted shards (or
   * writes them there, when `first`). Once every j of 0..k-1 has been added once, the first
   * of them with `first`, the wanted shards hold what reconstructResident with these sources
   * writes. That the bytes at `at` are source `sources[j]`'s, and that each j is added once
   * with `first` on the first, is the caller's to keep: nothing here can tell. Throws
   * InvalidIndexError for sources that are not k distinct ascending shards, a j out of 0..k-1,
   * or wanted shards out of range, among the sources or given twice; RangeError for bytes at
   * `at` outside the stripe or overlapping an output; ShardSizeError / ArenaRegionError as
   * reconstructResident. Nothing is written when it throws.
   */
  reconstructResidentPart(
    stripe: ResidentStripe,
    sources: readonly number[],
    wanted: readonly number[],
    j: number,
    at: number,
    range: ShardRange,
    first: boolean
  ): void {
    this.#checkStripe(stripe);
    const k = this.dataShards;
    const n = this.totalShards;
    if (sources.length !== k || sources.some((i, x) => !Number.isInteger(i) || i < 0 || i >= n || (x > 0 && i <= sources[x - 1]!))) {
      throw new InvalidIndexError(`sources must be ${k} distinct ascending shards of 0..${n - 1}`);
    }
    if (!Number.isInteger(j) || j < 0 || j >= k) throw new InvalidIndexError(`source ${j} outside 0..${k - 1}`);
    for (const w of wanted) {
      if (!Number.isInteger(w) || w < 0 || w >= n || sources.includes(w)) throw new InvalidIndexError(`wanted: shard ${w} is not an absent shard of 0..${n - 1}`);
    }
    if (new Set(wanted).size !== wanted.length) throw new InvalidIndexError(`wanted: a shard given twice (${wanted.join(', ')})`);
    const { offset, length } = resolveRange(stripe, range);
    if (wanted.length === 0 || length === 0) return;
    const outputs = [...wanted].sort((a, b) => a - b);
    const plan = this.#cache.plan([...sources], outputs);
    const column = Uint8Array.from(outputs, (_, r) => plan.matrix[r * k + j]!);
    const st = stripe.stride;
    stripe.region.mulRows(column, outputs.length, 1, [at], outputs.map((i) => i * st + offset), length, !first);
  }

  #checkStripe(stripe: ResidentStripe): void {
    if (!(stripe instanceof ResidentStripe) || stripe.shardCount !== this.totalShards) {
      throw new ShardCountError(`need a resident stripe of ${this.totalShards} shards (from allocStripe)`);
    }
  }

  /**
   * Splits `data` into k + m equal shards (the last data shard zero-padded, parity zeroed)
   * backed by one new allocation; `data` is copied, not referenced. Call encode() next.
   */
  split(data: Uint8Array): Uint8Array[] {
    if (!(data instanceof Uint8Array) || data.length === 0) throw new ShortDataError('no data to split');
    const per = Math.ceil(data.length / this.dataShards);
    const buf = new Uint8Array(per * this.totalShards);
    buf.set(data);
    return Array.from({ length: this.totalShards }, (_, i) => buf.subarray(i * per, (i + 1) * per));
  }

  /** The first `size` bytes of the concatenated data shards (which must all be present). */
  join(shards: Shard[], size: number): Uint8Array {
    if (!Array.isArray(shards) || shards.length < this.dataShards) {
      throw new ShardCountError(`need at least ${this.dataShards} shards, got ${shards?.length}`);
    }
    if (!Number.isInteger(size) || size < 0) throw new ShortDataError(`invalid size ${size}`);
    const out = new Uint8Array(size);
    let off = 0;
    for (let i = 0; i < this.dataShards && off < size; i++) {
      const s = shards[i];
      if (!(s instanceof Uint8Array) || s.length === 0) throw new TooFewShardsError(`data shard ${i} is missing`);
      const n = Math.min(s.length, size - off);
      out.set(s.subarray(0, n), off);
      off += n;
    }
    if (off < size) throw new ShortDataError(`data shards hold ${off} bytes, ${size} requested`);
    return out;
  }

  #reconstruct(shards: Shard[], dataOnly: boolean, into: readonly Shard[] | undefined): void {
    const k = this.dataShards;
    const size = this.#checkCount(shards, this.totalShards);
    if (size === 0) throw new ShardNoDataError('every shard is missing or empty');
    const present: number[] = [];
    const missing: number[] = [];
    shards.forEach((s, i) => (isPresent(s) ? present : missing).push(i));
    const wanted = dataOnly ? missing.filter((i) => i < k) : missing;
    if (wanted.length === 0) return;
    if (present.length < k) {
      throw new TooFewShardsError(`${present.length} shards present, ${k} needed to reconstruct`);
    }
    const sources = present.slice(0, k);
    const plan = this.#cache.plan(sources, wanted);
    const inputs = sources.map((i) => shards[i] as Uint8Array);
    const outputs = into === undefined ? wanted.map(() => new Uint8Array(size)) : this.#targets(into, wanted, shards, size);
    this.#kernel.mulRows(plan.matrix, wanted.length, k, inputs, outputs, size);
    wanted.forEach((i, r) => (shards[i] = outputs[r]));
  }

  /**
   * The output arrays for the rebuilt slots `wanted`: into[i] where given (checked for size
   * and for overlap with present shards and with each other), new arrays elsewhere.
   */
  #targets(into: readonly Shard[], wanted: number[], shards: Shard[], size: number): Uint8Array[] {
    if (!Array.isArray(into) || into.length !== this.totalShards) {
      throw new ShardCountError(`into needs ${this.totalShards} slots, got ${Array.isArray(into) ? into.length : typeof into}`);
    }
    const taken: Uint8Array[] = shards.filter(isPresent) as Uint8Array[];
    return wanted.map((i) => {
      const t = into[i];
      if (t === null || t === undefined) return new Uint8Array(size);
      if (!(t instanceof Uint8Array) || t.length !== size) {
        throw new ShardSizeError(`into[${i}] must be a Uint8Array of ${size} bytes`);
      }
      if (taken.some((u) => overlaps(t, u))) {
        throw new ShardSizeError(`into[${i}] shares memory with a present shard or another into buffer`);
      }
      taken.push(t);
      return t;
    });
  }

  /** Validates the array and returns the common size of the present shards (0 if none). */
  #checkCount(shards: Shard[], count: number): number {
    if (!Array.isArray(shards) || shards.length !== count) {
      throw new ShardCountError(`need ${count} shards, got ${Array.isArray(shards) ? shards.length : typeof shards}`);
    }
    let size = 0;
    shards.forEach((s, i) => {
      if (s !== null && s !== undefined && !(s instanceof Uint8Array)) {
        throw new ShardSizeError(`shard ${i} is not a Uint8Array`);
      }
      if (!isPresent(s)) return;
      if (size === 0) size = s!.length;
      else if (s!.length !== size) throw new ShardSizeError(`shard ${i} is ${s!.length} bytes, expected ${size}`);
    });
    return size;
  }

  #requireData(shards: Shard[], size: number): Uint8Array[] {
    if (size === 0) throw new ShardNoDataError('every shard is missing or empty');
    for (let i = 0; i < this.dataShards; i++) {
      if (!isPresent(shards[i])) throw new TooFewShardsError(`data shard ${i} is missing`);
    }
    return shards.slice(0, this.dataShards) as Uint8Array[];
  }

  #parityOutputs(shards: Shard[], size: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let i = this.dataShards; i < this.totalShards; i++) {
      if (!isPresent(shards[i])) shards[i] = new Uint8Array(size);
      out.push(shards[i] as Uint8Array);
    }
    return out;
  }
}

function isPresent(s: Shard): boolean {
  return s instanceof Uint8Array && s.length > 0;
}

/** True if the two views share at least one byte of the same buffer. */
function overlaps(a: Uint8Array, b: Uint8Array): boolean {
  return (
    a.buffer === b.buffer &&
    a.byteOffset < b.byteOffset + b.byteLength &&
    b.byteOffset < a.byteOffset + a.byteLength
  );
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A Reed-Solomon codec with k data and m parity shards. Throws on k < 1, m < 0, k + m > 256. */
export function createEncoder(k: number, m: number, options?: EncoderOptions): ReedSolomon {
  return new ReedSolomon(k, m, options);
}
