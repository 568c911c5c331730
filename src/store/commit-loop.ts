/**
 * @module The group-commit loop.
 *
 * Operations queue while a commit is in flight; the next batch takes every queued operation
 * (up to BATCH_MAX_OPS / BATCH_MAX_BYTES), stages them in one transaction each, and makes them
 * durable in one of two ways, after which the in-memory state is changed and every operation
 * of the batch acknowledged:
 *   - with a commit log (a provider with `openLog`, commit-log/): ONE frame (small bodies +
 *     record) appended to the current segment and synced (one fdatasync); the anchor moves only
 *     at segment rolls and checkpoints. A write that fails leaves the position to the next
 *     batch (same sequence, same offset); a sync that fails fences.
 *   - otherwise: ONE commit blob (small bodies + record), then the anchor moved by
 *     compare-and-swap. The loop is
 * pipelined two deep (batch N+1 stages while N's anchor move is in flight; with a commit log
 * only when a full batch waits, STAGE_BEHIND_LOG_AT: the append is short, and batches formed
 * behind it came out small). If the fresh
 * overlays reach IN_FLIGHT_OVERLAY_SHARE of `overlayBytes` while a checkpoint is in flight, new
 * batches wait for it (back-pressure: overlays, frozen and live, stay bounded by about 1.5 times
 * `overlayBytes`, however many batches arrive meanwhile).
 */
import type { Provider } from '../provider/provider.js';
import { BATCH_MAX_BYTES, BATCH_MAX_OPS, commitKey } from './layout.js';
import { encodeCommit, type RecordRef } from './commit.js';
import { recordRef, writeRecordBlob } from './records-io.js';
import { AppendError, type AppendLog } from '../provider/append-log.js';
import { encodeFrame, FRAME_HEADER_BYTES, segmentAuth, type EncodedFrame } from './commit-log/frame.js';
import type { Segments } from './commit-log/segments.js';
import type { RepoState } from './state.js';
import { Batch, Tx } from './tx.js';
import { StoreError } from './errors.js';
import type { AnchorMover } from './anchor-move.js';
import type { ChainTip } from './chain-tip.js';
import type { CheckpointRunner } from './checkpoint-run.js';
import type { Fence } from './fencing.js';
import type { RepositoryStats } from './repository-options.js';

/** What the commit loop works on: the repository's parts, shared with the checkpoint runner. */
export interface CommitHost {
  provider: Provider;
  state: RepoState;
  tip: ChainTip;
  anchor: AnchorMover;
  fence: Fence;
  checkpoints: CheckpointRunner;
  /** The commit log's segments; undefined: the commit-blob path. */
  segments: Segments | undefined;
  stats: RepositoryStats;
  opts: { overlayBytes: number; inlineCheckpoints?: boolean; stageBehindLogAt?: number; gatherMs?: number; gatherWithinMs?: number };
  now: () => number;
  log: (event: string, fields: Record<string, unknown>) => void;
}

/** After a failed segment roll, commits go on (to the current segment past its preallocation,
 * or as commit blobs) and the next roll is tried this much later, ms: a full disk is not asked
 * to create a segment per batch. */
const ROLL_RETRY_MS = 1000;

/**
 * Longest wait (ms) for the clock to pass the previous commit's time before a batch is staged.
 * Waiting keeps commit times <= the wall clock (+ 1 ms) at > 1,000 commits/s; a commit runs at
 * most 1 ms ahead of the clock it read. A clock further behind than this stepped back (or is a
 * test's clock that stands still): then times run ahead of it (previous + 1 ms) rather than
 * stalling commits until it catches up.
 */
const CLOCK_WAIT_MAX_MS = 10;

/**
 * Share of `overlayBytes` the fresh overlays may fill while a checkpoint is in flight (holding
 * the frozen ones, about `overlayBytes` more) before batches wait for it: 0.5 bounds overlays
 * at ~1.5x `overlayBytes` instead of 2x. With the commit log a writer fills overlays faster
 * than a checkpoint flushes them, so it met the bound at nearly every checkpoint (1M-object
 * scale writer: 21 waits in 21 checkpoints, 2 with commit blobs), and V8 grows its heap in
 * proportion to what stays live. Measured there (bench:engine scale writer, side by side):
 * peak RSS 531 -> 474 MiB with the log, same throughput: checkpoints, started at
 * `overlayBytes` as before, pace a bulk writer either way; waiting earlier only moves its waits.
 */
const IN_FLIGHT_OVERLAY_SHARE = 0.5;

/**
 * With a commit log, a batch is staged on top of the commit in flight only when this many
 * operations wait (a full batch); fewer wait for it to land and then go in one batch. Staging
 * behind every commit in flight, as the commit-blob path does (its anchor move is two file
 * creations, long enough for a batch to fill behind it), took whatever had arrived by the
 * first operation's turn, often one or two: the batches came out small, and every batch costs
 * an append and its sync (one per copy over erasure, ~80 us of CPU each in this VM) and the
 * loop's own work. Measured with 4 KiB PUTs at 16 connections (prof of the server, medians of
 * 4 interleaved 8 s runs): fs 5.1 -> 7.3 operations per commit, 3,626 -> 4,285 PUTs/s at
 * 0.275 -> 0.245 ms of server CPU each; erasure (4,2) 4.6 -> 7.3, 2,883 -> 3,375 PUTs/s,
 * 0.36 -> 0.30 ms. At 4 connections no loss (fs 1,550-1,595 -> 1,636-1,672 PUTs/s).
 */
export const STAGE_BEHIND_LOG_AT = BATCH_MAX_OPS;

/**
 * With a commit log, the longest wait (ms) of a batch about to start with nothing in flight for
 * more operations to join it (gathering): when the last batch took B operations and landed less
 * than GATHER_WITHIN_MS ago, and fewer than half of B wait now (so B > 2), the batch waits until
 * half of B do, or this long (Node's shortest timer: about 1 ms, later on a busy loop). Why:
 * writers released together by one commit come back one by one, and the first to arrive found
 * the loop idle and went alone, while the others queued behind its append and went together:
 * at 16 connections of 4 KiB PUTs over (10,4), 25% of commits carried one operation (2,015 of
 * 8,000; strace showed runs of 1, 1, 13, 1, 1, 13), each paying m + 1 synchronous appends
 * (~60-110 us of pool-thread CPU each here) for one PUT.
 * Gathered, 51 of 8,000 did. Measured (servers side by side, 4 s rounds in turn, medians of the
 * rounds' shares of the fs provider without gathering): 16 connections, 19 rounds over 3
 * sessions: (10,4) 72 -> 75%, the fs provider itself 97-107% (its commit costs one append, so
 * it has less to gain); 4 connections, 4 rounds: (10,4) 85 -> 95%, fs 97-102%; p50 latency the
 * same or lower. A lone writer (B = 1) and the first batch after a pause never wait. Once a batch
 * has waited, the loop's checks run again (fence, back-pressure, a roll asked for meanwhile)
 * and the cue is used up: a batch waits once at most.
 */
export const GATHER_MS = 1;
/** A batch starting this long (ms) or more after the last one landed does not gather: it follows
 * a pause, not a commit whose writers are on their way back. */
export const GATHER_WITHIN_MS = 10;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A batch whose commit blob is written or being written, and whose anchor move is pending. */
interface InFlight {
  seq: number;
  batch: Batch;
  ref: RecordRef;
  /** Settles true once the anchor names it (state applied, operations resolved), false if it failed. */
  done: Promise<boolean>;
  /** With a commit log: the offset right after its frame in the current segment. */
  logEnd: number | undefined;
}

type Operation = {
  run: (tx: Tx) => Promise<unknown>;
  /** Runs in a batch of its own on committed state (see Batch.alone). */
  alone: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
};

export class CommitLoop {
  readonly #h: CommitHost;
  #queue: Operation[] = [];
  #draining: Promise<void> | null = null;
  /** Wakes the commit loop when an operation arrives while a commit is in flight. */
  #arrival: (() => void) | null = null;
  /** performance.now() before which no segment roll is tried again (after a failure). */
  #rollRetryAt = 0;
  /** A roll was asked for (requestRoll): the next batch goes to a new segment unless the
   * current one is still empty. */
  #rollWanted = false;
  /** Operations the last batch took, and when the last batch's operations were resolved
   * (performance.now()): gathering's cue. */
  #lastTaken = 0;
  #lastLanded = -Infinity;

  constructor(host: CommitHost) {
    this.#h = host;
  }

  /** The drain in progress, or null when the loop is quiet. */
  get draining(): Promise<void> | null {
    return this.#draining;
  }

  /**
   * Queues `op` for the next batch; resolves or rejects as Repository.run documents. The caller
   * has checked that the repository is open and not fenced.
   */
  enqueue<T>(op: (tx: Tx) => Promise<T>, alone: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: op, alone, resolve: resolve as (v: unknown) => void, reject });
      this.#arrival?.();
      this.#kick();
    });
  }

  /**
   * Rolls the commit log to a new segment before the next batch, unless the current segment
   * holds no frame yet (GC asks, so the segment appended to until now stops being the one the
   * anchor names and can be collected once nothing in it is reachable). Resolves once every
   * operation queued before it is durable and the roll is done or skipped; a failed roll is
   * logged and retried by a later batch (as a roll when full), never rejected here. Without a
   * commit log it only waits for the queue. Rejects as enqueue does (fenced).
   */
  requestRoll(): Promise<void> {
    if (this.#h.segments) this.#rollWanted = true;
    return this.enqueue(async () => undefined, false);
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
   * The group-commit loop, pipelined two deep: while batch N's anchor move is in flight (or,
   * with a commit log, its append, once a full batch waits behind it), batch N+1 is staged
   * (its transactions see N's staged mutations) and its commit blob written. Anchors still
   * move strictly in sequence, each acknowledging its batch only once durable; if N fails,
   * N+1 fails with it (it was staged on top of N).
   */
  async #drain(): Promise<void> {
    const h = this.#h;
    let prev: InFlight | null = null;
    try {
      for (;;) {
        if (h.fence.error) {
          for (const op of this.#queue.splice(0)) op.reject(h.fence.error);
          return;
        }
        if (this.#queue.length > 0 && h.checkpoints.inFlight && (h.opts.inlineCheckpoints || h.state.liveOverlayBytes() >= h.opts.overlayBytes * IN_FLIGHT_OVERLAY_SHARE)) {
          // The overlays filled up again before the checkpoint in flight landed: back-pressure.
          const t = performance.now();
          if (prev) await prev.done;
          prev = null;
          while (h.checkpoints.inFlight) await h.checkpoints.inFlight.catch(() => undefined);
          h.stats.checkpointWaits++;
          h.stats.checkpointWaitMs += performance.now() - t;
          continue;
        }
        if (this.#queue.length > 0 && !(prev && (this.#holdBehind(prev) || this.#queue.length < this.#stageBehindAt(prev)))) {
          const at = prev ? (prev.logEnd ?? Infinity) : (h.tip.log?.offset ?? Infinity);
          if (h.segments && (h.segments.full(at) || (this.#rollWanted && at > 0)) && performance.now() >= this.#rollRetryAt) {
            // A new segment: only with nothing in flight, so every frame in flight shares one.
            if (prev) await prev.done;
            prev = null;
            await this.#roll();
            continue;
          }
          // Gathering: after a wait, the checks above run again (a fence, back-pressure or a roll
          // asked for meanwhile); the cue is used up, so the batch does not wait twice.
          if (!prev && h.segments && (await this.#gather())) continue;
          // Commit times strictly increase and never run ahead of the clock: when the clock has
          // not passed the previous commit's time, wait for its next ms (operations queue
          // meanwhile, so the batch grows: group commit absorbs the wait).
          const ahead = (prev ? prev.batch.time : h.tip.time) + 1 - h.now();
          if (ahead > 0 && ahead <= CLOCK_WAIT_MAX_MS) await sleep(ahead);
          const current = await this.#startBatch(prev);
          if (prev) await prev.done;
          prev = current;
          continue;
        }
        if (prev) {
          // Wait for the commit in flight, or for enough new operations to stage behind it.
          const landed = prev.done.then(() => true);
          let settled = false;
          while (!settled && !this.#holdBehind(prev) && this.#queue.length < this.#stageBehindAt(prev)) {
            settled = await this.#untilArrival(landed, false);
          }
          if (!settled && !this.#holdBehind(prev)) continue;
          await prev.done;
          prev = null;
        }
        // A quiet pipeline: start a checkpoint if one is due (it runs beside the loop).
        h.checkpoints.maybeStart();
        if (this.#queue.length === 0) return;
      }
    } finally {
      if (prev) await prev.done;
    }
  }

  /**
   * Gathering (GATHER_MS): right after a batch of B operations (landed less than `gatherWithinMs`
   * ago), with fewer than half of B queued, waits until half of B are, `gatherMs` at most (the
   * repository's options; defaults GATHER_MS and GATHER_WITHIN_MS; gatherMs 0: never). Not when
   * the first queued operation runs alone anyway, nor on a fenced repository. Returns whether it
   * waited; a wait uses the cue up (the next call does not wait).
   */
  async #gather(): Promise<boolean> {
    const h = this.#h;
    const ms = h.opts.gatherMs ?? GATHER_MS;
    const want = Math.ceil(this.#lastTaken / 2);
    if (!(ms > 0) || this.#queue.length >= want || this.#queue[0]?.alone || h.fence.error) return false;
    if (performance.now() - this.#lastLanded >= (h.opts.gatherWithinMs ?? GATHER_WITHIN_MS)) return false;
    this.#lastTaken = 0;
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        expired = true;
        resolve();
      }, ms);
    });
    h.stats.gathered++;
    try {
      while (!expired && this.#queue.length < want && !h.fence.error) await this.#untilArrival(deadline, undefined);
    } finally {
      clearTimeout(timer);
    }
    return true;
  }

  /** What `other` settles with, or `arrived` at the next enqueue, whichever comes first (the
   * loop's one waiter for arrivals). */
  async #untilArrival<T>(other: Promise<T>, arrived: T): Promise<T> {
    try {
      return await Promise.race([other, new Promise<T>((resolve) => (this.#arrival = () => resolve(arrived)))]);
    } finally {
      this.#arrival = null;
    }
  }

  /**
   * Stages the next batch on top of `prev` (when in flight), starts writing its commit
   * blob, and returns its completion (anchor moved, state applied, operations settled).
   */
  async #startBatch(prev: InFlight | null): Promise<InFlight | null> {
    const h = this.#h;
    const seq = (prev?.seq ?? h.tip.seq) + 1;
    const time = Math.max(h.now(), (prev ? prev.batch.time : h.tip.time) + 1);
    // The log when it is set up at this position (a failed roll leaves the commit-blob path).
    const segment = h.segments?.current;
    const logAt = prev ? prev.logEnd : h.tip.log?.key === segment?.key ? h.tip.log?.offset : undefined;
    const inLog = segment !== undefined && logAt !== undefined;
    const batch = inLog ? new Batch(seq, segment.key, time, prev?.batch, logAt + FRAME_HEADER_BYTES) : new Batch(seq, commitKey(seq), time, prev?.batch);
    const done: { op: Operation; value: unknown }[] = [];
    let taken = 0;
    while (this.#queue.length > 0 && done.length < BATCH_MAX_OPS && batch.bodyBytes < BATCH_MAX_BYTES) {
      if (this.#queue[0]!.alone && (prev || taken > 0)) break;
      const op = this.#queue.shift()!;
      taken++;
      batch.alone = op.alone;
      const tx = new Tx(h.state, batch);
      try {
        done.push({ op, value: await op.run(tx) });
      } catch (err) {
        tx.discard();
        op.reject(err);
      }
      if (op.alone) break;
    }
    this.#lastTaken = taken;
    if (batch.mutations.length === 0) {
      // Nothing to write; results still wait for what they read from `prev` to be durable.
      const settle = async () => {
        const ok = prev ? await prev.done : true;
        for (const d of done) ok ? d.op.resolve(d.value) : d.op.reject(new StoreError('Io', 'an earlier commit failed'));
        return ok;
      };
      return prev ? { seq: prev.seq, batch: prev.batch, ref: prev.ref, done: settle(), logEnd: prev.logEnd } : (await settle(), null);
    }
    if (prev) h.stats.pipelined++;
    const parent = prev?.ref ?? h.tip.head ?? h.tip.root;
    let record: Uint8Array;
    try {
      record = encodeCommit({ seq, parent, time: batch.time, mutations: batch.mutations, historyBytes: batch.historyAfter });
    } catch (err) {
      // A batch that cannot be encoded (a bug: e.g. a negative history total) fails its own
      // operations and nothing else: it was only staged, so dropping it leaves the state and
      // the sequence as they were, and the next batch stages on `prev` as if it never ran.
      const e = new StoreError('Io', `commit ${seq} could not be encoded: ${String(err)}`, { cause: err });
      for (const d of done) d.op.reject(e);
      return prev;
    }
    if (inLog) return this.#logBatch(prev, batch, record, segment, logAt, done);
    // The reference is known before the write (layout and hash are deterministic), so a
    // successor can name this commit as its parent while it is still being written.
    const ref = recordRef(batch.blob, record, batch.bodies);
    const written = writeRecordBlob(h.provider, batch.blob, record, batch.bodies, batch.packId);
    written.catch(() => undefined); // awaited in finish(); may fail while `prev` settles
    const finish = () =>
      this.#settle(seq, done, async () => {
        await written;
        if (prev && !(await prev.done)) throw h.fence.error ?? new StoreError('Io', `commit ${seq} was staged on a commit that failed`);
        batch.prev = undefined; // applied by now: read the state itself (and free it)
        await h.anchor.serial(async () => {
          if (h.fence.error) throw h.fence.error;
          await h.anchor.move({ seq, head: ref, root: h.tip.root }, Math.max(h.now(), h.tip.time));
          // Durable from here on, whatever happens next: the sequence is taken for good.
          h.tip.seq = seq;
          h.tip.head = ref;
          h.tip.time = batch.time;
          h.tip.log = undefined; // the anchor names no log position now: the log needs a roll
          this.#applyDurable(seq, batch);
        });
      });
    return { seq, batch, ref, done: finish(), logEnd: undefined };
  }

  /**
   * Runs `durable` (the batch's write and anchor move or log append, applying it), then settles
   * the batch's operations: all resolved with their values once it is durable, all rejected
   * with its error (a StoreError; others wrapped as 'Io') if it throws. Returns whether the
   * batch committed.
   */
  async #settle(seq: number, done: { op: Operation; value: unknown }[], durable: () => Promise<void>): Promise<boolean> {
    const h = this.#h;
    try {
      await durable();
    } catch (err) {
      const e = err instanceof StoreError ? err : new StoreError('Io', `commit ${seq} failed: ${String(err)}`, { cause: err });
      for (const d of done) d.op.reject(e);
      return false;
    }
    h.checkpoints.maybeStart();
    h.stats.commits++;
    h.stats.operations += done.length;
    h.stats.largestBatch = Math.max(h.stats.largestBatch, done.length);
    this.#lastLanded = performance.now();
    for (const d of done) d.op.resolve(d.value);
    return true;
  }

  /**
   * The commit-log half of #startBatch: frames `batch` (staged at `at` of `segment`) and returns
   * its completion: once `prev` is applied, in its anchor turn, the frame is appended and synced,
   * then the tip advances, memory applies it and its operations resolve. A failed write rejects
   * them and leaves the tip (the next batch takes the same sequence and offset); a failed sync
   * fences (StoreError 'Unsafe': the frame may or may not be durable).
   */
  #logBatch(prev: InFlight | null, batch: Batch, record: Uint8Array, segment: AppendLog, at: number, done: { op: Operation; value: unknown }[]): InFlight {
    const h = this.#h;
    const seq = batch.seq;
    const ref = recordRef(segment.key, record, batch.bodies, at + FRAME_HEADER_BYTES);
    let frame: EncodedFrame;
    try {
      frame = encodeFrame(seq, record, batch.bodies, batch.packId, segmentAuth(segment.key, h.segments!.frameKey));
    } catch (err) {
      const e = new StoreError('Io', `commit ${seq} cannot be framed: ${String(err)}`, { cause: err });
      for (const d of done) d.op.reject(e);
      return { seq, batch, ref, done: Promise.resolve(false), logEnd: at };
    }
    const end = at + frame.bytes;
    const finish = () =>
      this.#settle(seq, done, async () => {
        if (prev && !(await prev.done)) throw h.fence.error ?? new StoreError('Io', `commit ${seq} was staged on a commit that failed`);
        batch.prev = undefined; // applied by now: read the state itself (and free it)
        await h.anchor.serial(async () => {
          if (h.fence.error) throw h.fence.error;
          const started = performance.now();
          try {
            await segment.append(at, frame.chunks);
            h.stats.logAppend.observe((performance.now() - started) / 1000);
          } catch (err) {
            if (err instanceof AppendError && err.stage === 'write') throw new StoreError('Io', `commit ${seq}: ${err.message}`, { cause: err });
            throw h.fence.fence(`commit ${seq}: the log append may or may not be durable (${String(err)})`, err);
          }
          // Durable from here on, whatever happens next: the sequence is taken for good.
          h.tip.seq = seq;
          h.tip.head = ref;
          h.tip.time = batch.time;
          h.tip.log = { key: segment.key, offset: end };
          this.#applyDurable(seq, batch);
        });
      });
    return { seq, batch, ref, done: finish(), logEnd: end };
  }

  /**
   * Rolls the commit log to a new segment (nothing in flight): creates it, then in an anchor
   * turn moves the anchor to name it at offset 0 with the current tip, and only then appends go
   * there. On failure logs 'commitlog.roll.failed' and backs off: batches go on as before (past
   * the preallocation, or as commit blobs when no segment is set up). A failed anchor move may
   * fence (AnchorMover.move).
   */
  async #roll(): Promise<void> {
    const h = this.#h;
    const segments = h.segments!;
    this.#rollWanted = false;
    let created: AppendLog | undefined;
    // The old segment's written end (nothing is in flight): it is sealed there once left.
    const oldEnd = h.tip.log && h.tip.log.key === segments.current?.key ? h.tip.log.offset : undefined;
    try {
      created = await segments.create(h.tip.seq + 1);
      const segment = created;
      await h.anchor.serial(async () => {
        if (h.fence.error) throw h.fence.error;
        const log = { key: segment.key, offset: 0 };
        await h.anchor.move({ seq: h.tip.seq, head: h.tip.head, root: h.tip.root, log }, Math.max(h.now(), h.tip.time));
        h.tip.log = log;
      });
      await segments.use(segment, oldEnd);
      h.stats.segmentRolls++;
      h.log('commitlog.rolled', { segment: segment.key, seq: h.tip.seq });
    } catch (err) {
      await created?.close().catch(() => undefined);
      this.#rollRetryAt = performance.now() + ROLL_RETRY_MS;
      h.log('commitlog.roll.failed', { error: String(err), retryMs: ROLL_RETRY_MS });
    }
  }

  /**
   * Applies the mutations of commit `seq` (`batch`), which the anchor already names, to memory,
   * and marks `batch` applied (Batch.applied). If that
   * throws, memory holds part of a durable commit: fences (StoreError 'Unsafe', thrown) so
   * nothing is committed on top of it; reopening replays the commit from storage.
   */
  #applyDurable(seq: number, batch: Batch): void {
    try {
      for (const m of batch.mutations) this.#h.state.apply(m);
      // In the same synchronous step: a batch staged on this one reads the state from now on.
      batch.applied = true;
    } catch (err) {
      throw this.#h.fence.fence(`commit ${seq} is durable but applying it in memory failed (${String(err)}); reopening replays it`, err);
    }
  }

  /** Queued operations that make a batch worth staging on top of `prev` in flight: one on the
   * commit-blob path, a full batch (STAGE_BEHIND_LOG_AT) with a commit log. */
  #stageBehindAt(prev: InFlight): number {
    return prev.logEnd === undefined ? 1 : (this.#h.opts.stageBehindLogAt ?? STAGE_BEHIND_LOG_AT);
  }

  /** Whether nothing may be staged on top of `prev` until it is applied. */
  #holdBehind(prev: InFlight): boolean {
    return prev.batch.alone || this.#queue[0]?.alone === true;
  }
}
