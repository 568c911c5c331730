/**
 * @module The fs provider's blob file: a fixed header, then the blob bytes.
 *
 *   offset  size  field
 *        0     4  magic "SBLB"
 *        4     1  format version (1)
 *        5     3  reserved, zero
 *        8    16  version id: random per write; its hex is the blob's etag
 *       24     8  reserved, zero
 *       32     …  the blob
 *
 * The version id makes the etag change on every replacement, even when a rename
 * reuses an inode within one timestamp tick (which a stat-derived etag would miss),
 * and across delete-then-recreate.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { ProviderError } from '../provider.js';

/** Bytes before the blob itself. */
export const HEADER_BYTES = 32;
const MAGIC = Buffer.from('SBLB', 'latin1');
const FORMAT_VERSION = 1;
const ID_OFFSET = 8;
const ID_BYTES = 16;

/** A fresh header and the etag it carries. */
export function newHeader(): { header: Buffer; etag: string } {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header[4] = FORMAT_VERSION;
  const id = randomBytes(ID_BYTES);
  id.copy(header, ID_OFFSET);
  return { header, etag: id.toString('hex') };
}

/**
 * Reads the header of an open blob file and returns its etag. Throws ProviderError
 * 'Corrupt' if the file is too short or not a blob file of this format.
 */
export async function readEtag(handle: FileHandle, path: string): Promise<string> {
  const header = Buffer.alloc(HEADER_BYTES);
  const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
  return etagOfHeader(header, bytesRead, path);
}

/** The etag in `header` (the first `bytesRead` bytes of a file); throws ProviderError
 * 'Corrupt' when they are not a blob file's header of this format: that file is damaged (or
 * foreign), which says nothing of the directory's health. */
function etagOfHeader(header: Buffer, bytesRead: number, path: string): string {
  if (
    bytesRead !== HEADER_BYTES ||
    !header.subarray(0, 4).equals(MAGIC) ||
    header[4] !== FORMAT_VERSION
  ) {
    throw new ProviderError('Corrupt', `${path}: not a blob file (bad header)`);
  }
  return header.subarray(ID_OFFSET, ID_OFFSET + ID_BYTES).toString('hex');
}

/**
 * A read that found the file ending before the size it had when it was opened (or stat'd).
 * Blob files are replaced by rename and removed by unlink, which leave an open file whole; the
 * only cut in place is a commit log segment's seal, of preallocated bytes past its last record
 * that no reader is owed. So the file is damaged, or the read asked for bytes that were never
 * written: either way that blob alone cannot answer ('Corrupt'), and the directory is not
 * failing (an erasure domain stays in service and the read goes to the other fragments).
 */
export function cutShort(what: string): ProviderError {
  return new ProviderError('Corrupt', `${what}: file shorter than its size (cut short since it was opened)`);
}

/** Header scratch of readBlobRangeSync (synchronous, so one per thread suffices). */
const HEADER_SCRATCH = Buffer.alloc(HEADER_BYTES);

/**
 * Reads up to `length` bytes of the blob in file `path` from blob byte `start` into `into`
 * (at least `length` long), synchronously: for a worker thread whose job is to read
 * (Provider.blobFilePath), never for an event loop. Returns the view of `into` filled, shorter
 * than `length` when the blob ends first. Throws ProviderError 'NotFound' when there is no
 * such file, 'Corrupt' when it is not a blob file or is cut short while read, 'Io' when the
 * system fails to open or read it.
 */
export function readBlobRangeSync(path: string, start: number, length: number, into: Uint8Array): Uint8Array {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException)?.code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ProviderError('NotFound', `${path}: no such blob`);
    throw new ProviderError('Io', `${path}: open failed: ${(err as Error)?.message ?? err}`, { cause: err });
  }
  try {
    etagOfHeader(HEADER_SCRATCH, readSync(fd, HEADER_SCRATCH, 0, HEADER_BYTES, 0), path);
    const size = fstatSync(fd).size - HEADER_BYTES;
    const out = into.subarray(0, Math.max(0, Math.min(length, size - start)));
    let off = 0;
    while (off < out.length) {
      const n = readSync(fd, out, off, out.length - off, HEADER_BYTES + start + off);
      if (n === 0) throw cutShort(path);
      off += n;
    }
    return out;
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderError('Io', `${path}: read failed: ${(err as Error)?.message ?? err}`, { cause: err });
  } finally {
    closeSync(fd);
  }
}

/** Writes all of `data` at the handle's current position (loops over short writes). */
export async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.byteLength) {
    const { bytesWritten } = await handle.write(data, off, data.byteLength - off);
    if (bytesWritten <= 0) throw new ProviderError('Io', 'write made no progress');
    off += bytesWritten;
  }
}
