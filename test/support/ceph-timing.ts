/**
 * @module A Provider wrapper for the Ceph lane that times every put and get by blob class
 * (the key's first segment: `commits`, `anchor`, `runs`, `roots`, ...), so a run says where
 * its wall time went on RGW: commit blob PUTs, anchor compare-and-swaps, checkpoint runs,
 * compaction reads. It changes no request; a failed call is timed as well.
 */
import type {
  BlobBody,
  BlobInfo,
  GetOptions,
  GetResult,
  ListOptions,
  ListPage,
  Provider,
  PutOptions,
} from '../../src/provider/provider.js';

/** Calls of one kind (`put commits`, `get runs`, ...) and their latencies. */
export interface CallTimes {
  calls: number;
  totalMs: number;
  maxMs: number;
}

function classOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

export class TimedProvider implements Provider {
  readonly inner: Provider;
  readonly times = new Map<string, CallTimes>();

  constructor(inner: Provider) {
    this.inner = inner;
  }

  get kind(): string {
    return this.inner.kind;
  }

  get capabilities(): Provider['capabilities'] {
    return this.inner.capabilities;
  }

  async #timed<T>(what: string, key: string, call: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await call();
    } finally {
      const ms = performance.now() - t0;
      const name = `${what} ${classOf(key)}`;
      const t = this.times.get(name) ?? { calls: 0, totalMs: 0, maxMs: 0 };
      t.calls++;
      t.totalMs += ms;
      t.maxMs = Math.max(t.maxMs, ms);
      this.times.set(name, t);
    }
  }

  put(key: string, body: BlobBody, options?: PutOptions): Promise<BlobInfo> {
    return this.#timed('put', key, () => this.inner.put(key, body, options));
  }

  get(key: string, options?: GetOptions): Promise<GetResult> {
    return this.#timed('get', key, () => this.inner.get(key, options));
  }

  head(key: string): Promise<BlobInfo> {
    return this.inner.head(key);
  }

  list(options?: ListOptions): Promise<ListPage> {
    return this.inner.list(options);
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** One line per call kind, busiest first: `put commits 978 x 44.2 ms (max 469)`. */
  summary(): string {
    return [...this.times]
      .sort((a, b) => b[1].totalMs - a[1].totalMs)
      .map(([n, t]) => `${n} ${t.calls} x ${(t.totalMs / t.calls).toFixed(1)} ms (max ${t.maxMs.toFixed(0)})`)
      .join('; ');
  }
}
