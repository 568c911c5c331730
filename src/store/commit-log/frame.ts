/**
 * @module Commit log frames: how one group commit sits in a log segment.
 *
 *   offset  size  field
 *        0     4  magic "SLG1"
 *        4     4  payload bytes (u32 LE)
 *        8     8  commit sequence (u64 LE, a safe integer)
 *       16     4  offset of the commit record's pack entry in the payload (u32 LE)
 *       20     4  commit record bytes (u32 LE)
 *       24     8  reserved, zero
 *       32    32  SHA-256 of bytes 0..31 of this header followed by the payload
 *       64     …  payload: a whole pack image (pack/stream-writer.ts): the batch's small bodies
 *                 as entries 0..n-1, the commit record last, the footer
 *
 * The payload is exactly the commit blob the batch would otherwise have been, so every reader
 * of a body or a record (one ranged read of a pack entry, checked by its CRC32C and tag) works
 * unchanged on a segment: references name the segment and the entry's offset in it. The
 * checksum makes a torn or stale frame (a crashed append, preallocated zeros, bytes of an
 * earlier attempt) fail as a whole; the sequence and the record's parent hash (scan.ts) make a
 * whole frame count only where it continues the chain.
 */
import { createHash } from 'node:crypto';
import { PackStream } from '../../pack/stream-writer.js';

export const FRAME_HEADER_BYTES = 64;
/** Largest payload a frame may carry: a batch holds at most ~16.5 MiB of bodies (layout.ts
 * BATCH_MAX_BYTES plus one body) and its record; 64 MiB leaves room for a record of a full
 * batch of 1,024 large mutations, and bounds what a scan reads into memory for one frame. */
export const MAX_FRAME_PAYLOAD = 64 * 1024 * 1024;
const MAGIC = 0x31474c53; // "SLG1" read as u32 LE
const HASHED_HEADER = 32;

export interface FrameHeader {
  seq: number;
  payloadBytes: number;
  recordOffset: number;
  recordLength: number;
  /** The SHA-256 the header and payload must hash to. */
  check: Buffer;
}

/** A frame ready to append: its chunks (header first) and where its record entry lands. */
export interface EncodedFrame {
  chunks: Uint8Array[];
  /** Header plus payload bytes. */
  bytes: number;
  /** Offset of the record's pack entry from the frame's start. */
  recordOffset: number;
}

/**
 * Frames commit `seq`: `bodies` then `record` as one pack image (pack id `packId`, so body
 * entries carry the tag their locations name), behind the header. Pure; throws RangeError if
 * the payload exceeds MAX_FRAME_PAYLOAD.
 */
export function encodeFrame(seq: number, record: Uint8Array, bodies: readonly Uint8Array[], packId: Uint8Array): EncodedFrame {
  const pack = new PackStream([...bodies.map((b) => b.length), record.length], { id: packId });
  if (pack.size > MAX_FRAME_PAYLOAD) throw new RangeError(`commit ${seq}: a ${pack.size}-byte frame exceeds ${MAX_FRAME_PAYLOAD} bytes`);
  const payload: Uint8Array[] = [pack.header()];
  for (const b of bodies) payload.push(...pack.entry(b));
  payload.push(...pack.entry(record));
  payload.push(...pack.finish());
  const recordEntry = pack.rows[pack.rows.length - 1]!.offset;
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUInt32LE(MAGIC, 0);
  header.writeUInt32LE(pack.size, 4);
  header.writeBigUInt64LE(BigInt(seq), 8);
  header.writeUInt32LE(recordEntry, 16);
  header.writeUInt32LE(record.length, 20);
  const hash = createHash('sha256').update(header.subarray(0, HASHED_HEADER));
  for (const c of payload) hash.update(c);
  hash.digest().copy(header, HASHED_HEADER);
  return { chunks: [header, ...payload], bytes: FRAME_HEADER_BYTES + pack.size, recordOffset: FRAME_HEADER_BYTES + recordEntry };
}

/**
 * Parses a frame header; undefined when the bytes cannot be one (wrong magic, nonzero reserved
 * bytes, fields out of range: preallocated zeros, a torn write, anything else). Pure. A header
 * that parses proves nothing until checkFrame accepts the payload.
 */
export function decodeFrameHeader(bytes: Uint8Array): FrameHeader | undefined {
  if (bytes.length < FRAME_HEADER_BYTES) return undefined;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, FRAME_HEADER_BYTES);
  if (b.readUInt32LE(0) !== MAGIC || b.readBigUInt64LE(24) !== 0n) return undefined;
  const payloadBytes = b.readUInt32LE(4);
  const seq = b.readBigUInt64LE(8);
  const recordOffset = b.readUInt32LE(16);
  const recordLength = b.readUInt32LE(20);
  if (payloadBytes > MAX_FRAME_PAYLOAD || seq < 1n || seq > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  if (recordOffset + recordLength > payloadBytes) return undefined;
  return { seq: Number(seq), payloadBytes, recordOffset, recordLength, check: Buffer.from(b.subarray(HASHED_HEADER, FRAME_HEADER_BYTES)) };
}

/** Whether `payload` (exactly header.payloadBytes long) with `headerBytes` hashes to the header's check. Pure. */
export function checkFrame(headerBytes: Uint8Array, header: FrameHeader, payload: Uint8Array): boolean {
  if (payload.length !== header.payloadBytes) return false;
  const hash = createHash('sha256').update(headerBytes.subarray(0, HASHED_HEADER)).update(payload).digest();
  return hash.equals(header.check);
}
