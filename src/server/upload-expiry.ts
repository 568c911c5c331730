/**
 * @module The server's expiry worker: every sweep interval it aborts the multipart uploads in
 * progress older than the configured age and drops completion records as old (S3's
 * AbortIncompleteMultipartUpload with one age for every bucket), through the store's ordinary
 * commits (store/upload-expiry.ts). One structured log line per sweep that expired something
 * (`uploads.expired`), a warning per failed sweep, and counters for /metrics.
 */
import type { Store } from '../store/store.js';
import type { Logger } from './log.js';

/** S3 lifecycle rules count AbortIncompleteMultipartUpload in days; a week is what AWS suggests. */
export const DEFAULT_UPLOAD_EXPIRY_MS = 7 * 24 * 3600_000;
/**
 * Sweeps are one seek per bucket when nothing is due, so every 10 minutes costs nothing, and
 * an expired upload lingers at most that long past its age.
 */
export const DEFAULT_UPLOAD_SWEEP_MS = 10 * 60_000;
/** Pause before the next sweep when one sweep could not take everything due. */
const CATCH_UP_MS = 10;

export interface UploadExpiryStats {
  sweeps: number;
  failures: number;
  aborted: number;
  completionsDropped: number;
}

export class UploadExpiryWorker {
  readonly stats: UploadExpiryStats = { sweeps: 0, failures: 0, aborted: 0, completionsDropped: 0 };
  readonly #store: Store;
  readonly #log: Logger;
  readonly #maxAgeMs: number;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  /** `maxAgeMs`: upload / completion age that expires it; `intervalMs`: time between sweeps. */
  constructor(store: Store, log: Logger, opts: { maxAgeMs: number; intervalMs: number }) {
    if (!(opts.maxAgeMs > 0) || !(opts.intervalMs > 0)) throw new RangeError('upload expiry age and sweep interval must be positive');
    this.#store = store;
    this.#log = log;
    this.#maxAgeMs = opts.maxAgeMs;
    this.#intervalMs = opts.intervalMs;
  }

  /** Schedules sweeps (the first after one interval). The timer does not keep the process alive. */
  start(): void {
    this.#schedule(this.#intervalMs);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.sweep().then((more) => {
        this.#running = undefined;
        this.#schedule(more ? CATCH_UP_MS : this.#intervalMs);
      });
    }, ms);
    this.#timer.unref();
  }

  /**
   * One sweep now; resolves true if entries were left for the next one. Never rejects: a
   * failure is logged (`uploads.expiry_failed`) and counted, and the next sweep tries again.
   */
  async sweep(): Promise<boolean> {
    const started = performance.now();
    this.stats.sweeps++;
    try {
      const r = await this.#store.expireUploads({ maxAgeMs: this.#maxAgeMs });
      this.stats.aborted += r.aborted;
      this.stats.completionsDropped += r.completionsDropped;
      if (r.aborted > 0 || r.completionsDropped > 0) {
        this.#log.info('uploads.expired', {
          aborted: r.aborted,
          completionsDropped: r.completionsDropped,
          chunksDeleted: r.chunksDeleted,
          maxAgeSeconds: this.#maxAgeMs / 1000,
          more: r.more,
          ms: Math.round(performance.now() - started),
        });
      }
      return r.more;
    } catch (err) {
      this.stats.failures++;
      this.#log.warn('uploads.expiry_failed', { error: String(err) });
      return false;
    }
  }

  /** Stops scheduling and waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
