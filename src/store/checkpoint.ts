/**
 * @module A checkpoint beside the commit loop: freeze, build, install (or abandon).
 *
 *   freeze   (synchronous, at a commit boundary S): every keyspace of every bucket — object
 *            namespace, version log, uploads — moves its overlay in front of its frozen
 *            layers, and the plan records, per keyspace, the layers and runs it reads as of
 *            S. Commits after S write into the fresh overlays; reads still see everything
 *            (overlay -> frozen layers -> runs).
 *   build    (asynchronous, while commits go on): each layer is written as a run once for
 *            all keyspaces that share it (FrozenLayer.flush), then the keyspace's runs as
 *            of S are compacted incrementally (compaction-policy.ts). Keyspaces that read
 *            the very same layers and runs (a bucket and its forks) are built once.
 *   install  (synchronous, once root S is named by the anchor): every keyspace of the state
 *            AS IT IS THEN — buckets created, deleted or forked after S included — that
 *            still reads the layers and runs of a plan keyspace reads the built runs
 *            instead. Layers frozen after S (forks) stay in front of them.
 *   abandon  (synchronous, when the checkpoint failed): the overlay this checkpoint froze is
 *            merged back under the overlay that took the writes since, unless a fork shares
 *            it, so failing checkpoints do not pile up layers; nothing else changes.
 *
 * What any keyspace reads is the same before and after each step; only where it is held
 * (memory or runs) changes.
 */
import type { BlockCache } from './index/block-cache.js';
import type { Provider } from '../provider/provider.js';
import { freezeOverlay, type FrozenLayer, type Keyspace } from './keyspace.js';
import type { BucketState, RepoState, RunHandle } from './state.js';
import type { SortedMap } from './index/sorted-map.js';
import { chooseMerge, reachesOldest } from './compaction-policy.js';
import { compactObjects, compactUploads, compactVersions, flushOverlay, flushVersions, runSize } from './runs.js';

export type KeyspaceKind = 'objects' | 'uploads' | 'versions';

/** One keyspace of one bucket as of the checkpoint's commit. */
interface Job {
  kind: KeyspaceKind;
  bucket: BucketState;
  space: Keyspace;
  /** The layer this checkpoint froze (the overlay as of S), if it held anything. */
  fresh: FrozenLayer | undefined;
  /** Frozen layers as of S, newest first (fresh included). */
  layers: FrozenLayer[];
  /** Runs as of S, newest first. */
  runs: RunHandle[];
  /** Identity of (layers, runs): keyspaces that read the same sources share it. */
  sig: string;
}

/** A bucket as of the checkpoint's commit. */
export interface PlannedBucket {
  bucket: BucketState;
  configs: [string, Uint8Array][];
  uploadCount: number;
  objects: Job;
  uploads: Job;
  versions: Job;
}

export interface CheckpointPlan {
  seq: number;
  buckets: PlannedBucket[];
  /** Built run lists by job signature (filled by buildCheckpoint). */
  results: Map<string, RunHandle[]>;
}

export interface BuildContext {
  provider: Provider;
  cache: BlockCache;
  maxRuns: number;
  /** Bucket ids whose object index and version log merge every run (and drop tombstones). */
  major?: ReadonlySet<string>;
  log: (event: string, fields: Record<string, unknown>) => void;
  /** Called once per compaction that landed in the plan ('versions' counts apart). */
  onCompaction: (kind: KeyspaceKind) => void;
  onCompactionFailed: () => void;
}

const ids = new WeakMap<object, number>();
let nextId = 1;
function idOf(x: object): number {
  let id = ids.get(x);
  if (id === undefined) ids.set(x, (id = nextId++));
  return id;
}

function signature(layers: readonly FrozenLayer[], runs: readonly RunHandle[]): string {
  return `${layers.map(idOf).join(',')}|${runs.map(idOf).join(',')}`;
}

function freezeJob(kind: KeyspaceKind, bucket: BucketState, space: Keyspace): Job {
  const fresh = freezeOverlay(space);
  const layers = [...space.frozen];
  const runs = [...space.runs];
  return { kind, bucket, space, fresh, layers, runs, sig: signature(layers, runs) };
}

/**
 * Freezes every keyspace of `state` (which must hold exactly the commits up to `seq`) and
 * returns the plan of a checkpoint at `seq`. Mutates each keyspace's overlay and frozen
 * layers, not what it reads. O(buckets); copies no entries.
 */
export function freezeCheckpoint(state: RepoState, seq: number): CheckpointPlan {
  const buckets: PlannedBucket[] = [];
  for (const b of state.buckets.values()) {
    buckets.push({
      bucket: b,
      configs: [...b.configs],
      uploadCount: b.uploads.count,
      objects: freezeJob('objects', b, b),
      uploads: freezeJob('uploads', b, b.uploads),
      versions: freezeJob('versions', b, b.versions),
    });
  }
  return { seq, buckets, results: new Map() };
}

/**
 * Writes the plan's layers as runs and compacts each keyspace's runs, filling `plan.results`.
 * Changes no keyspace in memory. A compaction that fails is logged ('compaction.failed') and
 * skipped: the keyspace keeps its runs as they are, and a later checkpoint merges them (only
 * the root is needed for correctness). Rejects with the first failed layer write, once every
 * write it started has settled (no layer is being read when the caller abandons the plan).
 */
export async function buildCheckpoint(plan: CheckpointPlan, ctx: BuildContext): Promise<void> {
  // Which layers and runs more than one distinct keyspace reads (forks and their sources).
  const readers = new Map<object, number>();
  const seen = new Set<string>();
  for (const pb of plan.buckets) {
    for (const job of [pb.objects, pb.uploads, pb.versions]) {
      if (seen.has(job.sig)) continue;
      seen.add(job.sig);
      for (const x of [...job.layers, ...job.runs]) readers.set(x, (readers.get(x) ?? 0) + 1);
    }
  }
  for (const pb of plan.buckets) {
    for (const job of [pb.objects, pb.uploads, pb.versions]) {
      if (plan.results.has(job.sig)) continue;
      const shared = [...job.layers, ...job.runs].map((x) => readers.get(x)! > 1);
      plan.results.set(job.sig, await buildJob(job, shared, ctx));
    }
  }
}

async function buildJob(job: Job, shared: boolean[], ctx: BuildContext): Promise<RunHandle[]> {
  const id = job.bucket.id;
  const write = (map: SortedMap): Promise<RunHandle> =>
    job.kind === 'versions' ? flushVersions(ctx.provider, id, map, ctx.cache) : flushOverlay(ctx.provider, id, map, ctx.cache, job.kind === 'uploads');
  const settled = await Promise.allSettled(job.layers.map((l) => l.flush(write)));
  const flushed: RunHandle[] = [];
  for (const s of settled) {
    if (s.status === 'rejected') throw s.reason;
    flushed.push(s.value);
  }
  const all = [...flushed, ...job.runs];
  const major = job.kind !== 'uploads' && ctx.major?.has(id) === true && all.length > 0;
  const w = major ? { start: 0, count: all.length } : chooseMerge(all.map(runSize), ctx.maxRuns, shared);
  if (!w) return all;
  const window = all.slice(w.start, w.start + w.count);
  const oldest = reachesOldest(w, all.length);
  try {
    const t = performance.now();
    const merged =
      job.kind === 'objects'
        ? await compactObjects(ctx.provider, id, window, ctx.cache, oldest)
        : job.kind === 'uploads'
          ? await compactUploads(ctx.provider, id, window, ctx.cache, oldest)
          : await compactVersions(ctx.provider, id, window, ctx.cache, oldest);
    const bytes = window.reduce((n, r) => n + runSize(r), 0);
    ctx.log('compaction', { bucket: job.bucket.name, keyspace: job.kind, runs: w.count, of: all.length, at: w.start, oldest, bytes, ms: Math.round(performance.now() - t) });
    ctx.onCompaction(job.kind);
    return [...all.slice(0, w.start), merged, ...all.slice(w.start + w.count)];
  } catch (err) {
    ctx.onCompactionFailed();
    ctx.log('compaction.failed', { bucket: job.bucket.name, keyspace: job.kind, error: String(err) });
    return all;
  }
}

/** The run list root `plan.seq` names for a job (after buildCheckpoint). */
export function builtRuns(plan: CheckpointPlan, job: Job): RunHandle[] {
  const r = plan.results.get(job.sig);
  if (!r) throw new Error(`checkpoint ${plan.seq}: keyspace ${job.kind} of ${job.bucket.name} was not built`);
  return r;
}

function keyspacesOf(b: BucketState): Keyspace[] {
  return [b, b.uploads, b.versions];
}

/**
 * Makes every keyspace of `state` that reads a plan keyspace's layers and runs read the built
 * runs instead (its own newer layers and overlay stay in front). Call only once the root
 * naming those runs is durable. Mutates keyspaces' frozen layers and runs, not what they read.
 */
export function installCheckpoint(state: RepoState, plan: CheckpointPlan): void {
  const planned = new Set<FrozenLayer>();
  for (const pb of plan.buckets) for (const j of [pb.objects, pb.uploads, pb.versions]) for (const l of j.layers) planned.add(l);
  for (const b of state.buckets.values()) {
    for (const k of keyspacesOf(b)) {
      const tail = k.frozen.filter((l) => planned.has(l));
      const built = plan.results.get(signature(tail, k.runs));
      if (!built) continue;
      if (tail.length > 0) k.frozen = k.frozen.filter((l) => !planned.has(l));
      k.runs = built;
    }
  }
}

/**
 * Undoes what freezeCheckpoint did where it can, after a failed checkpoint: a layer it froze
 * that no fork shares and that is still the newest layer gets the writes made since merged on
 * top of it and becomes the overlay again. O(entries written since the freeze). Every layer of
 * the plan forgets the run written for it (FrozenLayer.forget): no root names those runs, so
 * GC may delete them after its grace; a retry writes them anew.
 */
export function abandonCheckpoint(plan: CheckpointPlan): void {
  for (const pb of plan.buckets) {
    for (const j of [pb.objects, pb.uploads, pb.versions]) {
      for (const l of j.layers) l.forget();
      const fresh = j.fresh;
      const k = j.space;
      if (!fresh || fresh.shared || k.frozen[0] !== fresh) continue;
      for (const [key, value] of k.overlay.entries()) fresh.map.set(key, value);
      k.overlay = fresh.map;
      k.frozen = k.frozen.slice(1);
    }
  }
}
