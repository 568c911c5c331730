/**
 * @module The server's erasure maintenance: a background scrub with repair every
 * `--scrub-interval` (default 24 h, counted from the end of the last completed pass, which the
 * repository records, so restarts do not postpone it; 0 turns it off), the repair worker that
 * finishes heal-on-read (provider/erasure/repair-worker.ts), and the strata_erasure_* metrics.
 * Only for a repository on the erasure provider; on any other, startErasureMaintenance returns
 * undefined and nothing runs.
 *
 * A pass interrupted by a stop or a kill resumes from its cursor at the next start (after
 * RESUME_DELAY_MS). An admin scrub (POST /_strata/admin/v1/scrub) preempts a background pass in
 * progress: the background pass saves its cursor and stops, the admin pass runs (continuing that
 * cursor when it is of the same kind), and the schedule goes on after it.
 */
import type { Store } from '../store/store.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { family } from './metrics.js';
import { isErasureProvider, type ErasureProvider } from '../provider/erasure/types.js';
import { runScrub, type ScrubReport } from '../provider/erasure/scrub.js';
import { garbageClassifier } from '../admin/scrub-garbage.js';
import { loadCursor, loadLastPass } from '../provider/erasure/scrub-cursor.js';
import { RepairWorker, DEFAULT_REPAIR_RATE, REPAIR_MAX_WAIT_MS, REPAIR_WAIT_PER_WORK } from '../provider/erasure/repair-worker.js';
import type { RequestLoad } from '../provider/erasure/scrub-rate.js';

/** Once a day: reading every fragment is heavy; bitrot is slow. */
export const DEFAULT_SCRUB_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** A request that ended less than this many ms ago counts as load (more are likely to follow):
 * background maintenance waits for this much quiet. */
export const REQUEST_QUIET_MS = 100;

/** Default background scrub rate, bytes of blobs per second (see DEFAULT_REPAIR_RATE). */
export const DEFAULT_SCRUB_RATE = DEFAULT_REPAIR_RATE;
/** Delay before an interrupted pass resumes after a start, ms: long enough to let the server
 * settle (recovery, the first requests), short enough that restarts cannot starve the scrub. */
export const RESUME_DELAY_MS = 60_000;
/** Delay before a failed or preempted pass is taken up again, ms: a domain that was down for
 * a moment (or an admin pass) should not cost a day of scrubbing. */
export const RETRY_MS = 10 * 60_000;

export interface ScrubWorkerStats {
  passes: number;
  failedPasses: number;
  running: boolean;
  lastPassMs: number;
  /** Of the last completed pass: blobs lost, blobs left degraded. */
  lastLost: number;
  lastUnrepaired: number;
}

const workers = new WeakMap<object, ScrubWorker>();

/** Preempts the background pass on `provider`, if one runs; resolves when it has stopped. */
export async function preemptBackgroundScrub(provider: ErasureProvider): Promise<void> {
  await workers.get(provider)?.preempt();
}

export class ScrubWorker {
  readonly stats: ScrubWorkerStats = { passes: 0, failedPasses: 0, running: false, lastPassMs: 0, lastLost: 0, lastUnrepaired: 0 };
  readonly #provider: ErasureProvider;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #rate: number | undefined;
  readonly #load: RequestLoad | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #abort: AbortController | undefined;
  #stopped = false;

  /** `intervalMs` > 0 between passes; `rateBytesPerSec` limits each (default DEFAULT_SCRUB_RATE);
   * with `load`, the pass waits for requests to pause between blobs (scrub-rate.ts yieldToRequests). */
  constructor(provider: ErasureProvider, log: Logger, opts: { intervalMs: number; rateBytesPerSec?: number; load?: RequestLoad }) {
    if (!(opts.intervalMs > 0)) throw new RangeError('the scrub interval must be positive (0 means: do not start a worker)');
    this.#provider = provider;
    this.#log = log;
    this.#intervalMs = opts.intervalMs;
    this.#rate = opts.rateBytesPerSec ?? DEFAULT_SCRUB_RATE;
    this.#load = opts.load;
    workers.set(provider, this);
  }

  /** Schedules the first pass: soon when a pass was interrupted, else one interval after the
   * last completed pass (or after now, when none is recorded). Never rejects. */
  async start(): Promise<void> {
    let delay = this.#intervalMs;
    try {
      if (await loadCursor(this.#provider)) delay = RESUME_DELAY_MS;
      else {
        const last = await loadLastPass(this.#provider);
        if (last) delay = Math.max(RESUME_DELAY_MS, last.completedAt + this.#intervalMs - Date.now());
      }
    } catch (err) {
      this.#log.warn('scrub.state_unreadable', { error: String(err) });
    }
    this.#schedule(Math.min(delay, this.#intervalMs));
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    // setTimeout holds at most 2^31-1 ms (about 24.8 days); a longer wait is re-armed.
    const step = Math.min(ms, 2 ** 31 - 1);
    this.#timer = setTimeout(() => {
      if (step < ms) return this.#schedule(ms - step);
      this.#running = this.pass().then((r) => {
        this.#running = undefined;
        // A pass that failed or was preempted is taken up again soon, not a whole interval later.
        this.#schedule(r?.complete ? this.#intervalMs : Math.min(this.#intervalMs, RETRY_MS));
      });
    }, step);
    this.#timer.unref();
  }

  /** One pass (with repair) now. Never rejects: a failure is logged (`scrub.pass_failed`). */
  async pass(): Promise<ScrubReport | undefined> {
    this.#abort = new AbortController();
    this.stats.running = true;
    try {
      const r = await runScrub(this.#provider, { repair: true, signal: this.#abort.signal, isGarbage: garbageClassifier(this.#provider), ...(this.#rate ? { rateBytesPerSec: this.#rate } : {}), ...(this.#load ? { load: this.#load } : {}) });
      if (r.complete) {
        this.stats.passes++;
        this.stats.lastPassMs = Date.now() - r.startedAt;
        this.stats.lastLost = r.lostCount;
        this.stats.lastUnrepaired = r.unrepairedBlobs;
      }
      const log = r.lostCount || r.unrepairedBlobs || r.errorCount ? this.#log.warn.bind(this.#log) : this.#log.info.bind(this.#log);
      log(r.complete ? 'scrub.pass' : 'scrub.paused', {
        blobs: r.blobs,
        bytes: r.bytes,
        damagedBlobs: r.damagedBlobs,
        damagedByDomain: r.damagedByDomain,
        repairedFragments: r.repairedFragments,
        repairBytes: r.repairBytes,
        unrepairedBlobs: r.unrepairedBlobs,
        lostCount: r.lostCount,
        lost: r.lost.slice(0, 20),
        errors: r.errorCount,
        ms: r.ms,
      });
      return r;
    } catch (err) {
      this.stats.failedPasses++;
      this.#log.warn('scrub.pass_failed', { error: String(err) });
      return undefined;
    } finally {
      this.stats.running = false;
      this.#abort = undefined;
    }
  }

  /** Stops the pass in progress (its cursor is saved) without stopping the schedule. */
  async preempt(): Promise<void> {
    this.#abort?.abort();
    await this.#running;
  }

  /** Stops scheduling, stops a pass in progress (cursor saved) and waits for it. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort?.abort();
    await this.#running;
    if (workers.get(this.#provider) === this) workers.delete(this.#provider);
  }
}

/** The strata_erasure_* metric lines for `provider` (and the workers, when running). */
export function erasureMetricLines(provider: ErasureProvider, scrub?: ScrubWorker, repair?: RepairWorker): string[] {
  const s = provider.stats;
  return [
    ...family('strata_erasure_fragments_verified_total', 'counter', 'Fragments and replicas read and checked (scrub, repair, checks).', s.fragmentsVerified),
    ...family('strata_erasure_fragments_damaged_total', 'counter', 'Fragments found missing, corrupt or unreachable.', s.fragmentsDamaged),
    ...family('strata_erasure_fragments_repaired_total', 'counter', 'Fragments rewritten onto healthy domains.', s.fragmentsRepaired),
    ...family('strata_erasure_repair_bytes_total', 'counter', 'Bytes written by repairs.', s.repairBytes),
    ...family('strata_erasure_degraded_reads_total', 'counter', 'Reads rebuilt from parity (heal on read).', s.degradedReads),
    ...family('strata_erasure_degraded_blobs', 'gauge', 'Blobs known degraded and not yet repaired.', s.degradedBlobs + (repair?.pending ?? 0)),
    ...(provider.failedDomainIds
      ? family('strata_erasure_domains_failed', 'gauge', 'Domains counted failed now (out of service until their cooldown ends or a call succeeds).', provider.failedDomainIds().length)
      : []),
    ...(provider.writeGate
      ? [
          ...family('strata_erasure_writes_in_flight', 'gauge', 'Object-body writes holding a place in the write gate.', provider.writeGate.inFlight),
          ...family('strata_erasure_writes_waiting', 'gauge', 'Object-body writes waiting for room in the write gate.', provider.writeGate.waiting),
          ...family('strata_erasure_writes_refused_total', 'counter', 'Object-body writes refused (503) after waiting for room.', provider.writeGate.refused),
          ...family('strata_erasure_write_gate_bytes', 'gauge', 'Stripe memory the writes in flight hold, bytes (by their declared cost).', provider.writeGate.bytes),
          ...family('strata_erasure_write_gate_descriptors', 'gauge', 'Temporary files the writes in flight hold (by their declared cost).', provider.writeGate.descriptors),
        ]
      : []),
    ...(scrub
      ? [
          ...family('strata_erasure_scrub_passes_total', 'counter', 'Background scrub passes completed.', scrub.stats.passes),
          ...family('strata_erasure_scrub_failed_passes_total', 'counter', 'Background scrub passes that failed.', scrub.stats.failedPasses),
          ...family('strata_erasure_scrub_running', 'gauge', '1 while a background scrub pass runs.', scrub.stats.running ? 1 : 0),
          ...family('strata_erasure_scrub_last_pass_ms', 'gauge', 'Duration of the last completed background pass (resumed parts included), ms.', scrub.stats.lastPassMs),
          ...family('strata_erasure_lost_blobs', 'gauge', 'Blobs the last completed scrub found unreadable (more than m fragments damaged).', scrub.stats.lastLost),
        ]
      : []),
    ...(repair
      ? [
          ...family('strata_erasure_repair_worker_repaired_total', 'counter', 'Blobs the repair worker brought back to full redundancy.', repair.stats.repaired),
          ...family('strata_erasure_repair_worker_failed_total', 'counter', 'Repairs the worker gave up on (left to the scrub).', repair.stats.failed),
          ...family('strata_erasure_repair_worker_yield_seconds_total', 'counter', 'Time the repair worker waited for requests to pause.', repair.stats.yieldedMs / 1000),
        ]
      : []),
  ];
}

/**
 * When `store` is on the erasure provider: builds the scrub worker (unless `scrubIntervalMs`
 * is 0) and the repair worker, registers their metrics with `metrics`, and returns start/stop.
 * Returns undefined for any other provider.
 */
export function erasureMaintenance(
  store: Store,
  log: Logger,
  metrics: Metrics,
  opts: { scrubIntervalMs: number; rateBytesPerSec?: number }
): { start(): void; stop(): Promise<void> } | undefined {
  const provider = store.repo.provider;
  if (!isErasureProvider(provider)) return undefined;
  // Both let the S3 requests go first (scrub-rate.ts yieldToRequests).
  const load: RequestLoad = { busy: () => metrics.busy(REQUEST_QUIET_MS), waitPerWork: REPAIR_WAIT_PER_WORK, maxWaitMs: REPAIR_MAX_WAIT_MS };
  const rate = opts.rateBytesPerSec !== undefined ? { rateBytesPerSec: opts.rateBytesPerSec } : {};
  const scrub = opts.scrubIntervalMs > 0 ? new ScrubWorker(provider, log, { intervalMs: opts.scrubIntervalMs, ...rate, load }) : undefined;
  const repair = new RepairWorker(provider, log, { ...rate, load });
  metrics.collect(() => erasureMetricLines(provider, scrub, repair));
  return {
    start() {
      repair.start();
      void scrub?.start();
    },
    async stop() {
      // An admin pass (POST /_strata/admin/v1/scrub) runs in the server too: stopped with it,
      // its cursor saved. (Loaded here: admin/scrub.ts imports this module.)
      const { stopAdminScrub } = await import('../admin/scrub.js');
      await stopAdminScrub(provider);
      await scrub?.stop();
      await repair.stop();
    },
  };
}
