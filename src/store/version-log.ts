/**
 * @module A bucket's version log: every write of every object, in its own keyspace (overlay +
 * runs, flushed and compacted at checkpoints like the object index), and the format of its
 * entries.
 *
 * Keys are version-id.ts log keys (escaped object key + inverted position): a key's entries
 * sort newest first, keys in namespace order. Every write in every bucket is recorded, also
 * in buckets that never enabled versioning, with its commit time, so history can be read as
 * of a past time; the object namespace (key -> newest) stays what GET, HEAD and LIST read.
 *
 * Entry value (all integers varints):
 *
 *   u8 kind        0 = a version or delete marker (the record follows)
 *                  1 = an absence: an unversioned DELETE (the key stopped existing; no
 *                      record, nothing S3 shows)
 *   u8 flags       1 = null: the write is S3's `null` version of its key (written while
 *                      versioning was off or Suspended); absences are always null
 *                  2 = removed: permanently deleted (DELETE ?versionId=) at `removedAt`;
 *                      kept for reads as of an earlier time, never shown to S3
 *   time           commit time of the write, ms since the epoch
 *   [removedAt]    with flag 2: commit time of the removal, ms
 *   [record]       kind 0: the version record (records.ts encodeVersion) up to the end
 *
 * What S3 sees of a key (visibleEntries): its entries newest first, minus removed ones, and of
 * the entries flagged null only the newest — a later null write replaces the null version, as
 * S3 specifies, while the earlier one stays in the log as history (no entry is rewritten for
 * it: an overwrite costs one entry, O(1)). An absence hides the null version before it.
 *
 * Expiry (expiry.ts) drops entries no read inside the bucket's window can reach: it writes a
 * TOMBSTONE under their log keys (one byte 0, never a valid entry: an entry is at least kind,
 * flags and a time). Every reader of the log skips tombstones (isLogTombstone); a merge that
 * includes a keyspace's oldest run drops them, a partial merge keeps them (they shadow the
 * entry in older runs).
 */
import { SortedMap } from './index/sorted-map.js';
import type { SortedSource } from './index/merge.js';
import type { RunHandle } from './state.js';
import { keyspaceLookup, keyspaceSources, type FrozenLayer, type Keyspace } from './keyspace.js';
import { ByteReader, ByteWriter } from './binary.js';
import { decodeVersion, encodeVersion, type ObjectVersion } from './records.js';
import { StoreError } from './errors.js';

/** The value written under a dropped entry's log key (expiry.ts): records.ts TOMBSTONE. */
export const LOG_TOMBSTONE: Uint8Array = new Uint8Array([0]); // shared: never written into

/** Whether a version log value is a dropped entry's tombstone (not an entry). Pure. */
export function isLogTombstone(value: Uint8Array): boolean {
  return value.length === 1 && value[0] === 0;
}

export const ENTRY_VERSION = 0;
export const ENTRY_ABSENCE = 1;
const FLAG_NULL = 1;
const FLAG_REMOVED = 2;

/** One decoded log entry. */
export interface LogEntry {
  kind: 'version' | 'absence';
  /** S3's null version of its key (or an unversioned delete). */
  isNull: boolean;
  /** Commit time of the write (ms). */
  time: number;
  /** Commit time of its permanent removal (ms), when removed. */
  removedAt?: number;
  /** The version or delete marker (kind 'version' only). */
  record?: ObjectVersion;
}

/** Encodes a log entry; a version entry's record is encoded last (see recordTail). */
export function encodeEntry(e: LogEntry): Uint8Array {
  const w = new ByteWriter(e.record ? 160 : 16);
  const flags = (e.isNull ? FLAG_NULL : 0) | (e.removedAt !== undefined ? FLAG_REMOVED : 0);
  w.u8(e.kind === 'version' ? ENTRY_VERSION : ENTRY_ABSENCE).u8(flags).varint(e.time);
  if (e.removedAt !== undefined) w.varint(e.removedAt);
  const head = w.finish();
  if (e.kind === 'absence') {
    if (e.record) throw new RangeError('an absence carries no record');
    return head;
  }
  if (!e.record) throw new RangeError('a version entry needs its record');
  const rec = encodeVersion(e.record);
  const out = new Uint8Array(head.length + rec.length);
  out.set(head);
  out.set(rec, head.length);
  return out;
}

/** Decodes a log entry; StoreError 'Corrupt' on malformed bytes. */
export function decodeEntry(bytes: Uint8Array, what = 'version log entry'): LogEntry {
  const r = new ByteReader(bytes, what);
  const kind = r.u8();
  const flags = r.u8();
  if (kind > ENTRY_ABSENCE || flags & ~(FLAG_NULL | FLAG_REMOVED)) throw new StoreError('Corrupt', `${what}: kind ${kind} flags ${flags}`);
  const e: LogEntry = { kind: kind === ENTRY_VERSION ? 'version' : 'absence', isNull: (flags & FLAG_NULL) !== 0, time: r.varint() };
  if (flags & FLAG_REMOVED) e.removedAt = r.varint();
  if (kind === ENTRY_VERSION) {
    e.record = decodeVersion(r.raw(r.remaining), what);
  } else if (!e.isNull) {
    throw new StoreError('Corrupt', `${what}: an absence that is not null`);
  }
  r.end();
  return e;
}

/**
 * An entry without its record: kind, flags and times only (what a scan as of a past time
 * needs for the entries it steps over), decoded without copying or parsing the record.
 * Throws StoreError 'Corrupt' on malformed bytes.
 */
export function decodeEntryHeader(bytes: Uint8Array, what = 'version log entry'): Omit<LogEntry, 'record'> {
  const r = new ByteReader(bytes, what);
  const kind = r.u8();
  const flags = r.u8();
  if (kind > ENTRY_ABSENCE || flags & ~(FLAG_NULL | FLAG_REMOVED)) throw new StoreError('Corrupt', `${what}: kind ${kind} flags ${flags}`);
  const e: Omit<LogEntry, 'record'> = { kind: kind === ENTRY_VERSION ? 'version' : 'absence', isNull: (flags & FLAG_NULL) !== 0, time: r.varint() };
  if (flags & FLAG_REMOVED) e.removedAt = r.varint();
  return e;
}

/**
 * The namespace value (records.ts version list) a log entry makes current: the one-version
 * list of its record, or the tombstone for an absence. `alloc` gives the bytes of a record's
 * list (default: a new array; the state passes value-slab.ts slabAlloc). Reads `entry` only.
 */
export function namespaceValue(entry: Uint8Array, alloc: (n: number) => Uint8Array = (n) => new Uint8Array(n)): Uint8Array {
  if (entry[0] === ENTRY_ABSENCE) return new Uint8Array([0]);
  // The record is the tail after kind, flags, time (and removedAt): re-encode the header
  // length by decoding it (cheap varints), then frame the tail as a list of one.
  const r = new ByteReader(entry, 'version log entry');
  r.u8();
  const flags = r.u8();
  r.varint();
  if (flags & FLAG_REMOVED) r.varint();
  const rec = r.raw(r.remaining);
  const out = alloc(rec.length + 1);
  out[0] = 1;
  out.set(rec, 1);
  return out;
}

/** Whether S3 can see an entry at all (not removed); the null rule is applied per key. */
export function isLive(e: LogEntry): boolean {
  return e.removedAt === undefined;
}

/**
 * A bucket's version log in memory: overlay of writes since the last checkpoint, overlays a
 * fork froze (shared with the fork, keyspace.ts), and runs.
 */
export class VersionLog implements Keyspace {
  overlay = new SortedMap('versions overlay');
  /** Newest first. */
  frozen: FrozenLayer[] = [];
  /** Newest first; each opened on first read (runs.ts lazyRunHandle). */
  runs: RunHandle[] = [];

  /** The entry bytes under log key `k`, or undefined. Throws what reading a run throws. */
  lookup(k: string): Promise<Uint8Array | undefined> {
    return keyspaceLookup(this, k);
  }

  /** Sources for a merge, newest first. */
  sources(): SortedSource[] {
    return keyspaceSources(this);
  }
}
