/**
 * @module Pack cleaning: small bodies live inside commit blobs (and inside packs written by an
 * earlier cleaning), so one live 100-byte object can keep a 16 MiB commit blob alive. A pack
 * whose live fraction falls below a threshold has its live entries copied into a new pack
 * `packs/<hour><random>`, and every index entry that names them is re-pointed; the old pack
 * then becomes unreachable and is swept after the grace (gc-sweep.ts).
 *
 *   1. choose   from the mark (gc-mark.ts): packs outside the chain (the chain's commit blobs
 *               are needed to open anyway) whose live entry bytes / blob size < cleanBelow,
 *               sparsest first, then packs under SMALL_PACK_BYTES once there are at least
 *               MIN_SMALL_PACKS of them (coalesced), at most MAX_MOVE_BYTES and
 *               MAX_MOVE_ENTRIES per pass;
 *   2. find     every referrer, in every bucket and fork: object namespace entries and version
 *               log entries (removed ones included) whose location is one of those entries;
 *   3. copy     source pack by source pack: neighbouring live entries of a source are read
 *               as one span, a few spans at a time (gc-pack-read.ts), each entry's CRC32C
 *               checked (a corrupt entry is never copied: it stays where it is and the pass
 *               counts an error); up to CLEAN_PACK_ENTRIES entries per new pack, written
 *               create-only and durable before anything names it, one pack in memory at a
 *               time; every new pack is written before the first re-pointing commit;
 *   4. commit   re-pointing as ordinary guarded commits, every referrer of the pass in index
 *               order (so each index block is loaded once, not once per lookup), at most
 *               COMMIT_REFS referrers each, looked up just before, outside the commit loop, to
 *               warm the cache:
 *               inside the commit loop, each referrer's CURRENT value (what this batch and the
 *               one in flight staged included) is read and changed only if it still names the
 *               old location — so a concurrent overwrite, delete, removal or expiry wins and the
 *               copy is merely garbage for a later pass. The namespace change is a `put`, the
 *               log change a `rewriteVersion` (same flags, times and record; only the location
 *               differs), so replay and every reader handle them as they already do: no new
 *               commit op is needed.
 * Encrypted bodies (SSE-S3, SSE-C) are copied as stored: their segments are sealed under the
 * object's data key with no reference to where they live (crypto/body-crypto.ts), so the same
 * bytes open at the new location. The body cache is keyed by blob and offset, and blob names
 * are never reused, so it cannot serve another body for a new location.
 *
 * A crash at any point loses nothing: before the commit every entry still names the old pack
 * (alive, as the mark saw it); after it, the new one. The unused copy of a failed pass is an
 * unreachable blob like any other.
 */
import type { Repository } from './repository.js';
import { walkMerged, type MarkResult } from './gc-mark.js';
import type { Tx } from './tx.js';
import { ENTRY_HEADER_SIZE, FOOTER_ROW_SIZE, PACK_HEADER_SIZE, PackStream, TRAILER_SIZE } from '../pack/stream-writer.js';
import { planSpans, readSpans, type PackLoc } from './gc-pack-read.js';
import { decodeVersions, encodeVersions, isTombstone, type Location } from './records.js';
import { decodeEntry, encodeEntry } from './version-log.js';
import { parseLogKey } from './version-id.js';
import { newId } from './layout.js';
import { ProviderError } from '../provider/provider.js';
import { decodeRunMeta } from './index/run-format.js';
import { blobError } from './body-reader.js';

/** Bytes of live bodies moved per pass at most: bounds the pass's time. */
export const MAX_MOVE_BYTES = 256 * 1024 * 1024;
/** Live entries moved per pass at most: bounds the copying (and, with few forks, the referrers). */
export const MAX_MOVE_ENTRIES = 100_000;
/** Referrers a pass gathers at most (about 150 B each): an entry has two (namespace and version
 * log) and two more per fork, or per copy, that names it, so entries alone do not bound them.
 * Past it, findReferrers lets go of the packs chosen last (the least sparse) until the pass fits;
 * a later pass takes them. */
export const MAX_MOVE_REFS = 200_000;
/** Body bytes per new pack: as a commit blob's (BATCH_MAX_BYTES), held in memory while built. */
export const CLEAN_PACK_BYTES = 16 * 1024 * 1024;
/** Entries per new pack at most, as a commit blob's (BATCH_MAX_OPS). */
const CLEAN_PACK_ENTRIES = 1024;
/** Referrers re-pointed per commit: keeps each commit record near a normal batch's size. */
export const COMMIT_REFS = 1000;

export type CleanProgress = (p: { phase: 'clean'; packs: number; packsDone: number; movedBytes: number }) => void;

export interface CleanReport {
  /** Packs all of whose live entries found were moved (they are unreachable now). */
  cleanedPacks: number;
  /** Packs chosen but left for a later pass: their referrers would have passed MAX_MOVE_REFS. */
  deferredPacks: number;
  /** Body bytes copied into new packs and re-pointed there. */
  movedBytes: number;
  /** Referrers re-pointed (namespace and version log entries). */
  repointed: number;
  /** Entries left in place because reading or committing them failed. */
  errors: number;
  /** Provider reads of source packs (coalesced spans), and re-pointing commits made. */
  requests: number;
  commits: number;
  /** Referrers re-pointed per bucket (name): each left a superseded copy in its runs. */
  repointedByBucket: Map<string, number>;
}

/** Who names a body: a namespace key or a version log key of a bucket. */
interface Ref {
  bucket: string;
  log: boolean;
  key: string;
}

const locId = (blob: string, offset: number) => `${blob}@${offset}`;

/** A fresh name for a cleaned pack: like a chunk's, 31 bytes, the first 15 change hourly. */
export function cleanedPackKey(): string {
  const hour = Math.floor(Date.now() / 3_600_000).toString(16).padStart(9, '0');
  return `packs/${hour}${newId(8).slice(0, 16)}`;
}

/** Share of a bucket's indexed entries re-pointed by one pass above which its runs are merged
 * whole at the checkpoint that follows (Repository.requestMajorCompaction): each re-pointed
 * entry leaves its old copy in an older run until a merge reaches it, so cleaning all of a
 * bucket's packs would otherwise leave its index twice its size until size-tiered compaction
 * gets there; below the share, the merge would rewrite much to drop little. */
export const MAJOR_COMPACTION_SHARE = 0.25;

/**
 * Ids of the buckets of `repo` whose re-pointed referrers (`byBucket`, by name) are at least
 * MAJOR_COMPACTION_SHARE of the entries their namespace and version log runs hold (what the
 * run metas say, plus the overlays). Reads only memory; throws nothing for a malformed meta
 * (that bucket is merged: a merge reads and checks every run anyway).
 */
export function bucketsToCompact(repo: Repository, byBucket: ReadonlyMap<string, number>): string[] {
  const ids: string[] = [];
  for (const [name, n] of byBucket) {
    const b = repo.state.buckets.get(name);
    if (!b || n === 0) continue;
    let entries = b.overlay.size + b.versions.overlay.size;
    try {
      for (const r of [...b.runs, ...b.versions.runs]) entries += decodeRunMeta(r.meta).entryCount;
    } catch {
      entries = 0;
    }
    if (n >= entries * MAJOR_COMPACTION_SHARE) ids.push(b.id);
  }
  return ids;
}

/** Heads in flight while choosing (as gc-pack-read.ts's READ_PARALLEL). */
const SIZE_PARALLEL = 4;

/** Packs below this size (bytes) are coalesced into bigger ones, whatever their live fraction. */
const SMALL_PACK_BYTES = 64 * 1024;
/** Coalesce small packs only when at least this many are waiting (one small pack left over
 * is not rewritten pass after pass). */
const MIN_SMALL_PACKS = 16;

/** Packs worth cleaning: the sparsest first, then small ones; within MAX_MOVE_BYTES. */
async function choose(repo: Repository, mark: MarkResult, cleanBelow: number): Promise<Set<string>> {
  // Only the live packs' sizes are needed: a head each (SIZE_PARALLEL at a time), not a listing
  // of every commit blob, which after a mass delete is mostly garbage (100,000 blobs listed to
  // find one live one took a minute on fs).
  // Commit log segments (log/) too: their bodies are pack entries read by location like any
  // other; the segment appends go to, and those holding chain commits, are in mark.chain.
  const candidates = [...mark.packs.keys()].filter((k) => (k.startsWith('commits/') || k.startsWith('packs/') || k.startsWith('log/')) && !mark.chain.has(k));
  const sizes = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < candidates.length; i = next++) {
      const key = candidates[i]!;
      try {
        sizes.set(key, (await repo.provider.head(key)).size);
      } catch (err) {
        // Gone since the mark (a pass elsewhere; never this one): nothing to clean there.
        if (!(err instanceof ProviderError && err.code === 'NotFound')) throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SIZE_PARALLEL, candidates.length) }, worker));
  const sparse: { blob: string; live: number; entries: number; fraction: number }[] = [];
  const small: typeof sparse = [];
  for (const [blob, size] of sizes) {
    let live = 0;
    const entries = mark.packs.get(blob)!;
    for (const length of entries.values()) live += ENTRY_HEADER_SIZE + length;
    // A pack of GC's own holds nothing but entries: their footer rows and its fixed framing
    // live with them, so a pack whose entries are all live is 100% live, never cleaned again
    // (counted as dead, a pack of one body under 96 B fell below 0.6).
    if (blob.startsWith('packs/')) live += entries.size * FOOTER_ROW_SIZE + PACK_HEADER_SIZE + TRAILER_SIZE;
    if (size > 0 && live / size < cleanBelow) sparse.push({ blob, live, entries: entries.size, fraction: live / size });
    else if (size < SMALL_PACK_BYTES) small.push({ blob, live, entries: entries.size, fraction: live / size });
  }
  sparse.sort((a, b) => a.fraction - b.fraction);
  // Small packs are coalesced once there are enough of them to make one worth writing: a serial
  // writer's commits each hold one small body beside its commit record (a 512 B body in a
  // ~900 B blob is about 60 % live, at the edge of "sparse"), and a blob per body costs its
  // record, its framing and, on a file system, a whole block.
  if (small.length >= MIN_SMALL_PACKS) sparse.push(...small.sort((a, b) => a.fraction - b.fraction));
  const out = new Set<string>();
  let bytes = 0;
  let entries = 0;
  for (const p of sparse) {
    if ((bytes + p.live > MAX_MOVE_BYTES || entries + p.entries > MAX_MOVE_ENTRIES) && out.size > 0) break;
    out.add(p.blob);
    bytes += p.live;
    entries += p.entries;
  }
  return out;
}

/**
 * Every referrer of an entry of the packs in `chosen` (in the order they were chosen), from
 * `repo`'s committed state, at most `maxRefs` of them: when the referrers gathered pass it, the
 * pack chosen last is dropped from `chosen` with what was gathered for it, until they fit again
 * (even the first pack, if it alone has more). Every pack left in `chosen` has all its referrers.
 * Returns them and how many packs were dropped.
 */
async function findReferrers(repo: Repository, chosen: Set<string>, maxRefs: number): Promise<{ found: Map<string, { loc: PackLoc; refs: Ref[] }>; dropped: number }> {
  const found = new Map<string, { loc: PackLoc; refs: Ref[] }>();
  /** Ids in `found` of each chosen pack's entries, and their referrers in all. */
  const byBlob = new Map<string, string[]>();
  let refs = 0;
  let dropped = 0;
  const order = [...chosen];
  const note = (loc: Location, ref: Ref) => {
    if (loc.kind !== 'pack' || !chosen.has(loc.blob)) return;
    const id = locId(loc.blob, loc.offset);
    let f = found.get(id);
    if (!f) {
      found.set(id, (f = { loc, refs: [] }));
      const ids = byBlob.get(loc.blob);
      if (ids) ids.push(id);
      else byBlob.set(loc.blob, [id]);
    }
    if (f.refs.some((r) => r.bucket === ref.bucket && r.log === ref.log && r.key === ref.key)) return;
    f.refs.push(ref);
    for (refs++; refs > maxRefs && order.length > 0; ) {
      const last = order.pop()!;
      chosen.delete(last);
      dropped++;
      for (const i of byBlob.get(last) ?? []) {
        refs -= found.get(i)!.refs.length;
        found.delete(i);
      }
      byBlob.delete(last);
    }
  };
  for (const b of [...repo.state.buckets.values()]) {
    await walkMerged(b.sources(), `bucket ${b.name} index`, (key, value) => {
      if (isTombstone(value)) return;
      for (const v of decodeVersions(value)) note(v.location, { bucket: b.name, log: false, key });
    });
    await walkMerged(b.versions.sources(), `bucket ${b.name} version log`, (key, value) => {
      if (value.length === 0 || isTombstone(value)) return;
      const e = decodeEntry(value);
      if (e.record) note(e.record.location, { bucket: b.name, log: true, key });
    });
  }
  return { found, dropped };
}


/** `loc` with the entry `from` replaced by `to`, or undefined when `loc` is not `from`. */
function moved(loc: Location, from: PackLoc, to: PackLoc): PackLoc | undefined {
  return loc.kind === 'pack' && loc.blob === from.blob && loc.offset === from.offset ? to : undefined;
}

/** One body moved: where it was, where its copy is, and who names it. */
interface Move {
  from: PackLoc;
  to: PackLoc;
  refs: Ref[];
}

/** One referrer to re-point, and the move it belongs to. */
interface RefMove {
  ref: Ref;
  move: Move;
}

/** Orders referrers as the index holds them: by bucket, the namespace before the version log,
 * then by key (UTF-16 order; only locality rests on it). */
function byIndexOrder(a: RefMove, b: RefMove): number {
  const x = a.ref;
  const y = b.ref;
  if (x.bucket !== y.bucket) return x.bucket < y.bucket ? -1 : 1;
  if (x.log !== y.log) return x.log ? 1 : -1;
  return x.key < y.key ? -1 : x.key > y.key ? 1 : 0;
}

/** Failed re-pointing slices in a row after which a pass stops trying (the repository is
 * likely fenced or closing; a lone bad index block costs only its slice). */
const MAX_FAILED_SLICES_IN_A_ROW = 3;

/**
 * Re-points the referrers of every move in `moves`, in index order (byIndexOrder), one commit
 * per COMMIT_REFS referrers, one after the other (writers' commits interleave with them); each
 * referrer is changed only if its current value still names its move's `from` (see the module
 * note). Index order matters: the bodies of a pack were written in arrival order, so their keys
 * are spread over the whole index, and looking them up in pack order loaded (and decompressed)
 * an index block per lookup once the index outgrew the block cache (a pass moving 100,000
 * bodies spent 50 s so); in key order each block is loaded once. Before each commit the
 * referrers are looked up once outside the commit loop, so the index blocks the guarded
 * re-reads need are cached and the commit loop does not wait on the disk for them. A slice
 * whose lookups or commit fail is logged and counted in `failedSlices`, and its moves are
 * returned in `unfinished`; after MAX_FAILED_SLICES_IN_A_ROW failures in a row the rest are
 * unfinished too. `byBucket` counts the referrers of committed slices only. `onSlice` is told
 * the referrers done so far after each slice.
 */
async function repoint(
  repo: Repository,
  moves: readonly Move[],
  onSlice: (refsDone: number, refsTotal: number) => void
): Promise<{ changed: number; commits: number; byBucket: Map<string, number>; unfinished: Set<Move>; failedSlices: number }> {
  const flat: RefMove[] = moves.flatMap((move) => move.refs.map((ref) => ({ ref, move })));
  flat.sort(byIndexOrder);
  const byBucket = new Map<string, number>();
  const unfinished = new Set<Move>();
  let changed = 0;
  let commits = 0;
  let failedSlices = 0;
  let inARow = 0;
  for (let i = 0; i < flat.length; i += COMMIT_REFS) {
    const slice = flat.slice(i, i + COMMIT_REFS);
    if (inARow >= MAX_FAILED_SLICES_IN_A_ROW) {
      for (const r of slice) unfinished.add(r.move);
      continue;
    }
    try {
      for (const { ref } of slice) {
        const b = repo.state.buckets.get(ref.bucket);
        if (b) await (ref.log ? b.versions.lookup(ref.key) : b.lookup(ref.key));
      }
      const counted = new Map<string, number>();
      changed += await repo.run((tx) => repointSlice(tx, slice, counted));
      for (const [bucket, n] of counted) byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + n);
      commits++;
      inARow = 0;
    } catch (error) {
      failedSlices++;
      inARow++;
      for (const r of slice) unfinished.add(r.move);
      repo.log('gc.clean_commit_failed', { refs: slice.length, error: String(error) });
    }
    onSlice(Math.min(flat.length, i + COMMIT_REFS), flat.length);
  }
  return { changed, commits, byBucket, unfinished, failedSlices };
}

/**
 * Stages the re-pointing of one slice in `tx` (inside the commit loop); how many changed.
 * Adds the changes per bucket to `byBucket` (at staging: the caller merges them once the
 * commit landed).
 */
async function repointSlice(tx: Tx, slice: readonly RefMove[], byBucket: Map<string, number>): Promise<number> {
  let n = 0;
  const count = (bucket: string) => {
    n++;
    byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + 1);
  };
  for (const { ref, move } of slice) {
    const { from, to } = move;
    if (!tx.bucket(ref.bucket)) continue;
    if (!ref.log) {
      const value = await tx.get(ref.bucket, ref.key);
      if (!value || isTombstone(value)) continue;
      const versions = decodeVersions(value);
      let hit = false;
      const next = versions.map((v) => {
        const loc = moved(v.location, from, to);
        if (!loc) return v;
        hit = true;
        return { ...v, location: loc };
      });
      if (hit) {
        tx.put(ref.bucket, ref.key, encodeVersions(next));
        count(ref.bucket);
      }
      continue;
    }
    const parsed = parseLogKey(ref.key);
    if (!parsed) continue;
    const value = await tx.logLookup(ref.bucket, parsed.key, ref.key);
    if (!value || value.length === 0 || isTombstone(value)) continue;
    const e = decodeEntry(value);
    const loc = e.record && moved(e.record.location, from, to);
    if (!loc || !e.record) continue;
    // A relocation adds no retained point: never refused by the history budget.
    tx.rewriteVersion(ref.bucket, parsed.key, parsed.position, encodeEntry({ ...e, record: { ...e.record, location: loc } }), value, { relocation: true });
    count(ref.bucket);
  }
  return n;
}

/**
 * Cleans the sparse packs of `repo` that `mark` (a mark of its durable state) found (see the
 * module note). Writes new pack blobs and commits; deletes nothing. First every new pack is
 * read and written, one at a time, each holding its bodies (at most CLEAN_PACK_BYTES) of the
 * pending budget only until it is durable (StoreError 'SlowDown' from the budget ends the copy
 * early, counted as an error, and what was copied is still re-pointed); then every referrer is
 * re-pointed in index order (repoint). Throws what walking the index throws; read, write and
 * commit failures are counted in `errors` and leave the entries where they were.
 */
export async function cleanPacks(
  repo: Repository,
  mark: MarkResult,
  opts: { cleanBelow: number; onProgress?: CleanProgress; /** Tests lower it; default MAX_MOVE_REFS. */ maxRefs?: number }
): Promise<CleanReport> {
  const report: CleanReport = { cleanedPacks: 0, deferredPacks: 0, movedBytes: 0, repointed: 0, errors: 0, requests: 0, commits: 0, repointedByBucket: new Map() };
  const chosen = await choose(repo, mark, opts.cleanBelow);
  if (chosen.size === 0) return report;
  const maxRefs = opts.maxRefs ?? MAX_MOVE_REFS;
  const referrers = await findReferrers(repo, chosen, maxRefs);
  report.deferredPacks = referrers.dropped;
  if (referrers.dropped > 0) repo.log('gc.clean_deferred', { packs: referrers.dropped, kept: chosen.size, maxRefs });
  const found = [...referrers.found.values()];
  // Source pack by source pack, in offset order: a new pack takes whole source packs where it
  // can, and neighbouring entries of one source are read together (gc-pack-read.ts).
  found.sort((a, b) => (a.loc.blob < b.loc.blob ? -1 : a.loc.blob > b.loc.blob ? 1 : a.loc.offset - b.loc.offset));
  const failedPacks = new Set<string>();
  // Progress: copying is the first half of the work, re-pointing the second.
  let copied = 0;
  let repointedShare = 0;
  const progress = () =>
    opts.onProgress?.({ phase: 'clean', packs: chosen.size, packsDone: Math.min(chosen.size, Math.round(((copied / Math.max(1, found.length) + repointedShare) / 2) * chosen.size)), movedBytes: report.movedBytes });
  progress();
  const moves: Move[] = [];
  for (let i = 0; i < found.length; ) {
    // One new pack: entries up to CLEAN_PACK_BYTES / CLEAN_PACK_ENTRIES.
    const group: typeof found = [];
    let bytes = 0;
    while (i < found.length && group.length < CLEAN_PACK_ENTRIES && (group.length === 0 || bytes + found[i]!.loc.length <= CLEAN_PACK_BYTES)) {
      bytes += found[i]!.loc.length;
      group.push(found[i++]!);
    }
    let release: () => void;
    try {
      release = repo.budget.reserve(bytes);
    } catch {
      report.errors++;
      for (const g of found.slice(i - group.length)) failedPacks.add(g.loc.blob);
      break;
    }
    try {
      const read = await readSpans(repo.provider, planSpans(group.map((g) => g.loc)));
      report.requests += read.requests;
      for (const f of read.failed) {
        report.errors++;
        failedPacks.add(f.loc.blob);
        repo.log('gc.clean_read_failed', { blob: f.loc.blob, offset: f.loc.offset, error: String(blobError(f.error, f.loc.blob)) });
      }
      const bodies = group.flatMap((g) => {
        const body = read.bodies.get(g.loc);
        return body ? [{ from: g.loc, refs: g.refs, body }] : [];
      });
      if (bodies.length > 0) {
        const key = cleanedPackKey();
        const pack = new PackStream(bodies.map((b) => b.body.length));
        const chunks: Uint8Array[] = [pack.header()];
        for (const b of bodies) chunks.push(...pack.entry(b.body));
        chunks.push(...pack.finish());
        await repo.provider.put(key, chunks, { ifNoneMatch: '*', contentLength: pack.size });
        bodies.forEach((b, index) => {
          const row = pack.rows[index]!;
          moves.push({ from: b.from, to: { kind: 'pack', blob: key, offset: row.offset, length: b.body.length, tag: pack.tag, index }, refs: b.refs });
        });
      }
    } catch (err) {
      // The new pack could not be written: nothing names it, its sources stay where they are.
      report.errors++;
      for (const g of group) failedPacks.add(g.loc.blob);
      repo.log('gc.clean_write_failed', { error: String(err) });
    } finally {
      release();
      copied += group.length;
      progress();
    }
  }
  const r = await repoint(repo, moves, (done, total) => {
    repointedShare = done / total;
    progress();
  });
  report.repointed = r.changed;
  report.repointedByBucket = r.byBucket;
  report.commits = r.commits;
  report.errors += r.failedSlices;
  for (const m of moves) {
    if (r.unfinished.has(m)) failedPacks.add(m.from.blob);
    else report.movedBytes += m.to.length;
  }
  repointedShare = 1;
  progress();
  for (const blob of chosen) if (!failedPacks.has(blob)) report.cleanedPacks++;
  return report;
}
