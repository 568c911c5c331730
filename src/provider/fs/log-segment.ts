/**
 * @module The fs provider's append-log segments (the AppendLog capability, append-log.ts).
 *
 * A segment is an ordinary blob file (blob-file.ts header, then the bytes) created empty by the
 * provider's own put (temp file, fsync, rename, directory fsync), then extended to its
 * preallocated size with ftruncate and fsynced, so later appends inside it change no file size:
 * each append is one positional write (pwritev) and one fdatasync, with no new file, rename or
 * directory sync. The preallocation is sparse (Node has no fallocate): the tail reads as zeros,
 * and an append still allocates its blocks, which fdatasync commits with the data.
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
 * and syncs that. `grew` is called whenever an append extends the file past its size so far
 * (cached read handles must forget the old size). Throws ProviderError 'Io'.
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
  /** Bytes the file holds past its header (preallocated, or more once appends ran past it). */
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
    try {
      await writeAllAt(this.#handle, chunks, total, HEADER_BYTES + offset);
    } catch (err) {
      throw new AppendError('write', `${this.key}: append at ${offset} failed: ${(err as Error).message}`, err);
    }
    if (offset + total > this.#size) {
      this.#size = offset + total;
      this.#grew();
    }
    try {
      await this.#handle.datasync();
    } catch (err) {
      throw new AppendError('sync', `${this.key}: fdatasync after append at ${offset} failed: ${(err as Error).message}`, err);
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
