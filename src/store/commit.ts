/**
 * @module Commit records: the unit of durability, hash-chained.
 *
 * A commit blob is a pack: the small bodies of the batch are entries 0..n-1 and the
 * commit record is the last entry, so a record can name its bodies' offsets. The record
 * holds its sequence number, a reference to its parent (blob key, record position, and
 * SHA-256 of the parent record), the time, and the mutations of the batch. A reference
 * to a commit (from the anchor or a child) carries the same triple, so replay reads only
 * records (one ranged read each) and any lost, reordered or altered commit is detected.
 */
import { createHash } from 'node:crypto';
import { ByteReader, ByteWriter } from './binary.js';
import { StoreError } from './errors.js';
import type { UploadRef } from './upload-keys.js';

/** Where a commit (or root) record lives and what it must hash to. */
export interface RecordRef {
  key: string;
  /** Offset of the record's pack entry (entry header) in the blob. */
  offset: number;
  /** Record length in bytes (the entry body). */
  length: number;
  /** Hex SHA-256 of the record bytes. */
  hash: string;
}

/**
 * What a mutation changes of the accounted history (history-budget.ts) when the mutation alone
 * cannot tell: set at staging on rewriteVersion (new entry length - old), forkBucketAt (the
 * fork's log bytes) and the ops appended later that drop or re-point log entries (with
 * `historyPoints`, the change in entries). Encoded in the record's history section.
 */
export interface HistoryNote {
  historyDelta?: number;
  historyPoints?: number;
}

export type Mutation = MutationBody & HistoryNote;

type MutationBody =
  | { op: 'put'; bucket: string; key: string; value: Uint8Array }
  | { op: 'createBucket'; bucket: string; id: string; created: number }
  | { op: 'deleteBucket'; bucket: string }
  | { op: 'setConfig'; bucket: string; name: string; value: Uint8Array | null }
  // Legacy upload mutations: written before uploads lived in the index; still replayed.
  | { op: 'createUpload'; bucket: string; uploadId: string; record: Uint8Array }
  | { op: 'putPart'; bucket: string; uploadId: string; number: number; record: Uint8Array }
  | { op: 'endUpload'; bucket: string; uploadId: string }
  // The uploads keyspace (upload-keys.ts): each names its upload by key, initiation and id.
  | ({ op: 'beginUpload'; bucket: string; record: Uint8Array } & UploadRef)
  | ({ op: 'setPart'; bucket: string; number: number; record: Uint8Array } & UploadRef)
  | ({ op: 'closeUpload'; bucket: string; completion?: { time: number; record: Uint8Array } } & UploadRef)
  | ({ op: 'dropCompletion'; bucket: string; completed: number } & UploadRef)
  /** Creates, replaces (record) or deletes (null) an access key (keys-record.ts). Repository-wide:
   * `bucket` is always '' (no bucket has that name), which keeps the shared bucket table. */
  | { op: 'setKey'; bucket: ''; id: string; record: Uint8Array | null }
  /**
   * A new write of `key` (version, delete marker or unversioned delete; version-log.ts entry):
   * appended to the bucket's version log at (seq, index) and made the key's current state in
   * the namespace. Its position is the commit's sequence and the mutation's index in it, so
   * neither is written: encodeCommit checks them, decodeCommit restores them.
   */
  | { op: 'putVersion'; bucket: string; key: string; seq: number; index: number; entry: Uint8Array }
  /** Replaces the version log entry of `key` at (seq, index) (removal, tags, ACL); the
   * namespace is left alone (a `put` in the same commit changes it when needed). */
  | { op: 'rewriteVersion'; bucket: string; key: string; seq: number; index: number; entry: Uint8Array }
  /** Creates `bucket` (id, created as createBucket) reading everything bucket `source` reads
   * at this point of the chain, its version log included (fork.ts; keyspace.ts). Its settings
   * follow as setConfig. */
  | { op: 'forkBucket'; bucket: string; source: string; id: string; created: number }
  /**
   * Creates bucket `bucket` (new `id`, `created`) as a fork of `source` as it was at `at`:
   * its object index and version log are the runs named (written before the commit,
   * fork-at-time.ts; each list holds 0 or 1 run metadata).
   */
  | { op: 'forkBucketAt'; bucket: string; source: string; id: string; created: number; at: number; runs: Uint8Array[]; versionRuns: Uint8Array[] }
  /**
   * Drops version log entries of `bucket` (expiry.ts): a tombstone under each log key of
   * `keys` (version-id.ts logKey). `sizes[i]` is the byte length of the entry value dropped
   * under `keys[i]` (what it was when staged), so the history budget can be decremented on
   * apply without reading the log. Same length as `keys`; at most MAX_EXPIRE_KEYS.
   */
  | { op: 'expireVersions'; bucket: string; keys: string[]; sizes: number[] };

/** Log keys one expireVersions mutation may carry (expiry.ts batches are at most this). */
export const MAX_EXPIRE_KEYS = 1000;

export interface CommitRecord {
  seq: number;
  /** The previous commit, or the root this commit follows when it is the first after it. */
  parent: RecordRef;
  time: number;
  mutations: Mutation[];
  /**
   * Accounted history bytes of the repository after this commit (history-budget.ts); absent in
   * records written before budgets. Encoded, with each mutation's HistoryNote, in a trailing
   * section after the mutations.
   */
  historyBytes?: number;
}

/** Zigzag form of a signed integer, so a varint can carry it. */
const zigzag = (v: number) => (v >= 0 ? 2 * v : -2 * v - 1);
const unzigzag = (z: number) => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

const MAGIC = 0x31434d53; // "SMC1"
const OPS = [
  'put',
  'createBucket',
  'deleteBucket',
  'setConfig',
  'createUpload',
  'putPart',
  'endUpload',
  'beginUpload',
  'setPart',
  'closeUpload',
  'dropCompletion',
  'setKey',
  'putVersion',
  'rewriteVersion',
  'forkBucket',
  'forkBucketAt',
  'expireVersions',
] as const;

const writeUploadRef = (w: ByteWriter, u: UploadRef) => w.string(u.key).varint(u.initiated).string(u.uploadId);
const readUploadRef = (r: ByteReader): UploadRef => ({ key: r.string(), initiated: r.varint(), uploadId: r.string() });

export function hashRecord(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function writeRef(w: ByteWriter, ref: RecordRef): void {
  w.string(ref.key).varint(ref.offset).varint(ref.length).raw(Buffer.from(ref.hash, 'hex'));
}

export function readRef(r: ByteReader): RecordRef {
  return { key: r.string(), offset: r.varint(), length: r.varint(), hash: Buffer.from(r.raw(32)).toString('hex') };
}

export function encodeCommit(c: CommitRecord): Uint8Array {
  const w = new ByteWriter(256 + c.mutations.length * 64);
  w.u32(MAGIC).varint(c.seq);
  writeRef(w, c.parent);
  w.varint(c.time);
  // Bucket names are written once per record and referred to by index.
  const buckets = [...new Set(c.mutations.map((m) => m.bucket))];
  const index = new Map(buckets.map((b, i) => [b, i]));
  w.varint(buckets.length);
  for (const b of buckets) w.string(b);
  w.varint(c.mutations.length);
  for (const [i, m] of c.mutations.entries()) {
    w.u8(OPS.indexOf(m.op)).varint(index.get(m.bucket)!);
    switch (m.op) {
      case 'put':
        w.string(m.key).bytes(m.value);
        break;
      case 'createBucket':
        w.string(m.id).varint(m.created);
        break;
      case 'deleteBucket':
        break;
      case 'setConfig':
        w.string(m.name).u8(m.value ? 1 : 0);
        if (m.value) w.bytes(m.value);
        break;
      case 'createUpload':
        w.string(m.uploadId).bytes(m.record);
        break;
      case 'putPart':
        w.string(m.uploadId).varint(m.number).bytes(m.record);
        break;
      case 'endUpload':
        w.string(m.uploadId);
        break;
      case 'beginUpload':
        writeUploadRef(w, m).bytes(m.record);
        break;
      case 'setPart':
        writeUploadRef(w, m).varint(m.number).bytes(m.record);
        break;
      case 'closeUpload':
        writeUploadRef(w, m).u8(m.completion ? 1 : 0);
        if (m.completion) w.varint(m.completion.time).bytes(m.completion.record);
        break;
      case 'dropCompletion':
        writeUploadRef(w, m).varint(m.completed);
        break;
      case 'setKey':
        w.string(m.id).u8(m.record ? 1 : 0);
        if (m.record) w.bytes(m.record);
        break;
      case 'putVersion':
        if (m.seq !== c.seq || m.index !== i) throw new RangeError(`putVersion at (${m.seq}, ${m.index}) in commit ${c.seq} as mutation ${i}`);
        w.string(m.key).bytes(m.entry);
        break;
      case 'rewriteVersion':
        w.string(m.key).varint(m.seq).varint(m.index).bytes(m.entry);
        break;
      case 'forkBucket':
        w.string(m.source).string(m.id).varint(m.created);
        break;
      case 'forkBucketAt':
        w.string(m.source).string(m.id).varint(m.created).varint(m.at).varint(m.runs.length);
        for (const meta of m.runs) w.bytes(meta);
        w.varint(m.versionRuns.length);
        for (const meta of m.versionRuns) w.bytes(meta);
        break;
      case 'expireVersions':
        if (m.keys.length !== m.sizes.length || m.keys.length > MAX_EXPIRE_KEYS) throw new RangeError(`expireVersions with ${m.keys.length} keys, ${m.sizes.length} sizes`);
        w.varint(m.keys.length);
        for (const [j, k] of m.keys.entries()) w.string(k).varint(m.sizes[j]!);
        break;
    }
  }
  if (c.historyBytes !== undefined) {
    // History section: the total after the commit, then (index, delta, points) of each noted mutation.
    const noted = [...c.mutations.entries()].filter(([, m]) => m.historyDelta !== undefined || m.historyPoints !== undefined);
    w.varint(c.historyBytes).varint(noted.length);
    for (const [i, m] of noted) w.varint(i).varint(zigzag(m.historyDelta ?? 0)).varint(zigzag(m.historyPoints ?? 0));
  }
  return w.finish();
}

export function decodeCommit(bytes: Uint8Array, what = 'commit record'): CommitRecord {
  const r = new ByteReader(bytes, what);
  if (r.u32() !== MAGIC) throw new StoreError('Corrupt', `${what}: not a commit record`);
  const seq = r.varint();
  const parent = readRef(r);
  const time = r.varint();
  const nb = r.varint();
  if (nb > r.remaining) throw new StoreError('Corrupt', `${what}: ${nb} buckets cannot fit`);
  const buckets: string[] = [];
  for (let i = 0; i < nb; i++) buckets.push(r.string());
  const n = r.varint();
  if (n > r.remaining) throw new StoreError('Corrupt', `${what}: ${n} mutations cannot fit`);
  const mutations: Mutation[] = [];
  for (let i = 0; i < n; i++) {
    const op = OPS[r.u8()];
    const bucket = buckets[r.varint()];
    if (!op || bucket === undefined) throw new StoreError('Corrupt', `${what}: bad mutation ${i}`);
    switch (op) {
      case 'put':
        mutations.push({ op, bucket, key: r.string(), value: r.bytes().slice() });
        break;
      case 'createBucket':
        mutations.push({ op, bucket, id: r.string(), created: r.varint() });
        break;
      case 'deleteBucket':
        mutations.push({ op, bucket });
        break;
      case 'setConfig': {
        const name = r.string();
        const has = r.u8();
        mutations.push({ op, bucket, name, value: has ? r.bytes().slice() : null });
        break;
      }
      case 'createUpload':
        mutations.push({ op, bucket, uploadId: r.string(), record: r.bytes().slice() });
        break;
      case 'putPart':
        mutations.push({ op, bucket, uploadId: r.string(), number: r.varint(), record: r.bytes().slice() });
        break;
      case 'endUpload':
        mutations.push({ op, bucket, uploadId: r.string() });
        break;
      case 'beginUpload':
        mutations.push({ op, bucket, ...readUploadRef(r), record: r.bytes().slice() });
        break;
      case 'setPart':
        mutations.push({ op, bucket, ...readUploadRef(r), number: r.varint(), record: r.bytes().slice() });
        break;
      case 'closeUpload': {
        const m: Mutation = { op, bucket, ...readUploadRef(r) };
        const has = r.u8();
        if (has > 1) throw new StoreError('Corrupt', `${what}: bad mutation ${i}`);
        if (has) m.completion = { time: r.varint(), record: r.bytes().slice() };
        mutations.push(m);
        break;
      }
      case 'dropCompletion':
        mutations.push({ op, bucket, ...readUploadRef(r), completed: r.varint() });
        break;
      case 'setKey': {
        if (bucket !== '') throw new StoreError('Corrupt', `${what}: key mutation ${i} names a bucket`);
        const id = r.string();
        const has = r.u8();
        mutations.push({ op, bucket, id, record: has ? r.bytes().slice() : null });
        break;
      }
      case 'putVersion':
        mutations.push({ op, bucket, key: r.string(), seq, index: i, entry: r.bytes().slice() });
        break;
      case 'rewriteVersion':
        mutations.push({ op, bucket, key: r.string(), seq: r.varint(), index: r.varint(), entry: r.bytes().slice() });
        break;
      case 'forkBucket':
        mutations.push({ op, bucket, source: r.string(), id: r.string(), created: r.varint() });
        break;
      case 'forkBucketAt': {
        const source = r.string();
        const id = r.string();
        const created = r.varint();
        const at = r.varint();
        const metas = () => {
          const n = r.varint();
          if (n > 1) throw new StoreError('Corrupt', `${what}: fork mutation ${i} names ${n} runs`);
          return Array.from({ length: n }, () => r.bytes().slice());
        };
        const runs = metas();
        mutations.push({ op, bucket, source, id, created, at, runs, versionRuns: metas() });
        break;
      }
      case 'expireVersions': {
        const n = r.varint();
        if (n > MAX_EXPIRE_KEYS) throw new StoreError('Corrupt', `${what}: expiry mutation ${i} drops ${n} entries`);
        const keys: string[] = [];
        const sizes: number[] = [];
        for (let j = 0; j < n; j++) {
          keys.push(r.string());
          sizes.push(r.varint());
        }
        mutations.push({ op, bucket, keys, sizes });
        break;
      }
    }
  }
  const out: CommitRecord = { seq, parent, time, mutations };
  if (r.remaining > 0) {
    out.historyBytes = r.varint();
    const noted = r.varint();
    if (noted > mutations.length) throw new StoreError('Corrupt', `${what}: ${noted} history notes for ${mutations.length} mutations`);
    let last = -1;
    for (let j = 0; j < noted; j++) {
      const i = r.varint();
      if (i <= last || i >= mutations.length) throw new StoreError('Corrupt', `${what}: history note for mutation ${i}`);
      last = i;
      const m = mutations[i]!;
      const delta = unzigzag(r.varint());
      const points = unzigzag(r.varint());
      m.historyDelta = delta;
      if (points !== 0) m.historyPoints = points;
    }
  }
  r.end();
  return out;
}
