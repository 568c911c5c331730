/**
 * @module A provider wrapper that injects faults, for tests of what sits above.
 *
 * Driven by a seeded PRNG, each call may be delayed, fail before reaching the inner
 * provider ('Unavailable' or 'Io'), and — for puts — fail *after* the inner put
 * succeeded (an ambiguous outcome: the blob is there, the caller was told it is
 * not), or — for gets — return a body that errors midway. It never reports success
 * for a call whose inner call failed: inner errors pass through unchanged.
 *
 * Decisions depend only on the seed and the order in which calls are made: every
 * call draws the same number of random values, synchronously, when it is invoked.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { discardBody } from './body.js';
import {
  ProviderError,
  type BlobBody,
  type BlobInfo,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type Provider,
  type PutOptions,
} from './provider.js';

export type FaultyOperation = 'put' | 'get' | 'head' | 'list' | 'delete';

export interface FaultOptions {
  seed: number;
  /** Probability that a call fails without reaching the inner provider. */
  failBefore?: number;
  /** Probability that a put fails after the inner put succeeded (ambiguous outcome). */
  failAfterPut?: number;
  /** Probability that a get's body errors after a random share of its bytes. */
  truncateGet?: number;
  /** Probability that a call is delayed, by up to maxDelayMs. */
  delay?: number;
  /** Longest injected delay, ms (default 20). */
  maxDelayMs?: number;
  /** Share of injected failures that are 'Io' rather than 'Unavailable' (default 0.25). */
  ioShare?: number;
  /** Operations subject to faults (default all). `close` never is. */
  operations?: readonly FaultyOperation[];
}

export type FaultKind = 'delay' | 'fail-before' | 'fail-after' | 'truncate';

export interface FaultRecord {
  /** Index of the call (0 = first call made on this wrapper). */
  call: number;
  op: FaultyOperation;
  key?: string;
  fault: FaultKind;
  /** Error code injected, or the delay in ms, or the byte offset of a truncation. */
  detail: string | number;
}

/** mulberry32: tiny seeded PRNG with a 2^32 period, plenty for fault schedules. */
function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The random draws of one call, taken together so the schedule ignores timing. */
interface Draw {
  delayMs: number;
  failBefore: boolean;
  io: boolean;
  /** Compared with failAfterPut (puts) or truncateGet (gets). */
  afterRoll: number;
  /** Where a truncation cuts, as a share of the body. */
  cutShare: number;
}

/**
 * Errors after `cut` bytes, passing earlier bytes through with backpressure. (A
 * consumer may see fewer than `cut` bytes: what is still buffered when the error
 * fires is dropped, as with a real connection that dies.)
 */
class Truncate extends Transform {
  #left: number;
  readonly #message: string;
  constructor(cut: number, message: string) {
    super();
    this.#left = cut;
    this.#message = message;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (chunk.length < this.#left) {
      this.#left -= chunk.length;
      return done(null, chunk);
    }
    if (this.#left > 0) this.push(chunk.subarray(0, this.#left));
    this.#left = 0;
    done(new ProviderError('Io', this.#message));
  }
}

export class FaultyProvider implements Provider {
  readonly kind: string;
  readonly #inner: Provider;
  readonly #options: Required<Omit<FaultOptions, 'operations'>> & {
    operations: ReadonlySet<FaultyOperation>;
  };
  readonly #random: () => number;
  #calls = 0;
  /** Every fault injected so far, in call order. */
  readonly faults: FaultRecord[] = [];
  /** When false, calls pass straight through (draws are still taken, keeping the schedule). */
  enabled = true;

  constructor(inner: Provider, options: FaultOptions) {
    this.#inner = inner;
    this.kind = `faulty(${inner.kind})`;
    this.#options = {
      seed: options.seed,
      failBefore: options.failBefore ?? 0,
      failAfterPut: options.failAfterPut ?? 0,
      truncateGet: options.truncateGet ?? 0,
      delay: options.delay ?? 0,
      maxDelayMs: options.maxDelayMs ?? 20,
      ioShare: options.ioShare ?? 0.25,
      operations: new Set(options.operations ?? ['put', 'get', 'head', 'list', 'delete']),
    };
    this.#random = mulberry32(options.seed);
  }

  get capabilities() {
    return this.#inner.capabilities;
  }

  #draw(): Draw {
    const r = Array.from({ length: 6 }, () => this.#random());
    const o = this.#options;
    return {
      delayMs: r[0] < o.delay ? Math.round(r[1] * o.maxDelayMs) : 0,
      failBefore: r[2] < o.failBefore,
      io: r[3] < o.ioShare,
      afterRoll: r[4],
      cutShare: r[5],
    };
  }

  /** Applies delay and fail-before; returns the draw for operation-specific faults, or undefined when off. */
  async #enter(
    op: FaultyOperation,
    key?: string
  ): Promise<{ call: number; draw: Draw } | undefined> {
    const call = this.#calls++;
    const draw = this.#draw();
    if (!this.enabled || !this.#options.operations.has(op)) return undefined;
    if (draw.delayMs > 0) {
      this.faults.push({ call, op, key, fault: 'delay', detail: draw.delayMs });
      await sleep(draw.delayMs);
    }
    if (draw.failBefore) {
      const code = draw.io ? 'Io' : 'Unavailable';
      this.faults.push({ call, op, key, fault: 'fail-before', detail: code });
      throw new ProviderError(
        code,
        `${op}${key === undefined ? '' : ` ${key}`}: injected failure (call ${call})`
      );
    }
    return { call, draw };
  }

  async put(key: string, body: BlobBody, options?: PutOptions): Promise<BlobInfo> {
    let entered;
    try {
      entered = await this.#enter('put', key);
    } catch (err) {
      discardBody(body); // failed "after writing nothing"
      throw err;
    }
    const info = await this.#inner.put(key, body, options);
    if (entered && entered.draw.afterRoll < this.#options.failAfterPut) {
      this.faults.push({
        call: entered.call,
        op: 'put',
        key,
        fault: 'fail-after',
        detail: 'Unavailable',
      });
      throw new ProviderError(
        'Unavailable',
        `put ${key}: injected failure after the put was applied (call ${entered.call})`
      );
    }
    return info;
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const entered = await this.#enter('get', key);
    const result = await this.#inner.get(key, options);
    if (!entered || result.length === 0 || entered.draw.afterRoll >= this.#options.truncateGet)
      return result;
    const cut = Math.floor(entered.draw.cutShare * result.length);
    this.faults.push({ call: entered.call, op: 'get', key, fault: 'truncate', detail: cut });
    const body = result.body.pipe(
      new Truncate(cut, `get ${key}: injected truncation after ${cut} bytes (call ${entered.call})`)
    );
    body.on('error', () => result.body.destroy());
    body.on('close', () => result.body.destroy());
    return { ...result, body };
  }

  async head(key: string): Promise<BlobInfo> {
    await this.#enter('head', key);
    return this.#inner.head(key);
  }

  async list(options?: ListOptions): Promise<ListPage> {
    await this.#enter('list');
    return this.#inner.list(options);
  }

  async delete(key: string): Promise<void> {
    await this.#enter('delete', key);
    return this.#inner.delete(key);
  }

  async close(): Promise<void> {
    await this.#inner.close();
  }
}

/** Wraps `inner` with seeded fault injection (see module doc). */
export function createFaultyProvider(inner: Provider, options: FaultOptions): FaultyProvider {
  return new FaultyProvider(inner, options);
}
