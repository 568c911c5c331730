/**
 * @module An LSM keyspace in memory — an overlay, frozen layers, runs — and the two things
 * that happen to one as a whole: a fork (it is shared, O(1)) and a checkpoint flush.
 *
 *   reads:   overlay → frozen layers (newest first) → runs (newest first)
 *
 * The overlay takes the committed writes. A frozen layer is an overlay that stopped taking
 * writes: it is immutable from then on, so several keyspaces may read the very same layer.
 * Runs are immutable blobs, shared the same way. Forking keyspace S into D therefore freezes
 * S's overlay into a layer (no copy: the map object changes hands), gives S and D each a new
 * empty overlay, and lets both read [that layer, S's older layers, S's runs]: a cost bound by
 * the number of layers and runs (a few), never by the number of keys or the overlay's bytes.
 *
 * A checkpoint flushes every frozen layer into a run ONCE, however many keyspaces share it
 * (the layer remembers its run), and each sharer then reads that run where it read the layer;
 * roots hence name the same run metadata under every bucket that shares it.
 *
 * Any per-bucket keyspace that must fork with its bucket (the object namespace; the version
 * log) implements {@link Keyspace} and is forked and flushed with these functions.
 */
import { SortedMap } from './index/sorted-map.js';
import type { SortedSource } from './index/merge.js';
import type { RunHandle } from './state.js';
import { newestValue } from './run-lookup.js';

/**
 * Frozen layers per keyspace beyond which a checkpoint is due (RepoState.flushDue): each
 * layer is one more source every read and listing consults, and forks of a bucket that keeps
 * being written add one each. 8 keeps reads near the cost of the overlay + maxRuns runs.
 */
export const MAX_FROZEN_LAYERS = 8;

/** An overlay that takes no more writes, readable by every keyspace forked from it. */
export class FrozenLayer {
  readonly map: SortedMap;
  /** Set once a fork shares it: from then on no keyspace may write into its map again. */
  shared = false;
  #run: Promise<RunHandle> | undefined;

  constructor(map: SortedMap) {
    this.map = map;
  }

  /**
   * The run holding this layer's entries: written by `write` the first time it is asked
   * for (by any sharer), the same run afterwards. A failed write is forgotten, so a later
   * checkpoint retries it. Rejects with what `write` rejects with.
   */
  flush(write: (map: SortedMap) => Promise<RunHandle>): Promise<RunHandle> {
    if (!this.#run) {
      const p = write(this.map);
      this.#run = p;
      p.catch(() => {
        if (this.#run === p) this.#run = undefined;
      });
    }
    return this.#run;
  }
}

/** An overlay that is always empty, for lookups that start below the overlay. */
const EMPTY = new SortedMap('empty');

/** A keyspace: newest values in `overlay`, then `frozen` (newest first), then `runs` (newest first). */
export interface Keyspace {
  overlay: SortedMap;
  frozen: FrozenLayer[];
  runs: RunHandle[];
}

/** Sources for a merge over `k`, newest first. */
export function keyspaceSources(k: Keyspace): SortedSource[] {
  return [k.overlay, ...k.frozen.map((l) => l.map), ...k.runs.map((r) => r.reader)];
}

/**
 * The newest value of `key` in `k` (a tombstone included), or undefined. Throws what
 * reading a run throws (blobError: the run is named).
 */
export async function keyspaceLookup(k: Keyspace, key: string): Promise<Uint8Array | undefined> {
  const hit = k.overlay.get(key);
  if (hit) return hit;
  for (const layer of k.frozen) {
    const v = layer.map.get(key);
    if (v) return v;
  }
  return newestValue(EMPTY, k.runs, key);
}

/**
 * Makes `dst` read exactly what `src` reads now, sharing everything: `src`'s overlay (when
 * not empty) becomes a frozen layer of both, each gets a new empty overlay, and both read the
 * same layers and runs below it. Replaces `dst`'s overlay, layers and runs (a new keyspace's
 * are empty); changes `src`'s overlay and layers, not what it reads. O(layers + runs).
 */
export function forkKeyspace(src: Keyspace, dst: Keyspace): void {
  freezeOverlay(src);
  for (const l of src.frozen) l.shared = true;
  dst.overlay = new SortedMap(src.overlay.name);
  dst.frozen = [...src.frozen];
  dst.runs = [...src.runs];
}

/** Moves `k`'s overlay, when it holds anything, in front of its frozen layers; returns that layer. */
function freezeOverlay(k: Keyspace): FrozenLayer | undefined {
  if (k.overlay.size === 0) return undefined;
  const layer = new FrozenLayer(k.overlay);
  k.frozen = [layer, ...k.frozen];
  k.overlay = new SortedMap(k.overlay.name);
  return layer;
}

/**
 * Checkpoint flush of `k`: freezes its overlay, has every frozen layer written as a run
 * (`write`, once per layer for all its sharers: FrozenLayer.flush), then reads those runs in
 * the layers' place. Writes committed meanwhile go to the new overlay and stay there; layers
 * frozen meanwhile (a fork) stay layers. Rejects with what `write` rejects with, leaving `k`
 * reading the same entries (the layers stay until their runs exist; the overlay this call froze
 * becomes the overlay again when no fork shares it and nothing was written meanwhile, so
 * failing checkpoints do not pile up layers).
 */
export async function flushKeyspace(k: Keyspace, write: (map: SortedMap) => Promise<RunHandle>): Promise<void> {
  const fresh = freezeOverlay(k);
  const layers = k.frozen;
  if (layers.length === 0) return;
  let runs: RunHandle[];
  try {
    runs = await Promise.all(layers.map((l) => l.flush(write)));
  } catch (err) {
    if (fresh && !fresh.shared && k.frozen[0] === fresh && k.overlay.size === 0) {
      k.frozen = k.frozen.slice(1);
      k.overlay = fresh.map;
    }
    throw err;
  }
  const flushed = new Set(layers);
  k.frozen = k.frozen.filter((l) => !flushed.has(l));
  k.runs = [...runs, ...k.runs];
}

/**
 * The keyspaces of `spaces` that share a run or a frozen layer (which becomes a shared run when
 * flushed) with another one: forks and their sources. Compacting such a keyspace whole would
 * rewrite what it shares, once per sharer. O(runs + layers).
 */
export function sharingKeyspaces(spaces: readonly Keyspace[]): Set<Keyspace> {
  const uses = new Map<RunHandle | FrozenLayer, number>();
  for (const k of spaces) for (const x of [...k.runs, ...k.frozen]) uses.set(x, (uses.get(x) ?? 0) + 1);
  return new Set(spaces.filter((k) => [...k.runs, ...k.frozen].some((x) => uses.get(x)! > 1)));
}

/** Heap bytes of `k`'s frozen layers not yet in `seen` (which it extends): shared layers count once. */
export function frozenBytes(k: Keyspace, seen: Set<FrozenLayer>): number {
  let n = 0;
  for (const l of k.frozen) {
    if (seen.has(l)) continue;
    seen.add(l);
    n += l.map.bytes;
  }
  return n;
}
