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
import { isLogTombstone } from './version-log.js';
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

/** Bytes of the run `h` (from its metadata; reads nothing). */
export function runSize(h: RunHandle): number {
  return decodeRunMeta(h.meta).size;
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
 * Merges a contiguous window of a bucket's object index runs (newest first) into one. When the
 * window reaches the oldest run (`oldest`) the result is the oldest level, so tombstones have
 * nothing left to shadow and are dropped; otherwise everything is kept.
 */
export async function compactObjects(provider: Provider, bucketId: string, runs: readonly RunHandle[], cache: BlockCache, oldest: boolean): Promise<RunHandle> {
  const keep = oldest ? { keep: (_key: string, value: Uint8Array) => !isTombstone(value) } : {};
  const meta = await compactRuns(provider, runKey(bucketId), runs.map((r) => r.reader), keep);
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
 * Merges a contiguous window of a bucket's uploads keyspace runs (newest first) into one. When
 * it reaches the oldest run (`all`) the result is the oldest level: deletions and the parts of ended uploads
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
 * Merges a contiguous window of a bucket's version log runs (newest first) into one, keeping
 * each log key's newest value; when the window reaches the oldest run (`oldest`), log keys
 * whose newest value is a tombstone (LOG_TOMBSTONE: expired) are dropped, since nothing older
 * is left for them to shadow. A partial merge keeps tombstones. The merged run's handle is lazy.
 */
export async function compactVersions(provider: Provider, bucketId: string, runs: readonly RunHandle[], cache: BlockCache, oldest: boolean): Promise<RunHandle> {
  const keep = oldest ? { keep: (_key: string, value: Uint8Array) => !isLogTombstone(value) } : {};
  const meta = await compactRuns(provider, versionRunKey(bucketId), runs.map((r) => r.reader), keep);
  return lazyRunHandle(provider, encodeRunMeta(meta), cache);
}
