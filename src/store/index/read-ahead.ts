/**
 * @module Reading one batch ahead of a merge: a SortedSource wrapper whose scan asks its source
 * for the next batch as soon as it hands the current one over, so the next run block is being
 * fetched while the merge and the run writer work on this one.
 *
 * Compaction merges runs block by block, each block one ranged read. On a local directory a
 * read is a fraction of a millisecond, but on an S3 backend it is a round trip (4-6 ms on
 * Ceph RGW on this machine), and a compaction of 9 runs of a million-object bucket reads
 * ~1,100 blocks in a row: without read-ahead its 10-16 s were mostly waiting, and the commits
 * waited behind it (test/ceph/scale.test.ts prints `checkpointWaitMs`).
 *
 * Memory: one more batch per source (one decoded run block, at most the run's block size).
 * The sources Strata merges (run readers, sorted maps) hand out independent batches, so a batch
 * stays valid while the next is fetched.
 */
import type { EntryBatch, SeekKey, SortedSource } from './merge.js';

type Step = IteratorResult<EntryBatch, unknown>;

/**
 * `source`, with every scan reading one batch ahead. Errors of the read ahead are reported
 * when the merge asks for that batch (never as an unhandled rejection); `return()` waits for a
 * read in flight, then closes the source's iterator. Mutates nothing.
 */
export function readAhead(source: SortedSource): SortedSource {
  return {
    name: source.name,
    scan(from: SeekKey): AsyncIterator<EntryBatch, unknown, undefined> {
      const inner = source.scan(from);
      let ahead: Promise<Step> | undefined;
      let finished = false;
      const pull = (): Promise<Step> => {
        const p = inner.next();
        p.catch(() => undefined); // reported when awaited by next()
        return p;
      };
      return {
        async next(): Promise<Step> {
          if (finished) return { done: true, value: undefined };
          const current = ahead ?? pull();
          ahead = undefined;
          let step: Step;
          try {
            step = await current;
          } catch (err) {
            finished = true;
            throw err;
          }
          if (step.done) finished = true;
          else ahead = pull();
          return step;
        },
        async return(value?: unknown): Promise<Step> {
          finished = true;
          const pending = ahead;
          ahead = undefined;
          if (pending) await pending.catch(() => undefined);
          const closed = await inner.return?.(value);
          return closed ?? { done: true, value };
        },
      };
    },
  };
}
