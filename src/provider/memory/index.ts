/**
 * @module The memory provider: blobs in a Map, for tests.
 *
 * Same contract as the others: byte-ordered list, atomic conditional puts (the check
 * and the store happen in one synchronous step after the body is collected), length
 * checks, ranges. Bodies are read fully before anything becomes visible.
 */
import { Readable } from 'node:stream';
import { collectBody, discardBody, throwIfAborted } from '../body.js';
import { compareKeys, keyBytes, listLimit } from '../key.js';
import {
  ProviderError,
  type BlobBody,
  type BlobInfo,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type Provider,
  type ProviderCapabilities,
  type PutOptions,
} from '../provider.js';
import { resolveRange } from '../range.js';

/** Size of the chunks a get yields: small enough that consumers see real streaming. */
const READ_CHUNK_BYTES = 64 * 1024;

export interface MemoryProviderOptions {
  /** Bytes the provider may hold in total; a put beyond it fails with 'Unavailable'. Default unlimited. */
  maxBytes?: number;
}

interface Entry {
  bytes: Buffer;
  info: BlobInfo;
}

export class MemoryProvider implements Provider {
  readonly kind = 'memory';
  readonly capabilities: ProviderCapabilities = { conditionalWrites: true, sortedList: true };
  readonly #blobs = new Map<string, Entry>();
  readonly #maxBytes: number;
  #bytes = 0;
  /** Never reused, so an etag names one write for the provider's lifetime. */
  #generation = 0;
  #closed = false;

  constructor(options: MemoryProviderOptions = {}) {
    this.#maxBytes = options.maxBytes ?? Infinity;
  }

  #checkOpen(): void {
    if (this.#closed) throw new ProviderError('Io', 'memory provider is closed');
  }

  #check(key: string, options: PutOptions): void {
    const current = this.#blobs.get(key);
    if (options.ifNoneMatch === '*' && current)
      throw new ProviderError('PreconditionFailed', `${key}: exists (ifNoneMatch: '*')`);
    if (options.ifMatch !== undefined && current?.info.etag !== options.ifMatch) {
      throw new ProviderError(
        'PreconditionFailed',
        `${key}: etag is ${current?.info.etag ?? 'absent'}, not ${options.ifMatch}`
      );
    }
  }

  async put(key: string, body: BlobBody, options: PutOptions = {}): Promise<BlobInfo> {
    try {
      this.#checkOpen();
      keyBytes(key);
      this.#check(key, options); // fail fast; re-checked below
    } catch (err) {
      discardBody(body);
      throw err;
    }
    const bytes = await collectBody(body, key, options.contentLength, options.signal);
    throwIfAborted(options.signal, key);
    this.#check(key, options);
    const previous = this.#blobs.get(key)?.bytes.length ?? 0;
    if (this.#bytes - previous + bytes.length > this.#maxBytes) {
      throw new ProviderError(
        'Unavailable',
        `${key}: memory provider full (${this.#maxBytes} bytes)`
      );
    }
    const info: BlobInfo = {
      key,
      size: bytes.length,
      etag: `m${++this.#generation}`,
      lastModified: new Date(),
    };
    this.#blobs.set(key, { bytes, info });
    this.#bytes += bytes.length - previous;
    return { ...info };
  }

  #entry(key: string): Entry {
    this.#checkOpen();
    keyBytes(key);
    const entry = this.#blobs.get(key);
    if (!entry) throw new ProviderError('NotFound', `${key}: no such blob`);
    return entry;
  }

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    const { bytes, info } = this.#entry(key);
    throwIfAborted(options.signal, key);
    const { start, length } = resolveRange(info.size, options.range, key);
    const slice = bytes.subarray(start, start + length);
    const body = Readable.from(
      (function* () {
        for (let off = 0; off < slice.length; off += READ_CHUNK_BYTES)
          yield slice.subarray(off, off + READ_CHUNK_BYTES);
      })(),
      { objectMode: false }
    );
    return { info: { ...info }, start, length, body };
  }

  async head(key: string): Promise<BlobInfo> {
    return { ...this.#entry(key).info };
  }

  async list(options: ListOptions = {}): Promise<ListPage> {
    this.#checkOpen();
    const limit = listLimit(options.limit);
    const prefix = options.prefix ?? '';
    const after = options.startAfter;
    const keys = [...this.#blobs.keys()]
      .filter((k) => k.startsWith(prefix) && (after === undefined || compareKeys(k, after) > 0))
      .sort(compareKeys);
    const items = keys.slice(0, limit).map((k) => ({ ...this.#blobs.get(k)!.info }));
    return keys.length > limit ? { items, next: items[items.length - 1].key } : { items };
  }

  async delete(key: string): Promise<void> {
    this.#checkOpen();
    keyBytes(key);
    const entry = this.#blobs.get(key);
    if (entry) {
      this.#bytes -= entry.bytes.length;
      this.#blobs.delete(key);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}

/** A new, empty memory provider. */
export async function createMemoryProvider(
  options: MemoryProviderOptions = {}
): Promise<MemoryProvider> {
  return new MemoryProvider(options);
}
