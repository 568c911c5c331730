/**
 * @module BlockCache: run blocks, least recently used first out, bounded by bytes, in two
 * tiers: decoded blocks (what reads use) and the blocks' encoded bytes as read (what a
 * decoded block is rebuilt from without a read).
 *
 * One cache is shared by every run of a repository, so the memory for reading runs is this
 * bound plus each open run's footer (block index + bloom), whatever the number of keys.
 * Concurrent loads of one block share a single read. A block larger than its tier's bound
 * is returned but not kept.
 *
 * Why two tiers: a decoded block costs about twice its 64 KiB of entries in heap (the key
 * strings), an encoded one a tenth of that (run blocks deflate ~10x). When the blocks a
 * listing touches outgrow the decoded tier — a delimiter listing of a million-key bucket
 * lands in every block — the encoded tier still holds them, and a miss costs an inflate and
 * a decode from memory (synchronous, no read, no event-loop turn) instead of a ranged read.
 */

/** Default bound: 32 MiB holds ~500 blocks of 64 KiB, a hot working set for LIST and GET. */
export const DEFAULT_BLOCK_CACHE_BYTES = 32 * 1024 * 1024;
/**
 * Share of the bound given to encoded blocks by default: a third of 32 MiB (10.7 MiB) holds
 * the encoded namespace index of about a million keys of the LIST benchmark's shape (7.5 MB
 * measured), the rest after the seek tier ~155 decoded blocks (the 13.4 MB a 100,000-key
 * bucket's whole index decodes to fits).
 */
export const ENCODED_SHARE = 1 / 3;
/**
 * Share of the bound given to seek results by default (see BlockCache.putSeek): an eighth of
 * 32 MiB (4 MiB) holds ~6,900 of them (~600 bytes each with the LIST benchmark's keys), a
 * delimiter listing of 1,000 common prefixes over 6 runs. Its own tier, so a listing that
 * streams more decoded blocks through the cache than it holds does not evict the seek
 * results that would spare those decodes next time.
 */
export const SEEK_SHARE = 1 / 8;

/** What the cache holds: anything that knows its approximate heap size in bytes. */
export interface Sized {
  readonly byteSize: number;
}

export interface BlockCacheOptions {
  /** Most bytes kept at once, both tiers together. Default DEFAULT_BLOCK_CACHE_BYTES. */
  maxBytes?: number;
  /** Of `maxBytes`, the bytes for encoded blocks (0: no encoded tier). Default maxBytes * ENCODED_SHARE. */
  encodedBytes?: number;
  /** Of `maxBytes`, the bytes for seek results (0: none kept). Default maxBytes * SEEK_SHARE. */
  seekBytes?: number;
}

export interface BlockCacheStats {
  hits: number;
  misses: number;
  evictions: number;
  /** Decoded blocks and their bytes held now, and the decoded tier's bound. */
  blocks: number;
  bytes: number;
  maxBytes: number;
  /** Encoded blocks and bytes held now, and the encoded tier's bound. */
  encodedBlocks: number;
  encodedBytes: number;
  maxEncodedBytes: number;
  /** Seek results held now, their bytes, and the seek tier's bound. */
  seeks: number;
  seekBytes: number;
  maxSeekBytes: number;
}

export class BlockCache {
  readonly #maxBytes: number;
  /** Map iteration order is insertion order: the first entry is the least recently used. */
  readonly #blocks = new Map<string, Sized>();
  readonly #loading = new Map<string, Promise<Sized>>();
  #bytes = 0;
  readonly #maxEncodedBytes: number;
  /** Encoded blocks, least recently used first, like #blocks. */
  readonly #encoded = new Map<string, Uint8Array>();
  #encodedBytes = 0;
  readonly #maxSeekBytes: number;
  /** Seek results, least recently used first. */
  readonly #seeks = new Map<string, Sized>();
  #seekBytes = 0;
  #hits = 0;
  #misses = 0;
  #evictions = 0;

  /** Throws RangeError unless the bounds are non-negative integers and the tiers fit in `maxBytes`. */
  constructor(options: BlockCacheOptions = {}) {
    const maxBytes = options.maxBytes ?? DEFAULT_BLOCK_CACHE_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new RangeError(`block cache maxBytes must be a non-negative integer, got ${maxBytes}`);
    }
    const encoded = options.encodedBytes ?? Math.floor(maxBytes * ENCODED_SHARE);
    if (!Number.isSafeInteger(encoded) || encoded < 0 || encoded > maxBytes) {
      throw new RangeError(`block cache encodedBytes must be an integer in [0, ${maxBytes}], got ${encoded}`);
    }
    const seeks = options.seekBytes ?? Math.floor(maxBytes * SEEK_SHARE);
    if (!Number.isSafeInteger(seeks) || seeks < 0 || encoded + seeks > maxBytes) {
      throw new RangeError(`block cache seekBytes must be an integer in [0, ${maxBytes - encoded}], got ${seeks}`);
    }
    this.#maxEncodedBytes = encoded;
    this.#maxSeekBytes = seeks;
    this.#maxBytes = maxBytes - encoded - seeks;
  }

  /**
   * The seek result kept under `key` (made most recent), or undefined. A seek result is what
   * a reader found at a position of an immutable run (run-reader.ts: the first entries at or
   * after a seek target), so a repeated seek — the same delimiter listing again — needs no
   * block at all.
   */
  peekSeek<T extends Sized>(key: string): T | undefined {
    const held = this.#seeks.get(key);
    if (held === undefined) return undefined;
    this.#seeks.delete(key);
    this.#seeks.set(key, held);
    return held as T;
  }

  /** Keeps the seek result `value` under `key` (see peekSeek), least recently used out past the tier's bound. */
  putSeek(key: string, value: Sized): void {
    if (value.byteSize > this.#maxSeekBytes || this.#seeks.has(key)) return;
    this.#seeks.set(key, value);
    this.#seekBytes += value.byteSize;
    while (this.#seekBytes > this.#maxSeekBytes) {
      const [oldest, evicted] = this.#seeks.entries().next().value as [string, Sized];
      this.#seeks.delete(oldest);
      this.#seekBytes -= evicted.byteSize;
    }
  }

  /**
   * The cache key of block `block` of a run; `runId` must name the run's content, not just
   * its location (the reader uses blob key + footer checksum, so a replaced blob never
   * hits the blocks of its predecessor).
   */
  static keyOf(runId: string, block: number): string {
    return `${runId}\u0000${block}`;
  }

  /**
   * The block under `key`: from the cache (a hit, which makes it most recent), from a load
   * already in flight, or from `load()` (a miss), whose result is then kept if it fits.
   * A failed load keeps nothing and rejects every waiter with its error.
   */
  getOrLoad<T extends Sized>(key: string, load: () => Promise<T>): Promise<T> {
    const held = this.#blocks.get(key);
    if (held !== undefined) {
      this.#hits++;
      this.#blocks.delete(key);
      this.#blocks.set(key, held);
      return Promise.resolve(held as T);
    }
    const pending = this.#loading.get(key);
    if (pending !== undefined) {
      this.#hits++;
      return pending as Promise<T>;
    }
    this.#misses++;
    const loading = load().then(
      (block) => {
        this.#loading.delete(key);
        this.#admit(key, block);
        return block;
      },
      (err: unknown) => {
        this.#loading.delete(key);
        throw err;
      }
    );
    this.#loading.set(key, loading);
    return loading;
  }

  /**
   * The block under `key` if the cache holds it now (a hit, which makes it most recent),
   * else undefined (not counted as a miss: the caller then reads it through getOrLoad).
   * Never waits for a load in flight.
   */
  peek<T extends Sized>(key: string): T | undefined {
    const held = this.#blocks.get(key);
    if (held === undefined) return undefined;
    this.#hits++;
    this.#blocks.delete(key);
    this.#blocks.set(key, held);
    return held as T;
  }

  /**
   * Keeps `block` (already decoded by the caller, e.g. from encoded bytes) under `key` as
   * the most recent, unless larger than the decoded tier. Replaces what `key` held.
   */
  put(key: string, block: Sized): void {
    this.#admit(key, block);
  }

  /** The encoded bytes kept under `key` (made most recent), or undefined. Read-only. */
  peekEncoded(key: string): Uint8Array | undefined {
    const held = this.#encoded.get(key);
    if (held === undefined) return undefined;
    this.#encoded.delete(key);
    this.#encoded.set(key, held);
    return held;
  }

  /**
   * Keeps a copy of `bytes` (the encoded block as read, verified by the caller's decode)
   * under `key`, evicting the least recently used encoded blocks past the tier's bound.
   * Nothing is kept when the tier is off or `bytes` is larger than it.
   */
  putEncoded(key: string, bytes: Uint8Array): void {
    if (bytes.byteLength > this.#maxEncodedBytes || this.#encoded.has(key)) return;
    // An exact copy: a view would pin its whole underlying buffer (a pooled slab, a read).
    this.#encoded.set(key, bytes.slice());
    this.#encodedBytes += bytes.byteLength;
    while (this.#encodedBytes > this.#maxEncodedBytes) {
      const [oldest, evicted] = this.#encoded.entries().next().value as [string, Uint8Array];
      this.#encoded.delete(oldest);
      this.#encodedBytes -= evicted.byteLength;
    }
  }

  #admit(key: string, block: Sized): void {
    // A put() may have kept this key while a load of it was in flight: replace, never count twice.
    const held = this.#blocks.get(key);
    if (held !== undefined) {
      this.#blocks.delete(key);
      this.#bytes -= held.byteSize;
    }
    if (block.byteSize > this.#maxBytes) return;
    this.#blocks.set(key, block);
    this.#bytes += block.byteSize;
    while (this.#bytes > this.#maxBytes) {
      const [oldest, evicted] = this.#blocks.entries().next().value as [string, Sized];
      this.#blocks.delete(oldest);
      this.#bytes -= evicted.byteSize;
      this.#evictions++;
    }
  }

  /** Drops every block, both tiers (counters are kept). */
  clear(): void {
    this.#blocks.clear();
    this.#bytes = 0;
    this.#encoded.clear();
    this.#encodedBytes = 0;
    this.#seeks.clear();
    this.#seekBytes = 0;
  }

  stats(): BlockCacheStats {
    return {
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#evictions,
      blocks: this.#blocks.size,
      bytes: this.#bytes,
      maxBytes: this.#maxBytes,
      encodedBlocks: this.#encoded.size,
      encodedBytes: this.#encodedBytes,
      maxEncodedBytes: this.#maxEncodedBytes,
      seeks: this.#seeks.size,
      seekBytes: this.#seekBytes,
      maxSeekBytes: this.#maxSeekBytes,
    };
  }
}
