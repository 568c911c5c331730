/**
 * @module The repository's options, their defaults, and the counters it keeps (stats).
 */
import type { LatencyHistogram } from './latency-histogram.js';
import { DEFAULT_HISTORY_BUDGET } from './history-budget.js';
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
  /**
   * Append each group commit to a commit log segment when the provider offers one (fs:
   * `openLog`; default true). False: commit blobs and an anchor move per commit, as
   * providers without the capability always do. A repository written either way opens either
   * way (recovery always scans the log the anchor names).
   */
  commitLog?: boolean;
  /**
   * With a commit log: how many queued operations make the loop stage a batch on top of the
   * commit in flight (default BATCH_MAX_OPS: only a full batch); fewer wait for it to land and
   * go into the next batch together (commit-loop.ts STAGE_BEHIND_LOG_AT). 1 stages behind every
   * commit in flight, as the commit-blob path does; tests use it to hold a batch behind an append.
   */
  stageBehindLogAt?: number;
  /**
   * With a commit log: how long (ms) a batch about to start right after a batch of B operations
   * may wait for half of B to be queued (default 1: commit-loop.ts GATHER_MS; 0 never waits).
   * Tests set 0 to see batches as they form, or more to make the wait observable.
   */
  gatherMs?: number;
  /** How recently (ms) the last batch must have landed for the next one to gather (default 10:
   * commit-loop.ts GATHER_WITHIN_MS). Tests set more, so a slow machine does not end the window. */
  gatherWithinMs?: number;
  /** Segment bytes after which the commit log rolls to a new segment (default 48 MiB:
   * commit-log/segments.ts ROLL_AT_BYTES). Tests set a few KiB so rolls happen in short runs. */
  segmentRollBytes?: number;
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
  // The commit log (commit-log/) when the provider offers one (fs): one append and fdatasync
  // per group commit instead of a commit blob and an anchor move.
  commitLog: true,
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
  /** Commit log segments rolled to (one anchor move each; the first after every open counts). */
  segmentRolls: number;
  /** Batches that waited for more operations to join them (commit-loop.ts GATHER_MS). */
  gathered: number;
  /** How long each commit's append to the commit log took, from its start until it was
   * acknowledged durable (over erasure: on every live copy, a replacement included, after
   * whatever the log had queued ahead of it, such as a scrub's heal), for appends that succeeded. */
  logAppend: LatencyHistogram;
}
