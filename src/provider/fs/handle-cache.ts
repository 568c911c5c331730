/**
 * @module Open read handles of blob files, kept for positional reads (exclusive mode).
 *
 * Blobs are immutable once written, so a handle stays valid until this process replaces
 * or deletes the key — and in exclusive mode every such change goes through the provider,
 * which evicts the handle first. A read of a cached blob is then one pread(2) instead of
 * open + read header + fstat + read + close.
 *
 * The cache is also the bound on what reads hold: never more than `max` descriptors open,
 * cached or in use. A read that needs another when all are in use waits for one to be free
 * (each is held for one pread), so many concurrent GETs of an erasure set cannot run the
 * process out of descriptors (EMFILE) however many fragments they touch.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { HEADER_BYTES, readEtag } from './blob-file.js';

/** Open handles kept; well below the usual 1024-descriptor soft limit. */
export const MAX_CACHED_HANDLES = 256;
/** How long a read waits for a free descriptor before it fails as EMFILE would, ms: well
 * below an erasure domain's timeout (a read that outlived that would count its domain failed). */
export const HANDLE_WAIT_MS = 1_000;

interface Entry {
  handle: FileHandle;
  /** Blob bytes (file size minus the header). */
  size: number;
  users: number;
  evicted: boolean;
}

export class HandleCache {
  readonly #entries = new Map<string, Entry>();
  readonly #opening = new Map<string, Promise<Entry | undefined>>();
  /** Descriptors open now: cached entries, evicted ones still in use, and opens in progress. */
  #live = 0;
  /** Reads waiting for a descriptor (every one open is in use), oldest first. */
  readonly #waiters: (() => void)[] = [];

  /**
   * `max`: handles open at most, cached or in use (fd-budget.ts sizes it for a process of many
   * caches); a read that needs one more waits until one is closed or free to close, up to
   * `waitMs`, then fails with an error whose code is EMFILE (what opening past the bound
   * would have met), which the erasure provider does not count against the domain.
   */
  constructor(
    readonly max: number = MAX_CACHED_HANDLES,
    readonly waitMs: number = HANDLE_WAIT_MS
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`HandleCache: max ${max}`);
    if (!(waitMs >= 0)) throw new RangeError(`HandleCache: waitMs ${waitMs}`);
  }

  /** Descriptors this cache holds open now (at most `max`). */
  get open(): number {
    return this.#live;
  }

  /**
   * Runs `fn` with an open handle of the blob at `path` and its size; undefined when the
   * file does not exist. The handle stays open while `fn` runs even if evicted meanwhile.
   * When `max` handles are open and all in use, waits for one (never opens past `max`).
   */
  async with<T>(path: string, fn: (handle: FileHandle, size: number) => Promise<T>): Promise<T | undefined> {
    let e = this.#entries.get(path);
    if (e) {
      // Refresh LRU position.
      this.#entries.delete(path);
      this.#entries.set(path, e);
    } else {
      let p = this.#opening.get(path);
      if (!p) {
        p = this.#open(path).finally(() => this.#opening.delete(path));
        this.#opening.set(path, p);
      }
      e = await p;
      if (!e) return undefined;
      // Between its open and this turn, an idle entry may be closed for another's open (#slot)
      // or evicted by a write: start again rather than read a closed handle.
      if (e.evicted) return this.with(path, fn);
    }
    e.users++;
    try {
      return await fn(e.handle, e.size);
    } finally {
      e.users--;
      if (e.users === 0) {
        if (e.evicted) await this.#close(e);
        else this.#wake(); // now idle: a waiter may close it to open its own
      }
    }
  }

  /** Takes one descriptor of the budget, closing the least recently used idle entry, or waiting
   * for one to become idle or closed, when all `max` are taken. */
  async #slot(path: string): Promise<void> {
    const deadline = performance.now() + this.waitMs;
    let woken = false;
    while (this.#live >= this.max) {
      const idle = this.#oldestIdle();
      if (idle) {
        // Its slot passes to this open at once; its close is not waited for (a read that
        // misses the cache would otherwise pay a close before its open). Only closes in
        // progress, a few microseconds each, can go past `max`.
        this.#entries.delete(idle[0]);
        idle[1].evicted = true;
        void idle[1].handle.close().catch(() => undefined);
        break;
      }
      // A waiter woken but beaten to the slot keeps its place at the head.
      woken = await this.#wait(deadline - performance.now(), woken);
      if (!woken) {
        const err = new Error(`${path}: no read descriptor free within ${this.waitMs} ms (all ${this.max} of this cache in use)`);
        throw Object.assign(err, { code: 'EMFILE' });
      }
    }
    if (this.#live < this.max) this.#live++;
  }

  /** The least recently used entry no read is using (usually the first one looked at). */
  #oldestIdle(): [string, Entry] | undefined {
    for (const pair of this.#entries) if (pair[1].users === 0) return pair;
    return undefined;
  }

  /** Resolves true when woken, false when `ms` ran out first (leaving the queue). */
  #wait(ms: number, head: boolean): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(wake);
        if (i >= 0) this.#waiters.splice(i, 1);
        resolve(false);
      }, ms);
      if (head) this.#waiters.unshift(wake);
      else this.#waiters.push(wake);
    });
  }

  async #close(e: Entry): Promise<void> {
    await e.handle.close().catch(() => undefined);
    this.#live--;
    this.#wake();
  }

  #wake(): void {
    this.#waiters.shift()?.();
  }

  async #open(path: string): Promise<Entry | undefined> {
    await this.#slot(path);
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      this.#live--;
      this.#wake();
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw err;
    }
    try {
      await readEtag(handle, path); // validates the header once
      const st = await handle.stat();
      const e: Entry = { handle, size: st.size - HEADER_BYTES, users: 0, evicted: false };
      this.#entries.set(path, e);
      return e;
    } catch (err) {
      await this.#close({ handle, size: 0, users: 0, evicted: true });
      throw err;
    }
  }

  /** Forgets `path` (its file is being replaced or removed); closes it once unused. */
  evict(path: string): void {
    const e = this.#entries.get(path);
    if (!e) return;
    this.#entries.delete(path);
    e.evicted = true;
    if (e.users === 0) void this.#close(e);
  }

  async closeAll(): Promise<void> {
    for (const path of [...this.#entries.keys()]) this.evict(path);
  }
}
