/**
 * @module Heal on read, finished in the background: the erasure provider queues the keys of
 * blobs a read had to rebuild from parity (takeRepairQueue); this worker drains that queue in the
 * running server, rewriting the missing or corrupt fragments (checkBlob with repair) at a bounded
 * byte rate, so a degraded blob goes back to full redundancy without waiting for the next scrub.
 *
 * A key whose repair fails for a reason a retry may cure (a domain unavailable or timed out) is
 * tried again after a back-off, up to MAX_ATTEMPTS times; after that, or for any other failure,
 * it is logged and left to the scheduled scrub, which checks every blob anyway. A key gone by
 * the time it is repaired (GC freed it) is dropped silently.
 *
 * In a server the worker lets requests go first: after each key, while requests are being
 * served, it waits up to REPAIR_WAIT_PER_WORK times as long as that key's repair took (at most
 * REPAIR_MAX_WAIT_MS) for a moment with none (scrub-rate.ts yieldToRequests), so under a constant
 * load repairs keep about a tenth of the time (more when a repair takes over 100 ms, as that of
 * a 64 MiB chunk blob usually does: it waits only the 1 s cap, so a 300 ms repair keeps about a
 * quarter), and slow down without stopping.
 * Degraded reads queue repairs while they run, and a repair reads and checks every fragment of
 * its blob: run back to back under the rate limit, the repairs took about 15% of the throughput
 * of the degraded GETs that queued them ((10,4), 64 MiB objects, 3 runs side by side).
 */
import { ProviderError } from '../provider.js';
import type { BlobCheck, ErasureProvider } from './types.js';
import { ByteRateLimiter, REAL_CLOCK, yieldToRequests, type RateClock, type RequestLoad } from './scrub-rate.js';

/** How often the queue is looked at, ms: heal on read queues keys as reads happen, and a second
 * of delay costs nothing while it keeps an idle server idle. */
export const REPAIR_POLL_MS = 1000;
/** Default repair rate, bytes of blobs per second: a fraction of one disk's bandwidth, so repair
 * after a burst of degraded reads does not starve the requests themselves. */
export const DEFAULT_REPAIR_RATE = 64 * 2 ** 20;
/** Ms the worker may wait for requests to pause per ms of repair work (see the module note). */
export const REPAIR_WAIT_PER_WORK = 10;
/** Most ms one such wait lasts. */
export const REPAIR_MAX_WAIT_MS = 1000;
/** Tries per key for retryable failures before leaving it to the scrub. */
export const MAX_ATTEMPTS = 5;
/** Back-off after a retryable failure, ms, doubled per attempt. */
const RETRY_BASE_MS = 2000;
/** Keys held (queued or waiting to retry): past this, new keys are dropped (counted) and left to
 * the scrub, so a disaster that degrades every blob cannot grow this worker without bound. */
export const MAX_PENDING_KEYS = 100_000;

export interface RepairLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface RepairWorkerStats {
  /** Blobs checked by the worker. */
  checked: number;
  /** Blobs the worker brought back to full redundancy (fragments rewritten). */
  repaired: number;
  repairedFragments: number;
  repairBytes: number;
  /** Repairs that failed for good (left to the scrub), and keys found lost. */
  failed: number;
  lost: number;
  /** Keys dropped because MAX_PENDING_KEYS were already held. */
  dropped: number;
  /** Ms spent waiting for requests to pause (RequestLoad). */
  yieldedMs: number;
}

export class RepairWorker {
  readonly stats: RepairWorkerStats = { checked: 0, repaired: 0, repairedFragments: 0, repairBytes: 0, failed: 0, lost: 0, dropped: 0, yieldedMs: 0 };
  readonly #provider: ErasureProvider;
  readonly #log: RepairLog;
  readonly #limiter: ByteRateLimiter;
  readonly #pollMs: number;
  readonly #load: RequestLoad | undefined;
  /** Times the work and runs the waits (tests pass a fake). */
  readonly #clock: RateClock;
  /** key -> { attempts, not before (ms) }, in insertion order. */
  readonly #pending = new Map<string, { attempts: number; notBefore: number }>();
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  /** `rateBytesPerSec` defaults to DEFAULT_REPAIR_RATE; `pollMs` to REPAIR_POLL_MS; with
   * `load`, the worker waits for requests to pause between keys (see the module note); `clock`
   * (default the wall clock) times the repairs and runs the rate limit's and those waits. */
  constructor(provider: ErasureProvider, log: RepairLog, opts: { rateBytesPerSec?: number; pollMs?: number; load?: RequestLoad; clock?: RateClock } = {}) {
    this.#provider = provider;
    this.#log = log;
    this.#clock = opts.clock ?? REAL_CLOCK;
    this.#limiter = new ByteRateLimiter(opts.rateBytesPerSec ?? DEFAULT_REPAIR_RATE, this.#clock);
    this.#pollMs = opts.pollMs ?? REPAIR_POLL_MS;
    this.#load = opts.load;
  }

  /** Keys waiting for repair (queued by reads and not yet done, or waiting to retry). */
  get pending(): number {
    return this.#pending.size;
  }

  /** Starts polling the queue. The timer does not keep the process alive. */
  start(): void {
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.drain().finally(() => {
        this.#running = undefined;
        this.#schedule();
      });
    }, this.#pollMs);
    this.#timer.unref();
  }

  /**
   * Takes the provider's repair queue and repairs every key due now, one at a time under the
   * rate limit. Never rejects (failures are logged and counted). Resolves when the due keys are
   * done or the worker is stopped.
   */
  async drain(): Promise<void> {
    for (const key of this.#provider.takeRepairQueue()) {
      if (this.#pending.has(key)) continue;
      if (this.#pending.size >= MAX_PENDING_KEYS) {
        this.stats.dropped++;
        continue;
      }
      this.#pending.set(key, { attempts: 0, notBefore: 0 });
    }
    const now = Date.now();
    // Repair work done since the last wait (the first key of a drain follows an idle spell).
    let worked = 0;
    for (const [key, p] of [...this.#pending]) {
      if (this.#stopped) return;
      if (p.notBefore > now) continue;
      if (this.#load && worked > 0) {
        try {
          this.stats.yieldedMs += await yieldToRequests(this.#load, worked, this.#clock, this.#abort.signal);
        } catch {
          return; // stopped while waiting: the key stays pending
        }
      }
      worked = await this.#repair(key, p);
    }
  }

  /** Repairs `key` (see drain); resolves with the ms its check and repair took (not counting the
   * rate limit's wait after it). */
  async #repair(key: string, p: { attempts: number; notBefore: number }): Promise<number> {
    const signal = this.#abort.signal;
    const t0 = this.#clock.now();
    let c: BlobCheck;
    try {
      c = await this.#provider.checkBlob(key, { repair: true, signal });
    } catch (err) {
      this.#failed(key, p, err);
      return this.#clock.now() - t0;
    }
    const worked = this.#clock.now() - t0;
    this.#pending.delete(key);
    this.stats.checked++;
    if (c.lost) {
      this.stats.lost++;
      this.#log.warn('erasure.repair_lost', { key, fragments: c.fragments.filter((f) => f.state !== 'ok').map((f) => `${f.index}@${f.domain}:${f.state}`).join(' ') });
    } else if (c.repaired > 0) {
      this.stats.repaired++;
      this.stats.repairedFragments += c.repaired;
      this.stats.repairBytes += c.repairBytes;
      this.#log.info('erasure.repaired', { key, fragments: c.repaired, bytes: c.repairBytes });
    }
    await this.#limiter.take(c.size + c.repairBytes, signal).catch(() => undefined);
    return worked;
  }

  /** A repair of `key` that failed with `err`: dropped (gone), retried later (retryable, while
   * attempts remain), or given up on (logged, left to the scrub); kept pending when stopped. */
  #failed(key: string, p: { attempts: number; notBefore: number }, err: unknown): void {
    if (this.#abort.signal.aborted) return; // stopped: the key stays pending; the scrub covers it after a restart
    if (err instanceof ProviderError && err.code === 'NotFound') {
      this.#pending.delete(key);
      return;
    }
    p.attempts++;
    const retry = err instanceof ProviderError && err.retryable && p.attempts < MAX_ATTEMPTS;
    if (retry) {
      p.notBefore = Date.now() + RETRY_BASE_MS * 2 ** (p.attempts - 1);
      return;
    }
    this.#pending.delete(key);
    this.stats.failed++;
    this.#log.warn('erasure.repair_failed', { key, attempts: p.attempts, error: String(err) });
  }

  /** Stops polling, aborts a repair in progress (its fragments are written whole or not at all
   * by the provider) and waits for it. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort.abort();
    await this.#running;
  }
}
