/**
 * @module Decode matrices cached per erasure pattern.
 *
 * Reconstruction multiplies the k surviving shards it reads by a matrix that depends only
 * on which shards it reads and which it rebuilds. Inverting that k x k selection costs
 * O(k^3) field operations (about 8 M for k = 200), so each pattern's matrix is kept in a
 * bounded LRU map.
 */
import { generatorRow, invert, rowTimes } from './matrix.js';

export interface DecodePlan {
  /** Shard indices read, ascending, exactly k of them. */
  sources: number[];
  /** Shard indices rebuilt, ascending. */
  outputs: number[];
  /** outputs.length x k coefficients, row-major: output r = sum_j m[r][j] * sources[j]. */
  matrix: Uint8Array;
}

export class DecodeCache {
  readonly #k: number;
  readonly #parity: Uint8Array;
  readonly #capacity: number;
  readonly #plans = new Map<string, DecodePlan>();
  hits = 0;
  misses = 0;

  constructor(k: number, parity: Uint8Array, capacity: number) {
    this.#k = k;
    this.#parity = parity;
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#plans.size;
  }

  /** The plan that rebuilds `outputs` from `sources` (both ascending; sources has k entries). */
  plan(sources: number[], outputs: number[]): DecodePlan {
    const key = `${sources.join(',')}>${outputs.join(',')}`;
    const cached = this.#plans.get(key);
    if (cached) {
      this.hits++;
      this.#plans.delete(key);
      this.#plans.set(key, cached);
      return cached;
    }
    this.misses++;
    const plan = this.#build(sources, outputs);
    if (this.#capacity > 0) {
      if (this.#plans.size >= this.#capacity) {
        const oldest = this.#plans.keys().next().value as string;
        this.#plans.delete(oldest);
      }
      this.#plans.set(key, plan);
    }
    return plan;
  }

  #build(sources: number[], outputs: number[]): DecodePlan {
    const k = this.#k;
    // The rows of the generator that produced the shards we read...
    const sub = new Uint8Array(k * k);
    sources.forEach((s, i) => sub.set(generatorRow(this.#parity, k, s), i * k));
    // ...inverted give the data from them; an output row is its generator row times that.
    const inv = invert(sub, k);
    const matrix = new Uint8Array(outputs.length * k);
    outputs.forEach((o, r) => {
      const row = o < k ? inv.subarray(o * k, o * k + k) : rowTimes(generatorRow(this.#parity, k, o), inv, k);
      matrix.set(row, r * k);
    });
    return { sources, outputs, matrix };
  }
}
