/**
 * @module Positional reads of an open FileHandle through its descriptor and node's callback
 * API, instead of the FileHandle's own promise methods.
 *
 * Same system calls, less around them: FileHandle.read/readv/writev wrap each call in a
 * promise request object and track it on the handle (so that close waits for it). Measured here
 * (2 cores, 16 concurrent 4 KiB preads of a file in the page cache, process CPU per read, two
 * runs): 14.9-15.3 µs through FileHandle.read, 6.9-7.7 µs through fs.read with the descriptor.
 * A small GET that misses the body cache makes one such read.
 *
 * A FileHandle's close waits for the operations of its own methods, not for these: the caller
 * must keep the handle open until the returned promise settles. The fs provider reads only
 * through handles the handle cache (handle-cache.ts) holds open for the duration of its
 * callback, or through a handle of its own that it closes after awaiting the read. Writes stay
 * on the FileHandle methods (a commit's append costs a disk flush, beside which this is noise).
 */
import { read, readv } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** pread(2) of up to `length` bytes at `position` into `buffer` from `offset`; resolves with
 * the bytes read (0 at the end of the file). */
export function preadAt(handle: FileHandle, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(handle.fd, buffer, offset, length, position, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

/** preadv(2) into `buffers` at `position`; resolves with the bytes read. */
export function preadvAt(handle: FileHandle, buffers: readonly Uint8Array[], position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    readv(handle.fd, buffers as Uint8Array[], position, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

/** fsync(2) of the directory `path` through a handle of its own (opened read-only, closed after). */
export async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** syncDirectory of a directory that existed before this process and may refuse to be opened
 * for reading (EACCES, EPERM): then its owner's syncs are what there is, and nothing is thrown. */
export async function syncDirectoryIfReadable(path: string): Promise<void> {
  await syncDirectory(path).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException)?.code;
    if (code !== 'EACCES' && code !== 'EPERM') throw err;
  });
}
