/**
 * @module The record format of an append-log copy on a failure domain (log-copy.ts).
 *
 * A copy of an erasure-provider log segment is a child AppendLog holding the appends as
 * records, back to back from byte 0, each written once (never rewritten once acknowledged):
 *
 *   header (32 bytes, little-endian)
 *     0  magic 'SELR'      4  data bytes u32        8  logical offset u64 (a safe integer)
 *    16  attempt u32      20  zero (8)             28  CRC32C of bytes 0..27 XOR bind(attempt, ~0)
 *   data, in blocks of LOG_BLOCK_BYTES (the last one shorter), each followed by
 *     CRC32C(block) XOR bind(attempt, block number)
 *
 * where bind() also mixes in the segment's generation. Each append attempt gets its own
 * attempt number, so a record torn over the bytes of an earlier attempt at the same position
 * (a write that failed, then retried) fails its checks block by block, as does a block copied
 * from another position or another segment: a check that passes proves the bytes are those the
 * header's attempt wrote there. A ranged read of a few KiB verifies only the blocks it
 * touches (a body in a 16 MiB batch is not a 16 MiB read).
 *
 * Parsers treat input as hostile: every field is range-checked.
 */
import { fastCrc32c } from '../../checksum/native-crc32c.js';
import { blocksPass, storedWord } from './block-crcs.js';

export const RECORD_HEADER_BYTES = 32;
/** Bytes of data per checksummed block: 4 KiB keeps a small body's read (a 4 KiB object in
 * a batch) to one or two blocks, at 0.1 % of overhead. */
export const LOG_BLOCK_BYTES = 4096;
const CRC_BYTES = 4;
/** Largest record data accepted from a header: a commit frame is at most 64 MiB plus its header
 * (store/commit-log/frame.ts MAX_FRAME_PAYLOAD); 128 MiB bounds what a hostile header can make
 * a scan skip or a read allocate. */
export const MAX_RECORD_BYTES = 128 * 1024 * 1024;
const MAGIC = 0x524c4553; // 'SELR' read as u32 LE

function crc(bytes: Uint8Array): number {
  return fastCrc32c(bytes, 0);
}

/** Mixes the segment generation, attempt and block number into 32 bits (a binding, not a hash
 * with security claims: it makes misplaced but intact blocks fail their CRC). */
function bind(generation: number, attempt: number, block: number): number {
  let h = Math.imul(generation % 0x100000000 ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ Math.floor(generation / 0x100000000) ^ (h >>> 13), 0xc2b2ae35);
  h = Math.imul(h ^ attempt ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ block ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** One record as a header says it is, and where it lies in the copy. */
export interface LogRecord {
  /** Byte offset of the record's header in the copy. */
  phys: number;
  /** Logical offset of its first data byte in the segment. */
  logical: number;
  /** Data bytes. */
  length: number;
  attempt: number;
}

/** Bytes a record of `length` data bytes takes in a copy (header, blocks and their CRCs). */
export function recordBytes(length: number): number {
  return RECORD_HEADER_BYTES + length + CRC_BYTES * Math.ceil(length / LOG_BLOCK_BYTES);
}

/** The copy offset just past `r`. */
export function recordEnd(r: LogRecord): number {
  return r.phys + recordBytes(r.length);
}

/**
 * Builds the record of `chunks` (total `length` bytes, logical offset `logical`) for attempt
 * `attempt` of the segment of `generation`: one buffer, written to every copy. Pure.
 */
export function encodeRecord(generation: number, attempt: number, logical: number, chunks: readonly Uint8Array[], length: number): Uint8Array {
  const out = Buffer.allocUnsafe(recordBytes(length));
  out.fill(0, 0, RECORD_HEADER_BYTES);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(length, 4);
  out.writeUInt32LE(logical % 0x100000000, 8);
  out.writeUInt32LE(Math.floor(logical / 0x100000000), 12);
  out.writeUInt32LE(attempt, 16);
  out.writeUInt32LE((crc(out.subarray(0, 28)) ^ bind(generation, attempt, 0xffffffff)) >>> 0, 28);
  // Lay the data out block by block, leaving 4 bytes after each for its CRC.
  let at = RECORD_HEADER_BYTES;
  let inBlock = 0;
  let blockStart = at;
  let block = 0;
  const seal = (): void => {
    out.writeUInt32LE((crc(out.subarray(blockStart, at)) ^ bind(generation, attempt, block)) >>> 0, at);
    at += CRC_BYTES;
    block++;
    blockStart = at;
    inBlock = 0;
  };
  for (const c of chunks) {
    let i = 0;
    while (i < c.length) {
      const n = Math.min(c.length - i, LOG_BLOCK_BYTES - inBlock);
      out.set(c.subarray(i, i + n), at);
      at += n;
      i += n;
      inBlock += n;
      if (inBlock === LOG_BLOCK_BYTES) seal();
    }
  }
  if (inBlock > 0) seal();
  return out;
}

/**
 * Parses the record header at `phys` (`bytes` holds at least RECORD_HEADER_BYTES of it);
 * undefined when the bytes are not one (wrong magic or CRC, nonzero reserved bytes, fields out
 * of range: zeros of the preallocation, a torn header, stray bytes). Pure.
 */
export function parseRecordHeader(bytes: Uint8Array, phys: number, generation: number): LogRecord | undefined {
  if (bytes.length < RECORD_HEADER_BYTES) return undefined;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, RECORD_HEADER_BYTES);
  if (b.readUInt32LE(0) !== MAGIC || b.readUInt32LE(20) !== 0 || b.readUInt32LE(24) !== 0) return undefined;
  const length = b.readUInt32LE(4);
  const hi = b.readUInt32LE(12);
  const attempt = b.readUInt32LE(16);
  if (length > MAX_RECORD_BYTES || hi > 0x1fffff) return undefined;
  if (((crc(b.subarray(0, 28)) ^ bind(generation, attempt, 0xffffffff)) >>> 0) !== b.readUInt32LE(28)) return undefined;
  return { phys, logical: hi * 0x100000000 + b.readUInt32LE(8), length, attempt };
}

/** Copy offset of data byte `at` of `r` (past the header and the CRCs of the blocks before it). */
function physOf(r: LogRecord, at: number): number {
  return r.phys + RECORD_HEADER_BYTES + at + CRC_BYTES * Math.floor(at / LOG_BLOCK_BYTES);
}

/** Where data bytes [from, to) of `r` (offsets in the record's data) lie in the copy: the whole
 * blocks holding them. */
export function blockSpan(r: LogRecord, from: number, to: number): { start: number; length: number; firstBlock: number; dataStart: number } {
  const firstBlock = Math.floor(from / LOG_BLOCK_BYTES);
  const lastBlock = Math.floor((Math.max(to, from + 1) - 1) / LOG_BLOCK_BYTES);
  const dataStart = firstBlock * LOG_BLOCK_BYTES;
  const dataEnd = Math.min(r.length, (lastBlock + 1) * LOG_BLOCK_BYTES);
  const start = physOf(r, dataStart);
  const length = dataEnd - dataStart + CRC_BYTES * (lastBlock - firstBlock + 1);
  return { start, length, firstBlock, dataStart };
}

/** Where data bytes [from, to) of `r` (from < to <= r.length) lie in the copy, block CRCs
 * between them included but no byte outside them: a read whose caller checks the bytes itself
 * (ReadOptions.endToEnd) reads just this and drops the CRCs (dropBlockCrcs). */
export function dataSpan(r: LogRecord, from: number, to: number): { start: number; length: number } {
  const start = physOf(r, from);
  return { start, length: physOf(r, to - 1) + 1 - start };
}

/**
 * The data bytes [from, to) of a record out of `raw`, the bytes dataSpan(r, from, to) located:
 * the block CRCs inside it are dropped by moving the data after each one back, in place (raw is
 * overwritten). Returns a view of `raw`, or undefined when raw is not that span's length.
 * Checks nothing: for a caller that checks the bytes itself.
 */
export function dropBlockCrcs(raw: Uint8Array, from: number, to: number): Uint8Array | undefined {
  const crcs = Math.floor((to - 1) / LOG_BLOCK_BYTES) - Math.floor(from / LOG_BLOCK_BYTES);
  if (raw.length !== to - from + CRC_BYTES * crcs) return undefined;
  // Data runs up to each block end, then its CRC: shift each later run left over the CRCs so far.
  let src = LOG_BLOCK_BYTES - (from % LOG_BLOCK_BYTES); // raw offset of the first CRC
  for (let i = 1; i <= crcs; i++) {
    const runStart = src + CRC_BYTES;
    const runEnd = Math.min(raw.length, runStart + LOG_BLOCK_BYTES);
    raw.copyWithin(runStart - i * CRC_BYTES, runStart, runEnd);
    src = runEnd;
  }
  return raw.subarray(0, to - from);
}

/**
 * Checks the framed blocks `framed` (as blockSpan located them, starting at block
 * `firstBlock`) and copies their data bytes [from, to) (record data offsets; `dataStart` is
 * the first block's) into `out` at `outOffset` (`out` null: checks only). Returns false,
 * copying nothing useful, when a block is short or fails its CRC. The blocks are checked with
 * one CRC32C over all of them (block-crcs.ts), one by one only when that finds a mismatch.
 */
export function unframeBlocks(
  framed: Uint8Array,
  r: LogRecord,
  generation: number,
  firstBlock: number,
  dataStart: number,
  from: number,
  to: number,
  out: Uint8Array | null,
  outOffset: number
): boolean {
  // The blocks to check: from dataStart's up to the one holding byte max(to, from + 1) - 1,
  // framed as blockSpan lays them out.
  const end = Math.min(r.length, Math.max(to, from + 1));
  const span = end > dataStart ? blockSpan(r, dataStart, end).length : 0;
  // One CRC32C over them all when every block passes (block-crcs.ts); else block by block.
  const checked = span <= framed.length && blocksPass(framed.subarray(0, span), LOG_BLOCK_BYTES, firstBlock, (b) => bind(generation, r.attempt, b));
  let at = 0;
  let data = dataStart;
  for (let block = firstBlock; data < end; block++) {
    const n = Math.min(LOG_BLOCK_BYTES, r.length - data);
    if (at + n + CRC_BYTES > framed.length) return false;
    const bytes = framed.subarray(at, at + n);
    if (!checked && ((crc(bytes) ^ bind(generation, r.attempt, block)) >>> 0) !== storedWord(framed, at + n)) return false;
    const lo = Math.max(from, data);
    const hi = Math.min(to, data + n);
    if (out && hi > lo) out.set(bytes.subarray(lo - data, hi - data), outOffset + lo - from);
    at += n + CRC_BYTES;
    data += n;
  }
  return true;
}
