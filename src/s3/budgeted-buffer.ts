/**
 * @module A byte buffer for small request bodies (XML documents) that grows as bytes
 * arrive and charges the pending budget before every allocation: a client that announces
 * 8 MiB and sends nothing holds nothing, and what a body holds is what it sent (at most
 * twice that, rounded up to {@link INITIAL_BYTES}), however it is fragmented.
 */
import { S3Error } from './errors.js';

/** First allocation, in bytes: most XML bodies (tagging, CORS, small deletes) fit. */
export const INITIAL_BYTES = 16 * 1024;

/** Reserves bytes and returns their release; throws to refuse (the pending budget). */
export type Reserve = (bytes: number) => () => void;

export class BudgetedBuffer {
  readonly #reserve: Reserve;
  readonly #max: number;
  readonly #limitError: () => Error;
  #buf = new Uint8Array(0);
  #release: () => void = () => undefined;
  #length = 0;
  #released = false;

  /**
   * `max`: the most bytes it may ever hold; appending past it throws `limitError()` (the
   * caller's S3 error, e.g. MaxMessageLengthExceeded). Nothing is reserved yet.
   */
  constructor(reserve: Reserve, max: number, limitError: () => Error) {
    if (!Number.isSafeInteger(max) || max < 0) throw new RangeError('max must be a non-negative integer');
    this.#reserve = reserve;
    this.#max = max;
    this.#limitError = limitError;
  }

  get length(): number {
    return this.#length;
  }

  /** Bytes currently reserved (the allocated capacity). */
  get reserved(): number {
    return this.#released ? 0 : this.#buf.length;
  }

  /**
   * Copies `bytes` in (the caller may reuse them). Grows by doubling, capped at `max`: the
   * new capacity is reserved before it is allocated and the old one released only after
   * the copy, so the budget always covers both while both exist. Throws `limitError()`
   * past `max`, or whatever the reservation throws (StoreError SlowDown); the buffer is
   * unchanged then. Throws Error after {@link release}.
   */
  append(bytes: Uint8Array): void {
    if (this.#released) throw new Error('BudgetedBuffer used after release');
    const need = this.#length + bytes.length;
    if (need > this.#max) throw this.#limitError();
    if (need > this.#buf.length) {
      const capacity = Math.min(this.#max, Math.max(need, INITIAL_BYTES, 2 * this.#buf.length));
      const release = this.#reserve(capacity);
      const next = new Uint8Array(capacity);
      next.set(this.#buf.subarray(0, this.#length));
      this.#release();
      this.#buf = next;
      this.#release = release;
    }
    this.#buf.set(bytes, this.#length);
    this.#length = need;
  }

  /** The bytes appended so far: a view, valid until {@link release}. */
  bytes(): Uint8Array {
    return this.#buf.subarray(0, this.#length);
  }

  /** Releases the reservation and drops the bytes. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#release();
    this.#buf = new Uint8Array(0);
    this.#length = 0;
  }
}
