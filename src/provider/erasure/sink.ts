/**
 * @module One fragment being written: a child put fed from a bounded queue.
 *
 * The writer pushes framed cells; the child pulls them as its body (backpressure: the
 * writer waits while the queue holds highWaterBytes or more). A child that stops pulling
 * while bytes wait for longer than the domain timeout is failed (the write goes on without
 * it and the fragment is rebuilt elsewhere), so a hanging domain never stalls a put.
 * `released` is passed on to the child put (PutOptions.released): it hears of each pushed
 * chunk the child has written, so that the writer can reuse the memory. `bulk` is passed on as
 * PutOptions.bulk.
 */
import { ProviderError, type BlobInfo } from '../provider.js';
import type { DomainSet } from './domains.js';

export class FragmentSink {
  readonly domain: string;
  readonly childKey: string;
  /** Resolves with the child's BlobInfo, or rejects (ProviderError) when the fragment failed. */
  readonly done: Promise<BlobInfo>;
  readonly #highWater: number;
  readonly #domains: DomainSet;
  #queue: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  #error: ProviderError | undefined;
  #wakeConsumer: (() => void) | undefined;
  #wakeProducer: (() => void) | undefined;
  #lastPull = Date.now();
  #failDone!: (err: ProviderError) => void;
  #watchdog: NodeJS.Timeout | undefined;

  constructor(
    domains: DomainSet,
    domain: string,
    childKey: string,
    size: number | undefined,
    highWaterBytes: number,
    released?: (chunk: Uint8Array) => void,
    /** PutOptions.bulk of the child put: a write's own; rebuilt fragments (repair) are bulk. */
    bulk = true
  ) {
    this.#domains = domains;
    this.domain = domain;
    this.childKey = childKey;
    this.#highWater = highWaterBytes;
    const failed = new Promise<never>((_, reject) => (this.#failDone = reject));
    failed.catch(() => undefined);
    const put = domains.call(
      domain,
      `put ${childKey}`,
      async (p, { signal }) => {
        try {
          return await p.put(childKey, this.#body(), { contentLength: size, signal, bulk, ...(released ? { released } : {}) });
        } catch (err) {
          // Failed from this side first (the client's body broke, a sibling fragment's write
          // gave up, the watchdog, which marks the domain itself): the child only stopped
          // because its body did, which says nothing about the domain. Not counted failed.
          if (this.#error) throw new ProviderError('Aborted', `${childKey}: write abandoned: ${this.#error.message}`, { cause: err });
          throw err;
        }
      },
      Infinity
    );
    this.done = Promise.race([put, failed]);
    this.done.catch((err) => this.fail(err)).finally(() => clearInterval(this.#watchdog));
    const idle = domains.timeoutMs;
    this.#watchdog = setInterval(() => {
      if (this.#queued > 0 && Date.now() - this.#lastPull > idle) {
        const err = new ProviderError('Unavailable', `domain ${domain}: put ${childKey} took no bytes for ${idle} ms`);
        domains.markFailed(domain, err);
        this.fail(err);
      }
    }, Math.max(10, Math.min(1000, idle / 4)));
    this.#watchdog.unref?.();
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }

  async *#body(): AsyncGenerator<Uint8Array> {
    for (;;) {
      this.#lastPull = Date.now();
      if (this.#error) throw this.#error;
      const next = this.#queue.shift();
      if (next) {
        this.#queued -= next.length;
        if (this.#queued < this.#highWater) this.#wake('producer');
        yield next;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((r) => (this.#wakeConsumer = r));
    }
  }

  #wake(who: 'producer' | 'consumer'): void {
    const f = who === 'producer' ? this.#wakeProducer : this.#wakeConsumer;
    if (who === 'producer') this.#wakeProducer = undefined;
    else this.#wakeConsumer = undefined;
    f?.();
  }

  /** Queues bytes (ignored once failed). */
  push(chunk: Uint8Array): void {
    if (this.#error || chunk.length === 0) return;
    this.#queue.push(chunk);
    this.#queued += chunk.length;
    this.#wake('consumer');
  }

  /** Resolves once the queue is below the high-water mark (or the sink failed). */
  async drained(): Promise<void> {
    while (!this.#error && this.#queued >= this.#highWater) {
      await new Promise<void>((r) => (this.#wakeProducer = r));
    }
  }

  /** No more bytes: the child's body ends after the queue. */
  end(): void {
    this.#ended = true;
    this.#wake('consumer');
  }

  /** Fails the fragment: the child put is told (its body throws) and `done` rejects. */
  fail(err: unknown): void {
    if (this.#error) return;
    this.#error =
      err instanceof ProviderError ? err : new ProviderError('Io', `${this.childKey}: ${(err as Error)?.message ?? err}`);
    this.#queue = [];
    this.#queued = 0;
    clearInterval(this.#watchdog);
    this.#failDone(this.#error);
    this.#wake('consumer');
    this.#wake('producer');
  }
}
