/**
 * @module The fs provider's append-log segments (the AppendLog capability, append-log.ts).
 *
 * A segment is an ordinary blob file (blob-file.ts header, then the bytes) created empty by the
 * provider's own put (temp file, fsync, rename, directory fsync), then extended to its
 * preallocated size with ftruncate and fsynced, so later appends inside it change no file size:
 * each append is one positional write (pwritev), with no new file, rename or directory sync.
 * The segment is opened O_DSYNC, so that write returns only once its bytes (and the metadata
 * needed to read them, as fdatasync would) are durable: one job on libuv's thread pool per
 * append instead of a write and then an fdatasync, each a round trip through the main thread.
 * The erasure provider appends to m + 1 such copies per group commit (and libuv has 4 threads),
 * so halving the round trips is what keeps its commits close to the plain fs provider's. The
 * preallocation is sparse (Node has no fallocate): the tail reads as zeros.
 *
 * An append into a sparse part of the file allocates its blocks, and its synchronous write then
 * waits for a journal commit (the allocation is metadata fdatasync must make durable), which on
 * ext4 here costs ~50% more than an overwrite of allocated blocks (measured with 21 KB appends:
 * 0.255 against 0.166 ms for one copy, 0.434 against 0.268 ms for three copies written at once).
 * So the segment zero-fills ahead of its small appends: after an append of at most a quarter
 * of a fill, when less than half a fill's worth past the furthest append is known allocated,
 * one positional write of zeros (FILL_MIN_BYTES, growing with what the segment holds to
 * FILL_MAX_BYTES) starts past it, and the appends that land there later overwrite allocated
 * zeros. A fill starts where the last fill ended, or a quarter of a fill past the furthest
 * append when the fills fell behind, so the next appends do not land on a fill in flight (an
 * append that would overlap one waits for it). Large appends start no fill: their own write
 * dwarfs the allocation, and a fill ahead of them would be overwritten before it paid off.
 * A fill only ever writes bytes past every append begun (they read as zeros anyway, so a
 * crash at any point leaves the same bytes), and seal and close wait for a fill in flight
 * before they cut or release the file. A fill stays inside the file's size (growth stays an
 * ftruncate). Fills go through a descriptor of their own: Linux reports a write-back error to
 * each open file description once, to the first synchronous write or fsync that checks, so a
 * fill sharing the appends' descriptor could take the error of an append's pages and leave the
 * append to succeed; with two descriptors every append sees every error (a fill's own failed
 * write-back can then fail the next append at its sync stage, which fences: conservative for
 * a device that loses writes to the log). A fill that fails turns filling off for the segment.
 * Disk traffic for the log is at most about twice its bytes (what a seal cuts off was zeroed
 * and then freed); PostgreSQL's WAL zero-fills its segments for the same reason (wal_init_zero).
 *
 * An append that would run past the file's end first extends it by whole preallocation steps
 * (ftruncate, no sync: the append's synchronous write makes the new size durable with the data,
 * as it must for the data to be readable), so the file is never more than one step longer than
 * what was written, and space accounting (list sizes, GC) sees little more than the written
 * bytes. `seal` cuts a segment that takes no more appends to its written end.
 *
 * Because the write and the sync are one call, a failed append is classified by its error:
 * the errors a write reports before its bytes reach the file (WRITE_STAGE_ERRORS: no space,
 * quota, file too big, bad arguments) are stage 'write' (writing again at the same offset is
 * safe); any other error (EIO above all: the sync failed) is stage 'sync', the bytes' fate
 * unknown, and the caller stops writing.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { AppendError, type AppendLog } from '../append-log.js';
import { ProviderError } from '../provider.js';
import { HEADER_BYTES } from './blob-file.js';

/** Errors of an O_DSYNC write that it reports before its bytes reach the file (so nothing of
 * the append can be durable later, and the same offset can be written again); any other error
 * may come from the sync and leaves the bytes' fate unknown. */
const WRITE_STAGE_ERRORS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EINVAL', 'EBADF', 'EFAULT']);

/** Opens the segment file for appends that are durable when their write returns. */
const SEGMENT_OPEN_FLAGS = constants.O_RDWR | constants.O_DSYNC;
/** The fills' descriptor (module doc): writes only, each durable when it returns. */
const FILL_OPEN_FLAGS = constants.O_WRONLY | constants.O_DSYNC;

/** Smallest and largest zero-fill (module doc): a fill is the segment's appended bytes so far
 * within these bounds, so a segment that holds a few commits (tests roll every few KiB) is not
 * zeroed a megabyte ahead, and a busy one is zeroed in steps that amortise the journal commit. */
const FILL_MIN_BYTES = 64 * 1024;
const FILL_MAX_BYTES = 1024 * 1024;
/** Zeros every fill writes from (read only, shared by all segments). */
let fillZeros: Buffer | undefined;

/** Largest segment the fs provider preallocates: 1 GiB, far above what a repository asks. */
export const MAX_SEGMENT_BYTES = 1024 * 1024 * 1024;

/** Throws RangeError unless `bytes` is a segment size the fs provider preallocates. */
export function checkSegmentSize(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > MAX_SEGMENT_BYTES) {
    throw new RangeError(`segment size must be 0 to ${MAX_SEGMENT_BYTES} bytes, not ${bytes}`);
  }
}

/**
 * Opens the blob file at `path` (just created, empty) as segment `key`, extends it to `bytes`
 * and syncs that; `bytes` is also the step appends past the end grow it by. `grew` is called
 * whenever the file's size changes (cached read handles must forget the old size). Throws
 * ProviderError 'Io'.
 */
export async function openSegmentFile(key: string, path: string, bytes: number, grew: () => void): Promise<AppendLog> {
  checkSegmentSize(bytes);
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, SEGMENT_OPEN_FLAGS);
    await handle.truncate(HEADER_BYTES + bytes);
    await handle.sync();
  } catch (err) {
    await handle?.close().catch(() => undefined);
    throw new ProviderError('Io', `${key}: cannot create log segment: ${(err as Error).message}`, { cause: err });
  }
  grew();
  return new FsSegment(key, path, handle, bytes, grew);
}

class FsSegment implements AppendLog {
  readonly key: string;
  readonly preallocated: number;
  readonly #path: string;
  readonly #handle: FileHandle;
  readonly #grew: () => void;
  /** Bytes the file holds past its header (preallocated, grown by steps, or cut by seal). */
  #size: number;
  #closed = false;
  /** End of the furthest fill, finished or in flight (bytes past the header). */
  #fillEnd = 0;
  /** End of the furthest append begun (a fill starts past it). */
  #appendEnd = 0;
  /** The zero-fill in flight, if any: bytes [from, to) past the header. */
  #fill: { from: number; to: number; done: Promise<void> } | undefined;
  /** The fills' own descriptor (module doc), opened by the first fill. */
  #fillHandle: FileHandle | undefined;
  /** A fill failed: no more fills for this segment. */
  #fillOff = false;

  constructor(key: string, path: string, handle: FileHandle, bytes: number, grew: () => void) {
    this.key = key;
    this.preallocated = bytes;
    this.#size = bytes;
    this.#path = path;
    this.#handle = handle;
    this.#grew = grew;
  }

  async append(offset: number, chunks: readonly Uint8Array[]): Promise<void> {
    if (this.#closed) throw new AppendError('write', `${this.key}: segment is closed`, undefined);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new AppendError('write', `${this.key}: bad append offset ${offset}`, undefined);
    let total = 0;
    for (const c of chunks) total += c.byteLength;
    const fill = this.#fill;
    if (fill && offset < fill.to && offset + total > fill.from) {
      await fill.done; // never write where zeros are still on their way
      if (this.#closed) throw new AppendError('write', `${this.key}: segment is closed`, undefined);
    }
    if (offset + total > this.#appendEnd) this.#appendEnd = offset + total;
    if (offset + total > this.#size) {
      // Past the end: grow by whole steps first, so the appends that follow stay inside it.
      const step = Math.max(1, this.preallocated);
      const size = Math.ceil((offset + total) / step) * step;
      try {
        await this.#handle.truncate(HEADER_BYTES + size);
      } catch (err) {
        throw new AppendError('write', `${this.key}: cannot extend to ${size} bytes: ${(err as Error).message}`, err);
      }
      this.#size = size;
      this.#grew();
    }
    try {
      // O_DSYNC: durable once written (module doc), so no fdatasync follows.
      await writeAllAt(this.#handle, chunks, total, HEADER_BYTES + offset);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException)?.code;
      const stage = code !== undefined && WRITE_STAGE_ERRORS.has(code) ? 'write' : 'sync';
      throw new AppendError(stage, `${this.key}: synchronous append at ${offset} failed: ${(err as Error).message}`, err);
    }
    this.#fillAhead(total);
  }

  /** After an append of `bytes`, starts a zero-fill past the furthest append when too little
   * is allocated ahead (module doc). */
  #fillAhead(bytes: number): void {
    if (this.#fill || this.#closed || this.#fillOff) return;
    // Whole pages (a fill's bounds are file positions: a fraction would not be one).
    const want = Math.min(FILL_MAX_BYTES, Math.max(FILL_MIN_BYTES, pageCeil(this.#appendEnd)));
    if (bytes > want / 4 || this.#fillEnd - this.#appendEnd >= want / 2) return;
    const from = Math.max(this.#fillEnd, pageCeil(this.#appendEnd + want / 4));
    const to = Math.min(this.#size, from + want);
    if (to <= from) return; // at the file's end: the next growth is an ftruncate, filled after
    fillZeros ??= Buffer.alloc(FILL_MAX_BYTES);
    this.#fillEnd = to;
    const done = (async () => {
      try {
        this.#fillHandle ??= await open(this.#path, FILL_OPEN_FLAGS);
        await writeAllAt(this.#fillHandle, [fillZeros!.subarray(0, to - from)], to - from, HEADER_BYTES + from);
      } catch {
        this.#fillOff = true;
      } finally {
        this.#fill = undefined;
      }
    })();
    this.#fill = { from, to, done };
  }

  /** Waits for a fill in flight and closes the fills' descriptor (before a cut or a close). */
  async #stopFills(): Promise<void> {
    await this.#fill?.done;
    await this.#fillHandle?.close().catch(() => undefined);
    this.#fillHandle = undefined;
  }

  async seal(end: number): Promise<void> {
    if (this.#closed) throw new ProviderError('Io', `${this.key}: segment is closed`);
    if (!Number.isSafeInteger(end) || end < 0 || end > this.#size) throw new RangeError(`${this.key}: cannot seal at ${end} (size ${this.#size})`);
    this.#closed = true;
    try {
      await this.#stopFills(); // a fill in flight would write past the cut
      if (end < this.#size) {
        await this.#handle.truncate(HEADER_BYTES + end);
        this.#size = end;
        this.#grew();
        await this.#handle.sync();
      }
    } catch (err) {
      throw new ProviderError('Io', `${this.key}: cannot seal at ${end}: ${(err as Error).message}`, { cause: err });
    } finally {
      await this.#handle.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#stopFills();
    await this.#handle.close();
  }
}

/** `n` rounded up to a whole number of 4 KiB pages. */
function pageCeil(n: number): number {
  return Math.ceil(n / 4096) * 4096;
}

/** pwritev of `chunks` at `position`, continuing after short writes until all `total` bytes are
 * written. Throws RangeError for a position that is not a whole number (Node would write such a
 * write at the descriptor's current offset instead). */
async function writeAllAt(handle: FileHandle, chunks: readonly Uint8Array[], total: number, position: number): Promise<void> {
  if (!Number.isSafeInteger(position) || position < 0) throw new RangeError(`bad write position ${position}`);
  let done = (await handle.writev(chunks as Uint8Array[], position)).bytesWritten;
  if (done === total) return;
  // A short write (rare: a signal, a full disk): finish chunk by chunk from where it stopped.
  let skip = done;
  for (const c of chunks) {
    if (skip >= c.byteLength) {
      skip -= c.byteLength;
      continue;
    }
    let at = skip;
    skip = 0;
    while (at < c.byteLength) {
      const { bytesWritten } = await handle.write(c, at, c.byteLength - at, position + done);
      if (bytesWritten <= 0) throw new Error('write made no progress');
      at += bytesWritten;
      done += bytesWritten;
    }
  }
}
