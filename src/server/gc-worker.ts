/**
 * @module The server's GC schedule: every `--gc-interval` (default 1 h; 0 turns it off) one
 * garbage-collection pass (store/gc.ts: mark from the durable anchor, pack cleaning, sweep after
 * the grace) — the same pass `POST /_strata/admin/v1/gc` and `strata gc` run. One
 * structured log line per pass (`gc` from the repository, `gc.pass` here with the throughput),
 * a warning per failed pass, and the strata_gc_* metrics (gcMetrics).
 */
import type { Store } from '../store/store.js';
import type { Logger } from './log.js';
import { gcStats, runGc, DEFAULT_GRACE_MS } from '../store/gc.js';

/** Once an hour: GC's grace is an hour too, so an unreachable blob goes within about two. */
export const DEFAULT_GC_INTERVAL_MS = 60 * 60 * 1000;

export class GcWorker {
  readonly #store: Store;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #graceMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  /** `intervalMs` between passes (> 0); `graceMs` as runGc's (default DEFAULT_GRACE_MS). */
  constructor(store: Store, log: Logger, opts: { intervalMs: number; graceMs?: number }) {
    if (!(opts.intervalMs > 0)) throw new RangeError('the GC interval must be positive (0 means: do not start a worker)');
    this.#store = store;
    this.#log = log;
    this.#intervalMs = opts.intervalMs;
    this.#graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
  }

  /** Schedules passes (the first after one interval). The timer does not keep the process alive. */
  start(): void {
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.pass().then(() => {
        this.#running = undefined;
        this.#schedule();
      });
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** One pass now. Never rejects: a failure is logged (`gc.pass_failed`) and counted by runGc. */
  async pass(): Promise<void> {
    try {
      // No forced checkpoint: the repository writes them by itself as commits accumulate, and a
      // forced one waits for a quiet moment, which a busy server may not have for long.
      const r = await runGc(this.#store.repo, { graceMs: this.#graceMs });
      const secs = Math.max(r.ms, 1) / 1000;
      this.#log.info('gc.pass', {
        examinedBlobs: r.examinedBlobs,
        freedBlobs: r.freedBlobs,
        freedBytes: r.freedBytes,
        pendingBlobs: r.pendingBlobs,
        cleanedPacks: r.cleanedPacks,
        ...(r.deferredPacks ? { deferredPacks: r.deferredPacks } : {}),
        movedBytes: r.movedBytes,
        blobsPerSecond: Math.round(r.examinedBlobs / secs),
        bytesPerSecond: Math.round(r.examinedBytes / secs),
        ms: r.ms,
      });
    } catch (err) {
      this.#log.warn('gc.pass_failed', { error: String(err) });
    }
  }

  /** Stops scheduling and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}

/** The strata_gc_* metric values of `store` (every pass: schedule, admin, CLI through the server). */
export function gcMetricValues(store: Store): { name: string; type: 'counter' | 'gauge'; help: string; value: number }[] {
  const s = gcStats(store.repo);
  return [
    { name: 'strata_gc_passes_total', type: 'counter', help: 'GC passes completed.', value: s.passes },
    { name: 'strata_gc_failed_passes_total', type: 'counter', help: 'GC passes that failed (nothing freed by them).', value: s.failedPasses },
    { name: 'strata_gc_examined_blobs_total', type: 'counter', help: 'Blobs GC listed and judged.', value: s.examinedBlobs },
    { name: 'strata_gc_examined_bytes_total', type: 'counter', help: 'Bytes of the blobs GC listed and judged.', value: s.examinedBytes },
    { name: 'strata_gc_freed_blobs_total', type: 'counter', help: 'Unreachable blobs GC deleted.', value: s.freedBlobs },
    { name: 'strata_gc_freed_bytes_total', type: 'counter', help: 'Bytes GC freed.', value: s.freedBytes },
    { name: 'strata_gc_cleaned_packs_total', type: 'counter', help: 'Sparse packs whose live bodies GC moved out.', value: s.cleanedPacks },
    { name: 'strata_gc_deferred_packs_total', type: 'counter', help: 'Sparse packs a pass left to a later one (their referrers would not fit it).', value: s.deferredPacks },
    { name: 'strata_gc_moved_bytes_total', type: 'counter', help: 'Live body bytes pack cleaning copied.', value: s.movedBytes },
    { name: 'strata_gc_errors_total', type: 'counter', help: 'Deletes and cleanings that failed (retried by a later pass).', value: s.errors },
    { name: 'strata_gc_last_pass_ms', type: 'gauge', help: 'Duration of the last GC pass, ms.', value: s.lastPassMs },
    { name: 'strata_gc_running', type: 'gauge', help: '1 while a GC pass runs.', value: s.running ? 1 : 0 },
  ];
}
