/**
 * @module The commit log's segments: naming, sizing, creating and switching them.
 *
 * The repository appends every group commit to the current segment (commit-loop.ts) and rolls
 * to a fresh one when the current one is full, and at every open (so a reopened repository
 * never writes behind a torn tail: what follows the last good frame is abandoned with its
 * segment). A roll creates the segment (durable, empty) first, then moves the anchor to name
 * it at offset 0; only then do frames go there. A segment stays while GC finds anything in it
 * reachable (a commit of the chain after the root, or a body the index names).
 */
import type { AppendLog } from '../../provider/append-log.js';
import type { Provider } from '../../provider/provider.js';
import { logKey } from '../layout.js';

/** Bytes preallocated per segment: 64 MiB holds four full batches (layout.ts BATCH_MAX_BYTES)
 * or ~75,000 commits of one 512 B object, so rolls (one anchor move each) are rare. */
export const SEGMENT_BYTES = 64 * 1024 * 1024;
/** The next batch goes to a new segment once the current one holds this much: 48 MiB leaves a
 * whole 16 MiB batch room inside the preallocation (a bigger frame still fits: the file grows). */
export const ROLL_AT_BYTES = 48 * 1024 * 1024;

export class Segments {
  readonly #openLog: NonNullable<Provider['openLog']>;
  readonly #rollAt: number;
  #current: AppendLog | undefined;

  /**
   * `openLog`: the provider's capability (Provider.openLog), bound to it. `rollAt`: bytes after
   * which the next batch goes to a new segment (default ROLL_AT_BYTES; tests pass a few KiB to
   * make rolls, and so GC of rolled segments, happen within a short run).
   */
  constructor(openLog: NonNullable<Provider['openLog']>, rollAt = ROLL_AT_BYTES) {
    this.#openLog = openLog;
    this.#rollAt = rollAt;
  }

  /** The segment appends go to; undefined before the first roll. */
  get current(): AppendLog | undefined {
    return this.#current;
  }

  /** Whether a batch starting at `offset` of the current segment should go to a new one. */
  full(offset: number): boolean {
    return !this.#current || offset >= this.#rollAt;
  }

  /**
   * Creates (durable, empty) the segment whose first commit will be `firstSeq` and returns it;
   * appends still go to the current one until `use` switches. Throws provider errors.
   */
  create(firstSeq: number): Promise<AppendLog> {
    return this.#openLog(logKey(firstSeq), SEGMENT_BYTES);
  }

  /** Makes `segment` the current one (the anchor names it now) and closes the previous one. */
  async use(segment: AppendLog): Promise<void> {
    const old = this.#current;
    this.#current = segment;
    await old?.close().catch(() => undefined);
  }

  /** Closes the current segment's handle (the segment stays). */
  async close(): Promise<void> {
    const old = this.#current;
    this.#current = undefined;
    await old?.close().catch(() => undefined);
  }
}
