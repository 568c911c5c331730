/**
 * @module Admission control for in-flight write bytes (the pending budget).
 *
 * Every write reserves the bytes it will hold in memory (a packed body: its whole size; a
 * carrier: one segment) before it reads its body or touches the provider. A reservation
 * that would exceed the budget is refused at once with StoreError 'SlowDown' (the S3
 * layer answers 503 SlowDown + Retry-After): the caller retries later, nothing was written.
 * A GET, which writes nothing and whose client may not retry (a browser on a presigned URL),
 * may instead wait a bounded time for room (`reserveWithin`): waiters are served in order as
 * reservations are released, and refused when their wait runs out.
 *
 * Work that buffers while it walks history holds a BudgetHold (below): a ListObjectVersions
 * page, an as-of listing page and a history page (their entries, until built), a restore batch (its planned
 * records, until committed). Expiry and GC reserve their own buffers (expiry.ts, gc*.ts).
 */
import { StoreError } from './errors.js';

/** What a refused writer is told to wait, seconds: short, as SDK v3 caps its own wait at
 * its backoff + 5 s and botocore ignores the hint anyway. */
export const RETRY_AFTER_SECONDS = 1;

/** How long a request that may wait (a GET) waits for room before 503 SlowDown, ms. */
export const BUDGET_WAIT_MS = 2_000;
/** At most this many requests wait for room at once; more are refused at once. */
export const MAX_BUDGET_WAITERS = 256;

interface Waiter {
  readonly bytes: number;
  readonly grant: (release: () => void) => void;
}

export class PendingBudget {
  readonly limit: number;
  #used = 0;
  #peak = 0;
  refusals = 0;
  /** Requests waiting for room (reserveWithin), oldest first. */
  readonly #waiters: Waiter[] = [];

  constructor(limitBytes: number) {
    this.limit = limitBytes;
  }

  get used(): number {
    return this.#used;
  }

  get peak(): number {
    return this.#peak;
  }

  /**
   * Throws StoreError 'SlowDown' (counted as a refusal) if `bytes` more would not fit now;
   * reserves nothing (admission at request entry; `reserve` checks again).
   */
  check(bytes: number): void {
    if (this.#used + bytes > this.limit) throw this.#refusal(bytes, '');
  }

  /** Requests waiting for room now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /**
   * Reserves `bytes`, waiting up to `waitMs` for reservations to be released if they do not
   * fit now, and resolves to their release. Waiters are served oldest first; one that cannot
   * fit even in an empty budget, one past MAX_BUDGET_WAITERS and one whose wait runs out are
   * refused with StoreError 'SlowDown' (counted); an aborted one (its client went away) is
   * rejected with the signal's reason and not counted. Nothing is reserved unless it resolves.
   */
  reserveWithin(bytes: number, waitMs: number, signal?: AbortSignal): Promise<() => void> {
    if (this.#waiters.length === 0 && this.#used + bytes <= this.limit) return Promise.resolve(this.#take(bytes));
    if (bytes > this.limit || this.#waiters.length >= MAX_BUDGET_WAITERS || waitMs <= 0) return Promise.reject(this.#refusal(bytes, ''));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
      };
      const onAbort = () => {
        settle();
        reject(signal!.reason);
        // The head may have been the one blocking those behind it.
        this.#drain();
      };
      const waiter: Waiter = {
        bytes,
        grant: (release) => {
          settle();
          resolve(release);
        },
      };
      const timer = setTimeout(() => {
        settle();
        reject(this.#refusal(bytes, ` after waiting ${waitMs} ms`));
        this.#drain();
      }, waitMs);
      timer.unref?.();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /**
   * Reserves `bytes` and returns the function that releases them (idempotent). Throws
   * StoreError 'SlowDown' without reserving anything if the budget would be exceeded.
   */
  reserve(bytes: number): () => void {
    this.check(bytes);
    return this.#take(bytes);
  }

  /**
   * Reserves `bytes` if the use stays within `ceiling` bytes (default: the limit) and
   * returns their release; undefined (nothing reserved, no refusal counted) if not. For
   * optional memory a write can do without (worker hashing's slabs: store/carrier-slabs.ts),
   * which a ceiling below the limit keeps from crowding out the writes that need it.
   */
  tryReserve(bytes: number, ceiling = this.limit): (() => void) | undefined {
    return this.#used + bytes > Math.min(ceiling, this.limit) ? undefined : this.#take(bytes);
  }

  #take(bytes: number): () => void {
    this.#used += bytes;
    if (this.#used > this.#peak) this.#peak = this.#used;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#used -= bytes;
      if (this.#waiters.length > 0) this.#drain();
    };
  }

  /** Grants waiters, oldest first, while the oldest fits. */
  #drain(): void {
    for (let w = this.#waiters[0]; w !== undefined && this.#used + w.bytes <= this.limit; w = this.#waiters[0]) {
      w.grant(this.#take(w.bytes));
    }
  }

  #refusal(bytes: number, waited: string): StoreError {
    this.refusals++;
    return new StoreError(
      'SlowDown',
      `pending budget (bytes held by requests in flight) exhausted${waited}: ${this.#used} of ${this.limit} bytes in flight, ${bytes} more requested`,
      { retryAfterSeconds: RETRY_AFTER_SECONDS }
    );
  }
}

/**
 * Bytes a page or batch holds while it grows (a ListObjectVersions page, a restore batch),
 * charged to `budget` piece by piece and released together. `tryAdd` refuses without throwing
 * (the caller ends its page early); `add` throws StoreError 'SlowDown'.
 */
export class BudgetHold {
  readonly #budget: PendingBudget;
  readonly #releases: (() => void)[] = [];
  held = 0;

  constructor(budget: PendingBudget) {
    this.#budget = budget;
  }

  /** Reserves `bytes` more; throws StoreError 'SlowDown' (nothing reserved) if they do not fit. */
  add(bytes: number): void {
    this.#releases.push(this.#budget.reserve(bytes));
    this.held += bytes;
  }

  /** Reserves `bytes` more and returns true, or returns false (a refusal is counted) if they do not fit. */
  tryAdd(bytes: number): boolean {
    try {
      this.add(bytes);
      return true;
    } catch (err) {
      if (err instanceof StoreError && err.code === 'SlowDown') return false;
      throw err;
    }
  }

  /** Releases everything held (idempotent). */
  release(): void {
    for (const r of this.#releases.splice(0)) r();
    this.held = 0;
  }
}
