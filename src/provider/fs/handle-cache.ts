/**
 * @module Open read handles of blob files, kept for positional reads (exclusive mode).
 *
 * Blobs are immutable once written, so a handle stays valid until this process replaces
 * or deletes the key — and in exclusive mode every such change goes through the provider,
 * which evicts the handle first. A read of a cached blob is then one pread(2) instead of
 * open + read header + fstat + read + close.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { HEADER_BYTES, readEtag } from './blob-file.js';

/** Open handles kept; well below the usual 1024-descriptor soft limit. */
export const MAX_CACHED_HANDLES = 256;

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

  /** `max`: handles kept open at most (fd-budget.ts sizes it for a process of many caches). */
  constructor(readonly max: number = MAX_CACHED_HANDLES) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`HandleCache: max ${max}`);
  }

  /**
   * Runs `fn` with an open handle of the blob at `path` and its size; undefined when the
   * file does not exist. The handle stays open while `fn` runs even if evicted meanwhile.
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
    }
    e.users++;
    try {
      return await fn(e.handle, e.size);
    } finally {
      e.users--;
      if (e.evicted && e.users === 0) await e.handle.close().catch(() => undefined);
    }
  }

  async #open(path: string): Promise<Entry | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw err;
    }
    try {
      await readEtag(handle, path); // validates the header once
      const st = await handle.stat();
      const e: Entry = { handle, size: st.size - HEADER_BYTES, users: 0, evicted: false };
      this.#entries.set(path, e);
      while (this.#entries.size > this.max) this.evict(this.#entries.keys().next().value as string);
      return e;
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }

  /** Forgets `path` (its file is being replaced or removed); closes it once unused. */
  evict(path: string): void {
    const e = this.#entries.get(path);
    if (!e) return;
    this.#entries.delete(path);
    e.evicted = true;
    if (e.users === 0) void e.handle.close().catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    for (const path of [...this.#entries.keys()]) this.evict(path);
  }
}
