/**
 * @module Run format: the bytes of one immutable sorted run blob, and their checks.
 *
 * A run holds unique keys in compareKeys order, each with an opaque value. All integers are
 * little-endian; `varint` is unsigned LEB128 (at most 2^53 - 1).
 *
 * ```
 *  offset 0
 *  ┌─ header (8 bytes) ──────────────────────────────────────────────────────────┐
 *  │ magic "SRUN" (53 52 55 4E) │ version u16 (1|2) │ reserved u16 = 0         │
 *  ├─ block 0 (~64 KiB) ─────────────────────────────────────────────────────────┤
 *  │ entry │ entry │ … │ crc32c u32 of the block's entries                      │
 *  ├─ block 1 … block B-1: same shape, contiguous ──────────────────────────────┤
 *  ├─ footer (footerLength bytes, at footerOffset) ──────────────────────────────┤
 *  │ entryCount varint │ blockCount varint │ index entry × B │ lastKey │ bloom  │
 *  │ crc32c u32 of the footer bytes before it                                   │
 *  ├─ trailer (24 bytes) ────────────────────────────────────────────────────────┤
 *  │ footerOffset u64 │ footerLength u32 │ version u16 │ reserved u16 = 0       │
 *  │ crc32c u32 of the 16 trailer bytes before it │ magic "SRUN"                │
 *  └─────────────────────────────────────────────────────────────────────────────┘
 *  block v1    = entries │ crc32c u32 of the entries
 *  block v2    = method u8 │ rawLength varint │ payload │ crc32c u32 of all before it
 *                method 0: payload = the entries as is (they did not shrink);
 *                method 1: payload = deflate-raw (RFC 1951) of the entries, which inflate to
 *                exactly rawLength bytes (at most MAX_BLOCK_RAW_BYTES)
 *  entry       = shared varint │ suffixLength varint │ valueLength varint │ suffix │ value
 *                key = first `shared` UTF-8 bytes of the previous key in the block + suffix;
 *                the first entry of a block has shared = 0; `shared` is always maximal.
 *  index entry = shared varint │ suffixLength varint │ suffix │ offset varint │
 *                length varint (bytes, crc included) │ entryCount varint │ crc32c u32
 *                first key of the block, prefix-compressed against the previous block's,
 *                and a copy of the block's checksum, so the footer (and its checksum,
 *                which RunMeta records) pins the content of every block.
 *  lastKey     = length varint │ UTF-8 bytes (empty when the run is empty)
 *  bloom       = k u8 │ m u32 │ m/8 bytes (bloom.ts)
 * ```
 *
 * Versions: 1 stores blocks as they are; 2 (written since issue 10's index-size work) compresses
 * each block on its own, so a block is still one ranged read and decodes alone. The header and
 * the trailer carry the version (they must agree); both versions are read.
 *
 * Opening a run reads footer + trailer in one ranged read (RunMeta says where); each block
 * is one more ranged read (block 0 is read together with the header, which is checked then).
 * Everything read is verified: checksums, then structure (offsets contiguous and inside the
 * blob, counts adding up, keys strictly increasing within and across blocks).
 */
import { deflateRawSync, inflateRawSync, constants as zlibConstants } from 'node:zlib';
import { crc32c } from '../../checksum/index.js';
import { BloomFilter } from './bloom.js';
import { compareKeys, decodeKey } from './compare.js';
import { IndexError, type IndexErrorCode } from './errors.js';
import { ByteReader, ByteSink, sharedPrefix } from './run-bytes.js';

/** The version written. */
export const RUN_FORMAT_VERSION = 2;
/** The versions read (see the module note). */
export type RunFormatVersion = 1 | 2;
const isVersion = (v: number): v is RunFormatVersion => v === 1 || v === 2;
/** Largest decompressed v2 block, bytes: a block ends at the first entry reaching its target
 * size (at most 16 MiB, run-writer.ts), so one entry may carry it past; 64 MiB bounds what a
 * hostile or corrupt blob can make a reader allocate. */
export const MAX_BLOCK_RAW_BYTES = 64 * 1024 * 1024;
const METHOD_STORED = 0;
const METHOD_DEFLATE = 1;
/** zlib level of v2 blocks: the fastest. Runs are written on the main thread, a block at a
 * time between provider writes (about 0.5 ms per 64 KiB block here, against about 1.5 ms at
 * the default level for 5-7 % fewer bytes); a compression that hops to the thread pool made
 * checkpoints land later and the replay chain longer under load. */
const BLOCK_DEFLATE_LEVEL = zlibConstants.Z_BEST_SPEED;
/** "SRUN": the first and last four bytes of every run blob. */
const MAGIC = Uint8Array.of(0x53, 0x52, 0x55, 0x4e);
export const HEADER_BYTES = 8;
export const TRAILER_BYTES = 24;
const CRC_BYTES = 4;
/** Target data block size: large enough for one ranged read to be cheap per key, small enough
 * that a point lookup or a page seek decodes little it does not need. */
export const DEFAULT_BLOCK_BYTES = 64 * 1024;
/** Smallest encoded entry (three one-byte varints) and index entry (five, and a crc). */
const MIN_ENTRY_BYTES = 3;
const MIN_INDEX_ENTRY_BYTES = 9;
/** Rough heap cost of one decoded key string and its offsets, for cache accounting. */
const DECODED_KEY_OVERHEAD_BYTES = 40;

/** The one checksum of the format (CRC32C). Kept in one place so it is easy to switch. */
export function runCrc(bytes: Uint8Array): number {
  return crc32c(bytes);
}

function fail(code: IndexErrorCode, message: string, blobKey: string, block?: number): never {
  throw new IndexError(code, message, { blobKey, block });
}

/** The 8 header bytes of `version` (the current one by default). */
export function encodeHeader(version: RunFormatVersion = RUN_FORMAT_VERSION): Uint8Array {
  const out = new Uint8Array(HEADER_BYTES);
  out.set(MAGIC);
  out[4] = version;
  return out;
}

/**
 * Throws 'ERR_RUN_FORMAT' unless `bytes` starts with the header of a supported version (and,
 * when `version` is given, of that one: the trailer's). Returns the version.
 */
export function checkHeader(bytes: Uint8Array, blobKey: string, version?: RunFormatVersion): RunFormatVersion {
  const v = bytes[4] ?? 0;
  const ok =
    bytes.length >= HEADER_BYTES &&
    MAGIC.every((b, i) => bytes[i] === b) &&
    isVersion(v) &&
    (version === undefined || v === version) &&
    bytes[5] === 0 &&
    bytes[6] === 0 &&
    bytes[7] === 0;
  if (!ok) fail('ERR_RUN_FORMAT', 'bad run header (not a run, or unsupported version)', blobKey);
  return v as RunFormatVersion;
}

/** Where the footer is; the trailer is the last TRAILER_BYTES of the blob. */
export interface Trailer {
  footerOffset: number;
  footerLength: number;
}

export function encodeTrailer(t: Trailer, version: RunFormatVersion = RUN_FORMAT_VERSION): Uint8Array {
  const sink = new ByteSink(TRAILER_BYTES);
  sink.u64(t.footerOffset);
  sink.u32(t.footerLength);
  sink.u32(version);
  sink.u32(runCrc(sink.view()));
  sink.bytes(MAGIC);
  return sink.view();
}

/** Parses the last TRAILER_BYTES of `bytes`. Throws 'ERR_RUN_CORRUPT' or 'ERR_RUN_FORMAT'. */
export function decodeTrailer(bytes: Uint8Array, blobKey: string): Trailer & { version: RunFormatVersion } {
  const t = bytes.subarray(bytes.length - TRAILER_BYTES);
  if (t.length !== TRAILER_BYTES || !MAGIC.every((b, i) => t[20 + i] === b)) {
    fail('ERR_RUN_FORMAT', 'no run trailer (not a run, or truncated)', blobKey);
  }
  const r = new ByteReader(t, 0, 20, (m) => fail('ERR_RUN_FORMAT', m, blobKey));
  const footerOffset = r.u64();
  const footerLength = r.u32();
  const version = r.u32();
  if (runCrc(t.subarray(0, 16)) !== r.u32())
    fail('ERR_RUN_CORRUPT', 'trailer checksum mismatch', blobKey);
  if (!isVersion(version))
    fail('ERR_RUN_FORMAT', `unsupported run version ${version}`, blobKey);
  return { footerOffset, footerLength, version };
}

/**
 * Accumulates the entries of one data block. Keys arrive as UTF-8 bytes, already checked to
 * be strictly increasing by the caller.
 */
export class BlockBuilder {
  readonly #sink: ByteSink;
  #prev = new Uint8Array(256);
  #prevLength = 0;
  #count = 0;

  constructor(blockBytes: number) {
    this.#sink = new ByteSink(blockBytes + 1024);
  }

  get count(): number {
    return this.#count;
  }

  /** Encoded size so far, checksum excluded. */
  get byteLength(): number {
    return this.#sink.length;
  }

  add(key: Uint8Array, value: Uint8Array): void {
    const shared = this.#count === 0 ? 0 : sharedPrefix(this.#prev, this.#prevLength, key);
    this.#sink.varint(shared);
    this.#sink.varint(key.length - shared);
    this.#sink.varint(value.length);
    this.#sink.bytes(key.subarray(shared));
    this.#sink.bytes(value);
    if (key.length > this.#prev.length) this.#prev = new Uint8Array(key.length * 2);
    this.#prev.set(key);
    this.#prevLength = key.length;
    this.#count++;
  }

  /** The finished block (entries + checksum) as a new array; the builder starts over empty. */
  finish(): Uint8Array {
    this.#sink.u32(runCrc(this.#sink.view()));
    const out = this.#sink.view().slice();
    this.#sink.reset();
    this.#count = 0;
    return out;
  }

  /**
   * The finished block in `version`'s form (see the module note), as a new array; the
   * builder starts over empty. Throws IndexError 'ERR_RUN_ENTRY' for a v2 block larger than
   * MAX_BLOCK_RAW_BYTES.
   */
  finishAs(version: RunFormatVersion): Uint8Array {
    if (version === 1) return this.finish();
    // Never write a block no reader would take (one entry of tens of MiB; not made today).
    if (this.#sink.length > MAX_BLOCK_RAW_BYTES) throw new IndexError('ERR_RUN_ENTRY', `block of ${this.#sink.length} bytes exceeds ${MAX_BLOCK_RAW_BYTES}`);
    const raw = this.#sink.view().slice();
    this.#sink.reset();
    this.#count = 0;
    const packed = deflateRawSync(raw, { level: BLOCK_DEFLATE_LEVEL });
    const stored = packed.length >= raw.length;
    const payload = stored ? raw : packed;
    const out = new ByteSink(payload.length + 16);
    out.u8(stored ? METHOD_STORED : METHOD_DEFLATE);
    out.varint(raw.length);
    out.bytes(payload);
    out.u32(runCrc(out.view()));
    return out.view().slice();
  }
}

/** A verified, decoded block: keys as strings, values located in the block's bytes. */
export class DecodedBlock {
  readonly keys: string[];
  readonly #bytes: Uint8Array;
  readonly #valueStart: Uint32Array;
  readonly #valueEnd: Uint32Array;
  /** Approximate heap bytes, for the block cache. */
  readonly byteSize: number;

  constructor(keys: string[], bytes: Uint8Array, valueStart: Uint32Array, valueEnd: Uint32Array) {
    this.keys = keys;
    this.#bytes = bytes;
    this.#valueStart = valueStart;
    this.#valueEnd = valueEnd;
    let keyChars = 0;
    for (const k of keys) keyChars += k.length;
    this.byteSize = bytes.length + keyChars + keys.length * DECODED_KEY_OVERHEAD_BYTES;
  }

  /**
   * The value of entry `index` as a read-only view into this block (no copy: scans hand out
   * thousands per page). Copy it to keep it or to let the caller modify it.
   */
  valueAt(index: number): Uint8Array {
    return this.#bytes.subarray(this.#valueStart[index], this.#valueEnd[index]);
  }
}

/** What the block index promises about a block, checked while decoding it. */
export interface BlockExpectation {
  blobKey: string;
  block: number;
  entryCount: number;
  firstKey: string;
  /** The block checksum the index recorded. */
  crc: number;
  /** First key of the next block, or the run's last key for the last block. */
  bound: string;
  /** True for the last block: its last key must equal `bound` (else be below it). */
  last: boolean;
  /** The run's format version (its trailer's); 1 when absent. */
  version?: RunFormatVersion;
}

/**
 * Verifies and decodes the block occupying `bytes[start, bytes.length)`. Throws
 * 'ERR_RUN_CORRUPT' (checksum), 'ERR_RUN_UNSORTED' (keys out of order) or 'ERR_RUN_FORMAT'
 * (anything else that disagrees with the format or with `expect`).
 */
export function decodeBlock(
  bytes: Uint8Array,
  start: number,
  expect: BlockExpectation
): DecodedBlock {
  const { blobKey, block, entryCount } = expect;
  const bad = (code: IndexErrorCode, m: string): never => fail(code, m, blobKey, block);
  const end = bytes.length - CRC_BYTES;
  if (end < start) bad('ERR_RUN_FORMAT', 'block shorter than its checksum');
  const stored = new ByteReader(bytes, end, bytes.length, (m) => bad('ERR_RUN_FORMAT', m)).u32();
  if (runCrc(bytes.subarray(start, end)) !== stored)
    bad('ERR_RUN_CORRUPT', 'block checksum mismatch');
  if (stored !== expect.crc)
    bad('ERR_RUN_FORMAT', 'not the block the index names (checksum differs)');
  if ((expect.version ?? 1) === 2) {
    const raw = unwrapBlock(bytes.subarray(start, end), entryCount, bad);
    return decodeEntries(raw, 0, raw.length, expect, bad);
  }
  return decodeEntries(bytes, start, end, expect, bad);
}

/**
 * The entries of a v2 block whose checksummed part is `body` (method, rawLength, payload):
 * a view of `body` when stored, else inflated (bounded by rawLength). Throws through `bad`:
 * 'ERR_RUN_FORMAT' for an unknown method, a rawLength out of bounds or too small for
 * `entryCount` entries, a stored payload of another length; 'ERR_RUN_CORRUPT' for a payload
 * that does not inflate to exactly rawLength bytes.
 */
function unwrapBlock(body: Uint8Array, entryCount: number, bad: (code: IndexErrorCode, m: string) => never): Uint8Array {
  const r = new ByteReader(body, 0, body.length, (m) => bad('ERR_RUN_FORMAT', m));
  const method = r.u8();
  const rawLength = r.varint();
  if (rawLength > MAX_BLOCK_RAW_BYTES || rawLength < entryCount * MIN_ENTRY_BYTES)
    bad('ERR_RUN_FORMAT', `block of ${rawLength} bytes cannot hold ${entryCount} entries`);
  const payload = r.take(r.remaining);
  if (method === METHOD_STORED) {
    if (payload.length !== rawLength) bad('ERR_RUN_FORMAT', `stored block of ${payload.length} bytes, header says ${rawLength}`);
    return plain(payload);
  }
  if (method !== METHOD_DEFLATE) bad('ERR_RUN_FORMAT', `unknown block method ${method}`);
  let raw: Uint8Array;
  try {
    // maxOutputLength: a payload inflating past rawLength fails here, never allocates more.
    raw = inflateRawSync(payload, { maxOutputLength: Math.max(1, rawLength) });
  } catch (err) {
    return bad('ERR_RUN_CORRUPT', `block does not inflate (${(err as Error).message})`);
  }
  if (raw.length !== rawLength) bad('ERR_RUN_CORRUPT', `block inflates to ${raw.length} bytes, header says ${rawLength}`);
  return plain(raw);
}

/** `bytes` as a plain Uint8Array view: a Buffer's slice() is a view, and values handed out
 * must be copies the caller owns (DecodedBlock.valueAt(...).slice()). */
const plain = (bytes: Uint8Array): Uint8Array => (Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) : bytes);

/** Decodes the `expect.entryCount` entries in `bytes[start, end)` (see decodeBlock). */
function decodeEntries(bytes: Uint8Array, start: number, end: number, expect: BlockExpectation, bad: (code: IndexErrorCode, m: string) => never): DecodedBlock {
  const { entryCount } = expect;
  const r = new ByteReader(bytes, start, end, (m) => bad('ERR_RUN_FORMAT', m));
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const keys = new Array<string>(entryCount);
  const valueStart = new Uint32Array(entryCount);
  const valueEnd = new Uint32Array(entryCount);
  let key = Buffer.alloc(256);
  let keyLength = 0;
  for (let i = 0; i < entryCount; i++) {
    const shared = r.varint();
    const suffixLength = r.varint();
    const valueLength = r.varint();
    if (shared > keyLength || (i === 0 && shared !== 0))
      bad('ERR_RUN_FORMAT', `entry ${i}: bad shared prefix`);
    const suffixAt = r.skip(suffixLength);
    // Strictly increasing: the first differing byte (at `shared`, as shared is maximal) is larger.
    if (i > 0 && (suffixLength === 0 || (shared < keyLength && buf[suffixAt]! <= key[shared]!))) {
      bad('ERR_RUN_UNSORTED', `entry ${i} is not after entry ${i - 1}`);
    }
    if (shared + suffixLength > key.length)
      key = Buffer.concat([key.subarray(0, shared)], (shared + suffixLength) * 2);
    buf.copy(key, shared, suffixAt, suffixAt + suffixLength);
    keyLength = shared + suffixLength;
    keys[i] = decodeKey(key, 0, keyLength);
    valueStart[i] = r.skip(valueLength);
    valueEnd[i] = valueStart[i]! + valueLength;
  }
  if (r.pos !== end) bad('ERR_RUN_FORMAT', `${end - r.pos} bytes after entry ${entryCount - 1}`);
  if (keys[0] !== expect.firstKey) bad('ERR_RUN_FORMAT', 'first key differs from the block index');
  const lastKey = keys[entryCount - 1]!;
  if (expect.last ? lastKey !== expect.bound : !(compareKeys(lastKey, expect.bound) < 0)) {
    bad(
      'ERR_RUN_UNSORTED',
      'last key is not before the next block (or differs from the run last key)'
    );
  }
  return new DecodedBlock(keys, bytes, valueStart, valueEnd);
}

/** The parsed footer: block index and bloom, held in memory while a run is open. */
export interface Footer {
  entryCount: number;
  /** Per block: first key, byte offset in the blob, length (checksum included), entries, crc. */
  firstKeys: string[];
  offsets: Float64Array;
  lengths: Float64Array;
  counts: Uint32Array;
  crcs: Uint32Array;
  /** The run's last key ('' when the run is empty). */
  lastKey: string;
  bloom: BloomFilter;
}

/** Accumulates the block index as blocks are written: its encoded bytes, not an array. */
export class FooterBuilder {
  readonly #index = new ByteSink(4096);
  #prev = new Uint8Array(256);
  #prevLength = 0;
  #blocks = 0;

  addBlock(
    firstKey: Uint8Array,
    offset: number,
    length: number,
    entryCount: number,
    crc: number
  ): void {
    const shared = sharedPrefix(this.#prev, this.#prevLength, firstKey);
    this.#index.varint(shared);
    this.#index.varint(firstKey.length - shared);
    this.#index.bytes(firstKey.subarray(shared));
    this.#index.varint(offset);
    this.#index.varint(length);
    this.#index.varint(entryCount);
    this.#index.u32(crc);
    if (firstKey.length > this.#prev.length) this.#prev = new Uint8Array(firstKey.length * 2);
    this.#prev.set(firstKey);
    this.#prevLength = firstKey.length;
    this.#blocks++;
  }

  /** The whole footer, checksum included. */
  finish(entryCount: number, lastKey: Uint8Array, bloom: BloomFilter): Uint8Array {
    const out = new ByteSink(this.#index.length + lastKey.length + bloom.byteLength + 64);
    out.varint(entryCount);
    out.varint(this.#blocks);
    out.bytes(this.#index.view());
    out.varint(lastKey.length);
    out.bytes(lastKey);
    out.bytes(bloom.encode());
    out.u32(runCrc(out.view()));
    return out.view();
  }
}

/**
 * Verifies and parses a footer (`bytes` = exactly footerLength bytes) of a run whose footer
 * starts at `footerOffset`. Throws 'ERR_RUN_CORRUPT' (checksum), 'ERR_RUN_UNSORTED' or
 * 'ERR_RUN_FORMAT' (block index not contiguous from the header to the footer, counts that do
 * not add up, a bloom that does not fit).
 */
export function decodeFooter(bytes: Uint8Array, footerOffset: number, blobKey: string, version: RunFormatVersion = 1): Footer {
  const bad = (code: IndexErrorCode, m: string): never => fail(code, `footer: ${m}`, blobKey);
  const end = bytes.length - CRC_BYTES;
  if (end < 0) bad('ERR_RUN_FORMAT', 'shorter than its checksum');
  const stored = new ByteReader(bytes, end, bytes.length, (m) => bad('ERR_RUN_FORMAT', m)).u32();
  if (runCrc(bytes.subarray(0, end)) !== stored) bad('ERR_RUN_CORRUPT', 'checksum mismatch');
  const r = new ByteReader(bytes, 0, end, (m) => bad('ERR_RUN_FORMAT', m));
  const entryCount = r.varint();
  const blockCount = r.varint();
  if (blockCount * MIN_INDEX_ENTRY_BYTES > r.remaining)
    bad('ERR_RUN_FORMAT', `${blockCount} blocks cannot fit`);
  if ((blockCount === 0) !== (entryCount === 0))
    bad('ERR_RUN_FORMAT', 'block and entry counts disagree');
  const firstKeys = new Array<string>(blockCount);
  const offsets = new Float64Array(blockCount);
  const lengths = new Float64Array(blockCount);
  const counts = new Uint32Array(blockCount);
  const crcs = new Uint32Array(blockCount);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let key = Buffer.alloc(256);
  let keyLength = 0;
  let next = HEADER_BYTES;
  let total = 0;
  for (let i = 0; i < blockCount; i++) {
    const shared = r.varint();
    const suffixLength = r.varint();
    const at = r.skip(suffixLength);
    if (shared > keyLength || (i === 0 && shared !== 0))
      bad('ERR_RUN_FORMAT', `block ${i}: bad shared prefix`);
    if (i > 0 && (suffixLength === 0 || (shared < keyLength && buf[at]! <= key[shared]!))) {
      bad('ERR_RUN_UNSORTED', `block ${i} first key is not after block ${i - 1}'s`);
    }
    if (shared + suffixLength > key.length)
      key = Buffer.concat([key.subarray(0, shared)], (shared + suffixLength) * 2);
    buf.copy(key, shared, at, at + suffixLength);
    keyLength = shared + suffixLength;
    firstKeys[i] = decodeKey(key, 0, keyLength);
    offsets[i] = r.varint();
    lengths[i] = r.varint();
    counts[i] = r.varint();
    crcs[i] = r.u32();
    if (offsets[i] !== next) bad('ERR_RUN_FORMAT', `block ${i} at ${offsets[i]}, expected ${next}`);
    // A v2 block's entries may compress below MIN_ENTRY_BYTES each: only method and length.
    const minLength = version === 1 ? CRC_BYTES + counts[i]! * MIN_ENTRY_BYTES : CRC_BYTES + 2;
    if (counts[i]! < 1 || lengths[i]! < minLength) {
      bad('ERR_RUN_FORMAT', `block ${i}: ${counts[i]} entries cannot fit ${lengths[i]} bytes`);
    }
    next += lengths[i]!;
    total += counts[i]!;
  }
  if (next !== footerOffset)
    bad('ERR_RUN_FORMAT', `blocks end at ${next}, footer starts at ${footerOffset}`);
  if (total !== entryCount)
    bad('ERR_RUN_FORMAT', `blocks hold ${total} entries, footer says ${entryCount}`);
  const lastKeyLength = r.varint();
  const lastKey = decodeKey(buf, r.skip(lastKeyLength), r.pos);
  if (
    entryCount === 0 ? lastKeyLength !== 0 : compareKeys(lastKey, firstKeys[blockCount - 1]!) < 0
  ) {
    bad('ERR_RUN_UNSORTED', 'last key is before the last block');
  }
  const bloom = BloomFilter.decode(r.take(r.remaining).slice());
  return { entryCount, firstKeys, offsets, lengths, counts, crcs, lastKey, bloom };
}

/**
 * Everything needed to open a run with one ranged read, small enough to keep in checkpoints.
 * `firstKey`/`lastKey` are undefined only for an empty run.
 */
export interface RunMeta {
  blobKey: string;
  /** Blob size in bytes. */
  size: number;
  entryCount: number;
  firstKey: string | undefined;
  lastKey: string | undefined;
  footerOffset: number;
  /** Footer bytes, checksum included; the trailer follows them and ends the blob. */
  footerLength: number;
  /** The footer's stored CRC32C: opening checks the blob is the very run this names. */
  footerCrc: number;
}

/** Version byte of the encoded RunMeta. */
const META_VERSION = 1;
const utf8 = new TextEncoder();

/** The compact binary form of `meta` (version byte, varints, length-prefixed UTF-8). */
export function encodeRunMeta(meta: RunMeta): Uint8Array {
  const out = new ByteSink(64 + 3 * meta.blobKey.length);
  out.u8(META_VERSION);
  out.varint(meta.size);
  out.varint(meta.entryCount);
  out.varint(meta.footerOffset);
  out.varint(meta.footerLength);
  out.u32(meta.footerCrc);
  const strings =
    meta.entryCount > 0 ? [meta.blobKey, meta.firstKey!, meta.lastKey!] : [meta.blobKey];
  for (const s of strings) {
    const b = utf8.encode(s);
    out.varint(b.length);
    out.bytes(b);
  }
  return out.view().slice();
}

/** Parses what encodeRunMeta wrote (all of `bytes`). Throws IndexError 'ERR_RUN_META'. */
export function decodeRunMeta(bytes: Uint8Array): RunMeta {
  const bad = (m: string): never => {
    throw new IndexError('ERR_RUN_META', `bad encoded RunMeta: ${m}`);
  };
  const r = new ByteReader(bytes, 0, bytes.length, bad);
  if (r.u8() !== META_VERSION) bad('unsupported version');
  const size = r.varint();
  const entryCount = r.varint();
  const footerOffset = r.varint();
  const footerLength = r.varint();
  const footerCrc = r.u32();
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const str = (): string => {
    const n = r.varint();
    return decodeKey(buf, r.skip(n), r.pos);
  };
  const blobKey = str();
  const firstKey = entryCount > 0 ? str() : undefined;
  const lastKey = entryCount > 0 ? str() : undefined;
  if (r.remaining !== 0) bad(`${r.remaining} trailing bytes`);
  if (footerOffset < HEADER_BYTES || size !== footerOffset + footerLength + TRAILER_BYTES) {
    bad('footer position does not fit the size');
  }
  return { blobKey, size, entryCount, firstKey, lastKey, footerOffset, footerLength, footerCrc };
}
