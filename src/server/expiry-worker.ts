/**
 * @module The server's history expiry worker: every interval it runs the store's retention
 * expiry (store/expiry.ts expireHistory) over every bucket, through ordinary commits, with
 * structured log lines (`history.expiry_progress` per committed batch, `history.expired` per
 * run with totals, `history.expiry_failed` on failure) and counters for /metrics
 * (`strata_expiry_*`). A run asked for now (the admin endpoint) shares the same counters.
 */
import type { Store } from '../store/store.js';
import type { ExpiryReport, HistoryExpiryOptions } from '../store/expiry.js';
import type { Logger } from './log.js';

/**
 * Between runs: an hour. A run walks every bucket's version log, so its cost grows with the
 * retained history; entries outlive their window by at most this long.
 */
export const DEFAULT_EXPIRY_INTERVAL_MS = 3_600_000;

export interface ExpiryWorkerStats {
  runs: number;
  failures: number;
  /** Version log entries examined / dropped, and the bytes dropped, over every run. */
  examined: number;
  expired: number;
  bytes: number;
  /** Duration of the last run, ms. */
  lastMs: number;
}

/** What the admin API shows of the worker: a run in progress, and the last one's outcome. */
export interface ExpiryStatus {
  running: boolean;
  /** The run in progress: when it started, its bucket filter, its progress so far. */
  current?: { started: string; bucket?: string; examined: number; expired: number; bytes: number; at?: string };
  /** The last finished run: its report, or its error. */
  last?: { finished: string; report?: ExpiryReport; error?: { code: string; message: string } };
}

export class ExpiryWorker {
  readonly stats: ExpiryWorkerStats = { runs: 0, failures: 0, examined: 0, expired: 0, bytes: 0, lastMs: 0 };
  readonly #store: Store;
  readonly #log: Logger;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;
  #current: ExpiryStatus['current'] | undefined;
  #last: ExpiryStatus['last'] | undefined;
  /** The run in progress (scheduled or asked for): runs never overlap. */
  #inFlight: Promise<ExpiryReport> | undefined;

  /** `intervalMs`: time between runs; 0 never schedules one (runNow still works). */
  constructor(store: Store, log: Logger, opts: { intervalMs: number }) {
    if (!Number.isSafeInteger(opts.intervalMs) || opts.intervalMs < 0) throw new RangeError('the expiry interval is a non-negative integer of ms');
    this.#store = store;
    this.#log = log;
    this.#intervalMs = opts.intervalMs;
  }

  /** Schedules runs (the first after one interval) unless the interval is 0. The timer does not keep the process alive. */
  start(): void {
    if (this.#intervalMs > 0) this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      const p = this.runNow().catch(() => undefined);
      this.#running = p;
      void p.then(() => {
        if (this.#running === p) this.#running = undefined;
        this.#schedule();
      });
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /**
   * One run now (of every bucket, or `opts.bucket`), logged and counted. Rejects with what
   * expireHistory throws (StoreError 'NoSuchBucket' for a missing bucket), after logging it.
   */
  async runNow(opts: Pick<HistoryExpiryOptions, 'bucket' | 'onProgress'> = {}): Promise<ExpiryReport> {
    while (this.#inFlight) await this.#inFlight.catch(() => undefined);
    const run = this.#run(opts);
    this.#inFlight = run;
    try {
      return await run;
    } finally {
      if (this.#inFlight === run) this.#inFlight = undefined;
    }
  }

  /**
   * Starts a run in the background unless one is in progress (admin API), and returns the
   * status right after. Its failure is logged and kept in `last`, never thrown.
   */
  trigger(opts: Pick<HistoryExpiryOptions, 'bucket'> = {}): ExpiryStatus {
    if (!this.#inFlight) this.runNow(opts).catch(() => undefined);
    return this.status();
  }

  /** The run in progress, if any, and the last run's outcome. */
  status(): ExpiryStatus {
    const s: ExpiryStatus = { running: this.#inFlight !== undefined };
    if (this.#current) s.current = { ...this.#current };
    if (this.#last) s.last = this.#last;
    return s;
  }

  async #run(opts: Pick<HistoryExpiryOptions, 'bucket' | 'onProgress'>): Promise<ExpiryReport> {
    this.stats.runs++;
    this.#current = { started: new Date().toISOString(), ...(opts.bucket !== undefined ? { bucket: opts.bucket } : {}), examined: 0, expired: 0, bytes: 0 };
    try {
      const r = await this.#store.expireHistory({
        ...(opts.bucket !== undefined ? { bucket: opts.bucket } : {}),
        onProgress: async (p) => {
          this.#current = { ...this.#current!, examined: p.examined, expired: p.expired, bytes: p.bytes, at: p.bucket };
          if (!p.bucketDone) this.#log.info('history.expiry_progress', { bucket: p.bucket, examined: p.examined, expired: p.expired, bytes: p.bytes });
          await opts.onProgress?.(p);
        },
      });
      this.stats.examined += r.examined;
      this.stats.expired += r.expired;
      this.stats.bytes += r.bytes;
      this.stats.lastMs = r.ms;
      this.#log.info('history.expired', { buckets: r.buckets, examined: r.examined, expired: r.expired, bytes: r.bytes, skipped: r.skipped, ms: r.ms });
      this.#last = { finished: new Date().toISOString(), report: r };
      return r;
    } catch (err) {
      this.stats.failures++;
      this.#log.warn('history.expiry_failed', { error: String(err) });
      const e = err as { code?: unknown; message?: unknown };
      this.#last = { finished: new Date().toISOString(), error: { code: typeof e.code === 'string' ? e.code : 'InternalError', message: String(e.message ?? err) } };
      throw err;
    } finally {
      this.#current = undefined;
    }
  }

  /** Stops scheduling and waits for the run in progress (scheduled or asked for). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    await this.#inFlight?.catch(() => undefined);
  }
}
