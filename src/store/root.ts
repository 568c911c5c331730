/**
 * @module Roots (checkpoints): the complete catalog at one commit, so that opening a
 * repository replays only the commits after the newest root.
 *
 * A root names every bucket with its settings, its complete run set (encoded run metadata,
 * newest first), and its uploads keyspace (runs, and the count of uploads in progress). A
 * root blob is a pack of one entry (framing and CRC come from the pack format).
 *
 * Roots written before the uploads keyspace ("STR1") listed every upload in progress, with
 * its parts, in the root itself; they still decode (into `uploads`), and opening migrates
 * them into the keyspace. Roots are written in the current form ("STR2") only.
 *
 * Every access key follows the buckets (encoded key records, keys-record.ts): a trailing
 * section, absent from roots written before keys lived in the repository (read as none).
 *
 * The version log of every bucket (version-log.ts) follows the keys: for each bucket, in the
 * order above, its encoded run metadata, newest first. Roots written before the version log
 * lack the section (`versionLog` false): opening one builds the log from the namespace
 * (version-log-migrate.ts).
 *
 * The history account (history-budget.ts) follows: for each bucket, in the order above, its
 * accounted history bytes and entries. Roots written before budgets lack it (`history`
 * absent): opening recounts by walking the logs.
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
  /** Encoded RunMeta of each run of the uploads keyspace, newest first (none in STR1 roots). */
  uploadRuns: Uint8Array[];
  /** Uploads in progress in the keyspace (0 in STR1 roots: those are in `uploads`). */
  uploadCount: number;
  /** Encoded RunMeta of each run of the version log, newest first (absent: none). */
  versionRuns?: Uint8Array[];
}

/** An upload in progress as an STR1 root lists it. */
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
  /** STR1 roots only: uploads in progress (empty for current roots). */
  uploads: RootUpload[];
  /** Encoded key records (keys-record.ts), by access key id (absent: none). */
  keys?: [string, Uint8Array][];
  /** Whether the root has the version log section (false: written before the log existed). */
  versionLog?: boolean;
  /** History account per bucket, in `buckets` order: [bytes, entries] (absent: not recorded). */
  history?: { buckets: [number, number][] };
}

const MAGIC_V1 = 0x31525453; // "STR1"
const MAGIC = 0x32525453; // "STR2"

/** Encodes `root` in the current form; throws RangeError if it carries STR1 uploads. */
export function encodeRoot(root: RootRecord): Uint8Array {
  if (root.uploads.length > 0) throw new RangeError('uploads in progress live in the uploads keyspace, not in the root');
  const w = new ByteWriter(1024);
  w.u32(MAGIC).varint(root.seq).u8(root.head ? 1 : 0);
  if (root.head) writeRef(w, root.head);
  w.varint(root.time).string(root.repositoryId).varint(root.buckets.length);
  for (const b of root.buckets) {
    w.string(b.name).string(b.id).varint(b.created).varint(b.configs.length);
    for (const [name, value] of b.configs) w.string(name).bytes(value);
    w.varint(b.runs.length);
    for (const run of b.runs) w.bytes(run);
    w.varint(b.uploadRuns.length);
    for (const run of b.uploadRuns) w.bytes(run);
    w.varint(b.uploadCount);
  }
  const keys = root.keys ?? [];
  w.varint(keys.length);
  for (const [id, record] of keys) w.string(id).bytes(record);
  w.varint(root.buckets.length);
  for (const b of root.buckets) {
    const runs = b.versionRuns ?? [];
    w.varint(runs.length);
    for (const run of runs) w.bytes(run);
  }
  if (root.history) {
    if (root.history.buckets.length !== root.buckets.length) throw new RangeError('the history account does not match the root buckets');
    w.varint(root.history.buckets.length);
    for (const [bytes, points] of root.history.buckets) w.varint(bytes).varint(points);
  }
  return w.finish();
}

export function decodeRoot(bytes: Uint8Array, what = 'root record'): RootRecord {
  const r = new ByteReader(bytes, what);
  const magic = r.u32();
  if (magic !== MAGIC && magic !== MAGIC_V1) throw new StoreError('Corrupt', `${what}: not a root record`);
  const seq = r.varint();
  const hasHead = r.u8();
  const root: RootRecord & { keys: [string, Uint8Array][] } = { seq, time: 0, repositoryId: '', buckets: [], uploads: [], keys: [] };
  if (hasHead) root.head = readRef(r);
  root.time = r.varint();
  root.repositoryId = r.string();
  const count = (label: string) => {
    const n = r.varint();
    if (n > r.remaining) throw new StoreError('Corrupt', `${what}: ${n} ${label} cannot fit`);
    return n;
  };
  for (let i = count('buckets'); i > 0; i--) {
    const b: RootBucket = { name: r.string(), id: r.string(), created: r.varint(), configs: [], runs: [], uploadRuns: [], uploadCount: 0 };
    for (let j = count('configs'); j > 0; j--) b.configs.push([r.string(), r.bytes().slice()]);
    for (let j = count('runs'); j > 0; j--) b.runs.push(r.bytes().slice());
    if (magic === MAGIC) {
      for (let j = count('upload runs'); j > 0; j--) b.uploadRuns.push(r.bytes().slice());
      b.uploadCount = r.varint();
    }
    root.buckets.push(b);
  }
  for (let i = magic === MAGIC_V1 ? count('uploads') : 0; i > 0; i--) {
    const u: RootUpload = { bucket: r.string(), uploadId: r.string(), record: r.bytes().slice(), parts: [] };
    for (let j = count('parts'); j > 0; j--) u.parts.push([r.varint(), r.bytes().slice()]);
    root.uploads.push(u);
  }
  if (r.remaining > 0) for (let i = count('keys'); i > 0; i--) root.keys.push([r.string(), r.bytes().slice()]);
  if (r.remaining > 0) {
    if (count('version logs') !== root.buckets.length) throw new StoreError('Corrupt', `${what}: version logs do not match its buckets`);
    for (const b of root.buckets) {
      const runs: Uint8Array[] = [];
      for (let j = count('version runs'); j > 0; j--) runs.push(r.bytes().slice());
      if (runs.length > 0) b.versionRuns = runs;
    }
    root.versionLog = true;
  }
  if (r.remaining > 0) {
    if (count('history accounts') !== root.buckets.length) throw new StoreError('Corrupt', `${what}: history accounts do not match its buckets`);
    root.history = { buckets: root.buckets.map(() => [r.varint(), r.varint()] as [number, number]) };
  }
  r.end();
  return root;
}
