/**
 * @module Running checkpoints beside the commit loop: when one is due, starting it, retrying
 * after failures, and landing its root.
 *
 * A checkpoint freezes every overlay at a commit boundary S (synchronously, between two
 * commits), then writes the frozen layers as runs, compacts incrementally and writes root S
 * while commits go on into fresh overlays (checkpoint.ts). Its anchor move (sequence and
 * head: the newest commit; root: S) takes its turn between two commits' anchor moves, and only
 * then do the keyspaces read the new runs instead of the frozen layers. A compaction that fails
 * is skipped, never the root; a checkpoint that fails merges its frozen overlays back and is
 * retried after a backoff.
 */
import type { Provider } from '../provider/provider.js';
import type { BlockCache } from './index/block-cache.js';
import { rootKey } from './layout.js';
import { encodeRoot, type RootRecord } from './root.js';
import { writeRecordBlob } from './records-io.js';
import { ticketed, type InflightBlobs } from './inflight-blobs.js';
import type { RepoState } from './state.js';
import { abandonCheckpoint, buildCheckpoint, builtRuns, freezeCheckpoint, installCheckpoint, type CheckpointPlan } from './checkpoint.js';
import { rootHistory } from './history-budget.js';
import { encodeKeyRecord } from './keys-record.js';
import type { AnchorMover } from './anchor-move.js';
import type { ChainTip } from './chain-tip.js';
import type { Fence } from './fencing.js';
import type { RepositoryStats } from './repository-options.js';

/**
 * Retrying a checkpoint that failed: the next commit boundary may retry at once up to
 * CHECKPOINT_FREE_RETRIES consecutive failures (transient faults: the chain a reopen replays
 * stays short, as when the loop retried at every quiet moment); past that, each retry waits
 * CHECKPOINT_RETRY_MS[0] ms doubling per failure up to CHECKPOINT_RETRY_MS[1], so a provider
 * that keeps refusing (a full disk, a size limit) is not sent a whole flush per commit.
 * 8: with 3, the fault test's seed 5 (test/store/faults.test.ts: ~20% of provider calls fail)
 * let the chain grow until no reopen succeeded in 20,000 tries; with 8 it passes in 5 s.
 */
const CHECKPOINT_FREE_RETRIES = 8;
const CHECKPOINT_RETRY_MS = [10, 1000] as const;

/** What a checkpoint runner works on: the repository's parts, shared with the commit loop. */
export interface CheckpointHost {
  provider: Provider;
  /** Blobs being written and not yet named (GC keeps them): the runs and root until installed. */
  inflight: InflightBlobs;
  state: RepoState;
  cache: BlockCache;
  tip: ChainTip;
  anchor: AnchorMover;
  fence: Fence;
  stats: RepositoryStats;
  repositoryId: string;
  opts: { overlayBytes: number; checkpointEvery: number; maxRuns: number };
  closed: () => boolean;
  now: () => number;
  log: (event: string, fields: Record<string, unknown>) => void;
}

export class CheckpointRunner {
  readonly #h: CheckpointHost;
  /** Buckets (ids) whose next checkpoint merges all their runs (requestMajor). */
  #major = new Set<string>();
  /** The checkpoint in flight (at most one), settled once landed or abandoned. */
  #inFlight: Promise<void> | null = null;
  #failures = 0;
  /** performance.now() before which no background checkpoint is started (after a failure). */
  #retryAt = 0;

  constructor(host: CheckpointHost) {
    this.#h = host;
  }

  /** The checkpoint in flight, or null. */
  get inFlight(): Promise<void> | null {
    return this.#inFlight;
  }

  /**
   * Asks the next checkpoint to merge every run of the object index and the version log of the
   * buckets with ids `bucketIds` into one, dropping tombstones (expiry's dropped entries and
   * deleted keys): what frees their bytes. Expiry asks after dropping entries.
   */
  requestMajor(bucketIds: Iterable<string>): void {
    for (const id of bucketIds) this.#major.add(id);
  }

  #takeMajor(): ReadonlySet<string> {
    const taken = this.#major;
    this.#major = new Set();
    return taken;
  }

  #due(): boolean {
    const { opts, state, tip } = this.#h;
    return state.overlayBytes() >= opts.overlayBytes || tip.seq - tip.root.seq >= opts.checkpointEvery || state.flushDue();
  }

  /** Starts a background checkpoint when one is due, none is in flight and no backoff holds. */
  maybeStart(): void {
    const h = this.#h;
    if (this.#inFlight || h.fence.error || h.closed() || h.tip.seq === h.tip.root.seq) return;
    if (!this.#due() || performance.now() < this.#retryAt) return;
    try {
      this.start().catch(() => undefined);
    } catch (err) {
      // Freezing is synchronous and should not throw; if it does, the commit that triggered it
      // is durable and applied all the same: log, back off, let a later commit retry.
      this.#retryAt = performance.now() + CHECKPOINT_RETRY_MS[1];
      h.log('checkpoint.failed', { error: String(err) });
    }
  }

  /**
   * Freezes the state as of the newest applied commit (synchronously: no commit applies
   * meanwhile) and completes a checkpoint at it in the background; returns its completion,
   * which is also inFlight until it settles.
   */
  start(): Promise<void> {
    const started = performance.now();
    const plan = freezeCheckpoint(this.#h.state, this.#h.tip.seq);
    const record = this.#rootRecord(plan);
    const tracked: Promise<void> = this.#complete(plan, record, started).then(
      () => {
        this.#failures = 0;
        this.#retryAt = 0;
      },
      (err: unknown) => {
        this.#h.stats.failedCheckpoints++;
        this.#failures++;
        const over = this.#failures - CHECKPOINT_FREE_RETRIES;
        const wait = over <= 0 ? 0 : Math.min(CHECKPOINT_RETRY_MS[1], CHECKPOINT_RETRY_MS[0] * 2 ** (over - 1));
        this.#retryAt = performance.now() + wait;
        this.#h.log('checkpoint.failed', { seq: plan.seq, error: String(err), retryMs: wait });
        throw err;
      }
    ).finally(() => {
      if (this.#inFlight === tracked) this.#inFlight = null;
    });
    this.#inFlight = tracked;
    return tracked;
  }

  /** The root record of `plan`'s commit, as of the freeze; its run lists are filled once built. */
  #rootRecord(plan: CheckpointPlan): RootRecord {
    const { state, tip } = this.#h;
    const record: RootRecord = {
      seq: plan.seq,
      time: Math.max(this.#h.now(), tip.time), // no earlier than the commits it covers
      repositoryId: this.#h.repositoryId,
      buckets: plan.buckets.map((p) => ({
        name: p.bucket.name,
        id: p.bucket.id,
        created: p.bucket.created,
        configs: p.configs,
        runs: [],
        uploadRuns: [],
        uploadCount: p.uploadCount,
        versionRuns: [],
      })),
      uploads: [],
      keys: [...state.keys.values()].map((k) => [k.id, encodeKeyRecord(k)]),
      history: rootHistory(state, [...state.buckets.keys()]),
    };
    if (tip.head) record.head = tip.head;
    return record;
  }

  /**
   * Builds `plan`'s runs, writes its root, moves the anchor to it in turn with the commits, and
   * installs the runs in memory. On any failure abandons the plan (memory reads what it read)
   * and rejects; a failure to move the anchor may fence (see AnchorMover.move).
   */
  async #complete(plan: CheckpointPlan, record: RootRecord, started: number): Promise<void> {
    const h = this.#h;
    // Its runs and root are named only once the anchor moves and memory installs them: until
    // then GC must keep them, however long the build takes against the grace.
    const ticket = h.inflight.open();
    const provider = ticketed(h.provider, ticket);
    let failure: unknown;
    try {
      await buildCheckpoint(plan, {
        provider,
        cache: h.cache,
        maxRuns: h.opts.maxRuns,
        // Taken by this checkpoint: a request made while it builds waits for the next one.
        major: this.#takeMajor(),
        log: h.log,
        onCompaction: (kind) => (kind === 'versions' ? h.stats.logCompactions++ : h.stats.compactions++),
        onCompactionFailed: () => h.stats.failedCompactions++,
      });
      plan.buckets.forEach((p, i) => {
        const b = record.buckets[i]!;
        b.runs = builtRuns(plan, p.objects).map((r) => r.meta);
        b.uploadRuns = builtRuns(plan, p.uploads).map((r) => r.meta);
        b.versionRuns = builtRuns(plan, p.versions).map((r) => r.meta);
      });
      const built = performance.now();
      const ref = await writeRecordBlob(provider, rootKey(plan.seq), encodeRoot(record));
      const root = { ...ref, seq: plan.seq };
      let head = plan.seq;
      await h.anchor.serial(async () => {
        if (h.fence.error) throw h.fence.error;
        await h.anchor.move({ seq: h.tip.seq, head: h.tip.head, root, log: h.tip.log }, Math.max(h.now(), h.tip.time));
        h.tip.root = root;
        head = h.tip.seq;
        installCheckpoint(h.state, plan);
      });
      h.stats.checkpoints++;
      const ms = (t: number) => Math.round(t - started);
      h.log('checkpoint', { seq: plan.seq, head, buckets: record.buckets.length, buildMs: ms(built), ms: ms(performance.now()) });
    } catch (err) {
      failure = err;
      abandonCheckpoint(plan);
      throw err;
    } finally {
      h.anchor.closeTicket(ticket, failure);
    }
  }
}
