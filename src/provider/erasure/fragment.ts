/**
 * @module The fragment format: header, CRC32C-framed cells, trailer (geometry.ts draws it).
 *
 *   header (64 bytes, little-endian)
 *     0  magic 'SECF'        4  version (1)        5  layout (1 striped, 2 replicated)
 *     6  k u16               8  m u16             10  index u16      12  cellSize u32
 *    16  blockBytes u32     20  length u64 (all ones: unknown, see the trailer)
 *    28  generation u64     36  SHA-256 of the key, first 16 bytes   52  zero (8)
 *    60  CRC32C of bytes 0..59
 *   trailer (24 bytes)
 *     0  magic 'SECT'        4  length u64        12  block count u32
 *    16  fold of the block CRCs u32              20  CRC32C of bytes 0..19
 *
 * Each block's stored CRC is CRC32C(block) XOR bind(generation, index, block number), so a
 * block copied from another fragment, position or write fails its check as surely as a
 * flipped bit: a read never returns bytes that are not the ones written there.
 *
 * Parsers treat input as hostile: every field is range-checked, and a header that does not
 * agree with the fragment's name is refused with FragmentError.
 */
import { createHash } from 'node:crypto';
import { fastCrc32c } from '../../checksum/native-crc32c.js';
import { blocksPass } from './block-crcs.js';
import { BLOCK_BYTES, CRC_BYTES, framedLength, HEADER_BYTES, TRAILER_BYTES } from './geometry.js';
import type { Layout } from './child-key.js';

const HEADER_MAGIC = 0x46434553; // 'SECF' little-endian
const TRAILER_MAGIC = 0x54434553; // 'SECT'
const VERSION = 1;
/** Largest cell size accepted from a header: bounds what a hostile header can make a reader
 * allocate (64 MiB, far above any sensible cell). */
export const MAX_CELL_BYTES = 64 * 1024 * 1024;
const UNKNOWN = 0xffffffff;

/** CRC32C of bytes of ours (a block, a header, a trailer): no validation needed. The native
 * CRC32C when it loaded, else the wasm kernel resolved once (crc32c() resolves the default
 * flavor on every call, which cost ~40 % of a 16 KiB block's CRC). */
function blockCrc(block: Uint8Array): number {
  return fastCrc32c(block, 0);
}

/** A fragment (or a part of one) that fails its format or checksum checks. */
export class FragmentError extends Error {
  readonly code = 'Corrupt';
  constructor(message: string) {
    super(message);
    this.name = 'FragmentError';
  }
}

export interface FragmentHeader {
  layout: Layout;
  k: number;
  m: number;
  index: number;
  cellSize: number;
  blockBytes: number;
  /** Undefined when the writer did not know it (the trailer has it). */
  length: number | undefined;
  generation: number;
  keyHash: Uint8Array;
}

export interface FragmentTrailer {
  length: number;
  blockCount: number;
  fold: number;
}

/** First 16 bytes of SHA-256 of the key's UTF-8 bytes. */
export function keyHash(key: string): Uint8Array {
  return createHash('sha256').update(key, 'utf8').digest().subarray(0, 16);
}

function putU64(v: DataView, at: number, n: number | undefined): void {
  if (n === undefined) {
    v.setUint32(at, UNKNOWN, true);
    v.setUint32(at + 4, UNKNOWN, true);
  } else {
    v.setUint32(at, n % 0x100000000, true);
    v.setUint32(at + 4, Math.floor(n / 0x100000000), true);
  }
}

/** Reads a u64 that must be a safe integer; undefined for all ones; null when out of range. */
function getU64(v: DataView, at: number): number | undefined | null {
  const lo = v.getUint32(at, true);
  const hi = v.getUint32(at + 4, true);
  if (lo === UNKNOWN && hi === UNKNOWN) return undefined;
  if (hi > 0x1fffff) return null;
  return hi * 0x100000000 + lo;
}

/** Encodes a fragment header. */
export function encodeHeader(h: Omit<FragmentHeader, 'blockBytes'>): Uint8Array {
  const out = new Uint8Array(HEADER_BYTES);
  const v = new DataView(out.buffer);
  v.setUint32(0, HEADER_MAGIC, true);
  out[4] = VERSION;
  out[5] = h.layout === 'striped' ? 1 : 2;
  v.setUint16(6, h.k, true);
  v.setUint16(8, h.m, true);
  v.setUint16(10, h.index, true);
  v.setUint32(12, h.cellSize, true);
  v.setUint32(16, BLOCK_BYTES, true);
  putU64(v, 20, h.length);
  putU64(v, 28, h.generation);
  out.set(h.keyHash.subarray(0, 16), 36);
  v.setUint32(60, blockCrc(out.subarray(0, 60)), true);
  return out;
}

/**
 * Parses and checks a header. Throws FragmentError when the bytes are short, the magic,
 * version, layout or CRC is wrong, or a field is out of range (k < 1, k + m > 256, index
 * outside the fragment count, cell size 0 or above MAX_CELL_BYTES, a block size other than
 * this format's, a length or generation beyond 2^53).
 */
export function parseHeader(bytes: Uint8Array): FragmentHeader {
  if (bytes.length < HEADER_BYTES) throw new FragmentError(`header truncated: ${bytes.length} of ${HEADER_BYTES} bytes`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  if (v.getUint32(0, true) !== HEADER_MAGIC) throw new FragmentError('not a fragment (bad header magic)');
  if (blockCrc(bytes.subarray(0, 60)) !== v.getUint32(60, true)) throw new FragmentError('header CRC mismatch');
  if (bytes[4] !== VERSION) throw new FragmentError(`unsupported fragment version ${bytes[4]}`);
  const layout = bytes[5] === 1 ? 'striped' : bytes[5] === 2 ? 'replicated' : undefined;
  if (!layout) throw new FragmentError(`unknown layout ${bytes[5]}`);
  const k = v.getUint16(6, true);
  const m = v.getUint16(8, true);
  const index = v.getUint16(10, true);
  const cellSize = v.getUint32(12, true);
  const blockBytes = v.getUint32(16, true);
  const length = getU64(v, 20);
  const generation = getU64(v, 28);
  if (k < 1 || k + m > 256) throw new FragmentError(`bad shard counts k=${k} m=${m}`);
  if (layout === 'striped' ? index >= k + m : index !== 0 || k !== 1 || m !== 0)
    throw new FragmentError(`bad fragment index ${index} for ${layout} k=${k} m=${m}`);
  if (cellSize < 1 || cellSize > MAX_CELL_BYTES) throw new FragmentError(`bad cell size ${cellSize}`);
  if (blockBytes !== BLOCK_BYTES) throw new FragmentError(`bad block size ${blockBytes}`);
  if (length === null) throw new FragmentError('length out of range');
  if (generation === null || generation === undefined) throw new FragmentError('generation out of range');
  return { layout, k, m, index, cellSize, blockBytes, length, generation, keyHash: bytes.slice(36, 52) };
}

/** Encodes a trailer. */
export function encodeTrailer(t: FragmentTrailer): Uint8Array {
  const out = new Uint8Array(TRAILER_BYTES);
  const v = new DataView(out.buffer);
  v.setUint32(0, TRAILER_MAGIC, true);
  putU64(v, 4, t.length);
  v.setUint32(12, t.blockCount, true);
  v.setUint32(16, t.fold >>> 0, true);
  v.setUint32(20, blockCrc(out.subarray(0, 20)), true);
  return out;
}

/** Parses and checks a trailer. Throws FragmentError like parseHeader. */
export function parseTrailer(bytes: Uint8Array): FragmentTrailer {
  if (bytes.length !== TRAILER_BYTES) throw new FragmentError(`trailer is ${bytes.length} bytes, not ${TRAILER_BYTES}`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, TRAILER_BYTES);
  if (v.getUint32(0, true) !== TRAILER_MAGIC) throw new FragmentError('bad trailer magic');
  if (blockCrc(bytes.subarray(0, 20)) !== v.getUint32(20, true)) throw new FragmentError('trailer CRC mismatch');
  const length = getU64(v, 4);
  if (length === null || length === undefined) throw new FragmentError('trailer length out of range');
  return { length, blockCount: v.getUint32(12, true), fold: v.getUint32(16, true) };
}

/** murmur3's finaliser: spreads every input bit over the 32-bit result. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The value XORed into block `block`'s CRC of fragment `index` of write `generation`. */
export function bind(generation: number, index: number, block: number): number {
  let h = fmix((generation % 0x100000000) ^ 0x9e3779b9);
  h = fmix(h ^ Math.floor(generation / 0x100000000));
  h = fmix(h ^ Math.imul(index + 1, 0x27d4eb2f));
  return fmix(h ^ block);
}

/** Running fold of stored block CRCs (order-sensitive), for the trailer. */
export function foldCrc(acc: number, stored: number): number {
  return (Math.imul(acc ^ stored, 0x01000193) + 0x6b43a9b5) >>> 0;
}

/**
 * Frames `cell` into `out` (which must be framedLength(cell.length) bytes): each block
 * followed by its bound CRC. Returns the fold continued over the stored CRCs.
 */
export function frameCell(
  cell: Uint8Array,
  out: Uint8Array,
  generation: number,
  index: number,
  firstBlock: number,
  fold: number
): number {
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let o = 0;
  let b = firstBlock;
  for (let off = 0; off < cell.length; off += BLOCK_BYTES, b++) {
    const block = cell.subarray(off, Math.min(cell.length, off + BLOCK_BYTES));
    out.set(block, o);
    o += block.length;
    const stored = (blockCrc(block) ^ bind(generation, index, b)) >>> 0;
    v.setUint32(o, stored, true);
    o += CRC_BYTES;
    fold = foldCrc(fold, stored);
  }
  return fold;
}

/**
 * Seals a framed cell whose block bytes are already in place in `framed` (framedLength of
 * the cell): writes each block's bound CRC after it. Returns the fold continued over the
 * stored CRCs. Same bytes as frameCell of the same cell, without copying the blocks.
 */
export function sealFramed(framed: Uint8Array, generation: number, index: number, firstBlock: number, fold: number): number {
  const v = new DataView(framed.buffer, framed.byteOffset, framed.byteLength);
  let b = firstBlock;
  for (let i = 0; i < framed.length; b++) {
    const n = Math.min(BLOCK_BYTES, framed.length - i - CRC_BYTES);
    const stored = (blockCrc(framed.subarray(i, i + n)) ^ bind(generation, index, b)) >>> 0;
    v.setUint32(i + n, stored, true);
    fold = foldCrc(fold, stored);
    i += n + CRC_BYTES;
  }
  return fold;
}

/**
 * Checks framed blocks read from a fragment and copies their data into `out` (the data
 * length: framed.length minus the CRCs). `firstBlock` is the fragment-wide number of the
 * first block. Throws FragmentError naming the first block whose CRC does not match (the
 * blocks are checked with one CRC32C over all of them, block-crcs.ts, and one by one only
 * when that finds a mismatch). With
 * `check` false the CRCs are not computed (a reader whose caller checks every byte itself:
 * ReadContext.endToEnd); the framing is still walked and dropped. With `out` null the blocks
 * are only checked, where they are (nothing is copied).
 */
export function unframe(
  framed: Uint8Array,
  out: Uint8Array | null,
  generation: number,
  index: number,
  firstBlock: number,
  check = true
): void {
  const v = new DataView(framed.buffer, framed.byteOffset, framed.byteLength);
  // One CRC32C over the whole range when every block passes; block by block (naming the block
  // that fails) only when it does not.
  if (check && blocksPass(framed, BLOCK_BYTES, firstBlock, (b) => bind(generation, index, b))) check = false;
  let i = 0;
  let o = 0;
  for (let b = firstBlock; i < framed.length; b++) {
    const n = Math.min(BLOCK_BYTES, framed.length - i - CRC_BYTES);
    if (n <= 0) throw new FragmentError(`framed range ends inside block ${b}`);
    const block = framed.subarray(i, i + n);
    if (check && ((blockCrc(block) ^ bind(generation, index, b)) >>> 0) !== v.getUint32(i + n, true))
      throw new FragmentError(`block ${b} of fragment ${index} fails its CRC32C`);
    out?.set(block, o);
    o += n;
    i += n + CRC_BYTES;
  }
}

/**
 * Checks framed blocks like unframe, but copies only cell bytes [from, to) into `out` at
 * `outOffset` (`cellStart` is the in-cell offset of the first framed block): a ranged read
 * verifies whole blocks and keeps only what was asked, without an intermediate copy. `check`
 * as unframe's.
 */
export function unframeRange(
  framed: Uint8Array,
  generation: number,
  index: number,
  firstBlock: number,
  cellStart: number,
  from: number,
  to: number,
  out: { set(src: Uint8Array, offset: number): void },
  outOffset: number,
  check = true
): void {
  const v = new DataView(framed.buffer, framed.byteOffset, framed.byteLength);
  if (check && blocksPass(framed, BLOCK_BYTES, firstBlock, (b) => bind(generation, index, b))) check = false;
  let i = 0;
  let pos = cellStart;
  for (let b = firstBlock; i < framed.length; b++) {
    const n = Math.min(BLOCK_BYTES, framed.length - i - CRC_BYTES);
    if (n <= 0) throw new FragmentError(`framed range ends inside block ${b}`);
    const block = framed.subarray(i, i + n);
    if (check && ((blockCrc(block) ^ bind(generation, index, b)) >>> 0) !== v.getUint32(i + n, true))
      throw new FragmentError(`block ${b} of fragment ${index} fails its CRC32C`);
    const a = Math.max(from, pos);
    const z = Math.min(to, pos + n);
    if (z > a) out.set(block.subarray(a - pos, z - pos), outOffset + (a - from));
    pos += n;
    i += n + CRC_BYTES;
  }
}

/** Data bytes in a framed range of `framedLen` bytes (inverse of framedLength for whole blocks). */
export function unframedLength(framedLen: number): number {
  const blocks = Math.ceil(framedLen / (BLOCK_BYTES + CRC_BYTES));
  return framedLen - blocks * CRC_BYTES;
}

export { framedLength };
