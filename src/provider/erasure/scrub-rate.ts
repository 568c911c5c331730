/**
 * @module A byte-rate limiter for background maintenance (scrub, the repair worker): a token
 * bucket whose tokens are bytes, refilled at `bytesPerSec`, holding at most one second's worth.
 *
 * A caller takes the bytes it is about to read or write; take() resolves when the bucket allows
 * them. A take larger than the bucket (a 64 MiB blob under a 10 MiB/s limit) is allowed to run
 * the bucket into debt, which later takes wait out: the long-run rate holds for any blob size
 * and no single blob is refused.
 *
 * Background maintenance in a server also lets requests go first (yieldToRequests): between
 * blobs it waits for a quiet moment, for a time in proportion to the work it has just done.
 */
import { ProviderError } from '../provider.js';

/** How much unused rate a quiet limiter saves up, ms of `bytesPerSec`: one second, so a burst
 * after an idle spell is at most one second's worth of bytes on top of the rate. */
export const RATE_BURST_MS = 1000;

/** The clock and sleep the limiter uses (tests pass a fake). */
export interface RateClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Wall clock; sleep rejects with ProviderError 'Aborted' when `signal` fires. */
export const REAL_CLOCK: RateClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(new ProviderError('Aborted', 'rate-limit wait aborted'));
      const onAbort = () => {
        clearTimeout(t);
        reject(new ProviderError('Aborted', 'rate-limit wait aborted'));
      };
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export class ByteRateLimiter {
  readonly bytesPerSec: number;
  readonly #clock: RateClock;
  readonly #capacity: number;
  #tokens: number;
  #at: number;

  /** `bytesPerSec` > 0 (Infinity or 0 is refused: do not build a limiter to mean "unlimited"). */
  constructor(bytesPerSec: number, clock: RateClock = REAL_CLOCK) {
    if (!(bytesPerSec > 0) || !Number.isFinite(bytesPerSec)) throw new RangeError(`rate must be a positive number of bytes per second, not ${bytesPerSec}`);
    this.bytesPerSec = bytesPerSec;
    this.#clock = clock;
    this.#capacity = (bytesPerSec * RATE_BURST_MS) / 1000;
    this.#tokens = this.#capacity;
    this.#at = clock.now();
  }

  #refill(): void {
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#at) * this.bytesPerSec) / 1000);
    this.#at = now;
  }

  /**
   * Takes `bytes` (>= 0): waits while the bucket is in debt, then takes them (possibly into
   * debt). Concurrent takers are served in turn by the same arithmetic (each sees the debt the
   * previous ones left). Rejects with ProviderError 'Aborted' when `signal` fires while waiting;
   * the bytes are then not taken.
   */
  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      this.#refill();
      if (this.#tokens >= 0) break;
      await this.#clock.sleep(Math.ceil((-this.#tokens * 1000) / this.bytesPerSec), signal);
    }
    this.#tokens -= bytes;
  }
}

/** How often yieldToRequests looks whether the requests have stopped, ms. */
export const QUIET_POLL_MS = 25;

/** What background maintenance is told about the requests around it. */
export interface RequestLoad {
  /** True while requests are being served (or one ended moments ago: more are likely). */
  busy(): boolean;
  /** Ms of waiting allowed per ms of maintenance work done since the last wait: under a
   * constant load maintenance keeps about 1 / (1 + waitPerWork) of the time, whatever its
   * blobs' sizes, so it slows down but never stops. */
  waitPerWork: number;
  /** Most ms one wait lasts. */
  maxWaitMs: number;
}

/**
 * Waits while `load.busy()` says requests are being served, looking every QUIET_POLL_MS, for at
 * most `load.waitPerWork` times `workedMs` (the maintenance work done since the last wait) and
 * at most `load.maxWaitMs`. Resolves with the ms waited (the sleeps' sum). Rejects with
 * ProviderError 'Aborted' when `signal` fires.
 */
export async function yieldToRequests(load: RequestLoad, workedMs: number, clock: RateClock = REAL_CLOCK, signal?: AbortSignal): Promise<number> {
  // Counted in the sleeps asked for, not read off the clock: a clock stepped back while
  // waiting can neither stretch the wait nor make it negative.
  const limit = Math.min(load.maxWaitMs, Math.max(0, workedMs) * load.waitPerWork);
  let waited = 0;
  while (waited < limit && load.busy()) {
    const ms = Math.min(QUIET_POLL_MS, limit - waited);
    await clock.sleep(ms, signal);
    waited += ms;
  }
  return waited;
}
