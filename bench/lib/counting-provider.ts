/**
 * @module A Provider wrapper that counts requests and bytes, in total and per blob class
 * (the first segment of the key: `commits`, `anchor`, `roots`, `runs`, `chunks`, ...), so a
 * benchmark can say what a workload costs the backend and where the bytes go.
 *
 * It changes nothing about the requests: every call goes to the wrapped provider as is,
 * and the optional `read` fast path exists on the wrapper only if the wrapped provider
 * has it (a positional read counts as a get).
 */
import type {
  BlobBody,
  BlobInfo,
  ByteRange,
  GetOptions,
  GetResult,
  ListOptions,
  ListPage,
  Provider,
  PutOptions,
} from '../../src/provider/provider.js';
import type { AppendLog } from '../../src/provider/append-log.js';

/** Requests and bytes of one class (or of all of them). */
export interface RequestCounts {
  /** Successful puts, and the blob bytes they stored (as the provider reports the size). */
  puts: number;
  bytesPut: number;
  /** Successful gets (positional `read`s included); `rangedGets` of them asked for a range. */
  gets: number;
  rangedGets: number;
  /** Bytes the successful gets returned (their `length`), whether or not they were read. */
  bytesGot: number;
  heads: number;
  lists: number;
  deletes: number;
}

/** What the counters held at one moment: the totals and each class seen. */
export interface CountSnapshot {
  total: RequestCounts;
  byClass: Record<string, RequestCounts>;
}

/** A fresh set of counters, all zero. */
export const zeroCounts = (): RequestCounts => ({
  puts: 0,
  bytesPut: 0,
  gets: 0,
  rangedGets: 0,
  bytesGot: 0,
  heads: 0,
  lists: 0,
  deletes: 0,
});

/** The class of a blob key: its first `/`-separated segment (the whole key if it has none). */
export function blobClass(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

/** `a - b`, field by field (counts between two snapshots). */
export function subtractCounts(a: RequestCounts, b: RequestCounts): RequestCounts {
  const out = zeroCounts();
  for (const f of Object.keys(out) as (keyof RequestCounts)[]) out[f] = a[f] - b[f];
  return out;
}

export class CountingProvider implements Provider {
  readonly inner: Provider;
  /** Present exactly when the wrapped provider has it, so callers take the same path. */
  readonly read?: (key: string, range?: ByteRange) => Promise<Uint8Array>;
  /** Present exactly when the wrapped provider has it (the fs commit log): creating a segment
   * counts as one put of 0 bytes (its preallocation writes none), each append as one put of
   * the bytes appended, under the segment key's class (`log`). */
  readonly openLog?: (key: string, bytes: number) => Promise<AppendLog>;
  #total = zeroCounts();
  #byClass = new Map<string, RequestCounts>();

  constructor(inner: Provider) {
    this.inner = inner;
    if (inner.read) {
      const read = inner.read.bind(inner);
      this.read = async (key, range) => {
        const bytes = await read(key, range);
        this.#countGet(key, range !== undefined, bytes.length);
        return bytes;
      };
    }
    if (inner.openLog) {
      const openLog = inner.openLog.bind(inner);
      this.openLog = async (key, bytes) => {
        const log = await openLog(key, bytes);
        this.#count(key, (c) => c.puts++);
        return {
          key: log.key,
          preallocated: log.preallocated,
          close: () => log.close(),
          // Passed on: without it the repository could not cut a segment it leaves to its
          // written end, and every segment stayed listed at its preallocated size.
          ...(log.seal ? { seal: (end: number) => log.seal!(end) } : {}),
          append: async (offset, chunks) => {
            await log.append(offset, chunks);
            let n = 0;
            for (const c of chunks) n += c.byteLength;
            this.#count(key, (c) => {
              c.puts++;
              c.bytesPut += n;
            });
          },
        };
      };
    }
  }

  get kind(): string {
    return this.inner.kind;
  }

  get capabilities(): Provider['capabilities'] {
    return this.inner.capabilities;
  }

  /** Sets every counter back to zero (e.g. after setup, before the measured workload). */
  reset(): void {
    this.#total = zeroCounts();
    this.#byClass.clear();
  }

  /** A copy of the counters; later requests do not change it. */
  snapshot(): CountSnapshot {
    const byClass: Record<string, RequestCounts> = {};
    for (const [name, c] of this.#byClass) byClass[name] = { ...c };
    return { total: { ...this.#total }, byClass };
  }

  #count(key: string | undefined, add: (c: RequestCounts) => void): void {
    add(this.#total);
    if (key === undefined) return;
    const name = blobClass(key);
    let c = this.#byClass.get(name);
    if (!c) this.#byClass.set(name, (c = zeroCounts()));
    add(c);
  }

  async put(key: string, body: BlobBody, options?: PutOptions): Promise<BlobInfo> {
    const info = await this.inner.put(key, body, options);
    this.#count(key, (c) => {
      c.puts++;
      c.bytesPut += info.size;
    });
    return info;
  }

  #countGet(key: string, ranged: boolean, bytes: number): void {
    this.#count(key, (c) => {
      c.gets++;
      if (ranged) c.rangedGets++;
      c.bytesGot += bytes;
    });
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const res = await this.inner.get(key, options);
    this.#countGet(key, options?.range !== undefined, res.length);
    return res;
  }

  async head(key: string): Promise<BlobInfo> {
    const info = await this.inner.head(key);
    this.#count(key, (c) => c.heads++);
    return info;
  }

  async list(options?: ListOptions): Promise<ListPage> {
    const page = await this.inner.list(options);
    this.#count(options?.prefix ? blobClass(options.prefix) : undefined, (c) => c.lists++);
    return page;
  }

  async delete(key: string): Promise<void> {
    await this.inner.delete(key);
    this.#count(key, (c) => c.deletes++);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
