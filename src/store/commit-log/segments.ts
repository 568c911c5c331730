/**
 * @module The commit log's segments: naming, sizing, creating and switching them.
 *
 * The repository appends every group commit to the current segment (commit-loop.ts) and rolls
 * to a fresh one when the current one is full, and at every open (so a reopened repository
 * never writes behind a torn tail: what follows the last good frame is abandoned with its
 * segment). A roll creates the segment (durable, empty) first, then moves the anchor to name
 * it at offset 0; only then do frames go there. The segment left behind is sealed at its
 * written end (the preallocated tail cut off). A segment stays while GC finds anything in it
 * reachable (a commit of the chain after the root, or a body the index names); GC asks for a
 * roll before it marks (Repository.rollLog), so the segment appended to until then can go too.
 */
import type { AppendLog } from '../../provider/append-log.js';
import type { Provider } from '../../provider/provider.js';
import { logKey } from '../layout.js';
import type { FrameKey } from './frame.js';

/** Bytes preallocated per segment, and the step it grows by (fs: log-segment.ts): 4 MiB holds
 * ~5,000 commits of one 512 B object or ~60 batches of 16 4 KiB objects, so growing (one
 * ftruncate) is rare, while a segment is never more than 4 MiB longer than what it holds:
 * space accounting (list sizes, GC) and a new empty segment stay small (<= 0.4% of 1 GiB). */
export const SEGMENT_BYTES = 4 * 1024 * 1024;
/** The next batch goes to a new segment once the current one holds this much: 48 MiB leaves a
 * whole 16 MiB batch room inside the preallocation (a bigger frame still fits: the file grows). */
export const ROLL_AT_BYTES = 48 * 1024 * 1024;

export class Segments {
  readonly #openLog: NonNullable<Provider['openLog']>;
  readonly #rollAt: number;
  /** The repository's frame keys (frame.ts): frames appended here are keyed with them. */
  readonly frameKey: FrameKey;
  #current: AppendLog | undefined;

  /**
   * `openLog`: the provider's capability (Provider.openLog), bound to it. `frameKey`: the
   * repository's (frame.ts deriveFrameKey). `rollAt`: bytes after
   * which the next batch goes to a new segment (default ROLL_AT_BYTES; tests pass a few KiB to
   * make rolls, and so GC of rolled segments, happen within a short run).
   */
  constructor(openLog: NonNullable<Provider['openLog']>, frameKey: FrameKey, rollAt = ROLL_AT_BYTES) {
    this.#openLog = openLog;
    this.frameKey = frameKey;
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

  /**
   * Makes `segment` the current one (the anchor names it now) and lets go of the previous one:
   * sealed at `end` (the offset after its last durable frame) when given, else closed. Never
   * throws: a seal that fails leaves a longer segment, which every reader bounds by its frames.
   */
  async use(segment: AppendLog, end?: number): Promise<void> {
    const old = this.#current;
    this.#current = segment;
    if (old) await release(old, end);
  }

  /** Lets go of the current segment (the segment stays): sealed at `end` when given, else closed. */
  async close(end?: number): Promise<void> {
    const old = this.#current;
    this.#current = undefined;
    if (old) await release(old, end);
  }
}

/** Seals `segment` at `end` when both the caller knows its end and the provider can seal; closes it otherwise. */
async function release(segment: AppendLog, end: number | undefined): Promise<void> {
  if (end !== undefined && segment.seal) await segment.seal(end).catch(() => segment.close().catch(() => undefined));
  else await segment.close().catch(() => undefined);
}
