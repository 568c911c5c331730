/**
 * @module Object versions: what the index stores for each key, and their binary form.
 *
 * The index maps (bucket, key) to an encoded *version list*, newest first. An empty list
 * is a tombstone: the key was deleted and must shadow older runs until compaction drops
 * it. Hashes are kept raw (16-byte MD5, 4/8-byte CRCs, 20/32-byte SHAs) to keep records
 * small; the S3 layer renders hex/base64.
 */
import { ByteReader, ByteWriter } from './binary.js';
import { StoreError } from './errors.js';
import { readObjectEncryption, writeObjectEncryption, type ObjectEncryption } from './crypto/envelope.js';
import { readObjectLock, writeObjectLock, type ObjectLock } from './object-lock.js';

export const CHECKSUM_NAMES = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
export type ChecksumName = (typeof CHECKSUM_NAMES)[number];
export type ChecksumType = 'FULL_OBJECT' | 'COMPOSITE';

/** Raw digests by algorithm; composite ones also record how many parts they combine. */
export interface Checksums {
  type: ChecksumType;
  /** The algorithm the client chose (returned to clients); CRC64NVME when it chose none. */
  primary: ChecksumName;
  values: Partial<Record<ChecksumName, Uint8Array>>;
  /** For COMPOSITE: the number of parts (rendered as the "-N" suffix). */
  parts?: number;
}

/** One segment-framed carrier blob (a pack of fixed-size segments). */
export interface ChunkRef {
  blob: string;
  /** Data bytes in this chunk. */
  size: number;
  /** Segment size: entry i holds data bytes [i * segment, (i + 1) * segment). */
  segment: number;
  /** Pack tag of the chunk blob (entries are checked against it). */
  tag: number;
}

export type Location =
  | { kind: 'empty' }
  | { kind: 'pack'; blob: string; offset: number; length: number; tag: number; index: number }
  | { kind: 'chunks'; chunks: ChunkRef[] };

export interface PartInfo {
  number: number;
  size: number;
  /** Raw MD5 of the part. */
  md5: Uint8Array;
  checksums: Partial<Record<ChecksumName, Uint8Array>>;
}

/**
 * Who owns an object and its canned ACL (flag 8). Absent: the bucket owner owns it and the
 * ACL is private, which is what most objects are, so they pay nothing for it.
 */
export interface ObjectAccess {
  /** The access key that wrote the object, when it is not the bucket owner. */
  owner?: string;
  /** A canned ACL name (the S3 layer validates it; an unknown name reads as private). */
  acl: string;
}

export interface ObjectVersion {
  versionId: string;
  deleteMarker: boolean;
  size: number;
  /** Raw MD5 of the body, or for multipart the MD5 of the part MD5s (with `partCount`). */
  md5: Uint8Array;
  /** Number of parts for a multipart object (ETag suffix "-N"); 0 for a single PUT. */
  partCount: number;
  /** Milliseconds since the epoch. */
  lastModified: number;
  contentType?: string;
  /** Standard headers stored with the object: cache-control, content-disposition, ... */
  system: Record<string, string>;
  /** x-amz-meta-* without the prefix, names lower-cased. */
  userMetadata: Record<string, string>;
  tags: Record<string, string>;
  checksums?: Checksums;
  location: Location;
  /** Multipart objects only: part sizes and digests, in order. */
  parts?: PartInfo[];
  /** Encrypted at rest (SSE-S3 / SSE-C): the wrapped data key and the body's streams. */
  encryption?: ObjectEncryption;
  /** Owner and canned ACL when not the defaults (flag 8). */
  access?: ObjectAccess;
  /** Object Lock retention and legal hold (flag 32; object-lock.ts). */
  lock?: ObjectLock;
  /**
   * Flag 64 (version log): the version id of this write's position in the version log when
   * `versionId` is `null` (S3's null version has no id of its own; see version-id.ts). Absent
   * for a non-null version (its id is its position) and for an object written before the log
   * existed (its `versionId` reads as `null`).
   */
  logId?: string;
}

const FLAG_DELETE = 1;
const FLAG_CHECKSUMS = 2;
const FLAG_PARTS = 4;
/** Access control: owner / canned ACL. */
const FLAG_ACCESS = 8;
const FLAG_SSE = 16;
/** Object Lock: retention and legal hold. */
const FLAG_LOCK = 32;
/** Version log: the null version's log position (`logId`). */
const FLAG_LOG = 64;
const KNOWN_FLAGS = FLAG_DELETE | FLAG_CHECKSUMS | FLAG_PARTS | FLAG_ACCESS | FLAG_SSE | FLAG_LOCK | FLAG_LOG;
/** Ids written before the version log (`<seq>.<n>.<random>`, base 36) read as S3's `null`. */
const PRE_LOG_ID_RE = /^[0-9a-z]+\.[0-9a-z]+\.[0-9a-z]+$/;
const LOC_EMPTY = 0;
const LOC_PACK = 1;
const LOC_CHUNKS = 2;

function writeDigests(w: ByteWriter, values: Partial<Record<ChecksumName, Uint8Array>>): void {
  const present = CHECKSUM_NAMES.filter((n) => values[n]);
  w.varint(present.length);
  for (const n of present) w.u8(CHECKSUM_NAMES.indexOf(n)).bytes(values[n]!);
}

function readDigests(r: ByteReader): Partial<Record<ChecksumName, Uint8Array>> {
  const out: Partial<Record<ChecksumName, Uint8Array>> = {};
  const n = r.varint();
  if (n > CHECKSUM_NAMES.length) throw new StoreError('Corrupt', `version: ${n} checksums`);
  for (let i = 0; i < n; i++) {
    const name = CHECKSUM_NAMES[r.u8()];
    if (!name) throw new StoreError('Corrupt', 'version: unknown checksum algorithm');
    out[name] = r.bytes().slice();
  }
  return out;
}

function writeVersion(w: ByteWriter, v: ObjectVersion): void {
  const flags =
    (v.deleteMarker ? FLAG_DELETE : 0) |
    (v.checksums ? FLAG_CHECKSUMS : 0) |
    (v.parts ? FLAG_PARTS : 0) |
    (v.access ? FLAG_ACCESS : 0) |
    (v.encryption ? FLAG_SSE : 0) |
    (v.lock ? FLAG_LOCK : 0) |
    (v.logId !== undefined ? FLAG_LOG : 0);
  w.u8(flags).string(v.versionId).varint(v.size).raw(v.md5.length === 16 ? v.md5 : new Uint8Array(16));
  w.varint(v.partCount).varint(v.lastModified).optString(v.contentType);
  w.stringMap(v.system).stringMap(v.userMetadata).stringMap(v.tags);
  if (v.checksums) {
    const c = v.checksums;
    w.u8(c.type === 'COMPOSITE' ? 1 : 0).u8(CHECKSUM_NAMES.indexOf(c.primary)).varint(c.parts ?? 0);
    writeDigests(w, c.values);
  }
  const loc = v.location;
  if (loc.kind === 'empty') w.u8(LOC_EMPTY);
  else if (loc.kind === 'pack') {
    w.u8(LOC_PACK).string(loc.blob).varint(loc.offset).varint(loc.length).u32(loc.tag).varint(loc.index);
  } else {
    w.u8(LOC_CHUNKS).varint(loc.chunks.length);
    for (const c of loc.chunks) w.string(c.blob).varint(c.size).varint(c.segment).u32(c.tag);
  }
  if (v.parts) {
    w.varint(v.parts.length);
    for (const p of v.parts) {
      w.varint(p.number).varint(p.size).raw(p.md5);
      writeDigests(w, p.checksums);
    }
  }
  if (v.encryption) writeObjectEncryption(w, v.encryption);
  if (v.access) w.optString(v.access.owner).string(v.access.acl);
  if (v.lock) writeObjectLock(w, v.lock);
  if (v.logId !== undefined) w.string(v.logId);
}

function readVersion(r: ByteReader): ObjectVersion {
  const flags = r.u8();
  if (flags & ~KNOWN_FLAGS) throw new StoreError('Corrupt', `version: flags ${flags}`);
  // Fields are read in wire order into locals so the object is built with its final
  // shape (no `delete`, which would put it into slow dictionary mode).
  const written = r.string();
  const versionId = PRE_LOG_ID_RE.test(written) ? 'null' : written;
  const size = r.varint();
  const md5 = r.raw(16).slice();
  const partCount = r.varint();
  const lastModified = r.varint();
  const contentType = r.optString();
  const system = r.stringMap();
  const userMetadata = r.stringMap();
  const tags = r.stringMap();
  const deleteMarker = (flags & FLAG_DELETE) !== 0;
  const location: Location = { kind: 'empty' };
  const v: ObjectVersion =
    contentType === undefined
      ? { versionId, deleteMarker, size, md5, partCount, lastModified, system, userMetadata, tags, location }
      : { versionId, deleteMarker, size, md5, partCount, lastModified, contentType, system, userMetadata, tags, location };
  if (flags & FLAG_CHECKSUMS) {
    const type = r.u8() === 1 ? 'COMPOSITE' : 'FULL_OBJECT';
    const primary = CHECKSUM_NAMES[r.u8()];
    if (!primary) throw new StoreError('Corrupt', 'version: unknown primary checksum');
    const parts = r.varint();
    v.checksums = { type, primary, values: readDigests(r) };
    if (parts) v.checksums.parts = parts;
  }
  const kind = r.u8();
  if (kind === LOC_PACK) {
    v.location = { kind: 'pack', blob: r.string(), offset: r.varint(), length: r.varint(), tag: r.u32(), index: r.varint() };
  } else if (kind === LOC_CHUNKS) {
    const n = r.varint();
    if (n > r.remaining) throw new StoreError('Corrupt', `version: ${n} chunks cannot fit`);
    const chunks: ChunkRef[] = [];
    for (let i = 0; i < n; i++) chunks.push({ blob: r.string(), size: r.varint(), segment: r.varint(), tag: r.u32() });
    v.location = { kind: 'chunks', chunks };
  } else if (kind !== LOC_EMPTY) {
    throw new StoreError('Corrupt', `version: location kind ${kind}`);
  }
  if (flags & FLAG_PARTS) {
    const n = r.varint();
    if (n > r.remaining) throw new StoreError('Corrupt', `version: ${n} parts cannot fit`);
    v.parts = [];
    for (let i = 0; i < n; i++) v.parts.push({ number: r.varint(), size: r.varint(), md5: r.raw(16).slice(), checksums: readDigests(r) });
  }
  if (flags & FLAG_SSE) v.encryption = readObjectEncryption(r);
  if (flags & FLAG_ACCESS) {
    const owner = r.optString();
    const acl = r.string();
    v.access = owner === undefined ? { acl } : { owner, acl };
  }
  if (flags & FLAG_LOCK) v.lock = readObjectLock(r);
  if (flags & FLAG_LOG) v.logId = r.string();
  return v;
}

/**
 * What a listing shows of a version (ListObjects: S3 renders no metadata, tags or location).
 * A full ObjectVersion is one; decodeListedHead makes one without decoding the rest.
 */
export type ListedVersion = Pick<ObjectVersion, 'versionId' | 'logId' | 'deleteMarker' | 'size' | 'md5' | 'partCount' | 'lastModified' | 'access'> & {
  checksums?: Omit<Checksums, 'values'>;
};

const skipString = (r: ByteReader): void => void r.bytes();
function skipStringMap(r: ByteReader): void {
  const n = r.varint();
  if (n > r.remaining) throw new StoreError('Corrupt', `version: map of ${n} entries cannot fit`);
  for (let i = 0; i < 2 * n; i++) skipString(r);
}
function skipDigests(r: ByteReader): void {
  const n = r.varint();
  if (n > CHECKSUM_NAMES.length) throw new StoreError('Corrupt', `version: ${n} checksums`);
  for (let i = 0; i < n; i++) {
    if (!CHECKSUM_NAMES[r.u8()]) throw new StoreError('Corrupt', 'version: unknown checksum algorithm');
    r.bytes();
  }
}

/**
 * The newest version of a version list as a listing shows it, or undefined for a tombstone.
 * Walks the whole record as decodeVersions does (same structure checks, no trailing bytes)
 * but builds only what a listing renders: metadata, tags, digests and locations are stepped
 * over (their strings are not UTF-8-checked here; reading the object does that). A list of
 * more than one version is decoded fully. Throws StoreError 'Corrupt' like decodeVersions.
 */
export function decodeListedHead(bytes: Uint8Array, what = 'version list'): ListedVersion | undefined {
  const r = new ByteReader(bytes, what);
  const n = r.varint();
  if (n !== 1) return n === 0 && r.remaining === 0 ? undefined : decodeVersions(bytes, what)[0];
  const flags = r.u8();
  if (flags & ~KNOWN_FLAGS) throw new StoreError('Corrupt', `version: flags ${flags}`);
  const written = r.string();
  const versionId = PRE_LOG_ID_RE.test(written) ? 'null' : written;
  const size = r.varint();
  const md5 = r.raw(16).slice();
  const partCount = r.varint();
  const lastModified = r.varint();
  const contentType = r.u8(); // optString's tag
  if (contentType === 1) skipString(r);
  else if (contentType !== 0) throw new StoreError('Corrupt', `${what}: bad optional tag ${contentType}`);
  skipStringMap(r);
  skipStringMap(r);
  skipStringMap(r);
  const v: ListedVersion = { versionId, deleteMarker: (flags & FLAG_DELETE) !== 0, size, md5, partCount, lastModified };
  if (flags & FLAG_CHECKSUMS) {
    const type = r.u8() === 1 ? 'COMPOSITE' : 'FULL_OBJECT';
    const primary = CHECKSUM_NAMES[r.u8()];
    if (!primary) throw new StoreError('Corrupt', 'version: unknown primary checksum');
    const parts = r.varint();
    skipDigests(r);
    v.checksums = parts ? { type, primary, parts } : { type, primary };
  }
  const kind = r.u8();
  if (kind === LOC_PACK) {
    skipString(r);
    r.varint();
    r.varint();
    r.u32();
    r.varint();
  } else if (kind === LOC_CHUNKS) {
    const chunks = r.varint();
    if (chunks > r.remaining) throw new StoreError('Corrupt', `version: ${chunks} chunks cannot fit`);
    for (let i = 0; i < chunks; i++) {
      skipString(r);
      r.varint();
      r.varint();
      r.u32();
    }
  } else if (kind !== LOC_EMPTY) {
    throw new StoreError('Corrupt', `version: location kind ${kind}`);
  }
  if (flags & FLAG_PARTS) {
    const parts = r.varint();
    if (parts > r.remaining) throw new StoreError('Corrupt', `version: ${parts} parts cannot fit`);
    for (let i = 0; i < parts; i++) {
      r.varint();
      r.varint();
      r.raw(16);
      skipDigests(r);
    }
  }
  if (flags & FLAG_SSE) readObjectEncryption(r);
  if (flags & FLAG_ACCESS) {
    const owner = r.optString();
    const acl = r.string();
    v.access = owner === undefined ? { acl } : { owner, acl };
  }
  if (flags & FLAG_LOCK) readObjectLock(r);
  if (flags & FLAG_LOG) v.logId = r.string();
  r.end();
  return v;
}

/** Encodes a version list (newest first); an empty list is a tombstone. */
export function encodeVersions(versions: readonly ObjectVersion[]): Uint8Array {
  const w = new ByteWriter(128);
  w.varint(versions.length);
  for (const v of versions) writeVersion(w, v);
  return w.finish();
}

/** Decodes a version list; throws StoreError 'Corrupt' on malformed bytes. */
export function decodeVersions(bytes: Uint8Array, what = 'version list'): ObjectVersion[] {
  const r = new ByteReader(bytes, what);
  const n = r.varint();
  if (n > r.remaining) throw new StoreError('Corrupt', `${what}: ${n} versions cannot fit`);
  const out: ObjectVersion[] = [];
  for (let i = 0; i < n; i++) out.push(readVersion(r));
  r.end();
  return out;
}

/**
 * Whether a version list has no live head — empty (a tombstone) or its newest version a
 * delete marker — read from its first two bytes when they suffice (LIST decides this for
 * every key it rolls into a common prefix, and renders none of them). Throws StoreError
 * 'Corrupt' for unknown flags, or whatever decodeVersions throws when it decides.
 */
export function headIsDeleted(bytes: Uint8Array, what = 'version list'): boolean {
  const n = bytes[0];
  // One-byte count (a namespace value holds one version) and a flags byte after it.
  if (n === undefined || n >= 0x80 || (n > 0 && bytes.length < 2) || (n === 0 && bytes.length !== 1)) {
    const v = decodeVersions(bytes, what)[0];
    return !v || v.deleteMarker;
  }
  if (n === 0) return true;
  const flags = bytes[1]!;
  if (flags & ~KNOWN_FLAGS) throw new StoreError('Corrupt', `${what}: version flags ${flags}`);
  return (flags & FLAG_DELETE) !== 0;
}

/** The encoded tombstone (an empty version list). */
export const TOMBSTONE = encodeVersions([]);

export function isTombstone(value: Uint8Array): boolean {
  return value.length === 1 && value[0] === 0;
}

/** Writes/reads one version standalone (used by commit records and upload parts). */
export function encodeVersion(v: ObjectVersion): Uint8Array {
  const w = new ByteWriter(128);
  writeVersion(w, v);
  return w.finish();
}

export function decodeVersion(bytes: Uint8Array, what = 'version'): ObjectVersion {
  const r = new ByteReader(bytes, what);
  const v = readVersion(r);
  r.end();
  return v;
}

const MD5_BYTES = 16;
const md5Scratch = Buffer.alloc(MD5_BYTES);

/** S3 ETag text (without quotes): hex MD5, plus "-N" for multipart objects. */
export function etagOf(v: Pick<ObjectVersion, 'md5' | 'partCount'>): string {
  // Through one reused buffer: a Buffer per call was the largest item of a listing's per-key cost.
  let hex: string;
  if (v.md5.length === MD5_BYTES) {
    md5Scratch.set(v.md5);
    hex = md5Scratch.toString('hex', 0, MD5_BYTES);
  } else {
    hex = Buffer.from(v.md5).toString('hex');
  }
  return v.partCount > 0 ? `${hex}-${v.partCount}` : hex;
}
