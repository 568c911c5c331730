/**
 * @module The fs provider's append-log segments (the AppendLog capability, append-log.ts).
 *
 * A segment is an ordinary blob file (blob-file.ts header, then the bytes) created empty by the
 * provider's own put (temp file, fsync, rename, directory fsync), then extended to its
 * preallocated size with ftruncate and fsynced, so later appends inside it change no file size:
 * each append is one positional write (pwritev) and one fdatasync, with no new file, rename or
 * directory sync. The preallocation is sparse (Node has no fallocate): the tail reads as zeros,
 * and an append still allocates its blocks, which fdatasync commits with the data.
 *
 * An append that would run past the file's end first extends it by whole preallocation steps
 * (ftruncate, no sync: the append's fdatasync makes the new size durable with the data, as it
 * must for the data to be readable), so the file is never more than one step longer than what
 * was written, and space accounting (list sizes, GC) sees little more than the written bytes.
 * `seal` cuts a segment that takes no more appends to its written end.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { AppendError, type AppendLog } from '../append-log.js';
import { ProviderError } from '../provider.js';
import { HEADER_BYTES } from './blob-file.js';

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
    handle = await open(path, 'r+');
    await handle.truncate(HEADER_BYTES + bytes);
    await handle.sync();
  } catch (err) {
    await handle?.close().catch(() => undefined);
    throw new ProviderError('Io', `${key}: cannot create log segment: ${(err as Error).message}`, { cause: err });
  }
  grew();
  return new FsSegment(key, handle, bytes, grew);
}

class FsSegment implements AppendLog {
  readonly key: string;
  readonly preallocated: number;
  readonly #handle: FileHandle;
  readonly #grew: () => void;
  /** Bytes the file holds past its header (preallocated, grown by steps, or cut by seal). */
  #size: number;
  #closed = false;

  constructor(key: string, handle: FileHandle, bytes: number, grew: () => void) {
    this.key = key;
    this.preallocated = bytes;
    this.#size = bytes;
    this.#handle = handle;
    this.#grew = grew;
  }

  async append(offset: number, chunks: readonly Uint8Array[]): Promise<void> {
    if (this.#closed) throw new AppendError('write', `${this.key}: segment is closed`, undefined);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new AppendError('write', `${this.key}: bad append offset ${offset}`, undefined);
    let total = 0;
    for (const c of chunks) total += c.byteLength;
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
      await writeAllAt(this.#handle, chunks, total, HEADER_BYTES + offset);
    } catch (err) {
      throw new AppendError('write', `${this.key}: append at ${offset} failed: ${(err as Error).message}`, err);
    }
    try {
      await this.#handle.datasync();
    } catch (err) {
      throw new AppendError('sync', `${this.key}: fdatasync after append at ${offset} failed: ${(err as Error).message}`, err);
    }
  }

  async seal(end: number): Promise<void> {
    if (this.#closed) throw new ProviderError('Io', `${this.key}: segment is closed`);
    if (!Number.isSafeInteger(end) || end < 0 || end > this.#size) throw new RangeError(`${this.key}: cannot seal at ${end} (size ${this.#size})`);
    this.#closed = true;
    try {
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
    await this.#handle.close();
  }
}

/** pwritev of `chunks` at `position`, continuing after short writes until all `total` bytes are written. */
async function writeAllAt(handle: FileHandle, chunks: readonly Uint8Array[], total: number, position: number): Promise<void> {
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
