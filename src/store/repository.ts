/**
 * @module The repository: durable state behind the Store API, and the wiring of its parts.
 *
 * Writes go through the group commit (commit-loop.ts): a batch of operations becomes one commit
 * blob, then the anchor moves by compare-and-swap (anchor-move.ts), and only then is memory
 * changed and the batch acknowledged. Checkpoints run beside the loop (checkpoint-run.ts);
 * reopening replays only the commits after the root. When unsure of its durable state the
 * repository fences itself (fencing.ts): reads go on, writes fail with 'Unsafe'.
 *
 * Commit times (a batch's `time`, every object's Last-Modified) strictly increase: each is
 * the wall clock or 1 ms after the previous commit's, whichever is later, also across a
 * reopen. So "as of time T" names exactly one prefix of the chain, even when the clock
 * steps back. They do not run ahead of the clock: when it has not passed the previous
 * commit's time, the loop waits for the next ms (commit-loop.ts CLOCK_WAIT_MAX_MS).
 */
import { LatencyHistogram } from './latency-histogram.js';
import type { Provider } from '../provider/provider.js';
import { BlockCache } from './index/block-cache.js';
import { newId } from './layout.js';
import type { Anchor } from './anchor.js';
import { load, type ChainTipRef, type RepositoryConfig } from './recovery.js';
import { Segments } from './commit-log/segments.js';
import type { FrameKey } from './commit-log/frame.js';
import { RepoState } from './state.js';
import type { Tx } from './tx.js';
import { PendingBudget } from './budget.js';
import { recountHistory, restoreHistory, settleHistory } from './history-budget.js';
import { BodyCache } from './body-cache.js';
import { migrateToVersionLog } from './version-log-migrate.js';
import { openForkRuns } from './fork-at-time.js';
import { InflightBlobs, type InflightTicket } from './inflight-blobs.js';
import { CarrierReaper } from './carrier-reaper.js';
import { liveUploadChunkBlobs } from './upload-index.js';
import { StoreError } from './errors.js';
import { DEFAULTS, type RepositoryOptions, type RepositoryStats } from './repository-options.js';
import { Fence } from './fencing.js';
import { AnchorMover } from './anchor-move.js';
import type { ChainTip } from './chain-tip.js';
import { CheckpointRunner } from './checkpoint-run.js';
import { CommitLoop } from './commit-loop.js';
import { restoreRoot } from './restore-root.js';

export { DEFAULTS, type RepositoryOptions, type RepositoryStats } from './repository-options.js';

export class Repository {
  readonly provider: Provider;
  readonly state = new RepoState();
  readonly budget: PendingBudget;
  readonly cache: BlockCache;
  readonly bodies: BodyCache;
  /** Deletes the carrier chunks of parts that became unreachable (see carrier-reaper.ts). */
  readonly reaper: CarrierReaper;
  /** Chunks of writes in flight, which no commit names yet: GC keeps them (inflight-blobs.ts). */
  readonly inflight = new InflightBlobs();
  readonly config: RepositoryConfig;
  readonly stats: RepositoryStats = { commits: 0, pipelined: 0, operations: 0, checkpoints: 0, compactions: 0, logCompactions: 0, failedCompactions: 0, largestBatch: 0, failedCheckpoints: 0, checkpointWaits: 0, checkpointWaitMs: 0, segmentRolls: 0, gathered: 0, logAppend: new LatencyHistogram() };
  readonly #opts: typeof DEFAULTS & RepositoryOptions;
  /** The newest durable commit and root (shared with the loop and the checkpoint runner). */
  readonly #tip: ChainTip;
  readonly #fence: Fence;
  readonly #loop: CommitLoop;
  readonly #checkpoints: CheckpointRunner;
  /** The commit log's segments, when the provider has them and the option allows. */
  readonly #segments: Segments | undefined;
  #closed = false;
  readonly #mover: AnchorMover;

  private constructor(provider: Provider, opts: typeof DEFAULTS & RepositoryOptions, config: RepositoryConfig, frameKey: FrameKey, anchor: Anchor, etag: string, tip: ChainTipRef) {
    this.provider = provider;
    this.#opts = opts;
    this.config = config;
    this.budget = new PendingBudget(opts.pendingBytes);
    this.state.history.limit = opts.historyBudget;
    this.cache = new BlockCache({ maxBytes: opts.blockCacheBytes });
    this.bodies = new BodyCache(opts.bodyCacheBytes);
    this.reaper = new CarrierReaper(provider, (event, fields) => this.log(event, fields));
    // The log position stays unset: the first batch rolls to a fresh segment (segments.ts).
    this.#tip = { seq: tip.seq, head: tip.head, time: 0, root: anchor.root, log: undefined };
    const openLog = provider.openLog?.bind(provider);
    this.#segments = opts.commitLog && openLog ? new Segments(openLog, frameKey, opts.segmentRollBytes) : undefined;
    const log = (event: string, fields: Record<string, unknown>) => this.log(event, fields);
    const now = () => this.now();
    this.#fence = new Fence(log);
    const mover = new AnchorMover(provider, this.#fence, newId(8), anchor, etag, frameKey.id);
    this.#mover = mover;
    const shared = { provider, state: this.state, tip: this.#tip, anchor: mover, fence: this.#fence, stats: this.stats, now };
    this.#checkpoints = new CheckpointRunner({
      ...shared,
      inflight: this.inflight,
      cache: this.cache,
      repositoryId: config.repositoryId,
      opts,
      closed: () => this.#closed,
      log,
    });
    this.#loop = new CommitLoop({ ...shared, checkpoints: this.#checkpoints, segments: this.#segments, opts, log });
  }

  /** Ends a write's GC protection now, or at the next anchor move if it may yet be committed
   * (AnchorMover.closeTicket). */
  closeTicket(ticket: InflightTicket, err?: unknown): void {
    this.#mover.closeTicket(ticket, err);
  }

  /**
   * Opens (or, if the provider is empty and `create` allows, initialises) the repository
   * on `provider`. Throws StoreError 'Unsafe' for a provider without conditional writes
   * unless `singleWriter`, and the recovery errors of recovery.ts.
   */
  static async open(provider: Provider, options: RepositoryOptions = {}): Promise<Repository> {
    const opts = { ...DEFAULTS, ...options };
    if (!provider.capabilities.conditionalWrites && !opts.singleWriter) {
      throw new StoreError(
        'Unsafe',
        `the ${provider.kind} provider does not enforce conditional writes, so it cannot be the anchor authority; ` +
          'use a backend that does, or set singleWriter if no other process writes this repository'
      );
    }
    const now = (opts.now ?? Date.now)();
    if (!Number.isInteger(opts.maxUploadsPerBucket) || opts.maxUploadsPerBucket < 1) {
      throw new RangeError(`maxUploadsPerBucket must be a positive integer, not ${opts.maxUploadsPerBucket}`);
    }
    if (!Number.isSafeInteger(opts.retentionMs) || opts.retentionMs < 0 || opts.retentionMs > 36_500 * 86_400_000) throw new RangeError(`retentionMs must be 0 to 100 years in ms, not ${opts.retentionMs}`);
    const loaded = await load(provider, { create: opts.create, now, writer: 'init' });
    const tip = loaded.tip ?? { seq: loaded.anchor.seq, head: loaded.anchor.head, log: loaded.anchor.log };
    const repo = new Repository(provider, opts, loaded.config, loaded.frameKey, loaded.anchor, loaded.anchorEtag, tip);
    // Commit times never precede what the repository already recorded (the root and anchor
    // carry times no earlier than the head commit's), whatever the clock says now.
    repo.#tip.time = loaded.commits.reduce((t, c) => Math.max(t, c.time), Math.max(loaded.root.time, loaded.anchor.time));
    // Roots and commits written before the uploads keyspace name uploads by id alone: resolve
    // them while replaying, then forget the mapping.
    repo.state.legacyUploads = new Map();
    await restoreRoot(provider, repo.cache, repo.state, loaded.root);
    restoreHistory(repo.state, loaded.root);
    // Forks as of a past time name runs their commit's apply needs open (fork-at-time.ts).
    await openForkRuns(repo, loaded.commits.flatMap((c) => c.mutations), repo.state.preparedRuns);
    for (const c of loaded.commits) for (const m of c.mutations) repo.state.apply(m);
    repo.state.legacyUploads = undefined;
    await settleHistory(repo, loaded);
    repo.state.onBucketDropped = (b) => repo.reaper.background(`uploads of deleted bucket ${b.name}`, liveUploadChunkBlobs(b.uploads));
    if (!loaded.root.versionLog) {
      // Written before the version log: its current objects become their keys' null versions.
      const buckets = await migrateToVersionLog(repo);
      await recountHistory(repo.state, true); // the migration wrote log runs outside apply
      repo.log('versions.migrated', { buckets, root: loaded.root.seq });
      await repo.checkpoint().catch((err) => repo.log('checkpoint.failed', { error: String(err) }));
    } else if (loaded.root.uploads.length > 0) {
      // Move the migrated uploads out of memory into the keyspace's first run now.
      repo.log('uploads.migrated', { uploads: loaded.root.uploads.length, root: loaded.root.seq });
      await repo.checkpoint().catch((err) => repo.log('checkpoint.failed', { error: String(err) }));
    }
    return repo;
  }

  /** Multipart uploads in progress allowed per bucket. */
  get maxUploadsPerBucket(): number {
    return this.#opts.maxUploadsPerBucket;
  }

  get seq(): number {
    return this.#tip.seq;
  }

  /** Whether commits go to the commit log (option on and the provider offers `openLog`). */
  get usesCommitLog(): boolean {
    return this.#segments !== undefined;
  }

  get rootSeq(): number {
    return this.#tip.root.seq;
  }

  /** The server-wide history window (ms): buckets without their own `history` config use it. */
  get retentionMs(): number {
    return this.#opts.retentionMs;
  }

  /** Time of the newest commit, ms (commit times strictly increase; they run ahead of now() only
   * when the clock stepped back, or by at most 1 ms). */
  get lastCommitTime(): number {
    return this.#tip.time;
  }

  now(): number {
    return (this.#opts.now ?? Date.now)();
  }

  log(event: string, fields: Record<string, unknown>): void {
    this.#opts.log?.(event, fields);
  }

  /**
   * Runs `op` in the next group commit and resolves with its result once the commit that
   * holds its mutations is durable and named by the anchor. An op that stages nothing
   * resolves without a commit. Rejects with what `op` threw (its staging is discarded),
   * or with the commit's failure (nothing of the batch became visible).
   *
   * `alone`: `op` runs once every earlier commit is applied, as the only operation of its
   * batch, and later operations are staged only once its commit is applied: it reads (and
   * what follows it reads) committed state, never staging in flight (a fork needs this).
   */
  run<T>(op: (tx: Tx) => Promise<T>, opts: { alone?: boolean } = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreError('Closed', 'repository is closed'));
    if (this.#fence.error) return Promise.reject(this.#fence.error);
    return this.#loop.enqueue(op, opts.alone === true);
  }

  /**
   * Asks the next checkpoint to merge every run of the object index and the version log of the
   * buckets with ids `bucketIds` into one, dropping tombstones (expiry's dropped entries and
   * deleted keys): what frees their bytes. Expiry asks after dropping entries.
   */
  requestMajorCompaction(bucketIds: Iterable<string>): void {
    this.#checkpoints.requestMajor(bucketIds);
  }

  /**
   * Forces a checkpoint: resolves once a root covering every commit acknowledged before the
   * call (and everything queued before it) is named by the anchor. Waits for a checkpoint in
   * flight first. Rejects with the checkpoint's failure (state stays readable; a later
   * checkpoint retries). Returns without one when the repository is fenced.
   */
  async checkpoint(): Promise<void> {
    await this.run(async () => undefined);
    while (this.#checkpoints.inFlight) await this.#checkpoints.inFlight.catch(() => undefined);
    if (this.#fence.error) return;
    await this.#checkpoints.start();
  }

  /**
   * Rolls the commit log to a new segment unless the current one is empty (GC calls it before
   * marking: the segment left behind is sealed at its end and is collected once nothing in it
   * is reachable and a root covers its commits). Resolves once every write queued before it is
   * durable; a failed roll is logged and retried later, not thrown. Without a commit log it
   * only waits for the queue. Rejects as `run` does (closed, fenced).
   */
  rollLog(): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreError('Closed', 'repository is closed'));
    if (this.#fence.error) return Promise.reject(this.#fence.error);
    return this.#loop.requestRoll();
  }

  /**
   * Resolves once the commit loop is quiet and no checkpoint is in flight (tests, benchmarks,
   * shutdown paths). Never rejects: a failed checkpoint shows in stats and the log.
   */
  async idle(): Promise<void> {
    while (this.#loop.draining || this.#checkpoints.inFlight) {
      await this.#loop.draining;
      await this.#checkpoints.inFlight?.catch(() => undefined);
    }
  }

  /**
   * Waits for queued writes (and chunk deletions already started), then refuses new ones.
   * Does not checkpoint, and leaves the provider open unless the repository was opened with
   * `ownsProvider`.
   */
  async close(): Promise<void> {
    await this.idle();
    this.#closed = true;
    await this.reaper.idle();
    // Sealed at the end of its last durable frame, unless fenced (an fsync failed: what the
    // file holds past that end is for recovery to judge, not to cut).
    const log = this.#tip.log;
    await this.#segments?.close(!this.#fence.error && log && log.key === this.#segments.current?.key ? log.offset : undefined);
    if (this.#opts.ownsProvider) await this.provider.close();
  }
}
