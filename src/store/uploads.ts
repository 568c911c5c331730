/**
 * @module Multipart uploads in progress: their records and binary form.
 *
 * An upload remembers what CreateMultipartUpload said (key, metadata, checksum algorithm
 * and type); each part is a carrier with its digests. Completing an upload writes one
 * object version that lists the parts' chunks — no body byte is copied.
 */
import { ByteReader, ByteWriter } from './binary.js';
import { CHECKSUM_NAMES, type ChecksumName, type ChecksumType, type ChunkRef, type ObjectAccess } from './records.js';
import { StoreError } from './errors.js';

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
  /** Owner and canned ACL the completed object gets (see ObjectVersion.access). */
  access?: ObjectAccess;
}

export interface PartRecord {
  size: number;
  md5: Uint8Array;
  values: Partial<Record<ChecksumName, Uint8Array>>;
  chunks: ChunkRef[];
  lastModified: number;
}

export function encodeUpload(u: UploadRecord): Uint8Array {
  const w = new ByteWriter(128);
  w.string(u.key).varint(u.initiated).optString(u.contentType);
  w.stringMap(u.system).stringMap(u.userMetadata).stringMap(u.tags);
  w.u8(u.checksumAlgorithm ? CHECKSUM_NAMES.indexOf(u.checksumAlgorithm) + 1 : 0);
  w.u8(u.checksumType === 'COMPOSITE' ? 1 : 0);
  // Appended last and only when present, so records written before it still decode.
  if (u.access) w.u8(1).optString(u.access.owner).string(u.access.acl);
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
  if (r.remaining > 0) {
    if (r.u8() !== 1) throw new StoreError('Corrupt', 'upload record: unknown trailing field');
    const owner = r.optString();
    const acl = r.string();
    u.access = owner === undefined ? { acl } : { owner, acl };
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
  r.end();
  return p;
}
