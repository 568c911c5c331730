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
 * 'Io' if the file is too short or not a blob file of this format.
 */
export async function readEtag(handle: FileHandle, path: string): Promise<string> {
  const header = Buffer.alloc(HEADER_BYTES);
  const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
  if (
    bytesRead !== HEADER_BYTES ||
    !header.subarray(0, 4).equals(MAGIC) ||
    header[4] !== FORMAT_VERSION
  ) {
    throw new ProviderError('Io', `${path}: not a blob file (bad header)`);
  }
  return header.subarray(ID_OFFSET, ID_OFFSET + ID_BYTES).toString('hex');
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
