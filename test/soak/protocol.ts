/**
 * @module The kill test's wire format: what the parent tells a worker (WorkerConfig, a
 * JSON file) and the JSON lines the worker prints on stdout, one per event.
 *
 * Every operation prints `start` before it is issued and `ack` (or `error`) after it
 * settled, each with a synchronous write, so when the worker dies the parent knows which
 * operations were acknowledged and which were in flight.
 */
import type { BodySpec } from './bodies.js';

/** What a key holds: the parts of its body in order, or null when absent. */
export type Content = BodySpec[] | null;

/** The one bucket every worker writes. */
export const BUCKET = 'soak';

/** Store options a worker opens with: small, so checkpoints and compactions happen often. */
export interface WorkerStoreOptions {
  checkpointEvery: number;
  overlayBytes: number;
  maxRuns: number;
  /** Every root write waits this long first (ms), so checkpoints are in flight most of the time. */
  rootDelayMs?: number;
  /** Append commits to the fs commit log (RepositoryOptions.commitLog). */
  commitLog?: boolean;
}

export interface WorkerConfig {
  dir: string;
  seed: number;
  /** Unique per worker run on one directory: makes every (key, generation) unique. */
  iteration: number;
  keys: string[];
  /** What each key holds when the worker starts (exact: the parent resolved it). */
  state: Record<string, Content>;
  store: WorkerStoreOptions;
  /** Concurrent operation loops; 0: open the store, report ready, then idle. */
  lanes: number;
}

export type StartLine =
  | { t: 'start'; id: number; op: 'put'; key: string; content: BodySpec[] }
  | { t: 'start'; id: number; op: 'delete'; key: string }
  | { t: 'start'; id: number; op: 'deleteMany'; keys: string[] }
  | { t: 'start'; id: number; op: 'copy'; src: string; key: string }
  | { t: 'start'; id: number; op: 'mpu-create'; key: string }
  | { t: 'start'; id: number; op: 'mpu-part'; key: string; uploadId: string; part: number; spec: BodySpec }
  | { t: 'start'; id: number; op: 'mpu-complete'; key: string; uploadId: string; content: BodySpec[] }
  | { t: 'start'; id: number; op: 'get'; key: string };

/** A start line without its envelope (what an operation is). */
export type OpSpec = StartLine extends infer S ? (S extends StartLine ? Omit<S, 't' | 'id'> : never) : never;

export type Line =
  | StartLine
  | { t: 'ready'; seq: number; rootSeq: number }
  | { t: 'ack'; id: number; uploadId?: string }
  | { t: 'error'; id: number; code: string; message: string }
  /** A check inside the worker failed (a read returned bytes other than the acknowledged ones). */
  | { t: 'fail'; id: number; message: string }
  /** A repository log event (checkpoint, compaction, repository.fenced, ...). */
  | { t: 'event'; event: string }
  | { t: 'fatal'; message: string };
