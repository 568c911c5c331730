/**
 * @module Bloom filter over index keys, so a point lookup in a run that does not hold the
 * key usually costs no block read.
 *
 * Hashing: two MurmurHash3 (x86, 32-bit) hashes of the key's UTF-8 bytes with different
 * seeds, combined by double hashing (Kirsch & Mitzenmacher, "Less hashing, same
 * performance", 2006): probe i sets bit (h1 + i * h2) mod m. The serialised form is part of
 * the run format: `k: u8 | m: u32le (bits) | ceil(m / 8) bytes`, bit j in byte j >> 3 at
 * position j & 7.
 */
import { keyBytes } from './compare.js';
import { IndexError } from './errors.js';

/** Default filter density: ~10 bits per key gives ~1% false positives with k = 7. */
export const DEFAULT_BITS_PER_KEY = 10;
/** Seeds of the two hashes (arbitrary, fixed by the format). */
const SEED_1 = 0x9747b28c;
const SEED_2 = 0x5bd1e995;
/** Smallest filter, in bits, so tiny runs still get a useful filter. */
const MIN_BITS = 64;
/** Most probes per key accepted on decode (k = 30 is optimal only at ~43 bits per key). */
const MAX_PROBES = 30;
/** Encoded header: k (1 byte) + bit count (4 bytes). */
const HEADER_BYTES = 5;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/** MurmurHash3 x86_32 of `data` with `seed`, as an unsigned 32-bit number. */
export function murmur3(data: Uint8Array, seed: number): number {
  const n = data.length;
  const body = n & ~3;
  let h = seed | 0;
  for (let i = 0; i < body; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(rotl(Math.imul(k, 0xcc9e2d51), 15), 0x1b873593);
    h = (Math.imul(rotl(h ^ k, 13), 5) + 0xe6546b64) | 0;
  }
  const tail = n & 3;
  if (tail > 0) {
    let k = data[body]!;
    if (tail > 1) k |= data[body + 1]! << 8;
    if (tail > 2) k |= data[body + 2]! << 16;
    h ^= Math.imul(rotl(Math.imul(k, 0xcc9e2d51), 15), 0x1b873593);
  }
  h ^= n;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Collects the hashes of keys as they stream past (8 bytes per key), then sizes the filter. */
export class BloomBuilder {
  #hashes = new Uint32Array(1024);
  #count = 0;

  get count(): number {
    return this.#count;
  }

  /** Records a key given as its UTF-8 bytes (read, not kept). */
  addKeyBytes(bytes: Uint8Array): void {
    if (2 * this.#count + 2 > this.#hashes.length) {
      const grown = new Uint32Array(this.#hashes.length * 2);
      grown.set(this.#hashes);
      this.#hashes = grown;
    }
    this.#hashes[2 * this.#count] = murmur3(bytes, SEED_1);
    this.#hashes[2 * this.#count + 1] = murmur3(bytes, SEED_2);
    this.#count++;
  }

  /** The filter over every key added, at `bitsPerKey` bits per key. */
  build(bitsPerKey = DEFAULT_BITS_PER_KEY): BloomFilter {
    const m = Math.max(MIN_BITS, Math.ceil((this.#count * bitsPerKey) / 8) * 8);
    const k = Math.min(MAX_PROBES, Math.max(1, Math.round(bitsPerKey * Math.LN2)));
    const bits = new Uint8Array(m / 8);
    for (let i = 0; i < this.#count; i++) {
      setProbes(bits, m, k, this.#hashes[2 * i]!, this.#hashes[2 * i + 1]!);
    }
    return new BloomFilter(bits, m, k);
  }
}

function setProbes(bits: Uint8Array, m: number, k: number, h1: number, h2: number): void {
  let h = h1;
  for (let i = 0; i < k; i++) {
    const j = h % m;
    bits[j >>> 3]! |= 1 << (j & 7);
    h = (h + h2) >>> 0;
  }
}

export class BloomFilter {
  readonly #bits: Uint8Array;
  readonly #m: number;
  readonly #k: number;

  constructor(bits: Uint8Array, m: number, k: number) {
    this.#bits = bits;
    this.#m = m;
    this.#k = k;
  }

  /** Bytes the filter occupies in memory and in its encoded form (minus a 5-byte header). */
  get byteLength(): number {
    return this.#bits.length;
  }

  /** False only if `key` was certainly not added. Keys with a lone surrogate throw. */
  mayContain(key: string): boolean {
    const bytes = keyBytes(key);
    const m = this.#m;
    const h2 = murmur3(bytes, SEED_2);
    let h = murmur3(bytes, SEED_1);
    for (let i = 0; i < this.#k; i++) {
      const j = h % m;
      if ((this.#bits[j >>> 3]! & (1 << (j & 7))) === 0) return false;
      h = (h + h2) >>> 0;
    }
    return true;
  }

  /** The serialised filter (see the module note). */
  encode(): Uint8Array {
    const out = new Uint8Array(HEADER_BYTES + this.#bits.length);
    out[0] = this.#k;
    new DataView(out.buffer).setUint32(1, this.#m, true);
    out.set(this.#bits, HEADER_BYTES);
    return out;
  }

  /**
   * Parses an encoded filter. Throws IndexError 'ERR_RUN_FORMAT' if the header disagrees with
   * the length. The result copies nothing: it keeps a view of `bytes`.
   */
  static decode(bytes: Uint8Array): BloomFilter {
    if (bytes.length < HEADER_BYTES)
      throw new IndexError('ERR_RUN_FORMAT', 'bloom filter truncated');
    const k = bytes[0]!;
    const m = new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getUint32(1, true);
    if (
      k < 1 ||
      k > MAX_PROBES ||
      m < MIN_BITS ||
      m % 8 !== 0 ||
      bytes.length !== HEADER_BYTES + m / 8
    ) {
      throw new IndexError(
        'ERR_RUN_FORMAT',
        `bloom filter header k=${k} m=${m} does not fit ${bytes.length} bytes`
      );
    }
    return new BloomFilter(bytes.subarray(HEADER_BYTES), m, k);
  }
}
