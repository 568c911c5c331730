/**
 * @module Merging sorted sources: the read path of LIST and the input of compaction.
 *
 * Sources are ordered newest first (the overlay, then runs from newest to oldest). The merge
 * yields each key once, with the value of the newest source holding it (a deletion is just a
 * value here; the caller decides what it means). It keeps one cursor per source in a binary
 * heap, so producing N keys costs O(N log k) for k sources, and `seek` moves every cursor
 * forward — inside its current batch when it can, by re-opening the source at the target
 * otherwise — so skipping a whole key range (a common prefix under a delimiter) costs
 * O(k log) rather than the number of keys skipped.
 */
import { compareKeys } from './compare.js';

/** A position in key order: the first key >= `key` (inclusive) or > `key` (exclusive). */
export interface SeekKey {
  readonly key: string;
  readonly inclusive: boolean;
}

/** The position before every key (the empty string is the smallest key). */
export const FROM_START: SeekKey = Object.freeze({ key: '', inclusive: true });

/**
 * Consecutive entries of one source: `keys[i]` with `valueAt(i)` for `start <= i <
 * keys.length`, in ascending order, never empty. A batch never changes after it is handed out.
 * `valueAt` may return a view into shared memory (a cached run block): treat it as read-only,
 * and copy it to keep it beyond the current use (a kept view also pins its whole block).
 */
export interface EntryBatch {
  readonly keys: readonly string[];
  readonly start: number;
  valueAt(index: number): Uint8Array;
}

/** Something sorted by compareKeys with unique keys, readable from any position. */
export interface SortedSource {
  /** Label for diagnostics (a run's blob key, 'overlay'). */
  readonly name: string;
  /**
   * Batches of entries from `from` onwards. The merge asks for one batch at a time and calls
   * `return()` when it no longer needs the iterator. Throws what reading the source throws.
   */
  scan(from: SeekKey): AsyncIterator<EntryBatch, unknown, undefined>;
  /**
   * Optional: the first batch `scan(from)` would yield, when it can be had without a read
   * (the source is in memory, or the block is cached): `null` when nothing is at or after
   * `from`, `undefined` when a read would be needed (then the merge scans). `seek` is true
   * when the merge jumps to `from` (it may read only the first entries there: a source may
   * hand over a short batch), false when it steps on from its previous batch. Mutates
   * nothing the source reads; throws only what decoding memory throws.
   */
  peek?(from: SeekKey, seek: boolean): EntryBatch | null | undefined;
}

/**
 * One merged entry; `source` is the index in the sources array of the newest holder. `value`
 * is read-only and may be a view into a cached block (see EntryBatch).
 */
export interface MergedEntry {
  readonly key: string;
  readonly value: Uint8Array;
  readonly source: number;
}

/** True if `key` is at or after the position `at`. */
function reaches(key: string, at: SeekKey): boolean {
  const c = compareKeys(key, at.key);
  return c > 0 || (c === 0 && at.inclusive);
}

/** True if position `a` is at or after position `b` (every key reaching `a` reaches `b`). */
function notBefore(a: SeekKey, b: SeekKey): boolean {
  const c = compareKeys(a.key, b.key);
  return c > 0 || (c === 0 && (!a.inclusive || b.inclusive));
}

/**
 * One source's position: the current batch and index, or exhausted (`key` undefined). The
 * batch comes from the source's scan iterator, or — for a seek or a step into the next
 * batch that the source can serve from memory (SortedSource.peek) — from a peek, with no
 * iterator; the scan is then re-opened after the batch's last key only if the merge goes on
 * past it and the next batch is not in memory.
 */
class Cursor {
  readonly index: number;
  readonly #source: SortedSource;
  #it: AsyncIterator<EntryBatch, unknown, undefined> | undefined;
  #batch: EntryBatch | undefined;
  #pos = 0;
  /** The batch after this one, peeked by canAdvanceSync (undefined: not peeked). */
  #peeked: EntryBatch | null | undefined;
  key: string | undefined;

  constructor(source: SortedSource, index: number) {
    this.#source = source;
    this.index = index;
  }

  value(): Uint8Array {
    return this.#batch!.valueAt(this.#pos);
  }

  /** Re-opens the source at `from` (closing the previous scan) and loads the first batch. */
  async open(from: SeekKey): Promise<void> {
    await this.close();
    this.#it = this.#source.scan(from);
    await this.#fill();
  }

  async #fill(): Promise<void> {
    if (this.#it === undefined) {
      // Positioned by a peek: scan on from after the batch it gave.
      const keys = this.#batch!.keys;
      this.#it = this.#source.scan({ key: keys[keys.length - 1]!, inclusive: false });
    }
    const step = await this.#it.next();
    if (step.done) {
      this.#it = undefined;
      this.#batch = undefined;
      this.key = undefined;
      return;
    }
    this.#take(step.value);
  }

  #take(batch: EntryBatch): void {
    if (batch.start >= batch.keys.length) throw new Error(`${this.#source.name}: empty batch`);
    this.#batch = batch;
    this.#pos = batch.start;
    this.key = batch.keys[this.#pos];
    this.#peeked = undefined;
  }

  /** Moves to `batch` (null: the end) got by a peek, dropping the scan iterator. */
  #adopt(batch: EntryBatch | null): void {
    this.#detach();
    if (batch === null) {
      this.#batch = undefined;
      this.key = undefined;
      this.#peeked = undefined;
    } else this.#take(batch);
  }

  /** Closes the scan iterator without waiting (a peek replaced what it would yield). */
  #detach(): void {
    const it = this.#it;
    this.#it = undefined;
    const closing = it?.return?.();
    if (closing) closing.catch(() => undefined); // nothing to report: its batches are not used
  }

  /**
   * True if advance() will not need to read: the next entry is in the current batch, or the
   * source can hand over the next batch from memory (peeked now, used by advance()).
   */
  get canAdvanceSync(): boolean {
    if (this.key === undefined || this.#pos + 1 < this.#batch!.keys.length) return true;
    if (this.#peeked === undefined && this.#source.peek) {
      const keys = this.#batch!.keys;
      this.#peeked = this.#source.peek({ key: keys[keys.length - 1]!, inclusive: false }, false);
    }
    return this.#peeked !== undefined;
  }

  /** Moves to the next entry; loads the next batch only when this one is used up. */
  advance(): Promise<void> | void {
    if (++this.#pos < this.#batch!.keys.length) this.key = this.#batch!.keys[this.#pos];
    else if (this.#peeked !== undefined) this.#adopt(this.#peeked);
    else return this.#fill();
  }

  /**
   * Moves forward to the first entry reaching `to` (which must not be behind this cursor's
   * scan start) if that needs no read: already there, `to` is in the current batch, or the
   * source serves it from memory. Returns false (and stays put) otherwise.
   */
  seekSync(to: SeekKey): boolean {
    if (this.key === undefined || reaches(this.key, to)) return true;
    const keys = this.#batch!.keys;
    let lo = this.#pos + 1;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (reaches(keys[mid]!, to)) hi = mid;
      else lo = mid + 1;
    }
    if (lo < keys.length) {
      this.#pos = lo;
      this.key = keys[lo];
      return true;
    }
    const peeked = this.#source.peek?.(to, true);
    if (peeked === undefined) return false;
    this.#adopt(peeked);
    return true;
  }

  /**
   * Moves forward to the first entry reaching `to` (which must not be behind this cursor's
   * scan start). Stays put if already there; searches the current batch, then the source's
   * memory; re-opens the scan at `to` otherwise.
   */
  seekForward(to: SeekKey): Promise<void> | void {
    if (!this.seekSync(to)) return this.open(to);
  }

  async close(): Promise<void> {
    const it = this.#it;
    this.#it = undefined;
    this.#batch = undefined;
    this.#peeked = undefined;
    this.key = undefined;
    await it?.return?.();
  }
}

/** Heap order: smaller key first; for equal keys the newer source (smaller index) first. */
function before(a: Cursor, b: Cursor): boolean {
  const c = compareKeys(a.key!, b.key!);
  return c < 0 || (c === 0 && a.index < b.index);
}

/**
 * The merged view of several sources. `next()` calls must not overlap (await each).
 * `seek` may be called between them; `return()` closes every source. If `next()` throws (a
 * source failed to read), the iterator's position is undefined: call `return()`.
 */
export class MergeIterator implements AsyncIterableIterator<MergedEntry> {
  readonly #cursors: Cursor[];
  #heap: Cursor[] = [];
  /** Every cursor is at or after this position. */
  #floor: SeekKey;
  /** Where the next `next()` must start, if `seek` was called since. */
  #target: SeekKey | undefined;
  #started = false;
  #closed = false;
  #busy = false;

  constructor(sources: readonly SortedSource[], from: SeekKey) {
    this.#cursors = sources.map((s, i) => new Cursor(s, i));
    this.#floor = from;
  }

  /**
   * Makes the next `next()` return the first merged key at or after `key` (after it when
   * `inclusive` is false). Forward seeks reuse what the cursors hold; a backward seek
   * re-opens every source. Only records the target: no I/O until `next()`.
   */
  seek(key: string, inclusive = true): void {
    this.#target = { key, inclusive };
  }

  /**
   * The next merged entry if it can be produced from what the cursors already hold, with
   * no read and no promise: `null` when the merge is done, `undefined` when a read is
   * needed (then call next()). Same semantics as next() otherwise; the hot loop of LIST
   * runs on this and falls back to next() once per batch.
   */
  nextSync(): MergedEntry | null | undefined {
    if (this.#closed) return null;
    if (this.#busy || !this.#started) return undefined;
    if (this.#target !== undefined) {
      const target = this.#target;
      if (!notBefore(target, this.#floor)) return undefined;
      // Cursors that can move without a read do; if one cannot, next() moves the rest (those
      // already there stay put), so a partial move here is never undone or repeated.
      for (const c of this.#cursors) if (!c.seekSync(target)) return undefined;
      this.#target = undefined;
      this.#floor = target;
      this.#heap = this.#cursors.filter((c) => c.key !== undefined);
      for (let i = (this.#heap.length >>> 1) - 1; i >= 0; i--) this.#siftDown(i);
    }
    if (this.#heap.length === 0) return null;
    const top = this.#heap[0]!;
    const key = top.key!;
    for (const c of this.#cursors) if (c.key === key && !c.canAdvanceSync) return undefined;
    const entry: MergedEntry = { key, value: top.value(), source: top.index };
    while (this.#heap.length > 0 && this.#heap[0]!.key === key) {
      const c = this.#heap[0]!;
      c.advance();
      if (c.key === undefined) {
        const last = this.#heap.pop()!;
        if (this.#heap.length > 0) this.#heap[0] = last;
      }
      this.#siftDown(0);
    }
    this.#floor = { key, inclusive: false };
    return entry;
  }

  async next(): Promise<IteratorResult<MergedEntry, undefined>> {
    if (this.#closed) return { done: true, value: undefined };
    if (this.#busy) throw new Error('MergeIterator.next() called while a previous call is pending');
    this.#busy = true;
    try {
      if (!this.#started || this.#target !== undefined) await this.#position();
      if (this.#heap.length === 0) return { done: true, value: undefined };
      const top = this.#heap[0]!;
      const key = top.key!;
      const entry: MergedEntry = { key, value: top.value(), source: top.index };
      // Step past `key` in every source that holds it; they are all at the top in turn.
      while (this.#heap.length > 0 && this.#heap[0]!.key === key) {
        const c = this.#heap[0]!;
        const loading = c.advance(); // a promise only when a new batch must be read
        if (loading) await loading;
        if (c.key === undefined) {
          const last = this.#heap.pop()!;
          if (this.#heap.length > 0) this.#heap[0] = last;
        }
        this.#siftDown(0);
      }
      this.#floor = { key, inclusive: false };
      return { done: false, value: entry };
    } finally {
      this.#busy = false;
    }
  }

  /** Applies the first open or a pending seek, then rebuilds the heap. */
  async #position(): Promise<void> {
    const target = this.#target;
    this.#target = undefined;
    if (!this.#started || !notBefore(target!, this.#floor)) {
      const from = target ?? this.#floor;
      await Promise.all(this.#cursors.map((c) => c.open(from)));
    } else {
      await Promise.all(this.#cursors.map((c) => c.seekForward(target!)));
    }
    this.#started = true;
    if (target) this.#floor = target;
    this.#heap = this.#cursors.filter((c) => c.key !== undefined);
    for (let i = (this.#heap.length >>> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  #siftDown(i: number): void {
    const heap = this.#heap;
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const m = l + 1 < n && before(heap[l + 1]!, heap[l]!) ? l + 1 : l;
      if (!before(heap[m]!, heap[i]!)) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }

  /** Closes every source; later `next()` calls report done. */
  async return(): Promise<IteratorResult<MergedEntry, undefined>> {
    this.#closed = true;
    this.#heap = [];
    await Promise.all(this.#cursors.map((c) => c.close()));
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): MergeIterator {
    return this;
  }
}

/**
 * Merges `sources` (newest first) from `from`: each key once, with the newest source's
 * value. Lazy: nothing is read before the first `next()`. See MergeIterator for `seek`.
 */
export function mergeSources(
  sources: readonly SortedSource[],
  from: SeekKey = FROM_START
): MergeIterator {
  return new MergeIterator(sources, from);
}
