/**
 * @module Run reader: point lookups and ordered scans of one run blob, reading lazily.
 *
 * Opening is one ranged read (footer + trailer, located by RunMeta) and keeps the block
 * index and bloom filter in memory; blocks are read one ranged read each, through a shared
 * byte-bounded BlockCache. Every byte is verified before use (run-format.ts): a corrupt,
 * truncated or mismatched blob throws IndexError, never returns wrong data.
 */
import { getBytes, ProviderError, type Provider } from '../../provider/provider.js';
import { BlockCache } from './block-cache.js';
import { compareKeys } from './compare.js';
import { IndexError } from './errors.js';
import { FROM_START, type EntryBatch, type SeekKey, type SortedSource } from './merge.js';
import {
  HEADER_BYTES,
  TRAILER_BYTES,
  checkHeader,
  decodeBlock,
  decodeFooter,
  decodeTrailer,
  type DecodedBlock,
  type Footer,
  type RunFormatVersion,
  type RunMeta,
} from './run-format.js';

/** Approximate heap bytes per block index entry beyond its first key's characters. */
const INDEX_ENTRY_OVERHEAD_BYTES = 64;
/**
 * Entries a seek result keeps (BlockCache.putSeek): a delimiter listing reads one entry per
 * run at each common prefix (more only where keys under it were deleted), so 2 serve it
 * whole; a merge that goes further falls back to the block.
 */
const SEEK_ENTRIES = 2;
/** Approximate heap bytes of a seek result beyond its keys' characters and values' bytes. */
const SEEK_OVERHEAD_BYTES = 160;
/** Approximate heap bytes per kept entry beyond its key's characters and value's bytes. */
const SEEK_ENTRY_OVERHEAD_BYTES = 120;

/**
 * Reads `length` bytes at `start`. A blob too short for the range (truncated) is
 * IndexError 'ERR_RUN_CORRUPT'; other provider errors (NotFound, Unavailable…) pass through.
 */
async function readRange(
  provider: Provider,
  blobKey: string,
  start: number,
  length: number,
  block?: number
): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await getBytes(provider, blobKey, { start, end: start + length - 1 });
  } catch (err) {
    if (!(err instanceof ProviderError && err.code === 'InvalidRange')) throw err;
    bytes = new Uint8Array(0);
  }
  if (bytes.length !== length) {
    throw new IndexError(
      'ERR_RUN_CORRUPT',
      `truncated: ${bytes.length} of ${length} bytes at ${start}`,
      {
        blobKey,
        block,
      }
    );
  }
  return bytes;
}

/** A decoded block handed to the merge, from entry `start` on. */
class BlockBatch implements EntryBatch {
  constructor(
    readonly block: DecodedBlock,
    readonly start: number
  ) {}
  get keys(): readonly string[] {
    return this.block.keys;
  }
  valueAt(index: number): Uint8Array {
    return this.block.valueAt(index);
  }
}

/** The first entries at or after a seek target, copied out of their block (immutable, like the run). */
class SeekResult implements EntryBatch {
  readonly start = 0;
  readonly byteSize: number;
  constructor(
    readonly keys: readonly string[],
    readonly values: readonly Uint8Array[],
    keyBytes: number
  ) {
    let n = SEEK_OVERHEAD_BYTES + keyBytes;
    for (let i = 0; i < keys.length; i++) n += keys[i]!.length + values[i]!.byteLength + SEEK_ENTRY_OVERHEAD_BYTES;
    this.byteSize = n;
  }
  valueAt(index: number): Uint8Array {
    return this.values[index]!;
  }
}

/** First index whose key is >= key (inclusive) or > key (exclusive). */
function bound(keys: readonly string[], key: string, inclusive: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareKeys(keys[mid]!, key);
    if (c < 0 || (c === 0 && !inclusive)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class RunReader implements SortedSource {
  readonly meta: RunMeta;
  readonly name: string;
  readonly #provider: Provider;
  readonly #cache: BlockCache;
  readonly #footer: Footer;
  /** The run's format version (run-format.ts): how its blocks are stored. */
  readonly #version: RunFormatVersion;
  /** Names this run's content in the shared cache (see BlockCache.keyOf). */
  readonly #cacheId: string;

  /** Use openRun. */
  constructor(provider: Provider, meta: RunMeta, cache: BlockCache, footer: Footer, version: RunFormatVersion = 1) {
    this.#version = version;
    this.#provider = provider;
    this.meta = meta;
    this.name = meta.blobKey;
    this.#cache = cache;
    this.#footer = footer;
    this.#cacheId = `${meta.blobKey}\u0000${meta.footerCrc}`;
  }

  get blockCount(): number {
    return this.#footer.firstKeys.length;
  }

  /** Approximate heap bytes this open run holds (block index + bloom), outside the cache. */
  get memoryBytes(): number {
    let chars = 0;
    for (const k of this.#footer.firstKeys) chars += k.length;
    return this.#footer.bloom.byteLength + chars + this.blockCount * INDEX_ENTRY_OVERHEAD_BYTES;
  }

  /**
   * The value stored under `key` (a new array), or undefined if the run does not hold it.
   * Costs no read when the key is outside [firstKey, lastKey] or the bloom filter rules it
   * out, else one block (through the cache). Throws IndexError for a bad block, the
   * provider's error if the read fails, IndexError 'ERR_RUN_ENTRY' for a lone surrogate.
   */
  async get(key: string): Promise<Uint8Array | undefined> {
    const f = this.#footer;
    if (
      f.entryCount === 0 ||
      compareKeys(key, f.firstKeys[0]!) < 0 ||
      compareKeys(key, f.lastKey) > 0
    ) {
      return undefined;
    }
    if (!f.bloom.mayContain(key)) return undefined;
    const block = await this.#block(this.#blockFor(key));
    const i = bound(block.keys, key, true);
    return block.keys[i] === key ? block.valueAt(i).slice() : undefined;
  }

  /** The last block whose first key is <= key (block 0 if none). */
  #blockFor(key: string): number {
    const i = bound(this.#footer.firstKeys, key, false);
    return i === 0 ? 0 : i - 1;
  }

  #block(i: number): Promise<DecodedBlock> {
    return this.#cache.getOrLoad(BlockCache.keyOf(this.#cacheId, i), () => this.#load(i));
  }

  /**
   * Reads block `i` (from the encoded tier when it holds it, else one ranged read), decodes
   * it, and keeps its encoded bytes once they decoded (so bytes that fail to verify are
   * never kept). Throws like #decode, or the provider's error.
   */
  async #load(i: number): Promise<DecodedBlock> {
    const key = BlockCache.keyOf(this.#cacheId, i);
    const held = this.#cache.peekEncoded(key);
    if (held !== undefined) return this.#decode(i, held);
    const bytes = await this.#read(i);
    const block = this.#decode(i, bytes);
    this.#cache.putEncoded(key, bytes);
    return block;
  }

  /** The encoded bytes of block `i`: one ranged read. Throws the provider's error. */
  #read(i: number): Promise<Uint8Array> {
    const f = this.#footer;
    // Block 0 is read together with the header so the header is verified too.
    const start = i === 0 ? 0 : f.offsets[i]!;
    const end = f.offsets[i]! + f.lengths[i]!;
    return readRange(this.#provider, this.meta.blobKey, start, end - start, i);
  }

  /**
   * Block `i` for a single pass (see passOnce): the cache's copy (decoded, or encoded and
   * decoded now) when it holds one, else read and decoded without being kept. Verified
   * either way; throws like #load.
   */
  async #blockOnce(i: number): Promise<DecodedBlock> {
    const key = BlockCache.keyOf(this.#cacheId, i);
    const held = this.#cache.peek<DecodedBlock>(key);
    if (held !== undefined) return held;
    const encoded = this.#cache.peekEncoded(key);
    return this.#decode(i, encoded ?? (await this.#read(i)));
  }

  /** Verifies and decodes block `i` from its encoded bytes (see #load). Throws IndexError. */
  #decode(i: number, bytes: Uint8Array): DecodedBlock {
    const f = this.#footer;
    const last = i === f.firstKeys.length - 1;
    if (i === 0) checkHeader(bytes, this.meta.blobKey, this.#version);
    return decodeBlock(bytes, i === 0 ? HEADER_BYTES : 0, {
      version: this.#version,
      blobKey: this.meta.blobKey,
      block: i,
      entryCount: f.counts[i]!,
      firstKey: f.firstKeys[i]!,
      crc: f.crcs[i]!,
      bound: last ? f.lastKey : f.firstKeys[i + 1]!,
      last,
    });
  }

  /**
   * SortedSource: entries from `from` in key order, one block (from the seek position) per
   * batch; each block is read only when the previous one has been consumed.
   */
  scan(from: SeekKey): AsyncGenerator<EntryBatch, void, undefined> {
    return this.#scan(from, true);
  }

  /**
   * This run as a SortedSource for one pass from start to end (compaction): blocks the cache
   * holds are used, blocks it does not are read, verified and handed over without being kept.
   * A compaction reads every block of runs it is about to replace; through the cache it would
   * evict the blocks readers use, and fill the cache (up to its bound, decoded blocks in the
   * heap) in a process that only writes. Mutates nothing but the cache's recency.
   */
  passOnce(): SortedSource {
    return { name: this.name, scan: (from) => this.#scan(from, false) };
  }

  async *#scan(from: SeekKey, keep: boolean): AsyncGenerator<EntryBatch, void, undefined> {
    const f = this.#footer;
    if (f.entryCount === 0 || compareKeys(from.key, f.lastKey) > 0) return;
    for (
      let i = this.#blockFor(from.key), first = true;
      i < f.firstKeys.length;
      i++, first = false
    ) {
      const block = await (keep ? this.#block(i) : this.#blockOnce(i));
      const start = first ? bound(block.keys, from.key, from.inclusive) : 0;
      if (start < block.keys.length) yield new BlockBatch(block, start);
    }
  }

  /**
   * SortedSource.peek: the batch `scan(from)` would yield first — or for a `seek`, its first
   * SEEK_ENTRIES entries, kept in the cache's seek tier — if every block it needs is in the
   * cache, decoded or encoded, or the cache kept this very seek's result (no read, no
   * promise); null if the run holds nothing at or after `from`; undefined if a block would
   * have to be read. Throws IndexError for a cached encoded block that does not verify.
   */
  peek(from: SeekKey, seek = false): EntryBatch | null | undefined {
    const f = this.#footer;
    if (f.entryCount === 0 || compareKeys(from.key, f.lastKey) > 0) return null;
    const seekKey = seek ? `${this.#cacheId}\u0000${from.inclusive ? 'i' : 'x'}${from.key}` : '';
    if (seek) {
      const known = this.#cache.peekSeek<SeekResult>(seekKey);
      if (known !== undefined) return known;
    }
    for (let i = this.#blockFor(from.key), first = true; i < f.firstKeys.length; i++, first = false) {
      const block = this.#cache.peek<DecodedBlock>(BlockCache.keyOf(this.#cacheId, i)) ?? this.#blockFromEncoded(i);
      if (block === undefined) return undefined;
      const start = first ? bound(block.keys, from.key, from.inclusive) : 0;
      if (start >= block.keys.length) continue;
      // A seek: keep what it found, so the same seek next time needs no block (the decoded
      // tier may not hold it by then: a listing over more blocks than it holds), and hand
      // over just that; the merge steps on into the block if it reads further.
      return seek ? this.#rememberSeek(seekKey, block, start) : new BlockBatch(block, start);
    }
    return null;
  }

  #rememberSeek(seekKey: string, block: DecodedBlock, start: number): SeekResult {
    const end = Math.min(block.keys.length, start + SEEK_ENTRIES);
    const keys = block.keys.slice(start, end);
    const values: Uint8Array[] = [];
    for (let i = start; i < end; i++) values.push(block.valueAt(i).slice());
    const result = new SeekResult(keys, values, seekKey.length);
    this.#cache.putSeek(seekKey, result);
    return result;
  }

  /**
   * Block `i` decoded now (synchronously) from the encoded bytes the cache holds, and kept
   * decoded; undefined if they are not held. Throws IndexError for bytes that do not verify.
   */
  #blockFromEncoded(i: number): DecodedBlock | undefined {
    const key = BlockCache.keyOf(this.#cacheId, i);
    const encoded = this.#cache.peekEncoded(key);
    if (encoded === undefined) return undefined;
    const block = this.#decode(i, encoded);
    this.#cache.put(key, block);
    return block;
  }

  /**
   * Entries from `from` (the first key by default) in key order. Values are read-only views
   * into cached blocks (see EntryBatch); copy one to keep it.
   */
  async *entries(
    from: SeekKey = FROM_START
  ): AsyncGenerator<[string, Uint8Array], void, undefined> {
    for await (const batch of this.scan(from)) {
      for (let i = batch.start; i < batch.keys.length; i++)
        yield [batch.keys[i]!, batch.valueAt(i)];
    }
  }
}

/**
 * Opens the run `meta` describes with one ranged read of its footer and trailer, verifying
 * them and that the blob is that very run (trailer, footer checksum, counts and first/last
 * key all agree with `meta`). Blocks are read later, through `cache`. Throws IndexError
 * 'ERR_RUN_CORRUPT' / 'ERR_RUN_FORMAT' / 'ERR_RUN_UNSORTED', or the provider's error.
 */
export async function openRun(
  provider: Provider,
  meta: RunMeta,
  cache: BlockCache
): Promise<RunReader> {
  const { blobKey, footerOffset, footerLength } = meta;
  const mismatch = (what: string): never => {
    throw new IndexError('ERR_RUN_FORMAT', `blob is not the run its RunMeta names (${what})`, {
      blobKey,
    });
  };
  if (footerOffset < HEADER_BYTES || meta.size !== footerOffset + footerLength + TRAILER_BYTES)
    mismatch('size');
  // An empty run is header + footer + trailer: read it whole so the header is checked too.
  const start = meta.entryCount === 0 ? 0 : footerOffset;
  const bytes = await readRange(provider, blobKey, start, meta.size - start);
  const trailer = decodeTrailer(bytes, blobKey);
  if (trailer.footerOffset !== footerOffset || trailer.footerLength !== footerLength)
    mismatch('trailer');
  if (start === 0) checkHeader(bytes, blobKey, trailer.version);
  const footerBytes = bytes.subarray(footerOffset - start, footerOffset - start + footerLength);
  const footer = decodeFooter(footerBytes, footerOffset, blobKey, trailer.version);
  const crc = new DataView(footerBytes.buffer, footerBytes.byteOffset).getUint32(
    footerLength - 4,
    true
  );
  if (crc !== meta.footerCrc) mismatch('footer checksum');
  if (footer.entryCount !== meta.entryCount) mismatch('entry count');
  if (
    meta.entryCount > 0 &&
    (footer.firstKeys[0] !== meta.firstKey || footer.lastKey !== meta.lastKey)
  ) {
    mismatch('first or last key');
  }
  return new RunReader(provider, meta, cache, footer, trailer.version);
}

/**
 * Recovers the RunMeta of a run blob from the blob alone (for tools and recovery, when no
 * checkpoint names it): a head, a read of the trailer, a read of the footer. Throws like
 * openRun.
 */
export async function readRunMeta(provider: Provider, blobKey: string): Promise<RunMeta> {
  const { size } = await provider.head(blobKey);
  if (size < HEADER_BYTES + TRAILER_BYTES) {
    throw new IndexError('ERR_RUN_CORRUPT', `truncated: ${size} bytes`, { blobKey });
  }
  const tail = await readRange(provider, blobKey, size - TRAILER_BYTES, TRAILER_BYTES);
  const { footerOffset, footerLength, version } = decodeTrailer(tail, blobKey);
  if (footerOffset < HEADER_BYTES || footerOffset + footerLength + TRAILER_BYTES !== size) {
    throw new IndexError('ERR_RUN_FORMAT', 'trailer points outside the blob', { blobKey });
  }
  const footerBytes = await readRange(provider, blobKey, footerOffset, footerLength);
  const footer = decodeFooter(footerBytes, footerOffset, blobKey, version);
  const empty = footer.entryCount === 0;
  return {
    blobKey,
    size,
    entryCount: footer.entryCount,
    firstKey: empty ? undefined : footer.firstKeys[0],
    lastKey: empty ? undefined : footer.lastKey,
    footerOffset,
    footerLength,
    footerCrc: new DataView(footerBytes.buffer, footerBytes.byteOffset).getUint32(
      footerLength - 4,
      true
    ),
  };
}
