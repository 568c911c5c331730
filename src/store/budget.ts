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
import { ownerText } from '../provider/provider.js';

// The S3 layer names identities as the store and the providers do, without importing providers.
export { ownerText };

/** What a refused writer is told to wait, seconds: short, as SDK v3 caps its own wait at
 * its backoff + 5 s and botocore ignores the hint anyway. */
export const RETRY_AFTER_SECONDS = 1;

/** How long a request that may wait (a GET) waits for room before 503 SlowDown, ms. */
export const BUDGET_WAIT_MS = 2_000;
/** At most this many requests wait for room at once; more are refused at once. */
export const MAX_BUDGET_WAITERS = 256;

/**
 * What a request reserves from: the whole budget (PendingBudget itself), or the share of it one
 * access key may hold (BudgetShares below). Same contract as PendingBudget's methods.
 */
export interface BudgetAccount {
  /** The identity whose share this is (an access key; '' anonymous); undefined: the whole budget. */
  readonly owner?: string;
  /** Most bytes it can ever grant one reservation (a larger one is refused, however long it waits). */
  readonly limit: number;
  readonly waiting: number;
  check(bytes: number): void;
  reserve(bytes: number): () => void;
  tryReserve(bytes: number, upTo?: number): (() => void) | undefined;
  reserveWithin(bytes: number, waitMs: number, signal?: AbortSignal): Promise<() => void>;
}

interface Waiter {
  readonly bytes: number;
  readonly grant: (release: () => void) => void;
}

export class PendingBudget implements BudgetAccount {
  readonly limit: number;
  #used = 0;
  #peak = 0;
  refusals = 0;
  /** Requests waiting for room (reserveWithin), oldest first. */
  readonly #waiters: Waiter[] = [];

  /** What refusals call this budget. */
  readonly #what: string;

  constructor(limitBytes: number, what = 'pending budget (bytes held by requests in flight)') {
    this.limit = limitBytes;
    this.#what = what;
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
   * Reserves `bytes` if the use stays within `upTo` (a share, 0-1; default 1) of the limit and
   * returns their release; undefined (nothing reserved, no refusal counted) if not. For
   * optional memory a write can do without (worker hashing's slabs: store/carrier-slabs.ts),
   * which a share below 1 keeps from crowding out the writes that need it.
   */
  tryReserve(bytes: number, upTo = 1): (() => void) | undefined {
    return this.#used + bytes > this.limit * Math.min(1, upTo) ? undefined : this.#take(bytes);
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
      `${this.#what} exhausted${waited}: ${this.#used} of ${this.limit} bytes in flight, ${bytes} more requested`,
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
  readonly #budget: BudgetAccount;
  readonly #releases: (() => void)[] = [];
  held = 0;

  constructor(budget: BudgetAccount) {
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

/** One request's hold on its identity's share (BudgetShares.enter); `leave` when it ends. */
export interface ShareTicket {
  account: BudgetAccount;
  leave(): void;
}

/**
 * Per-access-key shares of a PendingBudget: the requests of one identity (an access key, or all
 * anonymous requests together) may hold at most `cap` bytes of it at once, so a client holding a
 * valid key cannot take the whole budget with many slow uploads or large GETs and leave every
 * other key's requests refused (s3/key-share.ts sets this up per request). Each identity's
 * share is a PendingBudget of its own, taken before the shared one and with the same rules: a
 * write past the share is refused at once with StoreError 'SlowDown' (503 + Retry-After); a GET
 * waits for room in its share (its identity's other requests releasing theirs), then for room
 * in the whole budget, within the one wait it is allowed.
 */
export class BudgetShares {
  readonly budget: PendingBudget;
  /** Bytes one identity may hold. */
  readonly cap: number;
  readonly #accounts = new Map<string, ShareAccount>();
  /** Refusals counted by accounts since dropped. */
  #retiredRefusals = 0;

  constructor(budget: PendingBudget, cap: number) {
    if (!Number.isSafeInteger(cap) || cap < 1) throw new RangeError(`budget share must be a positive whole number of bytes, not ${cap}`);
    this.budget = budget;
    this.cap = Math.min(cap, budget.limit);
  }

  /** Reservations refused because their identity held its share. */
  get refusals(): number {
    let n = this.#retiredRefusals;
    for (const a of this.#accounts.values()) n += a.share.refusals;
    return n;
  }

  /** Identities holding a request or bytes now. */
  get identities(): number {
    return this.#accounts.size;
  }

  /** Bytes `id` holds now. */
  used(id: string): number {
    return this.#accounts.get(id)?.share.used ?? 0;
  }

  /** Requests of `id` in flight now (entered, not left). */
  requests(id: string): number {
    return this.#accounts.get(id)?.requests ?? 0;
  }

  /**
   * The account of `id` for one request: its reservations count against `id`'s share until
   * released. Call `leave` when the request ends (reservations it made may outlive it: they
   * still count until released).
   */
  enter(id: string): ShareTicket {
    let a = this.#accounts.get(id);
    if (!a) this.#accounts.set(id, (a = new ShareAccount(this, id)));
    a.requests++;
    let left = false;
    const account = a;
    return {
      account,
      leave: () => {
        if (left) return;
        left = true;
        account.requests--;
        this.forget(account);
      },
    };
  }

  /** Drops `a` once it holds nothing, waits for nothing and serves no request (an identity that
   * comes back gets a new one). */
  forget(a: ShareAccount): void {
    if (a.requests === 0 && a.share.used === 0 && a.share.waiting === 0 && this.#accounts.get(a.owner) === a) {
      this.#accounts.delete(a.owner);
      this.#retiredRefusals += a.share.refusals;
    }
  }
}

/** One identity's account: its share (a PendingBudget of `cap` bytes), then the shared budget. */
class ShareAccount implements BudgetAccount {
  readonly #shares: BudgetShares;
  readonly owner: string;
  readonly share: PendingBudget;
  requests = 0;

  constructor(shares: BudgetShares, owner: string) {
    this.#shares = shares;
    this.owner = owner;
    this.share = new PendingBudget(shares.cap, `the share of the pending budget one access key may hold (--key-share), for ${ownerText(owner)},`);
  }

  /** The share's size, which BudgetShares caps at the whole budget's. */
  get limit(): number {
    return this.share.limit;
  }

  get waiting(): number {
    return this.share.waiting + this.#shares.budget.waiting;
  }

  check(bytes: number): void {
    this.share.check(bytes);
    this.#shares.budget.check(bytes);
  }

  reserve(bytes: number): () => void {
    const own = this.share.reserve(bytes);
    try {
      return this.#both(own, this.#shares.budget.reserve(bytes));
    } catch (err) {
      this.#release(own);
      throw err;
    }
  }

  tryReserve(bytes: number, upTo?: number): (() => void) | undefined {
    // The same share of the identity's share as of the whole: optional memory never crowds out
    // the identity's own writes either.
    const own = this.share.tryReserve(bytes, upTo);
    if (!own) return undefined;
    const shared = this.#shares.budget.tryReserve(bytes, upTo);
    if (shared) return this.#both(own, shared);
    this.#release(own);
    return undefined;
  }

  async reserveWithin(bytes: number, waitMs: number, signal?: AbortSignal): Promise<() => void> {
    const deadline = performance.now() + waitMs;
    let own: () => void;
    try {
      own = await this.share.reserveWithin(bytes, waitMs, signal);
    } catch (err) {
      this.#shares.forget(this);
      throw err;
    }
    try {
      return this.#both(own, await this.#shares.budget.reserveWithin(bytes, Math.max(0, deadline - performance.now()), signal));
    } catch (err) {
      this.#release(own);
      throw err;
    }
  }

  #release(own: () => void): void {
    own();
    this.#shares.forget(this);
  }

  /** One release for both reservations, which also drops the account once it holds nothing. */
  #both(own: () => void, shared: () => void): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      shared();
      this.#release(own);
    };
  }
}
