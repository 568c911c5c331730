/**
 * @module Roots (checkpoints): the complete catalog at one commit, so that opening a
 * repository replays only the commits after the newest root.
 *
 * A root names every bucket with its settings and its complete run set (encoded run
 * metadata, newest first), every multipart upload in progress, and every access key
 * (encoded key records, keys-record.ts; a trailing section that roots written before keys
 * existed lack). A root blob is a pack of one entry (framing and CRC come from the pack format).
 */
import { ByteReader, ByteWriter } from './binary.js';
import { readRef, writeRef, type RecordRef } from './commit.js';
import { StoreError } from './errors.js';

export interface RootBucket {
  name: string;
  id: string;
  created: number;
  configs: [string, Uint8Array][];
  /** Encoded RunMeta of each run, newest first. */
  runs: Uint8Array[];
}

export interface RootUpload {
  bucket: string;
  uploadId: string;
  record: Uint8Array;
  parts: [number, Uint8Array][];
}

export interface RootRecord {
  /** Sequence of the last commit this root covers (0 for the genesis root). */
  seq: number;
  /** That commit; absent for the genesis root. */
  head?: RecordRef;
  time: number;
  repositoryId: string;
  buckets: RootBucket[];
  uploads: RootUpload[];
  /** Encoded key records (keys-record.ts), by access key id. */
  keys: [string, Uint8Array][];
}

const MAGIC = 0x31525453; // "STR1"

export function encodeRoot(root: RootRecord): Uint8Array {
  const w = new ByteWriter(1024);
  w.u32(MAGIC).varint(root.seq).u8(root.head ? 1 : 0);
  if (root.head) writeRef(w, root.head);
  w.varint(root.time).string(root.repositoryId).varint(root.buckets.length);
  for (const b of root.buckets) {
    w.string(b.name).string(b.id).varint(b.created).varint(b.configs.length);
    for (const [name, value] of b.configs) w.string(name).bytes(value);
    w.varint(b.runs.length);
    for (const run of b.runs) w.bytes(run);
  }
  w.varint(root.uploads.length);
  for (const u of root.uploads) {
    w.string(u.bucket).string(u.uploadId).bytes(u.record).varint(u.parts.length);
    for (const [n, p] of u.parts) w.varint(n).bytes(p);
  }
  w.varint(root.keys.length);
  for (const [id, record] of root.keys) w.string(id).bytes(record);
  return w.finish();
}

export function decodeRoot(bytes: Uint8Array, what = 'root record'): RootRecord {
  const r = new ByteReader(bytes, what);
  if (r.u32() !== MAGIC) throw new StoreError('Corrupt', `${what}: not a root record`);
  const seq = r.varint();
  const hasHead = r.u8();
  const root: RootRecord = { seq, time: 0, repositoryId: '', buckets: [], uploads: [], keys: [] };
  if (hasHead) root.head = readRef(r);
  root.time = r.varint();
  root.repositoryId = r.string();
  const count = (label: string) => {
    const n = r.varint();
    if (n > r.remaining) throw new StoreError('Corrupt', `${what}: ${n} ${label} cannot fit`);
    return n;
  };
  for (let i = count('buckets'); i > 0; i--) {
    const b: RootBucket = { name: r.string(), id: r.string(), created: r.varint(), configs: [], runs: [] };
    for (let j = count('configs'); j > 0; j--) b.configs.push([r.string(), r.bytes().slice()]);
    for (let j = count('runs'); j > 0; j--) b.runs.push(r.bytes().slice());
    root.buckets.push(b);
  }
  for (let i = count('uploads'); i > 0; i--) {
    const u: RootUpload = { bucket: r.string(), uploadId: r.string(), record: r.bytes().slice(), parts: [] };
    for (let j = count('parts'); j > 0; j--) u.parts.push([r.varint(), r.bytes().slice()]);
    root.uploads.push(u);
  }
  if (r.remaining > 0) for (let i = count('keys'); i > 0; i--) root.keys.push([r.string(), r.bytes().slice()]);
  r.end();
  return root;
}
