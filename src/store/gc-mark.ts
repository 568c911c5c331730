/**
 * @module GC mark: the set of blobs the durable repository still reaches, read from storage.
 *
 * The mark never trusts a running server's memory. It reads the anchor, the root it names and
 * the commit chain after it (recovery.ts), rebuilds the catalog a fresh open would have (a
 * RepoState of its own: the root's buckets on lazily opened runs, then every chain mutation
 * applied, forks and fork-at-time included, exactly as replay does), and walks every bucket's
 * three keyspaces merged as reads see them:
 *
 *   object namespace   each key's newest version list        -> its bodies
 *   version log        each log key's newest entry (removed   -> its body (retained points,
 *                      ones too: as-of reads still use them)     as-of reads, restores)
 *   uploads keyspace   every part record not deleted          -> its carrier chunks
 *
 * Live blobs: the config, the anchor, the root, the chain's commit blobs (and commit log
 * segments: those holding a commit of the chain, and the one the anchor names), every run the root
 * or a chain fork names (opening needs them), the newest GC state, and every body blob above
 * (pack blobs of packed bodies, chunk blobs of carriers and parts). Forks and restores share
 * runs and bodies: each bucket is walked on its own, so a body counts while ANY bucket reaches
 * it. Uploads keep their ended parts until a compaction drops them: conservative (the reaper
 * deletes those chunks at once anyway).
 *
 * Memory: one decoded block per open run at a time (through `cache`), the chain's overlays
 * (what opening holds), and the mark itself — about 120 B per live blob (its key string and a
 * Set slot) plus about 40 B per distinct live packed body (offset and length, for pack
 * cleaning's live fractions). A run is never held whole. Any read failure throws: a mark that
 * cannot see everything must not let a sweep delete anything.
 */
import type { Provider } from '../provider/provider.js';
import { ANCHOR_KEY, CONFIG_KEY } from './layout.js';
import { loadChainTip, readAnchor, readFrameKey } from './recovery.js';
import { decodeRoot } from './root.js';
import { readRecord } from './records-io.js';
import { BucketState, RepoState, type RunHandle } from './state.js';
import { lazyRunHandle } from './runs.js';
import { runMetaKey } from './run-meta-key.js';
import { decodeRunMeta } from './index/run-format.js';
import { BlockCache } from './index/block-cache.js';
import { mergeSources, type SortedSource } from './index/merge.js';
import { decodeVersions, isTombstone, type Location } from './records.js';
import { decodeEntry } from './version-log.js';
import { decodePart } from './uploads.js';
import { isGone, parseEntryKey, UPLOAD_PREFIX } from './upload-keys.js';
import { decodeKeyRecord } from './keys-record.js';
import { blobError } from './body-reader.js';
import { StoreError } from './errors.js';

/** Decoded index blocks a mark keeps cached: the working set of one merge per keyspace. */
export const MARK_CACHE_BYTES = 4 * 1024 * 1024;

/** Live packed bodies of one pack blob: entry offset -> body length (each entry once). */
export type PackEntries = Map<number, number>;

export interface MarkResult {
  /** Every blob key the durable repository reaches. */
  live: Set<string>;
  /** Live entries of every pack blob that holds packed bodies (commit blobs, cleaned packs). */
  packs: Map<string, PackEntries>;
  /** Commit blobs of the chain after the root (needed to open, whatever they hold). */
  chain: Set<string>;
  anchorSeq: number;
  rootSeq: number;
  /** Keys (namespace, log and upload entries) walked. */
  entries: number;
}

export type MarkProgress = (p: { phase: 'mark'; buckets: number; bucketsDone: number; entries: number; live: number }) => void;

/**
 * Marks every blob the repository on `provider` reaches from its durable anchor (see the
 * module note). Reads only; changes nothing. Throws StoreError 'MissingBlob' / 'Corrupt' /
 * 'BrokenChain' (from recovery and the runs) and provider errors: the caller must then delete
 * nothing.
 */
export async function markRepository(provider: Provider, opts: { cache?: BlockCache; onProgress?: MarkProgress } = {}): Promise<MarkResult> {
  const cache = opts.cache ?? new BlockCache({ maxBytes: MARK_CACHE_BYTES });
  const found = await readAnchor(provider);
  if (!found) throw new StoreError('MissingBlob', `${ANCHOR_KEY} is missing: not a Strata repository`);
  const { anchor } = found;
  const root = decodeRoot(await readRecord(provider, anchor.root, `root ${anchor.root.seq}`), `root ${anchor.root.key}`);
  // No tail check: the repository may be appending while the mark reads (recovery.ts).
  const { commits, tip } = await loadChainTip(provider, anchor, root, await readFrameKey(provider), { checkTail: false });
  const result: MarkResult = { live: new Set([ANCHOR_KEY, CONFIG_KEY, anchor.root.key]), packs: new Map(), chain: new Set(), anchorSeq: anchor.seq, rootSeq: root.seq, entries: 0 };
  const live = result.live;
  // The chain's commit blobs: the head, and each commit's parent down to the root's.
  if (tip.head && tip.seq > root.seq) result.chain.add(tip.head.key);
  for (const c of commits.slice(1)) result.chain.add(c.parent.key);
  // The commit log segment the anchor names: commits are appended there (commit-log/).
  if (tip.log) result.chain.add(tip.log.key);
  for (const k of result.chain) live.add(k);

  // The catalog a fresh open would rebuild, on runs that are read only when walked.
  const state = new RepoState();
  const handles = new Map<string, RunHandle>();
  const handle = (meta: Uint8Array): RunHandle => {
    const id = runMetaKey(meta);
    let h = handles.get(id);
    if (!h) {
      h = lazyRunHandle(provider, meta, cache);
      handles.set(id, h);
      live.add(decodeRunMeta(meta).blobKey);
    }
    return h;
  };
  for (const b of root.buckets) {
    const bucket = new BucketState(b.name, b.id, b.created);
    bucket.runs = b.runs.map(handle);
    bucket.uploads.runs = b.uploadRuns.map(handle);
    bucket.uploads.count = b.uploadCount;
    bucket.versions.runs = (b.versionRuns ?? []).map(handle);
    state.buckets.set(b.name, bucket);
  }
  state.legacyUploads = new Map();
  for (const u of root.uploads) {
    state.apply({ op: 'createUpload', bucket: u.bucket, uploadId: u.uploadId, record: u.record });
    for (const [number, record] of u.parts) state.apply({ op: 'putPart', bucket: u.bucket, uploadId: u.uploadId, number, record });
  }
  for (const [id, record] of root.keys ?? []) state.keys.set(id, decodeKeyRecord(record, `key ${id} of root ${root.seq}`));
  for (const c of commits) {
    for (const m of c.mutations) {
      if (m.op === 'forkBucketAt') for (const meta of [...m.runs, ...m.versionRuns]) state.preparedRuns.set(runMetaKey(meta), handle(meta));
      state.apply(m);
    }
  }

  const markLocation = (loc: Location) => {
    if (loc.kind === 'pack') {
      live.add(loc.blob);
      let entries = result.packs.get(loc.blob);
      if (!entries) result.packs.set(loc.blob, (entries = new Map()));
      entries.set(loc.offset, loc.length);
    } else if (loc.kind === 'chunks') {
      for (const c of loc.chunks) live.add(c.blob);
    }
  };
  const buckets = [...state.buckets.values()];
  let bucketsDone = 0;
  const progress = () => opts.onProgress?.({ phase: 'mark', buckets: buckets.length, bucketsDone, entries: result.entries, live: live.size });
  for (const b of buckets) {
    await walk(b.sources(), `bucket ${b.name} index`, (_key, value) => {
      if (isTombstone(value)) return;
      for (const v of decodeVersions(value, `index entry of bucket ${b.name}`)) markLocation(v.location);
    });
    await walk(b.versions.sources(), `bucket ${b.name} version log`, (_key, value) => {
      if (value.length === 0 || isTombstone(value)) return; // a dropped entry (expiry)
      const e = decodeEntry(value, `version log entry of bucket ${b.name}`);
      if (e.record) markLocation(e.record.location);
    });
    await walk(b.uploads.sources(), `bucket ${b.name} uploads`, (key, value) => {
      if (!key.startsWith(UPLOAD_PREFIX) || isGone(value)) return;
      const p = parseEntryKey(key);
      if (p?.part === undefined) return;
      for (const c of decodePart(value).chunks) live.add(c.blob);
    });
    bucketsDone++;
    progress();
  }
  return result;

  function walk(sources: SortedSource[], what: string, visit: (key: string, value: Uint8Array) => void): Promise<void> {
    return walkMerged(sources, what, (key, value) => {
      visit(key, value);
      if (++result.entries % 65_536 === 0) progress();
    });
  }
}

/**
 * Visits every entry of `sources` merged as reads see them (newest value per key). Throws
 * what reading throws, as a blob error naming `what` (body-reader.ts blobError).
 */
export async function walkMerged(sources: SortedSource[], what: string, visit: (key: string, value: Uint8Array) => void): Promise<void> {
  const it = mergeSources(sources);
  try {
    for (;;) {
      let r;
      try {
        r = await it.next();
      } catch (err) {
        throw blobError(err, what);
      }
      if (r.done) return;
      visit(r.value.key, r.value.value);
    }
  } finally {
    await it.return();
  }
}
