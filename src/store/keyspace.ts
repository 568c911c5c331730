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
 * A checkpoint (checkpoint.ts) freezes every overlay too, and flushes every frozen layer into a
 * run ONCE, however many keyspaces share it (the layer remembers its run); each sharer then
 * reads that run where it read the layer, so roots name the same run metadata under every
 * bucket that shares it.
 *
 * Every per-bucket keyspace (the object namespace, the version log, uploads) implements
 * {@link Keyspace}; those that fork with their bucket (not uploads) are forked with these
 * functions.
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

  /**
   * Forgets the run written for this layer (after a checkpoint that wrote it failed): no root
   * names that run, so GC may delete it once its grace has passed, and a later checkpoint must
   * not name it then. The next flush writes a new one.
   */
  forget(): void {
    this.#run = undefined;
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

/**
 * Moves `k`'s overlay, when it holds anything, in front of its frozen layers (`k` gets a new
 * empty overlay); returns that layer. What `k` reads does not change. O(1).
 */
export function freezeOverlay(k: Keyspace): FrozenLayer | undefined {
  if (k.overlay.size === 0) return undefined;
  const layer = new FrozenLayer(k.overlay);
  k.frozen = [layer, ...k.frozen];
  k.overlay = new SortedMap(k.overlay.name);
  return layer;
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
