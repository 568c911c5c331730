/**
 * @module Multipart uploads: the records of the uploads keyspace (upload-keys.ts) and their
 * binary form.
 *
 * An upload remembers what CreateMultipartUpload said (key, metadata, checksum algorithm
 * and type); each part is a carrier with its digests. Completing an upload writes one
 * object version that lists the parts' chunks — no body byte is copied — and leaves a small
 * completion record, so that a retried Complete answers as the first one did.
 */
import { createHash } from 'node:crypto';
import { ByteReader, ByteWriter } from './binary.js';
import {
  CHECKSUM_NAMES,
  decodeVersion,
  encodeVersion,
  type ChecksumName,
  type ChecksumType,
  type ChunkRef,
  type ObjectAccess,
  type ObjectVersion,
} from './records.js';
import { StoreError } from './errors.js';
import { readEnvelope, STREAM_ID_BYTES, writeEnvelope, type KeyEnvelope } from './crypto/envelope.js';
import { readLockRequest, writeLockRequest, type LockRequest } from './object-lock-config.js';

/** Tags of the optional trailing fields of an upload record. */
const TRAILER_ENCRYPTION = 1;
const TRAILER_ACCESS = 2;
const TRAILER_LOCK = 3;

export interface UploadRecord {
  key: string;
  initiated: number;
  contentType?: string;
  system: Record<string, string>;
  userMetadata: Record<string, string>;
  tags: Record<string, string>;
  /** Checksum algorithm chosen at creation (x-amz-checksum-algorithm), if any. */
  checksumAlgorithm?: ChecksumName;
  checksumType: ChecksumType;
  /** Encrypted uploads (SSE-S3 / SSE-C): the upload's wrapped data key, shared by its parts. */
  encryption?: KeyEnvelope;
  /** Owner and canned ACL the completed object gets (see ObjectVersion.access). */
  access?: ObjectAccess;
  /** The Object Lock the completed object gets (resolved when it completes). */
  lock?: LockRequest;
}

export interface PartRecord {
  size: number;
  md5: Uint8Array;
  values: Partial<Record<ChecksumName, Uint8Array>>;
  chunks: ChunkRef[];
  lastModified: number;
  /** Encrypted uploads: the id of the part's stream (its segments' key). */
  stream?: Uint8Array;
  /** SSE-C uploads: `values` sealed under the upload's data key (`values` is then empty). */
  sealedValues?: Uint8Array;
}

export function encodeUpload(u: UploadRecord): Uint8Array {
  const w = new ByteWriter(128);
  w.string(u.key).varint(u.initiated).optString(u.contentType);
  w.stringMap(u.system).stringMap(u.userMetadata).stringMap(u.tags);
  w.u8(u.checksumAlgorithm ? CHECKSUM_NAMES.indexOf(u.checksumAlgorithm) + 1 : 0);
  w.u8(u.checksumType === 'COMPOSITE' ? 1 : 0);
  // Optional trailing fields, each tagged and only when present (records written before a
  // field existed still decode): 1 encryption, 2 access (owner / canned ACL), 3 Object Lock,
  // in that order.
  if (u.encryption) writeEnvelope(w.u8(TRAILER_ENCRYPTION), u.encryption);
  if (u.access) w.u8(TRAILER_ACCESS).optString(u.access.owner).string(u.access.acl);
  if (u.lock) writeLockRequest(w.u8(TRAILER_LOCK), u.lock);
  return w.finish();
}

export function decodeUpload(bytes: Uint8Array): UploadRecord {
  const r = new ByteReader(bytes, 'upload record');
  const u: UploadRecord = {
    key: r.string(),
    initiated: r.varint(),
    contentType: r.optString(),
    system: r.stringMap(),
    userMetadata: r.stringMap(),
    tags: r.stringMap(),
    checksumType: 'FULL_OBJECT',
  };
  if (u.contentType === undefined) delete u.contentType;
  const alg = r.u8();
  if (alg > CHECKSUM_NAMES.length) throw new StoreError('Corrupt', `upload record: checksum algorithm ${alg}`);
  if (alg) u.checksumAlgorithm = CHECKSUM_NAMES[alg - 1];
  u.checksumType = r.u8() === 1 ? 'COMPOSITE' : 'FULL_OBJECT';
  let last = 0;
  while (r.remaining > 0) {
    const tag = r.u8();
    if (tag <= last) throw new StoreError('Corrupt', `upload record: trailing field ${tag} out of order`);
    last = tag;
    if (tag === TRAILER_ENCRYPTION) u.encryption = readEnvelope(r);
    else if (tag === TRAILER_ACCESS) {
      const owner = r.optString();
      const acl = r.string();
      u.access = owner === undefined ? { acl } : { owner, acl };
    } else if (tag === TRAILER_LOCK) u.lock = readLockRequest(r);
    else throw new StoreError('Corrupt', `upload record: unknown trailing field ${tag}`);
  }
  r.end();
  return u;
}

export function encodePart(p: PartRecord): Uint8Array {
  const w = new ByteWriter(128);
  w.varint(p.size).raw(p.md5).varint(p.lastModified);
  const present = CHECKSUM_NAMES.filter((n) => p.values[n]);
  w.varint(present.length);
  for (const n of present) w.u8(CHECKSUM_NAMES.indexOf(n)).bytes(p.values[n]!);
  w.varint(p.chunks.length);
  for (const c of p.chunks) w.string(c.blob).varint(c.size).varint(c.segment).u32(c.tag);
  // Optional trailing fields, tagged: 1 = stream id, 2 = sealed checksum values.
  if (p.stream) w.u8(1).raw(p.stream);
  if (p.sealedValues) w.u8(2).bytes(p.sealedValues);
  return w.finish();
}

export function decodePart(bytes: Uint8Array): PartRecord {
  const r = new ByteReader(bytes, 'part record');
  const p: PartRecord = { size: r.varint(), md5: r.raw(16).slice(), lastModified: r.varint(), values: {}, chunks: [] };
  const n = r.varint();
  if (n > CHECKSUM_NAMES.length) throw new StoreError('Corrupt', `part record: ${n} checksums`);
  for (let i = 0; i < n; i++) {
    const name = CHECKSUM_NAMES[r.u8()];
    if (!name) throw new StoreError('Corrupt', 'part record: unknown checksum');
    p.values[name] = r.bytes().slice();
  }
  const nc = r.varint();
  if (nc > r.remaining) throw new StoreError('Corrupt', `part record: ${nc} chunks cannot fit`);
  for (let i = 0; i < nc; i++) p.chunks.push({ blob: r.string(), size: r.varint(), segment: r.varint(), tag: r.u32() });
  let last = 0;
  while (r.remaining > 0) {
    const tag = r.u8();
    if (tag <= last || tag > 2) throw new StoreError('Corrupt', `part record: unexpected trailing field ${tag}`);
    if (tag === 1) p.stream = r.raw(STREAM_ID_BYTES).slice();
    else p.sealedValues = r.bytes().slice();
    last = tag;
  }
  r.end();
  return p;
}

/** What a completed upload leaves behind for retries of its Complete. */
export interface CompletionRecord {
  /** First 16 bytes of the SHA-256 of the part list it was completed with (partListDigest). */
  partsDigest: Uint8Array;
  /** When it completed (ms): the expiry of this record counts from here. */
  completed: number;
  /** The version it wrote, without body location, part list and metadata (what Complete answers). */
  version: ObjectVersion;
}

const COMPLETION_FORMAT = 1;
const DIGEST_BYTES = 16;

/**
 * Digest of a Complete request's part list: part numbers with their normalised ETags, in order.
 * Two lists that select the same parts give the same digest.
 */
export function partListDigest(parts: readonly { partNumber: number; etag: string }[]): Uint8Array {
  const h = createHash('sha256');
  for (const p of parts) h.update(`${p.partNumber}:${p.etag}\n`);
  return new Uint8Array(h.digest().subarray(0, DIGEST_BYTES));
}

/** The version as a completion record keeps it: everything Complete's answer uses, no more. */
export function completionVersion(v: ObjectVersion): ObjectVersion {
  const { parts: _parts, ...rest } = v;
  return { ...rest, system: {}, userMetadata: {}, tags: {}, location: { kind: 'empty' } };
}

export function encodeCompletion(c: CompletionRecord): Uint8Array {
  const w = new ByteWriter(128);
  w.u8(COMPLETION_FORMAT).raw(c.partsDigest).varint(c.completed).bytes(encodeVersion(c.version));
  return w.finish();
}

export function decodeCompletion(bytes: Uint8Array): CompletionRecord {
  const r = new ByteReader(bytes, 'completion record');
  if (r.u8() !== COMPLETION_FORMAT) throw new StoreError('Corrupt', 'completion record: unknown format');
  const c: CompletionRecord = { partsDigest: r.raw(DIGEST_BYTES).slice(), completed: r.varint(), version: decodeVersion(r.bytes(), 'completion record version') };
  r.end();
  return c;
}
