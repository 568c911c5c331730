/**
 * @module The repository: durable state behind the Store API.
 *
 * Writes go through the group commit: operations queue while a commit is in flight, the
 * next batch takes every queued operation (up to BATCH_MAX_OPS / BATCH_MAX_BYTES), stages
 * them in one transaction each, writes ONE commit blob (small bodies + record), then moves
 * the anchor by compare-and-swap. Only then is the in-memory state changed and every
 * operation of the batch acknowledged.
 *
 * Checkpoints run BESIDE the commit loop (checkpoint.ts): when one is due, it freezes every
 * overlay at a commit boundary S (synchronously, between two commits), then writes the
 * frozen layers as runs, compacts incrementally and writes root S while commits go on into
 * fresh overlays. Its anchor move (sequence and head: the newest commit; root: S) takes its
 * turn between two commits' anchor moves (#serial), and only then do the keyspaces read the
 * new runs instead of the frozen layers. Reopening replays only the commits after the root.
 * A compaction that fails is skipped, never the root; a checkpoint that fails merges its
 * frozen overlays back and is retried after a backoff. If the overlays fill up again while a
 * checkpoint is in flight, new batches wait for it (back-pressure: memory stays bounded by
 * about twice `overlayBytes`).
 *
 * If the anchor may have moved without us knowing (an ambiguous failure we could not
 * resolve by re-reading it), or memory could not take in a commit the anchor already names,
 * the repository fences itself: reads go on, writes fail with 'Unsafe' until it is reopened
 * — it never commits on top of a state it is unsure of, and never gives a sequence number
 * the anchor has named to another commit.
 *
 * Commit times (a batch's `time`, every object's Last-Modified) strictly increase: each is
 * the wall clock or 1 ms after the previous commit's, whichever is later, also across a
 * reopen. So "as of time T" names exactly one prefix of the chain, even when the clock
 * steps back.
 */
import type { Provider } from '../provider/provider.js';
import { ProviderError } from '../provider/provider.js';
import { BlockCache } from './index/block-cache.js';
import { ANCHOR_KEY, BATCH_MAX_BYTES, BATCH_MAX_OPS, commitKey, newId, rootKey } from './layout.js';
import { encodeAnchor, FORMAT, sameAnchor, sameRef, type Anchor } from './anchor.js';
import { encodeCommit, type Mutation, type RecordRef } from './commit.js';
import { encodeRoot, type RootRecord } from './root.js';
import { recordRef, writeRecordBlob } from './records-io.js';
import { load, readAnchor, type RepositoryConfig } from './recovery.js';
import { BucketState, RepoState, type RunHandle } from './state.js';
import { abandonCheckpoint, buildCheckpoint, builtRuns, freezeCheckpoint, installCheckpoint, type CheckpointPlan } from './checkpoint.js';
import { Batch, Tx } from './tx.js';
import { PendingBudget } from './budget.js';
import { DEFAULT_HISTORY_BUDGET, recountHistory, restoreHistory, rootHistory, settleHistory } from './history-budget.js';
import { BodyCache } from './body-cache.js';
import { lazyRunHandle, openRunHandle } from './runs.js';
import { migrateToVersionLog } from './version-log-migrate.js';
import { openForkRuns } from './fork-at-time.js';
import { InflightBlobs } from './inflight-blobs.js';
import { CarrierReaper } from './carrier-reaper.js';
import { liveUploadChunkBlobs } from './upload-index.js';
import { StoreError } from './errors.js';
import { decodeKeyRecord, encodeKeyRecord } from './keys-record.js';

export interface RepositoryOptions {
  /** Use a provider without conditional writes as the anchor authority: the caller
   * promises that no other process writes this repository. */
  singleWriter?: boolean;
  /** Initialise an empty provider (default true). */
  create?: boolean;
  /** In-flight write bytes admitted at once (default 64 MiB; budget.ts). */
  pendingBytes?: number;
  /** Accounted history bytes allowed (default 256 MiB; history-budget.ts). Infinity: unbounded. */
  historyBudget?: number;
  /** Overlay bytes (all buckets) that trigger a checkpoint (default 32 MiB). */
  overlayBytes?: number;
  /** Commits after which a checkpoint is written anyway (default 4096). */
  checkpointEvery?: number;
  /** Runs per keyspace above which a checkpoint merges some of them (default 8; compaction-policy.ts). */
  maxRuns?: number;
  /** Bytes of decoded index blocks cached (default 32 MiB). */
  blockCacheBytes?: number;
  /** Bytes of small object bodies cached (default 64 MiB; 0 disables). */
  bodyCacheBytes?: number;
  /** Multipart uploads in progress per bucket beyond which CreateMultipartUpload is refused (default 10,000). */
  maxUploadsPerBucket?: number;
  /**
   * Commits wait while a checkpoint is in flight, as when checkpoints ran inside the commit
   * loop (default false). For benchmarks (bench/engine-checkpoint.ts), to measure what running
   * them beside the loop saves; never needed for correctness.
   */
  inlineCheckpoints?: boolean;
  /** History window (ms) of every bucket without its own `history` config (default 30 days; history-window.ts). */
  retentionMs?: number;
  /** Clock, ms (tests). */
  now?: () => number;
  /** Close the provider when the repository closes (it was opened for us). */
  ownsProvider?: boolean;
  /** Structured events (checkpoint, compaction, fence). */
  log?: (event: string, fields: Record<string, unknown>) => void;
}

export const DEFAULTS = {
  create: true,
  singleWriter: false,
  // 64 MiB holds 16 concurrent 1 MiB-segment carriers many times over and 4 whole 16 MiB
  // packed-size bodies; measured: a 5 GiB multipart upload and 16 concurrent 16 MiB PUTs pass.
  pendingBytes: 64 * 1024 * 1024,
  historyBudget: DEFAULT_HISTORY_BUDGET,
  overlayBytes: 32 * 1024 * 1024,
  checkpointEvery: 4096,
  maxRuns: 8,
  blockCacheBytes: 32 * 1024 * 1024,
  bodyCacheBytes: 64 * 1024 * 1024,
  // Far above what real clients keep open at once (tens per bucket: rclone, restic, the SDKs'
  // parallel uploaders), so only leaked or hostile uploads meet it; it bounds a bucket's uploads
  // keyspace (~0.3 KiB of index per upload: ~3 MiB) and what ListMultipartUploads and the expiry
  // sweep can have to walk.
  maxUploadsPerBucket: 10_000,
  retentionMs: 30 * 86_400_000, // history-window.ts DEFAULT_HISTORY_WINDOW_MS, as issue 9 specifies
};

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

export interface RepositoryStats {
  commits: number;
  /** Batches staged while the previous commit was still in flight. */
  pipelined: number;
  operations: number;
  checkpoints: number;
  compactions: number;
  /** Compactions of version logs (history), counted apart from the current state's. */
  logCompactions: number;
  /** Compactions that failed and were skipped (the checkpoint went on without them). */
  failedCompactions: number;
  largestBatch: number;
  /** Checkpoints that failed (and were abandoned; a later one retries). */
  failedCheckpoints: number;
  /** Batches that waited for a checkpoint in flight because the overlays were full again (back-pressure). */
  checkpointWaits: number;
  /** Time batches spent waiting so, ms. */
  checkpointWaitMs: number;
}

/** A batch whose commit blob is written or being written, and whose anchor move is pending. */
interface InFlight {
  seq: number;
  batch: Batch;
  ref: RecordRef;
  /** Settles true once the anchor names it (state applied, operations resolved), false if it failed. */
  done: Promise<boolean>;
}

type Operation = {
  run: (tx: Tx) => Promise<unknown>;
  /** Runs in a batch of its own on committed state (see Batch.alone). */
  alone: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
};

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
  readonly stats: RepositoryStats = { commits: 0, pipelined: 0, operations: 0, checkpoints: 0, compactions: 0, logCompactions: 0, failedCompactions: 0, largestBatch: 0, failedCheckpoints: 0, checkpointWaits: 0, checkpointWaitMs: 0 };
  readonly #opts: typeof DEFAULTS & RepositoryOptions;
  /** Buckets (ids) whose next checkpoint merges all their runs (requestMajorCompaction). */
  #major = new Set<string>();
  readonly #writer = newId(8);
  #seq = 0;
  #head: RecordRef | undefined;
  /** Time of the newest commit, ms; the next commit's time is later (see module doc). */
  #time = 0;
  #root: RecordRef & { seq: number };
  #anchorEtag: string;
  #queue: Operation[] = [];
  #draining: Promise<void> | null = null;
  #fenced: StoreError | null = null;
  /** Wakes the commit loop when an operation arrives while a commit is in flight. */
  #arrival: (() => void) | null = null;
  #closed = false;
  /** The anchor moves, in order: commits and checkpoints take turns (#serial). */
  #anchorTurn: Promise<unknown> = Promise.resolve();
  /** The checkpoint in flight (at most one), settled once landed or abandoned. */
  #checkpointing: Promise<void> | null = null;
  #checkpointFailures = 0;
  /** performance.now() before which no background checkpoint is started (after a failure). */
  #checkpointRetryAt = 0;

  private constructor(provider: Provider, opts: typeof DEFAULTS & RepositoryOptions, config: RepositoryConfig, anchor: Anchor, etag: string) {
    this.provider = provider;
    this.#opts = opts;
    this.config = config;
    this.budget = new PendingBudget(opts.pendingBytes);
    this.state.history.limit = opts.historyBudget;
    this.cache = new BlockCache({ maxBytes: opts.blockCacheBytes });
    this.bodies = new BodyCache(opts.bodyCacheBytes);
    this.reaper = new CarrierReaper(provider, (event, fields) => this.log(event, fields));
    this.#seq = anchor.seq;
    if (anchor.head) this.#head = anchor.head;
    this.#root = anchor.root;
    this.#anchorEtag = etag;
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
    const repo = new Repository(provider, opts, loaded.config, loaded.anchor, loaded.anchorEtag);
    // Commit times never precede what the repository already recorded (the root and anchor
    // carry times no earlier than the head commit's), whatever the clock says now.
    repo.#time = loaded.commits.reduce((t, c) => Math.max(t, c.time), Math.max(loaded.root.time, loaded.anchor.time));
    // Roots and commits written before the uploads keyspace name uploads by id alone: resolve
    // them while replaying, then forget the mapping.
    repo.state.legacyUploads = new Map();
    await repo.#restore(loaded.root);
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
    return this.#seq;
  }

  get rootSeq(): number {
    return this.#root.seq;
  }

  /** The server-wide history window (ms): buckets without their own `history` config use it. */
  get retentionMs(): number {
    return this.#opts.retentionMs;
  }

  /** Time of the newest commit, ms (commit times strictly increase; they may run ahead of now()). */
  get lastCommitTime(): number {
    return this.#time;
  }

  now(): number {
    return (this.#opts.now ?? Date.now)();
  }

  log(event: string, fields: Record<string, unknown>): void {
    this.#opts.log?.(event, fields);
  }

  async #restore(root: RootRecord): Promise<void> {
    // Forks share runs: each run is opened once, whatever number of buckets name it.
    const opened = new Map<string, Promise<RunHandle>>();
    const open = (meta: Uint8Array) => {
      const id = Buffer.from(meta).toString('base64');
      let h = opened.get(id);
      if (!h) opened.set(id, (h = openRunHandle(this.provider, meta, this.cache)));
      return h;
    };
    const lazy = new Map<string, RunHandle>();
    const openLazy = (meta: Uint8Array) => {
      const id = Buffer.from(meta).toString('base64');
      let h = lazy.get(id);
      if (!h) lazy.set(id, (h = lazyRunHandle(this.provider, meta, this.cache)));
      return h;
    };
    for (const b of root.buckets) {
      const bucket = new BucketState(b.name, b.id, b.created);
      for (const [name, value] of b.configs) bucket.configs.set(name, value);
      bucket.runs = await Promise.all(b.runs.map(open));
      bucket.uploads.runs = await Promise.all(b.uploadRuns.map((meta) => openRunHandle(this.provider, meta, this.cache)));
      bucket.uploads.count = b.uploadCount;
      // History runs are opened when history is read (or compacted), not to open the repository.
      bucket.versions.runs = (b.versionRuns ?? []).map(openLazy);
      this.state.buckets.set(b.name, bucket);
    }
    // An STR1 root lists uploads in progress itself: they become keyspace entries, as their
    // creating commits would make them.
    for (const u of root.uploads) {
      this.state.apply({ op: 'createUpload', bucket: u.bucket, uploadId: u.uploadId, record: u.record });
      for (const [number, record] of u.parts) this.state.apply({ op: 'putPart', bucket: u.bucket, uploadId: u.uploadId, number, record });
    }
    for (const [id, record] of root.keys ?? []) this.state.keys.set(id, decodeKeyRecord(record, `key ${id} of root ${root.seq}`));
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
    if (this.#fenced) return Promise.reject(this.#fenced);
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: op, alone: opts.alone === true, resolve: resolve as (v: unknown) => void, reject });
      this.#arrival?.();
      this.#kick();
    });
  }

  /** Starts draining the queue unless a drain (or a checkpoint) is already running. */
  #kick(): void {
    if (this.#draining || this.#queue.length === 0) return;
    this.#draining = this.#drain().finally(() => {
      this.#draining = null;
      this.#kick();
    });
  }

  /**
   * The group-commit loop, pipelined two deep: while batch N's anchor move is in flight,
   * batch N+1 is staged (its transactions see N's staged mutations) and its commit blob
   * written. Anchors still move strictly in sequence, each acknowledging its batch only
   * once durable; if N fails, N+1 fails with it (it was staged on top of N).
   */
  async #drain(): Promise<void> {
    let prev: InFlight | null = null;
    try {
      for (;;) {
        if (this.#fenced) {
          for (const op of this.#queue.splice(0)) op.reject(this.#fenced);
          return;
        }
        if (this.#queue.length > 0 && this.#checkpointing && (this.#opts.inlineCheckpoints || this.state.liveOverlayBytes() >= this.#opts.overlayBytes)) {
          // The overlays filled up again before the checkpoint in flight landed: back-pressure.
          const t = performance.now();
          if (prev) await prev.done;
          prev = null;
          while (this.#checkpointing) await this.#checkpointing.catch(() => undefined);
          this.stats.checkpointWaits++;
          this.stats.checkpointWaitMs += performance.now() - t;
          continue;
        }
        if (this.#queue.length > 0 && !(prev && this.#holdBehind(prev))) {
          const current = await this.#startBatch(prev);
          if (prev) await prev.done;
          prev = current;
          continue;
        }
        if (prev) {
          // Wait for the commit in flight, or for new operations to stage behind it.
          const arrived = new Promise<void>((resolve) => (this.#arrival = resolve));
          const settled = await Promise.race([prev.done.then(() => true), arrived.then(() => false)]);
          this.#arrival = null;
          if (!settled && !this.#holdBehind(prev)) continue;
          await prev.done;
          prev = null;
        }
        // A quiet pipeline: start a checkpoint if one is due (it runs beside the loop).
        this.#maybeStartCheckpoint();
        if (this.#queue.length === 0) return;
      }
    } finally {
      if (prev) await prev.done;
    }
  }

  /**
   * Stages the next batch on top of `prev` (when in flight), starts writing its commit
   * blob, and returns its completion (anchor moved, state applied, operations settled).
   */
  async #startBatch(prev: InFlight | null): Promise<InFlight | null> {
    const seq = (prev?.seq ?? this.#seq) + 1;
    const time = Math.max(this.now(), (prev ? prev.batch.time : this.#time) + 1);
    const batch = new Batch(seq, commitKey(seq), time, prev?.batch);
    const done: { op: Operation; value: unknown }[] = [];
    let taken = 0;
    while (this.#queue.length > 0 && done.length < BATCH_MAX_OPS && batch.bodyBytes < BATCH_MAX_BYTES) {
      if (this.#queue[0]!.alone && (prev || taken > 0)) break;
      const op = this.#queue.shift()!;
      taken++;
      batch.alone = op.alone;
      const tx = new Tx(this.state, batch);
      try {
        done.push({ op, value: await op.run(tx) });
      } catch (err) {
        tx.discard();
        op.reject(err);
      }
      if (op.alone) break;
    }
    if (batch.mutations.length === 0) {
      // Nothing to write; results still wait for what they read from `prev` to be durable.
      const settle = async () => {
        const ok = prev ? await prev.done : true;
        for (const d of done) ok ? d.op.resolve(d.value) : d.op.reject(new StoreError('Io', 'an earlier commit failed'));
        return ok;
      };
      return prev ? { seq: prev.seq, batch: prev.batch, ref: prev.ref, done: settle() } : (await settle(), null);
    }
    if (prev) this.stats.pipelined++;
    const parent = prev?.ref ?? this.#head ?? this.#root;
    const record = encodeCommit({ seq, parent, time: batch.time, mutations: batch.mutations, historyBytes: batch.historyAfter });
    // The reference is known before the write (layout and hash are deterministic), so a
    // successor can name this commit as its parent while it is still being written.
    const ref = recordRef(batch.blob, record, batch.bodies);
    const written = writeRecordBlob(this.provider, batch.blob, record, batch.bodies, batch.packId);
    written.catch(() => undefined); // awaited in finish(); may fail while `prev` settles
    const finish = async (): Promise<boolean> => {
      try {
        await written;
        if (prev && !(await prev.done)) throw this.#fenced ?? new StoreError('Io', `commit ${seq} was staged on a commit that failed`);
        batch.prev = undefined; // applied by now: read the state itself (and free it)
        await this.#serial(async () => {
          if (this.#fenced) throw this.#fenced;
          await this.#moveAnchor(seq, ref, this.#root);
          // Durable from here on, whatever happens next: the sequence is taken for good.
          this.#seq = seq;
          this.#head = ref;
          this.#time = batch.time;
          this.#applyDurable(seq, batch.mutations);
        });
      } catch (err) {
        const e = err instanceof StoreError ? err : new StoreError('Io', `commit ${seq} failed: ${String(err)}`, { cause: err });
        for (const d of done) d.op.reject(e);
        return false;
      }
      this.#maybeStartCheckpoint();
      this.stats.commits++;
      this.stats.operations += done.length;
      this.stats.largestBatch = Math.max(this.stats.largestBatch, done.length);
      for (const d of done) d.op.resolve(d.value);
      return true;
    };
    return { seq, batch, ref, done: finish() };
  }

  /**
   * Applies the mutations of commit `seq`, which the anchor already names, to memory. If that
   * throws, memory holds part of a durable commit: fences (StoreError 'Unsafe', thrown) so
   * nothing is committed on top of it; reopening replays the commit from storage.
   */
  #applyDurable(seq: number, mutations: readonly Mutation[]): void {
    try {
      for (const m of mutations) this.state.apply(m);
    } catch (err) {
      throw this.#fence(`commit ${seq} is durable but applying it in memory failed (${String(err)}); reopening replays it`, err);
    }
  }

  #checkpointDue(): boolean {
    const o = this.#opts;
    return this.state.overlayBytes() >= o.overlayBytes || this.#seq - this.#root.seq >= o.checkpointEvery || this.state.flushDue();
  }

  /** Whether nothing may be staged on top of `prev` until it is applied. */
  #holdBehind(prev: InFlight): boolean {
    return prev.batch.alone || this.#queue[0]?.alone === true;
  }

  /**
   * Runs `fn` (an anchor move and what must happen with it) once every anchor move queued
   * before has settled; anchor moves never overlap, and each reads the sequence, head and root
   * its predecessor left. Resolves or rejects as `fn` does.
   */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const turn = this.#anchorTurn.then(fn);
    this.#anchorTurn = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Compare-and-swaps the anchor to (seq, head, root). An ambiguous failure is resolved by
   * reading the anchor back: exactly the anchor we wrote means it landed; the anchor we last
   * knew (same etag, sequence, head and root) means it did not (StoreError 'Io', nothing
   * changed); anything else fences (StoreError 'Unsafe'). A checkpoint keeps sequence and
   * head, so only the whole anchor — root included — tells its write apart from the old one.
   */
  async #moveAnchor(seq: number, head: RecordRef | undefined, root: RecordRef & { seq: number }): Promise<void> {
    const time = Math.max(this.now(), this.#time);
    const anchor: Anchor = { format: FORMAT, seq, root, time, writer: this.#writer };
    if (head) anchor.head = head;
    const conditional = this.provider.capabilities.conditionalWrites;
    try {
      const info = await this.provider.put(ANCHOR_KEY, encodeAnchor(anchor), conditional ? { ifMatch: this.#anchorEtag } : {});
      this.#anchorEtag = info.etag;
      return;
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'PreconditionFailed') {
        throw this.#fence(`the anchor was moved by another writer (expected etag ${this.#anchorEtag})`, err);
      }
      let current;
      try {
        current = await readAnchor(this.provider);
      } catch (readErr) {
        throw this.#fence(`anchor update failed and its state cannot be read back: ${String(readErr)}`, err);
      }
      if (current && sameAnchor(current.anchor, anchor)) {
        this.#anchorEtag = current.etag;
        return;
      }
      const known = current?.anchor;
      if (
        known && current?.etag === this.#anchorEtag && known.seq === this.#seq &&
        sameRef(known.head, this.#head) && sameRef(known.root, this.#root) && known.root.seq === this.#root.seq
      ) {
        throw new StoreError('Io', `anchor update to ${seq} failed; the anchor did not move`, { cause: err });
      }
      throw this.#fence('the anchor is in an unexpected state after a failed update', err);
    }
  }

  #fence(why: string, cause: unknown): StoreError {
    this.#fenced = new StoreError('Unsafe', `writes stopped until the repository is reopened: ${why}`, { cause });
    this.log('repository.fenced', { reason: why });
    return this.#fenced;
  }

  /**
   * Forces a checkpoint: resolves once a root covering every commit acknowledged before the
   * call (and everything queued before it) is named by the anchor. Waits for a checkpoint in
   * flight first. Rejects with the checkpoint's failure (state stays readable; a later
   * checkpoint retries). Returns without one when the repository is fenced.
   */
  /**
   * Asks the next checkpoint to merge every run of the object index and the version log of the
   * buckets with ids `bucketIds` into one, dropping tombstones (expiry's dropped entries and
   * deleted keys): what frees their bytes. Expiry asks after dropping entries.
   */
  requestMajorCompaction(bucketIds: Iterable<string>): void {
    for (const id of bucketIds) this.#major.add(id);
  }

  #takeMajor(): ReadonlySet<string> {
    const taken = this.#major;
    this.#major = new Set();
    return taken;
  }

  async checkpoint(): Promise<void> {
    await this.run(async () => undefined);
    while (this.#checkpointing) await this.#checkpointing.catch(() => undefined);
    if (this.#fenced) return;
    await this.#startCheckpoint();
  }

  /**
   * Resolves once the commit loop is quiet and no checkpoint is in flight (tests, benchmarks,
   * shutdown paths). Never rejects: a failed checkpoint shows in stats and the log.
   */
  async idle(): Promise<void> {
    while (this.#draining || this.#checkpointing) {
      await this.#draining;
      await this.#checkpointing?.catch(() => undefined);
    }
  }

  /** Starts a background checkpoint when one is due, none is in flight and no backoff holds. */
  #maybeStartCheckpoint(): void {
    if (this.#checkpointing || this.#fenced || this.#closed || this.#seq === this.#root.seq) return;
    if (!this.#checkpointDue() || performance.now() < this.#checkpointRetryAt) return;
    try {
      this.#startCheckpoint().catch(() => undefined);
    } catch (err) {
      // Freezing is synchronous and should not throw; if it does, the commit that triggered it
      // is durable and applied all the same: log, back off, let a later commit retry.
      this.#checkpointRetryAt = performance.now() + CHECKPOINT_RETRY_MS[1];
      this.log('checkpoint.failed', { error: String(err) });
    }
  }

  /**
   * Freezes the state as of the newest applied commit (synchronously: no commit applies
   * meanwhile) and completes a checkpoint at it in the background; returns its completion,
   * which is also #checkpointing until it settles.
   */
  #startCheckpoint(): Promise<void> {
    const started = performance.now();
    const plan = freezeCheckpoint(this.state, this.#seq);
    const record = this.#rootRecord(plan);
    const tracked: Promise<void> = this.#completeCheckpoint(plan, record, started).then(
      () => {
        this.#checkpointFailures = 0;
        this.#checkpointRetryAt = 0;
      },
      (err: unknown) => {
        this.stats.failedCheckpoints++;
        this.#checkpointFailures++;
        const over = this.#checkpointFailures - CHECKPOINT_FREE_RETRIES;
        const wait = over <= 0 ? 0 : Math.min(CHECKPOINT_RETRY_MS[1], CHECKPOINT_RETRY_MS[0] * 2 ** (over - 1));
        this.#checkpointRetryAt = performance.now() + wait;
        this.log('checkpoint.failed', { seq: plan.seq, error: String(err), retryMs: wait });
        throw err;
      }
    ).finally(() => {
      if (this.#checkpointing === tracked) this.#checkpointing = null;
    });
    this.#checkpointing = tracked;
    return tracked;
  }

  /** The root record of `plan`'s commit, as of the freeze; its run lists are filled once built. */
  #rootRecord(plan: CheckpointPlan): RootRecord {
    const record: RootRecord = {
      seq: plan.seq,
      time: Math.max(this.now(), this.#time), // no earlier than the commits it covers
      repositoryId: this.config.repositoryId,
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
      keys: [...this.state.keys.values()].map((k) => [k.id, encodeKeyRecord(k)]),
      history: rootHistory(this.state, [...this.state.buckets.keys()]),
    };
    if (this.#head) record.head = this.#head;
    return record;
  }

  /**
   * Builds `plan`'s runs, writes its root, moves the anchor to it in turn with the commits, and
   * installs the runs in memory. On any failure abandons the plan (memory reads what it read)
   * and rejects; a failure to move the anchor may fence (see #moveAnchor).
   */
  async #completeCheckpoint(plan: CheckpointPlan, record: RootRecord, started: number): Promise<void> {
    try {
      await buildCheckpoint(plan, {
        provider: this.provider,
        cache: this.cache,
        maxRuns: this.#opts.maxRuns,
        // Taken by this checkpoint: a request made while it builds waits for the next one.
        major: this.#takeMajor(),
        log: (event, fields) => this.log(event, fields),
        onCompaction: (kind) => (kind === 'versions' ? this.stats.logCompactions++ : this.stats.compactions++),
        onCompactionFailed: () => this.stats.failedCompactions++,
      });
      plan.buckets.forEach((p, i) => {
        const b = record.buckets[i]!;
        b.runs = builtRuns(plan, p.objects).map((r) => r.meta);
        b.uploadRuns = builtRuns(plan, p.uploads).map((r) => r.meta);
        b.versionRuns = builtRuns(plan, p.versions).map((r) => r.meta);
      });
      const built = performance.now();
      const ref = await writeRecordBlob(this.provider, rootKey(plan.seq), encodeRoot(record));
      const root = { ...ref, seq: plan.seq };
      let head = plan.seq;
      await this.#serial(async () => {
        if (this.#fenced) throw this.#fenced;
        await this.#moveAnchor(this.#seq, this.#head, root);
        this.#root = root;
        head = this.#seq;
        installCheckpoint(this.state, plan);
      });
      this.stats.checkpoints++;
      const ms = (t: number) => Math.round(t - started);
      this.log('checkpoint', { seq: plan.seq, head, buckets: record.buckets.length, buildMs: ms(built), ms: ms(performance.now()) });
    } catch (err) {
      abandonCheckpoint(plan);
      throw err;
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
    if (this.#opts.ownsProvider) await this.provider.close();
  }
}
