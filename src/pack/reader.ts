/**
 * @module Pack reader: verifies and decodes one entry (from a single ranged read) or a
 * whole pack. Every check failure throws PackError; bytes that failed a check are never
 * returned, and no offset read from the blob is trusted before it is bounds-checked.
 */
import { packKernel } from '../wasm/pack.js';
import { crc32cOf } from '../checksum/accelerator.js';
import type { Flavor } from '../wasm/loader.js';
import { PackError, throwIfBad } from './errors.js';
import { ENTRY_HEADER_SIZE, PACK_HEADER_SIZE, TRAILER_SIZE, FOOTER_ROW_SIZE, tagOf, type PackEntryRef } from './writer.js';

export interface EntryExpectation {
  /** Tag of the pack the entry must belong to (unchecked when absent: the caller checks
   * the body some other way, e.g. a record hash). */
  tag?: number;
  /** Index the entry must have (any when absent). */
  index?: number;
  /** Body length the index recorded (checked when present). */
  length?: number;
  /**
   * The caller authenticates the body itself (an AEAD tag over it, e.g. an encrypted
   * segment), so the body's CRC32C is not computed: the header is still checked in full.
   */
  authenticated?: boolean;
  flavor?: Flavor;
}

/** The byte range [start, end] (inclusive) to read for one entry. */
export function entryRange(ref: Pick<PackEntryRef, 'offset' | 'length'>): { start: number; end: number } {
  return { start: ref.offset, end: ref.offset + ENTRY_HEADER_SIZE + ref.length - 1 };
}

/**
 * Verifies `bytes` = one entry header + body (exactly what `entryRange` names) and returns
 * the body, a view into `bytes`. Throws PackError on a wrong pack/index, a length that does
 * not match, a truncated read or a CRC mismatch (unless `expect.authenticated`: then the
 * caller must authenticate the body before using it).
 */
export function readEntry(bytes: Uint8Array, expect: EntryExpectation): Uint8Array {
  if (bytes.length < ENTRY_HEADER_SIZE) {
    throw new PackError('ERR_PACK_TRUNCATED', `entry read of ${bytes.length} bytes is shorter than its header`);
  }
  const kernel = packKernel(expect.flavor);
  const tag = expect.tag ?? new DataView(bytes.buffer, bytes.byteOffset + 4, 4).getUint32(0, true);
  const h = kernel.checkEntryHeader(bytes, tag, expect.index ?? -1);
  throwIfBad(h.status, `entry ${expect.index ?? '?'} header`);
  if (expect.length !== undefined && h.length !== expect.length) {
    throw new PackError('ERR_PACK_MISMATCH', `entry ${h.index}: header says ${h.length} bytes, index says ${expect.length}`);
  }
  if (bytes.length < ENTRY_HEADER_SIZE + h.length) {
    throw new PackError('ERR_PACK_TRUNCATED', `entry ${h.index}: ${bytes.length - ENTRY_HEADER_SIZE} of ${h.length} body bytes`);
  }
  const body = bytes.subarray(ENTRY_HEADER_SIZE, ENTRY_HEADER_SIZE + h.length);
  if (!expect.authenticated && crc32cOf(kernel, body, expect.flavor) !== h.crc) {
    throw new PackError('ERR_PACK_CHECKSUM', `entry ${h.index}: body checksum mismatch (corrupted bytes)`);
  }
  return body;
}

/**
 * As {@link readEntry}, for an entry read in two parts (a scatter read put its 24-byte
 * header in `header` and its body in `body`, so that the bodies of consecutive entries land
 * side by side in one buffer). Checks the header in full, that `body` has exactly the
 * header's length, and the body's CRC32C (unless `expect.authenticated`: then the caller
 * must compare the body's CRC32C with the returned one before using it). Returns the CRC32C
 * the header records for the body. Throws PackError as readEntry.
 */
export function checkEntryParts(header: Uint8Array, body: Uint8Array, expect: EntryExpectation): number {
  if (header.length !== ENTRY_HEADER_SIZE) {
    throw new PackError('ERR_PACK_TRUNCATED', `entry header read of ${header.length} bytes, not ${ENTRY_HEADER_SIZE}`);
  }
  const kernel = packKernel(expect.flavor);
  const tag = expect.tag ?? new DataView(header.buffer, header.byteOffset + 4, 4).getUint32(0, true);
  const h = kernel.checkEntryHeader(header, tag, expect.index ?? -1);
  throwIfBad(h.status, `entry ${expect.index ?? '?'} header`);
  if (expect.length !== undefined && h.length !== expect.length) {
    throw new PackError('ERR_PACK_MISMATCH', `entry ${h.index}: header says ${h.length} bytes, index says ${expect.length}`);
  }
  if (body.length !== h.length) {
    throw new PackError('ERR_PACK_TRUNCATED', `entry ${h.index}: ${body.length} of ${h.length} body bytes`);
  }
  if (!expect.authenticated && crc32cOf(kernel, body, expect.flavor) !== h.crc) {
    throw new PackError('ERR_PACK_CHECKSUM', `entry ${h.index}: body checksum mismatch (corrupted bytes)`);
  }
  return h.crc;
}

export interface DecodedPack {
  id: Uint8Array;
  tag: number;
  entries: (PackEntryRef & { body: Uint8Array })[];
}

/**
 * Verifies a whole pack blob — header, trailer, footer table, every entry header and body
 * CRC, and that the footer tiles the blob exactly — and returns every entry (bodies are
 * views into `blob`). Throws PackError on the first problem.
 */
export function decodePack(blob: Uint8Array, flavor?: Flavor): DecodedPack {
  const min = PACK_HEADER_SIZE + TRAILER_SIZE;
  if (blob.length < min) throw new PackError('ERR_PACK_TRUNCATED', `pack of ${blob.length} bytes is shorter than ${min}`);
  const kernel = packKernel(flavor);
  const head = kernel.checkPackHeader(blob);
  throwIfBad(head.status, 'pack header');
  const trailer = kernel.checkTrailer(blob.subarray(blob.length - TRAILER_SIZE), blob.length);
  throwIfBad(trailer.status, 'pack trailer');
  if (trailer.count !== head.count) {
    throw new PackError('ERR_PACK_MISMATCH', `header counts ${head.count} entries, trailer ${trailer.count}`);
  }
  const rows = blob.subarray(trailer.footerAt, trailer.footerAt + trailer.count * FOOTER_ROW_SIZE);
  const footer = kernel.checkFooter(rows, trailer.footerAt, trailer.count);
  throwIfBad(footer.status, 'pack footer');
  const tag = tagOf(head.id);
  const entries = footer.entries.map((row, index) => {
    const bytes = blob.subarray(row.offset, row.offset + ENTRY_HEADER_SIZE + row.length);
    const body = readEntry(bytes, { tag, index, length: row.length, flavor });
    const crc = row.crc;
    if (crc32cOf(kernel, body, flavor) !== crc) throw new PackError('ERR_PACK_MISMATCH', `entry ${index}: footer CRC differs from header`);
    return { index, offset: row.offset, length: row.length, crc, body };
  });
  return { id: head.id, tag, entries };
}

/**
 * Reads the entry whose header starts at `offset` of a whole pack in memory, checking
 * that it belongs to the pack and fits in it. Throws PackError like readEntry.
 */
export function readEntryAt(blob: Uint8Array, offset: number, flavor?: Flavor): Uint8Array {
  if (!Number.isInteger(offset) || offset < PACK_HEADER_SIZE || offset + ENTRY_HEADER_SIZE > blob.length - TRAILER_SIZE) {
    throw new PackError('ERR_PACK_BOUNDS', `entry offset ${offset} outside the pack's entry area`);
  }
  const kernel = packKernel(flavor);
  const head = kernel.checkPackHeader(blob);
  throwIfBad(head.status, 'pack header');
  const len = new DataView(blob.buffer, blob.byteOffset + offset + 12, 4).getUint32(0, true);
  const end = offset + ENTRY_HEADER_SIZE + len;
  if (end > blob.length - TRAILER_SIZE) {
    throw new PackError('ERR_PACK_BOUNDS', `entry at ${offset} claims ${len} bytes, past the pack's entry area`);
  }
  return readEntry(blob.subarray(offset, end), { tag: tagOf(head.id), flavor });
}
