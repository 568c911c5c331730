/**
 * @module Admission control for in-flight write bytes (the pending budget).
 *
 * Every write reserves the bytes it will hold in memory (a packed body: its whole size; a
 * carrier: one segment) before it reads its body or touches the provider. A reservation
 * that would exceed the budget is refused at once with StoreError 'SlowDown' (the S3
 * layer answers 503 SlowDown + Retry-After): the caller retries later, nothing was written.
 *
 * Work that buffers while it walks history holds a BudgetHold (below): a ListObjectVersions
 * page, an as-of listing page and a history page (their entries, until built), a restore batch (its planned
 * records, until committed). Expiry and GC reserve their own buffers (expiry.ts, gc*.ts).
 */
import { StoreError } from './errors.js';

/** What a refused writer is told to wait, seconds: short, as SDK v3 caps its own wait at
 * its backoff + 5 s and botocore ignores the hint anyway. */
export const RETRY_AFTER_SECONDS = 1;

export class PendingBudget {
  readonly limit: number;
  #used = 0;
  #peak = 0;
  refusals = 0;

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
    if (this.#used + bytes > this.limit) {
      this.refusals++;
      throw new StoreError(
        'SlowDown',
        `pending budget (bytes held by requests in flight) exhausted: ${this.#used} of ${this.limit} bytes in flight, ${bytes} more requested`,
        { retryAfterSeconds: RETRY_AFTER_SECONDS }
      );
    }
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
    };
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
