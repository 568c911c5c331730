/**
 * @module Commit log frames: how one group commit sits in a log segment.
 *
 *   offset  size  field
 *        0     4  magic "SLG2" (keyed; "SLG1" in segments written before, see below)
 *        4     4  payload bytes (u32 LE)
 *        8     8  commit sequence (u64 LE, a safe integer)
 *       16     4  offset of the commit record's pack entry in the payload (u32 LE)
 *       20     4  commit record bytes (u32 LE)
 *       24     8  header MAC: HMAC-SHA256(header key, bytes 0..23), its first 8 bytes
 *       32    32  frame MAC: HMAC-SHA256(frame key, bytes 0..31 of this header, then the payload)
 *       64     …  payload: a whole pack image (pack/stream-writer.ts): the batch's small bodies
 *                 as entries 0..n-1, the commit record last, the footer
 *
 * The payload is exactly the commit blob the batch would otherwise have been, so every reader
 * of a body or a record (one ranged read of a pack entry, checked by its CRC32C and tag) works
 * unchanged on a segment: references name the segment and the entry's offset in it. The MAC
 * makes a torn or stale frame (a crashed append, preallocated zeros, bytes of an earlier
 * attempt) fail as a whole; the sequence and the record's parent hash (scan.ts) make a whole
 * frame count only where it continues the chain.
 *
 * Why keyed: a frame's payload holds client bytes verbatim (the bodies), and recovery searches
 * the log past a torn tail for any valid later frame (scan.ts findFrameAfter: acknowledged
 * commits behind damage refuse the open). With a plain hash, a client could upload a body that
 * is itself a valid frame; after a crash tore the frame holding it, the open was refused. The
 * keys come from the repository's secret (config, never sent to clients: deriveFrameKey), so
 * no client can make a frame that passes, and the 8-byte header MAC lets a search pass over a
 * forged header without reading the payload it claims (up to 64 MiB each).
 *
 * Segments created before frames were keyed (layout.ts: their names say so) hold "SLG1" frames:
 * bytes 24..31 zero, bytes 32..63 the SHA-256 of bytes 0..31 and the payload. They are read as
 * before; a repository writes keyed frames only, to segments it creates (the first batch after
 * every open goes to a new segment), so such a segment stays the tip only until the first write
 * after the upgrade (a read-only or idle open, or a failed roll, leaves it the tip until then,
 * and a body there can still be a forged SHA-256 frame).
 *
 * The keys derive from the secret alone, so a config whose secret changed would make every
 * frame fail and the log read as ending where the anchor points: anchors naming a keyed segment
 * carry the keys' id (FrameKey.id), and recovery refuses a config that does not match it.
 */
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { PackStream } from '../../pack/stream-writer.js';
import { keyedLogSegment } from '../layout.js';
import { StoreError } from '../errors.js';

export const FRAME_HEADER_BYTES = 64;
/** Largest payload a frame may carry: a batch holds at most ~16.5 MiB of bodies (layout.ts
 * BATCH_MAX_BYTES plus one body) and its record; 64 MiB leaves room for a record of a full
 * batch of 1,024 large mutations, and bounds what a scan reads into memory for one frame. */
export const MAX_FRAME_PAYLOAD = 64 * 1024 * 1024;
const MAGIC_SHA256 = 0x31474c53; // "SLG1" read as u32 LE
const MAGIC_KEYED = 0x32474c53; // "SLG2"
/** Bytes the header MAC covers, where it lies, and its length. */
const HEADER_FIELDS = 24;
const HEADER_MAC_BYTES = 8;
/** Header bytes the frame check covers (fields and header MAC), then the check itself. */
const HASHED_HEADER = 32;

/** The repository's keys for frame MACs (deriveFrameKey). */
export interface FrameKey {
  readonly header: Buffer;
  readonly frame: Buffer;
  /** 16 hex digits derived with the keys (and telling nothing of them): anchors naming a keyed
   * segment carry it (anchor.ts frameKeyId), so a config whose secret changed is caught. */
  readonly id: string;
}

/** How the frames of one segment are checked: with the repository's keys, or (null) by the
 * plain SHA-256 of segments written before frames were keyed. */
export type FrameAuth = FrameKey | null;

/** The frame keys of a repository whose config holds `tokenSecretHex` (64 hex digits): HKDF of
 * the secret, bound to this use. Pure. */
export function deriveFrameKey(tokenSecretHex: string): FrameKey {
  const keys = Buffer.from(hkdfSync('sha256', Buffer.from(tokenSecretHex, 'hex'), Buffer.alloc(0), 'strata commit log frames v2', 72));
  return { header: keys.subarray(0, 32), frame: keys.subarray(32, 64), id: keys.subarray(64).toString('hex') };
}

/**
 * How the frames of segment `segmentKey` are checked: a segment named as keyed (layout.ts
 * logKey) with `key`, one written before with SHA-256 (null). Throws StoreError 'Corrupt' for
 * a keyed segment when the repository's key is unknown (`key` undefined: its config is
 * unreadable), since nothing in it could be checked.
 */
export function segmentAuth(segmentKey: string, key: FrameKey | undefined): FrameAuth {
  if (!keyedLogSegment(segmentKey)) return null;
  if (!key) throw new StoreError('Corrupt', `log segment ${segmentKey}: its frames are keyed by the repository's config, which is unreadable`);
  return key;
}

export interface FrameHeader {
  seq: number;
  payloadBytes: number;
  recordOffset: number;
  recordLength: number;
  /** The MAC (or, unkeyed, SHA-256) the header and payload must hash to. */
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

const headerMac = (key: FrameKey, fields: Uint8Array) => createHmac('sha256', key.header).update(fields.subarray(0, HEADER_FIELDS)).digest().subarray(0, HEADER_MAC_BYTES);
const frameHash = (auth: FrameAuth) => (auth ? createHmac('sha256', auth.frame) : createHash('sha256'));

/**
 * Frames commit `seq`: `bodies` then `record` as one pack image (pack id `packId`, so body
 * entries carry the tag their locations name), behind the header; keyed with `auth` ("SLG2"),
 * or with null the format of segments written before ("SLG1": tests of reading those). Pure;
 * throws RangeError if the payload exceeds MAX_FRAME_PAYLOAD.
 */
export function encodeFrame(seq: number, record: Uint8Array, bodies: readonly Uint8Array[], packId: Uint8Array, auth: FrameAuth): EncodedFrame {
  const pack = new PackStream([...bodies.map((b) => b.length), record.length], { id: packId });
  if (pack.size > MAX_FRAME_PAYLOAD) throw new RangeError(`commit ${seq}: a ${pack.size}-byte frame exceeds ${MAX_FRAME_PAYLOAD} bytes`);
  const payload: Uint8Array[] = [pack.header()];
  for (const b of bodies) payload.push(...pack.entry(b));
  payload.push(...pack.entry(record));
  payload.push(...pack.finish());
  const recordEntry = pack.rows[pack.rows.length - 1]!.offset;
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUInt32LE(auth ? MAGIC_KEYED : MAGIC_SHA256, 0);
  header.writeUInt32LE(pack.size, 4);
  header.writeBigUInt64LE(BigInt(seq), 8);
  header.writeUInt32LE(recordEntry, 16);
  header.writeUInt32LE(record.length, 20);
  if (auth) headerMac(auth, header).copy(header, HEADER_FIELDS);
  const hash = frameHash(auth).update(header.subarray(0, HASHED_HEADER));
  for (const c of payload) hash.update(c);
  hash.digest().copy(header, HASHED_HEADER);
  return { chunks: [header, ...payload], bytes: FRAME_HEADER_BYTES + pack.size, recordOffset: FRAME_HEADER_BYTES + recordEntry };
}

/** The first 4 bytes of every frame checked with `auth`: what a search for frames looks for. */
export function frameMagic(auth: FrameAuth): Buffer {
  return Buffer.from(auth ? 'SLG2' : 'SLG1', 'latin1');
}

/**
 * Parses a frame header checked with `auth`; undefined when the bytes cannot be one (wrong
 * magic, nonzero reserved bytes, fields out of range, a header MAC that fails: preallocated
 * zeros, a torn write, bytes a client wrote, anything else), or when `accept` (asked before the
 * MAC is computed, so a search skips what it has no use for at the cost of a few compares)
 * refuses its fields. Pure. A header that parses proves nothing about the payload until
 * checkFrame accepts it.
 */
export function decodeFrameHeader(bytes: Uint8Array, auth: FrameAuth, accept?: (header: FrameHeader) => boolean): FrameHeader | undefined {
  if (bytes.length < FRAME_HEADER_BYTES) return undefined;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, FRAME_HEADER_BYTES);
  if (b.readUInt32LE(0) !== (auth ? MAGIC_KEYED : MAGIC_SHA256)) return undefined;
  if (!auth && b.readBigUInt64LE(24) !== 0n) return undefined;
  const payloadBytes = b.readUInt32LE(4);
  const seq = b.readBigUInt64LE(8);
  const recordOffset = b.readUInt32LE(16);
  const recordLength = b.readUInt32LE(20);
  if (payloadBytes > MAX_FRAME_PAYLOAD || seq < 1n || seq > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  if (recordOffset + recordLength > payloadBytes) return undefined;
  const header = { seq: Number(seq), payloadBytes, recordOffset, recordLength, check: Buffer.from(b.subarray(HASHED_HEADER, FRAME_HEADER_BYTES)) };
  if (accept && !accept(header)) return undefined;
  if (auth && !headerMac(auth, b).equals(b.subarray(HEADER_FIELDS, HASHED_HEADER))) return undefined;
  return header;
}

/** Whether `payload` (exactly header.payloadBytes long) with `headerBytes` hashes to the header's check under `auth`. Pure. */
export function checkFrame(headerBytes: Uint8Array, header: FrameHeader, payload: Uint8Array, auth: FrameAuth): boolean {
  if (payload.length !== header.payloadBytes) return false;
  const hash = frameHash(auth).update(headerBytes.subarray(0, HASHED_HEADER)).update(payload).digest();
  return hash.equals(header.check);
}
