/**
 * @module The repository's use of index runs: write an overlay as a run, open runs named
 * by a root, compact a bucket's runs. The only file that knows the index module's API.
 *
 * Runs of the object index and the uploads keyspace are opened (footer read and checked)
 * before they are used; runs of the version log are opened on first read (lazyRunHandle),
 * since only history reads and history compaction need them.
 */
import type { Provider } from '../provider/provider.js';
import { writeRun } from './index/run-writer.js';
import { openRun, type RunReader } from './index/run-reader.js';
import { encodeRunMeta, decodeRunMeta, type RunMeta } from './index/run-format.js';
import { compactRuns } from './index/compact.js';
import type { BlockCache } from './index/block-cache.js';
import type { SortedMap } from './index/sorted-map.js';
import type { SeekKey } from './index/merge.js';
import { runKey, uploadRunKey, versionRunKey } from './layout.js';
import { isTombstone } from './records.js';
import { isGone, UPLOAD_PREFIX } from './upload-keys.js';
import type { RunHandle } from './state.js';
import { blobError } from './body-reader.js';

/** Opens a run; failures become StoreError 'Corrupt' / 'MissingBlob' naming the run. */
export async function openRunHandle(provider: Provider, meta: Uint8Array, cache: BlockCache): Promise<RunHandle> {
  let key = '(run metadata)';
  try {
    const decoded = decodeRunMeta(meta);
    key = decoded.blobKey;
    const reader = await openRun(provider, decoded, cache);
    return { meta, key, reader };
  } catch (err) {
    throw blobError(err, key);
  }
}

/**
 * A handle on the run `meta` names that reads nothing until first used; the first get or scan
 * opens the run (one ranged read, as openRunHandle). For the version log: a repository opens
 * without reading its history's runs, only what it serves (the current namespace, uploads).
 * An open that fails is not kept: the use fails (as openRunHandle's errors, naming the run)
 * and the next use tries again. Throws StoreError 'Corrupt' now if `meta` does not decode.
 */
export function lazyRunHandle(provider: Provider, meta: Uint8Array, cache: BlockCache): RunHandle {
  let decoded: RunMeta;
  try {
    decoded = decodeRunMeta(meta);
  } catch (err) {
    throw blobError(err, '(run metadata)');
  }
  const key = decoded.blobKey;
  let opening: Promise<RunReader> | undefined;
  const open = (): Promise<RunReader> =>
    (opening ??= openRun(provider, decoded, cache).catch((err: unknown) => {
      opening = undefined;
      throw blobError(err, key);
    }));
  const reader = {
    name: key,
    async get(k: string): Promise<Uint8Array | undefined> {
      return (await open()).get(k);
    },
    async *scan(from: SeekKey) {
      yield* (await open()).scan(from);
    },
  };
  return { meta, key, reader };
}

/**
 * Writes the overlay's entries (tombstones included: they shadow older runs) as a run, of the
 * bucket's object index or (`uploads`) of its uploads keyspace.
 */
export async function flushOverlay(provider: Provider, bucketId: string, overlay: SortedMap, cache: BlockCache, uploads = false): Promise<RunHandle> {
  const meta = await writeRun(provider, uploads ? uploadRunKey(bucketId) : runKey(bucketId), overlay.entries());
  return openRunHandle(provider, encodeRunMeta(meta), cache);
}

/**
 * Merges every run of a bucket (newest first) into one. The result is the oldest level,
 * so tombstones have nothing left to shadow and are dropped.
 */
export async function compactAll(provider: Provider, bucketId: string, runs: readonly RunHandle[], cache: BlockCache): Promise<RunHandle> {
  const meta = await compactRuns(provider, runKey(bucketId), runs.map((r) => r.reader), {
    keep: (_key: string, value: Uint8Array) => !isTombstone(value),
  });
  return openRunHandle(provider, encodeRunMeta(meta), cache);
}

/**
 * Merges the newest `runs` of a bucket's object index (newest first), not all of them: older
 * runs may still need the tombstones, so everything is kept. For buckets that share older
 * runs with forks (keyspace.ts sharingKeyspaces), which a full merge would rewrite once per
 * sharer.
 */
export async function compactNewest(provider: Provider, bucketId: string, runs: readonly RunHandle[], cache: BlockCache): Promise<RunHandle> {
  const meta = await compactRuns(provider, runKey(bucketId), runs.map((r) => r.reader), {});
  return openRunHandle(provider, encodeRunMeta(meta), cache);
}

/**
 * What survives a full compaction of an uploads keyspace (upload-keys.ts), as a stateful filter
 * called in key order: deletions go (nothing older is left to shadow), and so do the parts of
 * every upload whose record is not live: they follow their record directly, so remembering the
 * last live record is enough.
 */
export function uploadsKeep(): (key: string, value: Uint8Array) => boolean {
  let live: string | undefined;
  return (key, value) => {
    const gone = isGone(value);
    if (!key.startsWith(UPLOAD_PREFIX)) return !gone;
    // A part key is its record's key + NUL + 4 hex digits; a record key ends in hex digits.
    if (key.length > 5 && key.charCodeAt(key.length - 5) === 0) {
      return !gone && live !== undefined && key.length === live.length + 5 && key.startsWith(live);
    }
    live = gone ? undefined : key;
    return !gone;
  };
}

/**
 * How many of an uploads keyspace's newest runs (newest first) a checkpoint merges: none while
 * there are at most `maxRuns`; else the newest runs as long as the next older one is no larger
 * than what is merged so far (size tiers: a run is rewritten about log2(keyspace / flush) times,
 * and a checkpoint does not rewrite large runs of untouched uploads); when that finds fewer than
 * two, none until there are 2 * maxRuns runs, then the newest two. All of them is a full
 * compaction (see compactUploads).
 */
export function uploadsCompactionSize(runs: readonly RunHandle[], maxRuns: number): number {
  if (runs.length <= maxRuns) return 0;
  const sizes = runs.map((r) => decodeRunMeta(r.meta).size);
  let n = 1;
  let merged = sizes[0]!;
  while (n < runs.length && sizes[n]! <= merged) merged += sizes[n++]!;
  if (n >= 2) return n;
  return runs.length >= 2 * maxRuns ? 2 : 0;
}

/**
 * Merges the newest `runs` of a bucket's uploads keyspace (newest first) into one. When they
 * are all of its runs the result is the oldest level: deletions and the parts of ended uploads
 * go (uploadsKeep); otherwise everything is kept, since older runs may still need shadowing.
 */
export async function compactUploads(provider: Provider, bucketId: string, runs: readonly RunHandle[], cache: BlockCache, all: boolean): Promise<RunHandle> {
  const meta = await compactRuns(provider, uploadRunKey(bucketId), runs.map((r) => r.reader), all ? { keep: uploadsKeep() } : {});
  return openRunHandle(provider, encodeRunMeta(meta), cache);
}

/** Writes a version log overlay (version-log.ts) as a run of the bucket; its handle is lazy. */
export async function flushVersions(provider: Provider, bucketId: string, overlay: SortedMap, cache: BlockCache): Promise<RunHandle> {
  const meta = await writeRun(provider, versionRunKey(bucketId), overlay.entries());
  return lazyRunHandle(provider, encodeRunMeta(meta), cache);
}

/**
 * Writes a version log run from sorted entries (the pre-log namespace, version-log-migrate.ts);
 * undefined when there are none; the handle is lazy.
 */
export async function writeVersionsRun(
  provider: Provider,
  bucketId: string,
  entries: AsyncIterable<[string, Uint8Array]>,
  cache: BlockCache
): Promise<RunHandle | undefined> {
  const meta = await writeRun(provider, versionRunKey(bucketId), entries);
  if (meta.entryCount === 0) return undefined;
  return lazyRunHandle(provider, encodeRunMeta(meta), cache);
}

/**
 * Writes an object index run from sorted entries (a fork as of a past time, fork-at-time.ts);
 * undefined when there are none.
 */
export async function writeIndexRun(
  provider: Provider,
  bucketId: string,
  entries: AsyncIterable<[string, Uint8Array]>,
  cache: BlockCache
): Promise<RunHandle | undefined> {
  const meta = await writeRun(provider, runKey(bucketId), entries);
  if (meta.entryCount === 0) return undefined;
  return openRunHandle(provider, encodeRunMeta(meta), cache);
}

/**
 * Merges the newest `runs` of a bucket's version log (newest first) into one, keeping every
 * entry (nothing in the log expires yet: each log key's newest value survives); the merged
 * run's handle is lazy.
 */
export async function compactVersions(provider: Provider, bucketId: string, runs: readonly RunHandle[], cache: BlockCache): Promise<RunHandle> {
  const meta = await compactRuns(provider, versionRunKey(bucketId), runs.map((r) => r.reader));
  return lazyRunHandle(provider, encodeRunMeta(meta), cache);
}
