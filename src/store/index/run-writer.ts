/**
 * @module Run writer: streams sorted entries into one run blob (format in run-format.ts).
 *
 * The blob is produced as the provider pulls it, one block at a time, with a single `put`.
 * Memory stays bounded by about one block, the block index (its encoded bytes, a few bytes
 * per block) and the bloom filter's input (8 bytes per key): never the run itself.
 */
import { BloomBuilder, DEFAULT_BITS_PER_KEY } from './bloom.js';
import { keyBytes } from './compare.js';
import { IndexError } from './errors.js';
import { sharedPrefix } from './run-bytes.js';
import {
  BlockBuilder,
  DEFAULT_BLOCK_BYTES,
  FooterBuilder,
  HEADER_BYTES,
  TRAILER_BYTES,
  encodeHeader,
  RUN_FORMAT_VERSION,
  encodeTrailer,
  type RunMeta,
  type RunFormatVersion,
} from './run-format.js';
import type { Provider } from '../../provider/provider.js';

/** One entry: key and value (a deletion is just a value to the index). */
export type RunEntry = readonly [key: string, value: Uint8Array];

export interface RunWriteOptions {
  /** Target data block size in bytes; a block ends at the first entry that reaches it. */
  blockBytes?: number;
  /** Bloom filter density (bits per key). */
  bitsPerKey?: number;
  /** Refuse to replace an existing blob at the key (`ifNoneMatch: '*'`); runs are immutable. */
  exclusive?: boolean;
  /** Format version written (run-format.ts; the current one by default). Version 1 (blocks
   * uncompressed) is for tests that prove old runs still read. */
  version?: RunFormatVersion;
  signal?: AbortSignal;
}

const DEFAULTS = {
  blockBytes: DEFAULT_BLOCK_BYTES,
  bitsPerKey: DEFAULT_BITS_PER_KEY,
  exclusive: true,
  version: RUN_FORMAT_VERSION,
} as const;
/** Block size bounds: below 64 B every block is one entry; above 16 MiB a seek reads too much. */
const MIN_BLOCK_BYTES = 64;
/** Longest stretch of synchronous encoding between event-loop turns, ms: short enough that a
 * PUT's acknowledgement does not wait on a run being written beside it, at the cost of one
 * setImmediate every few 64 KiB blocks. */
const SLICE_MS = 2;
const MAX_BLOCK_BYTES = 16 * 1024 * 1024;
/** Bloom density bounds: 1 bit per key is nearly useless, 40 is far past diminishing returns. */
const MIN_BITS_PER_KEY = 1;
const MAX_BITS_PER_KEY = 40;

function resolveOptions(options: RunWriteOptions): Required<Omit<RunWriteOptions, 'signal'>> {
  const o = { ...DEFAULTS, ...options };
  if (o.version !== 1 && o.version !== 2) throw new RangeError(`run format version must be 1 or 2, not ${String(o.version)}`);
  if (
    !Number.isInteger(o.blockBytes) ||
    o.blockBytes < MIN_BLOCK_BYTES ||
    o.blockBytes > MAX_BLOCK_BYTES
  ) {
    throw new RangeError(
      `blockBytes must be an integer in [${MIN_BLOCK_BYTES}, ${MAX_BLOCK_BYTES}]`
    );
  }
  if (!(o.bitsPerKey >= MIN_BITS_PER_KEY && o.bitsPerKey <= MAX_BITS_PER_KEY)) {
    throw new RangeError(`bitsPerKey must be in [${MIN_BITS_PER_KEY}, ${MAX_BITS_PER_KEY}]`);
  }
  return o;
}

/** Turns entries into the chunks of one run blob, and remembers what RunMeta needs. */
class RunEncoder {
  readonly #blobKey: string;
  readonly #options: Required<Omit<RunWriteOptions, 'signal'>>;
  readonly #block: BlockBuilder;
  readonly #footer = new FooterBuilder();
  readonly #bloom = new BloomBuilder();
  #offset = 0;
  #count = 0;
  #prev = new Uint8Array(256);
  #prevLength = 0;
  #blockFirst = new Uint8Array(0);
  #firstKey: string | undefined;
  #lastKey: string | undefined;
  #footerLength = 0;
  #footerCrc = 0;

  #sliceStart = performance.now();

  constructor(blobKey: string, options: Required<Omit<RunWriteOptions, 'signal'>>) {
    this.#blobKey = blobKey;
    this.#options = options;
    this.#block = new BlockBuilder(options.blockBytes);
  }

  async *chunks(entries: Iterable<RunEntry> | AsyncIterable<RunEntry>): AsyncGenerator<Uint8Array> {
    yield encodeHeader(this.#options.version);
    this.#offset = HEADER_BYTES;
    for await (const [key, value] of entries) {
      if (!(value instanceof Uint8Array)) {
        throw new IndexError('ERR_RUN_ENTRY', `value of entry ${this.#count} is not a Uint8Array`, {
          blobKey: this.#blobKey,
        });
      }
      const bytes = keyBytes(key);
      this.#checkOrder(bytes, key);
      if (this.#block.count === 0) this.#blockFirst = bytes.slice();
      this.#block.add(bytes, value);
      this.#bloom.addKeyBytes(bytes);
      if (bytes.length > this.#prev.length) this.#prev = new Uint8Array(bytes.length * 2);
      this.#prev.set(bytes);
      this.#prevLength = bytes.length;
      this.#firstKey ??= key;
      this.#lastKey = key;
      this.#count++;
      if (this.#block.byteLength >= this.#options.blockBytes) {
        yield this.#finishBlock();
        await this.#slice();
      }
    }
    if (this.#block.count > 0) yield this.#finishBlock();
    const footer = this.#footer.finish(
      this.#count,
      this.#prev.subarray(0, this.#count > 0 ? this.#prevLength : 0),
      this.#bloom.build(this.#options.bitsPerKey)
    );
    const footerOffset = this.#offset;
    this.#footerLength = footer.length;
    this.#footerCrc = new DataView(footer.buffer, footer.byteOffset).getUint32(
      footer.length - 4,
      true
    );
    this.#offset += footer.length + TRAILER_BYTES;
    yield footer;
    yield encodeTrailer({ footerOffset, footerLength: footer.length }, this.#options.version);
  }

  /**
   * Gives the event loop a turn once this encoder (with the merge feeding it: decoding and
   * inflating source blocks, compressing ours) has run SLICE_MS without one. A checkpoint or
   * compaction writes runs beside the commit loop on the same thread; without turns, a run of
   * compressed blocks held PUT acknowledgements for tens of ms (`bench:engine --only=checkpoint`,
   * p99.9: 25 ms before compression, 77 ms with it, 50 ms with 4 ms slices, 43 ms with 2).
   */
  async #slice(): Promise<void> {
    const now = performance.now();
    if (now - this.#sliceStart < SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#sliceStart = performance.now();
  }

  /** Throws 'ERR_RUN_UNSORTED' unless `bytes` sorts strictly after the previous key. */
  #checkOrder(bytes: Uint8Array, key: string): void {
    if (this.#count === 0) return;
    const shared = sharedPrefix(this.#prev, this.#prevLength, bytes);
    if (
      shared === bytes.length ||
      (shared < this.#prevLength && bytes[shared]! < this.#prev[shared]!)
    ) {
      const what =
        shared === bytes.length && shared === this.#prevLength ? 'duplicate' : 'out of order';
      throw new IndexError(
        'ERR_RUN_UNSORTED',
        `entry ${this.#count} (${JSON.stringify(key)}) is ${what}`,
        {
          blobKey: this.#blobKey,
        }
      );
    }
  }

  #finishBlock(): Uint8Array {
    const entries = this.#block.count;
    const block = this.#block.finishAs(this.#options.version);
    const crc = new DataView(block.buffer, block.byteOffset).getUint32(block.length - 4, true);
    this.#footer.addBlock(this.#blockFirst, this.#offset, block.length, entries, crc);
    this.#offset += block.length;
    return block;
  }

  meta(): RunMeta {
    return {
      blobKey: this.#blobKey,
      size: this.#offset,
      entryCount: this.#count,
      firstKey: this.#firstKey,
      lastKey: this.#lastKey,
      footerOffset: this.#offset - this.#footerLength - TRAILER_BYTES,
      footerLength: this.#footerLength,
      footerCrc: this.#footerCrc,
    };
  }
}

/**
 * Writes `entries` as one run blob at `blobKey` and returns its RunMeta. Entries must be in
 * strictly increasing compareKeys order (no duplicates); they are consumed once, lazily, as
 * the provider stores the blob. An empty input makes a valid empty run.
 *
 * Throws IndexError 'ERR_RUN_UNSORTED' (order), 'ERR_RUN_ENTRY' (a key with a lone surrogate,
 * a value that is not a Uint8Array), RangeError (options), or the provider's error (e.g.
 * ProviderError 'PreconditionFailed' if `exclusive` and the blob exists). On failure nothing
 * is stored (providers store atomically).
 */
export async function writeRun(
  provider: Provider,
  blobKey: string,
  entries: Iterable<RunEntry> | AsyncIterable<RunEntry>,
  options: RunWriteOptions = {}
): Promise<RunMeta> {
  const encoder = new RunEncoder(blobKey, resolveOptions(options));
  let failure: unknown;
  async function* body(): AsyncGenerator<Uint8Array> {
    try {
      yield* encoder.chunks(entries);
    } catch (err) {
      failure = err;
      throw err;
    }
  }
  try {
    await provider.put(blobKey, body(), {
      ...((options.exclusive ?? DEFAULTS.exclusive) ? { ifNoneMatch: '*' as const } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    // The provider wraps errors thrown while it reads the body; report the original.
    throw failure ?? err;
  }
  return encoder.meta();
}
