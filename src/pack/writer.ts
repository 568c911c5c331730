/**
 * @module Pack writer: frames a batch of bodies into one pack blob (format in
 * assembly/pack/format.ts). Bodies are not copied: the result is a list of chunks —
 * small new header buffers interleaved with the caller's bodies — for a vectored write.
 */
import type { Flavor } from '../wasm/loader.js';
import { PackStream } from './stream-writer.js';

export {
  PACK_HEADER_SIZE,
  ENTRY_HEADER_SIZE,
  TRAILER_SIZE,
  FOOTER_ROW_SIZE,
  MAX_ENTRY_BODY,
  tagOf,
  packSize,
  PackStream,
} from './stream-writer.js';

/** Where an entry lives in its pack: enough for one ranged read and its checks. */
export interface PackEntryRef {
  index: number;
  /** Offset of the entry header in the pack. */
  offset: number;
  /** Body length; the entry spans [offset, offset + ENTRY_HEADER_SIZE + length). */
  length: number;
  /** CRC32C of the body. */
  crc: number;
}

export interface EncodedPack {
  /** 12 random bytes naming the pack; the first 4 (little-endian) are its `tag`. */
  id: Uint8Array;
  tag: number;
  /** The blob, in order. Bodies appear as the caller's own arrays (not copied). */
  chunks: Uint8Array[];
  size: number;
  entries: PackEntryRef[];
}

export interface PackWriteOptions {
  /** Pack id (12 bytes); random when absent. */
  id?: Uint8Array;
  flavor?: Flavor;
}

/**
 * Frames `bodies` into one pack. Throws PackError 'ERR_PACK_TOO_LARGE' for an empty batch,
 * more entries than the format allows, or a body over 4 GiB - 1. `bodies` are not modified.
 */
export function encodePack(bodies: readonly Uint8Array[], options: PackWriteOptions = {}): EncodedPack {
  const stream = new PackStream(
    bodies.map((b) => b.length),
    options
  );
  const chunks: Uint8Array[] = [stream.header()];
  for (const body of bodies) chunks.push(...stream.entry(body));
  chunks.push(...stream.finish());
  const entries = stream.rows.map((r, index) => ({ index, ...r }));
  return { id: stream.id, tag: stream.tag, chunks, size: stream.size, entries };
}

/** The chunks of an encoded pack as one array (for tests and small packs). */
export function concatPack(pack: Pick<EncodedPack, 'chunks' | 'size'>): Uint8Array {
  const out = new Uint8Array(pack.size);
  let off = 0;
  for (const c of pack.chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}
