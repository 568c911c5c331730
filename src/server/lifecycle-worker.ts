/**
 * @module The server's lifecycle worker: every `--lifecycle-interval` it carries out the S3
 * lifecycle rules of every bucket that has them (store/lifecycle.ts), through the store's
 * ordinary commits. Runs never overlap: an admin run asked for while one is going waits for
 * it, then runs. Structured logs: `lifecycle.progress` per page of a long run (at most one a
 * second), `lifecycle.run` when a run did something, `lifecycle.failed` on a failure (the
 * next run tries again). Counters for /metrics (`strata_lifecycle_*`).
 */
import type { Store } from '../store/store.js';
import type { Logger } from './log.js';
import { family } from './metrics.js';
import { runLifecycle, type LifecycleReport } from '../store/lifecycle.js';
import type { LifecycleRunner } from '../admin/lifecycle.js';

/**
 * S3 evaluates lifecycle rules about once a day and rounds expiry to midnight; an hour keeps
 * Strata within an hour of the date while a pass with nothing due costs one index page per
 * bucket with rules.
 */
export const DEFAULT_LIFECYCLE_INTERVAL_MS = 3600_000;
/** Least time between two `lifecycle.progress` lines of one run: a long run logs, a short one does not flood. */
const PROGRESS_LOG_MS = 1000;

export interface LifecycleStats {
  runs: number;
  failures: number;
  expired: number;
  versionsRemoved: number;
  markersRemoved: number;
  uploadsAborted: number;
  skippedLocked: number;
  examined: number;
}

export class LifecycleWorker implements LifecycleRunner {
  readonly stats: LifecycleStats = { runs: 0, failures: 0, expired: 0, versionsRemoved: 0, markersRemoved: 0, uploadsAborted: 0, skippedLocked: 0, examined: 0 };
  readonly #store: Store;
  readonly #log: Logger;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  /** The run in progress (or the last one): the next waits for it. */
  #chain: Promise<unknown> = Promise.resolve();
  #stopped = false;

  /** `intervalMs`: time between scheduled runs (> 0). */
  constructor(store: Store, log: Logger, opts: { intervalMs: number }) {
    if (!(opts.intervalMs > 0)) throw new RangeError('the lifecycle interval must be positive');
    this.#store = store;
    this.#log = log;
    this.#intervalMs = opts.intervalMs;
  }

  /** Schedules runs (the first after one interval). The timer does not keep the process alive. */
  start(): void {
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.runNow().then(
        () => this.#schedule(),
        () => this.#schedule() // logged and counted in #run
      );
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /**
   * One run now, after any run in progress; resolves with its report. Rejects with the
   * run's error (also logged as `lifecycle.failed` and counted).
   */
  runNow(opts: { bucket?: string } = {}): Promise<LifecycleReport> {
    const next = this.#chain.then(() => this.#run(opts));
    this.#chain = next.catch(() => undefined);
    return next;
  }

  async #run(opts: { bucket?: string }): Promise<LifecycleReport> {
    this.stats.runs++;
    let lastLog = performance.now();
    try {
      const r = await runLifecycle(this.#store.repo, {
        ...opts,
        onProgress: (p) => {
          const t = performance.now();
          if (t - lastLog < PROGRESS_LOG_MS) return;
          lastLog = t;
          this.#log.info('lifecycle.progress', { bucket: p.bucket, examined: p.examined, expired: p.report.expired, versionsRemoved: p.report.versionsRemoved });
        },
      });
      this.stats.expired += r.expired;
      this.stats.versionsRemoved += r.versionsRemoved;
      this.stats.markersRemoved += r.markersRemoved;
      this.stats.uploadsAborted += r.uploadsAborted;
      this.stats.skippedLocked += r.skippedLocked;
      this.stats.examined += r.examined;
      if (r.expired + r.versionsRemoved + r.markersRemoved + r.uploadsAborted + r.skippedLocked > 0) this.#log.info('lifecycle.run', { ...r });
      return r;
    } catch (err) {
      this.stats.failures++;
      this.#log.warn('lifecycle.failed', { error: String(err) });
      throw err;
    }
  }

  /** The worker's counters as /metrics families. */
  metrics(): string[] {
    const s = this.stats;
    return [
      ...family('strata_lifecycle_runs_total', 'counter', 'Lifecycle rule passes.', s.runs),
      ...family('strata_lifecycle_failures_total', 'counter', 'Lifecycle passes that failed.', s.failures),
      ...family('strata_lifecycle_examined_total', 'counter', 'Versions and uploads examined by lifecycle passes.', s.examined),
      ...family('strata_lifecycle_objects_expired_total', 'counter', 'Current objects expired by lifecycle rules.', s.expired),
      ...family('strata_lifecycle_versions_removed_total', 'counter', 'Noncurrent versions removed by lifecycle rules.', s.versionsRemoved),
      ...family('strata_lifecycle_markers_removed_total', 'counter', 'Expired object delete markers removed by lifecycle rules.', s.markersRemoved),
      ...family('strata_lifecycle_uploads_aborted_total', 'counter', 'Multipart uploads aborted by lifecycle rules.', s.uploadsAborted),
      ...family('strata_lifecycle_skipped_locked_total', 'counter', 'Due versions kept because Object Lock protects them.', s.skippedLocked),
    ];
  }

  /** Stops scheduling and waits for a run in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#chain;
  }
}
