/**
 * @module The append-log capability: a blob a provider lets one writer extend in place.
 *
 * A provider that can make a positional write durable cheaply (fs: pwrite + fdatasync on a
 * preallocated file) offers `openLog`; the repository then appends each group commit to a log
 * segment instead of writing a commit blob and moving the anchor (store/commit-log/). A
 * segment is an ordinary blob for every other purpose: `read`/`get` see its bytes (the
 * preallocated tail reads as zeros), `list` and `delete` treat it like any blob. Providers
 * without the capability (memory, s3, an erasure set over s3 domains) keep the commit-blob path;
 * the erasure provider over fs domains replicates segments (provider/erasure/log-segments.ts).
 *
 * The provider does not interpret the bytes: framing, checksums and which bytes count are the
 * repository's (store/commit-log/frame.ts).
 */
import { ProviderError } from './provider.js';

/** How an append failed: before anything could be durable, or at the sync (unknown state). */
export type AppendStage = 'write' | 'sync';

/** An append that failed; `stage` says whether writing again at the same offset is safe. */
export class AppendError extends ProviderError {
  readonly stage: AppendStage;
  constructor(stage: AppendStage, message: string, cause: unknown) {
    super('Io', message, { cause });
    this.name = 'AppendError';
    this.stage = stage;
  }
}

export interface AppendLog {
  readonly key: string;
  /** Bytes of the segment as created (preallocated); appends may run past it (the file grows,
   * by steps of this size on fs). */
  readonly preallocated: number;
  /**
   * Writes `chunks` back to back at byte `offset` of the segment (overwriting what is there),
   * then makes them durable (fdatasync). Resolves only once durable. Throws AppendError
   * with `stage: 'write'` when the write failed (nothing is durable; writing again at the
   * same offset is safe) or `stage: 'sync'` when the sync failed (the bytes' fate is unknown:
   * the caller must stop writing).
   */
  append(offset: number, chunks: readonly Uint8Array[]): Promise<void>;
  /**
   * Optional: cuts the segment to `end` bytes (what follows is never read: a preallocated tail,
   * a failed attempt) and makes that durable, then releases the handle as `close` does. Called
   * when the segment takes no more appends (a roll, a clean close), so it is accounted at its
   * written size. Throws RangeError for an `end` past the segment, ProviderError 'Io'.
   */
  seal?(end: number): Promise<void>;
  /** Releases the file handle; the segment stays. */
  close(): Promise<void>;
}
