/**
 * @module BlockCache: decoded run blocks, least recently used first out, bounded by bytes.
 *
 * One cache is shared by every run of a repository, so the memory for reading runs is this
 * bound plus each open run's footer (block index + bloom), whatever the number of keys.
 * Concurrent loads of one block share a single read. A block larger than the whole bound is
 * returned but not kept.
 */

/** Default bound: 32 MiB holds ~500 blocks of 64 KiB, a hot working set for LIST and GET. */
export const DEFAULT_BLOCK_CACHE_BYTES = 32 * 1024 * 1024;

/** What the cache holds: anything that knows its approximate heap size in bytes. */
export interface Sized {
  readonly byteSize: number;
}

export interface BlockCacheOptions {
  /** Most bytes (by `byteSize`) kept at once. Default DEFAULT_BLOCK_CACHE_BYTES. */
  maxBytes?: number;
}

export interface BlockCacheStats {
  hits: number;
  misses: number;
  evictions: number;
  /** Blocks and bytes held now. */
  blocks: number;
  bytes: number;
  maxBytes: number;
}

export class BlockCache {
  readonly #maxBytes: number;
  /** Map iteration order is insertion order: the first entry is the least recently used. */
  readonly #blocks = new Map<string, Sized>();
  readonly #loading = new Map<string, Promise<Sized>>();
  #bytes = 0;
  #hits = 0;
  #misses = 0;
  #evictions = 0;

  /** Throws RangeError unless `maxBytes` is a non-negative integer. */
  constructor(options: BlockCacheOptions = {}) {
    const maxBytes = options.maxBytes ?? DEFAULT_BLOCK_CACHE_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new RangeError(`block cache maxBytes must be a non-negative integer, got ${maxBytes}`);
    }
    this.#maxBytes = maxBytes;
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

  #admit(key: string, block: Sized): void {
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

  /** Drops every block (counters are kept). */
  clear(): void {
    this.#blocks.clear();
    this.#bytes = 0;
  }

  stats(): BlockCacheStats {
    return {
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#evictions,
      blocks: this.#blocks.size,
      bytes: this.#bytes,
      maxBytes: this.#maxBytes,
    };
  }
}
