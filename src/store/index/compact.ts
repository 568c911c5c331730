/**
 * @module Compaction: merges several sorted sources (runs, or a frozen overlay) into one new
 * run. It is a pipeline of two streams — mergeSources feeding writeRun — so memory is that
 * of the merge (one batch per source: a decoded block for a run) plus the run writer's
 * (one block, block index, bloom input); no stage collects the entries.
 */
import type { Provider } from '../../provider/provider.js';
import { FROM_START, mergeSources, type SortedSource } from './merge.js';
import { readAhead } from './read-ahead.js';
import type { RunMeta } from './run-format.js';
import { RunReader } from './run-reader.js';
import { writeRun, type RunEntry, type RunWriteOptions } from './run-writer.js';

export interface CompactOptions extends RunWriteOptions {
  /**
   * Called once per merged key with the newest value; returning false drops the key from the
   * output (e.g. a deletion when the output becomes the oldest level, so nothing older can
   * resurface). Default: keep everything.
   */
  keep?: (key: string, value: Uint8Array) => boolean;
}

/** The merged entries of `sources` (newest first) that `keep` accepts, in key order. */
async function* kept(
  sources: readonly SortedSource[],
  keep: CompactOptions['keep']
): AsyncGenerator<RunEntry, void, undefined> {
  const merged = mergeSources(sources, FROM_START);
  try {
    for await (const { key, value } of merged) {
      if (keep === undefined || keep(key, value)) yield [key, value];
    }
  } finally {
    await merged.return();
  }
}

/**
 * Writes one run at `blobKey` holding, for every key of `sources` (newest first), the newest
 * source's value, minus what `keep` rejects. The sources are only read; they stay valid, and
 * deleting the runs they came from is the caller's decision. Returns the new run's RunMeta
 * (possibly of an empty run). Throws what reading the sources or writeRun throws (nothing is
 * stored then).
 */
export async function compactRuns(
  provider: Provider,
  blobKey: string,
  sources: readonly SortedSource[],
  options: CompactOptions = {}
): Promise<RunMeta> {
  const { keep, ...writeOptions } = options;
  // Each source fetches its next block while this one is merged (read-ahead.ts); runs are
  // read once, past the block cache (RunReader.passOnce).
  const once = (s: SortedSource) => (s instanceof RunReader ? s.passOnce() : s);
  return writeRun(provider, blobKey, kept(sources.map((s) => readAhead(once(s))), keep), writeOptions);
}
