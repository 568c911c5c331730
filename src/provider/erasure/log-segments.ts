/**
 * @module The erasure provider's log segments: the ones this process appends to, and the read
 * views of all of them (log-view.ts), so that the provider's openLog, read, get, head and
 * checkBlob share one picture of each segment.
 *
 * A segment open for appends here has exactly one view, updated by its writer as appends are
 * acknowledged; it stays pinned while open (reads of bodies just committed are served from it)
 * and joins the cache when closed. Other segments are scanned on first use and cached, at most
 * VIEW_CACHE_ENTRIES of them; a scanned segment whose copies do not all hold every record is
 * queued for repair.
 */
import type { AppendLog } from '../append-log.js';
import { ProviderError } from '../provider.js';
import type { BlobMeta } from './lookup.js';
import { openReplicatedLog, MAX_LOG_SEGMENT_BYTES, type LogWriteContext, type ReplicatedLog } from './log-copy.js';
import { loadView, type LogView, type LogViewContext } from './log-view.js';
import { nameOf } from './lookup.js';

/** Views of closed segments kept: each is ~40 bytes per record (a 64 MiB segment of 4 KiB
 * commits: ~15,000 records, 600 KiB), so 64 stay within a few tens of MiB at worst. */
export const VIEW_CACHE_ENTRIES = 64;

export class LogSegments {
  readonly #ctx: LogWriteContext & LogViewContext;
  readonly #open = new Map<string, LogView>();
  /** The writers of the segments open in this process, by key. */
  readonly #writers = new Map<string, ReplicatedLog>();
  readonly #cache = new Map<string, LogView>();
  readonly #loading = new Map<string, Promise<LogView>>();

  constructor(ctx: LogWriteContext & LogViewContext) {
    this.#ctx = ctx;
  }

  /**
   * Creates segment `meta` (`bytes` preallocated) and opens it for appends (log-copy.ts);
   * its view is pinned until the log is closed. Throws RangeError for a size outside
   * 0..MAX_LOG_SEGMENT_BYTES, ProviderError 'Unavailable' when too few copies could be made.
   */
  async open(meta: BlobMeta, bytes: number): Promise<AppendLog> {
    if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > MAX_LOG_SEGMENT_BYTES)
      throw new RangeError(`segment size must be 0 to ${MAX_LOG_SEGMENT_BYTES} bytes, not ${bytes}`);
    const { log, view } = await openReplicatedLog(this.#ctx, meta, bytes);
    this.#cache.delete(meta.key);
    this.#open.set(meta.key, view);
    this.#writers.set(meta.key, log);
    return {
      key: log.key,
      preallocated: log.preallocated,
      append: (offset, chunks) => log.append(offset, chunks),
      close: async () => {
        try {
          await log.close();
        } finally {
          if (this.#open.get(meta.key) === view) {
            this.#open.delete(meta.key);
            this.#writers.delete(meta.key);
            this.#remember(view);
          }
        }
      },
    };
  }

  /**
   * Has the writer of open segment `key` replace its copies outside `sound` (log-copy.ts
   * heal); returns the copies added (0 when the segment is not open here).
   */
  heal(key: string, sound: ReadonlySet<string>): Promise<number> {
    return this.#writers.get(key)?.heal(sound) ?? Promise.resolve(0);
  }

  /** The view of the segment this process appends to under `key`, if any. */
  openView(key: string): LogView | undefined {
    return this.#open.get(key);
  }

  /**
   * The view of segment `meta`: the open one, a cached one of the same write, or scanned from
   * the copies now. Throws ProviderError 'Io' when no copy can be read.
   */
  async view(meta: BlobMeta): Promise<LogView> {
    const open = this.#open.get(meta.key);
    if (open && open.generation === meta.generation) return open;
    const cached = this.#cache.get(meta.key);
    if (cached && cached.generation === meta.generation) {
      this.#remember(cached);
      return cached;
    }
    const id = `${meta.key}\n${meta.generation}`;
    let pending = this.#loading.get(id);
    if (!pending) {
      pending = loadView(this.#ctx.domains, meta.key, nameOf(meta, 0), meta.generation, meta.length ?? 0, meta.copies);
      this.#loading.set(id, pending);
      const done = (): void => void this.#loading.delete(id);
      pending.then(done, done);
    }
    const view = await pending;
    if (!this.#open.has(meta.key)) this.#remember(view);
    // Copies that differ in their tail (a crash while an append was in flight) or too few: the
    // longest copy's records are what reads (and so recovery) take, so every copy must hold
    // them; the repair worker (or the next scrub) rewrites the short ones (log-check.ts).
    if (view.copies.length < this.#ctx.m + 1 || view.copies.some((c) => c.covers < view.records.length)) this.#ctx.onDegraded(meta.key);
    return view;
  }

  /** Forgets the cached view of `key` (deleted, or repaired: the next read scans again). */
  forget(key: string): void {
    this.#cache.delete(key);
  }

  #remember(view: LogView): void {
    this.#cache.delete(view.key);
    this.#cache.set(view.key, view);
    if (this.#cache.size > VIEW_CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
  }
}

/** The bytes [start, start + length) of segment `view`, into `into` when large enough. With
 * `endToEnd` (ReadOptions: the caller checks the bytes itself, and reads again without it when
 * they fail) unchecked where LogView.readUnchecked applies (one record, a healthy copy). */
export async function readLog(ctx: LogViewContext, view: LogView, start: number, length: number, into?: Uint8Array, endToEnd = false): Promise<Uint8Array> {
  if (length < 0) throw new ProviderError('InvalidRange', `${view.key}: negative length`);
  if (endToEnd) {
    const got = await view.readUnchecked(ctx, start, length);
    if (got) {
      if (!into || into.length < length) return got;
      into.set(got);
      return into.subarray(0, length);
    }
  }
  const out = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  await view.read(ctx, start, length, out);
  return out;
}
