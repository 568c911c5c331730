/**
 * @module Reading the version log: a key's entries newest first, what S3 sees of them, one
 * version by id, and the state of a key as of a past time (the point-in-time primitive).
 *
 * Every function takes the log's sources (newest first): `bucket.versions.sources()` for the
 * committed state, or `tx.logSources(bucket, key)` inside a transaction, which adds what the
 * batch staged. A key's entries are a range of the log (version-id.ts), so reading the newest
 * of them is one seek; reading one version by id is one seek to its exact log key.
 */
import type { Repository } from './repository.js';
import type { BucketState } from './state.js';
import { mergeSources, type SortedSource } from './index/merge.js';
import { compareKeys } from './index/compare.js';
import { decodeEntry, decodeEntryHeader, isLogTombstone, type LogEntry } from './version-log.js';
import {
  LEGACY_POSITION,
  logKey,
  logKeyPosition,
  logKeyEnd,
  logKeyStart,
  NULL_VERSION_ID,
  parseLogKey,
  parseVersionId,
  type Position,
  VERSION_ID_LENGTH,
} from './version-id.js';
import type { ObjectVersion } from './records.js';
import { StoreError } from './errors.js';
import { checkKey } from './validate.js';
import { blobError } from './body-reader.js';

/** One entry of a key's log, decoded. */
export interface KeyEntry {
  position: Position;
  entry: LogEntry;
  /** The entry's bytes (a copy: safe to keep). */
  bytes: Uint8Array;
}

/** A write as S3 sees it: a version or a delete marker with its S3 id. */
export interface VisibleVersion extends KeyEntry {
  /** `null` or the version id. */
  versionId: string;
  record: ObjectVersion;
  /** The newest visible write of its key (what GET without versionId reads). */
  isLatest: boolean;
}

/** The S3 id of a log entry: `null` for null writes, else the record's id. */
export function s3VersionId(e: LogEntry): string {
  return e.isNull || !e.record ? NULL_VERSION_ID : e.record.versionId;
}

/** The log position of a namespace record: its id, its `logId` (null versions), or (0, 0) for a pre-log object. */
export function positionOf(v: Pick<ObjectVersion, 'versionId' | 'logId'>): Position {
  return parseVersionId(v.logId ?? v.versionId) ?? LEGACY_POSITION;
}

const noSuchBucket = (bucket: string) =>
  new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });

/** The committed state of `bucket` (StoreError 'NoSuchBucket'). */
export function requireBucketState(repo: Repository, bucket: string): BucketState {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw noSuchBucket(bucket);
  return b;
}

/** The error S3 gives for a version id that cannot name a version (400). */
export function invalidVersionId(versionId: string): StoreError {
  return new StoreError('InvalidArgument', 'Invalid version id specified', { detail: { ArgumentName: 'versionId', ArgumentValue: versionId } });
}

export function noSuchVersion(key: string, versionId: string): StoreError {
  return new StoreError('NoSuchVersion', 'The specified version does not exist.', { detail: { Key: key, VersionId: versionId } });
}

/**
 * `key`'s log entries newest first, from `from` (a position of the key; default its newest).
 * Stops at the key's last entry. Throws StoreError 'Corrupt' for an entry that does not
 * decode, and what reading a run throws (blob named).
 */
export async function* keyEntries(sources: readonly SortedSource[], key: string, from?: Position): AsyncGenerator<KeyEntry> {
  const it = mergeSources(sources, { key: from ? logKey(key, from) : logKeyStart(key), inclusive: true });
  const end = logKeyEnd(key);
  try {
    for (;;) {
      let r;
      try {
        r = await it.next();
      } catch (err) {
        throw blobError(err, `version log of ${key}`);
      }
      if (r.done || compareKeys(r.value.key, end) >= 0) return;
      if (isLogTombstone(r.value.value)) continue; // dropped by expiry
      const parsed = parseLogKey(r.value.key);
      if (!parsed || parsed.key !== key) throw new StoreError('Corrupt', `version log key ${JSON.stringify(r.value.key)} is malformed`);
      const bytes = r.value.value.slice();
      yield { position: parsed.position, entry: decodeEntry(bytes, `version log entry of ${key}`), bytes };
    }
  } finally {
    await it.return();
  }
}

/**
 * Tracks S3 visibility along one key's entries, newest first: removed entries and absences
 * are never shown, and of the null writes only the newest can be.
 */
export class VisibilityFilter {
  #nullSeen = false;
  #latestSeen = false;

  /** Starts mid-key: whether a null write and a visible version were already passed. */
  constructor(nullSeen = false, latestSeen = false) {
    this.#nullSeen = nullSeen;
    this.#latestSeen = latestSeen;
  }

  /** The visible form of the next (older) entry, or undefined when S3 does not show it. */
  next(e: KeyEntry): VisibleVersion | undefined {
    if (e.entry.isNull) {
      if (this.#nullSeen) return undefined;
      this.#nullSeen = true;
    }
    if (e.entry.removedAt !== undefined || !e.entry.record) return undefined;
    const isLatest = !this.#latestSeen;
    this.#latestSeen = true;
    return Object.assign({}, e, { versionId: s3VersionId(e.entry), record: e.entry.record, isLatest });
  }
}

/** `key`'s visible versions and delete markers, newest first (see VisibilityFilter). */
export async function* visibleVersions(sources: readonly SortedSource[], key: string): AsyncGenerator<VisibleVersion> {
  const filter = new VisibilityFilter();
  for await (const e of keyEntries(sources, key)) {
    const v = filter.next(e);
    if (v) yield v;
  }
}

/**
 * The log entry S3 knows as `versionId` of `key` (a version or a delete marker), or undefined
 * when there is none: removed, replaced (an older null write), or never written. `null` is
 * the key's newest null write when visible; any other id is looked up at its position (one
 * seek) and must be that key's non-null write. Throws StoreError 'InvalidArgument' for an id
 * that cannot be one (invalidVersionId).
 */
export async function findVersion(sources: readonly SortedSource[], key: string, versionId: string): Promise<KeyEntry | undefined> {
  if (versionId === NULL_VERSION_ID) {
    for await (const e of keyEntries(sources, key)) {
      if (!e.entry.isNull) continue;
      return e.entry.removedAt === undefined && e.entry.record ? e : undefined;
    }
    return undefined;
  }
  const pos = parseVersionId(versionId);
  if (!pos) throw invalidVersionId(versionId);
  for await (const e of keyEntries(sources, key, pos)) {
    const found = e.position.seq === pos.seq && e.position.index === pos.index;
    return found && !e.entry.isNull && e.entry.removedAt === undefined && e.entry.record ? e : undefined;
  }
  return undefined;
}

/**
 * GetObject/HeadObject by version: the version or delete marker `versionId` of `key`, and
 * whether it is the key's latest. Throws StoreError 'NoSuchBucket', 'NoSuchVersion',
 * 'InvalidArgument' (malformed id), 'KeyTooLong'.
 */
export async function getVersion(repo: Repository, bucket: string, key: string, versionId: string): Promise<{ version: ObjectVersion; isLatest: boolean }> {
  checkKey(key);
  const b = requireBucketState(repo, bucket);
  const found = await findVersion(b.versions.sources(), key, versionId);
  if (!found?.entry.record) throw noSuchVersion(key, versionId);
  let isLatest = false;
  for await (const v of visibleVersions(b.versions.sources(), key)) {
    isLatest = v.position.seq === found.position.seq && v.position.index === found.position.index;
    break;
  }
  return { version: found.entry.record, isLatest };
}

/** What a key was at a past time (versionAt). */
export interface PastState {
  /** The write that was current then. */
  position: Position;
  entry: LogEntry;
  /** Its record; undefined for an unversioned delete. A delete marker has `deleteMarker`. */
  record?: ObjectVersion;
}

/**
 * Finds, along one key's entries newest first, the write that was the key's state at
 * `time` (ms): the newest entry committed at or before `time` that S3 still showed then —
 * not permanently removed by then, and, for a null write, not replaced by a newer null write
 * made by then (S3 replaces the null version; the replaced one is history, current only
 * until the replacement). An absence or a delete marker found this way means the key did
 * not exist at `time`. The same rule at `time` = now gives what the namespace holds.
 */
export class PastFilter {
  readonly time: number;
  #nullSeen = false;

  constructor(time: number) {
    this.time = time;
  }

  /** Whether `e` (the next, older, entry of the key) was its state at `time`. */
  decides(e: Pick<LogEntry, 'time' | 'isNull' | 'removedAt'>): boolean {
    if (e.time > this.time) return false;
    if (e.isNull) {
      if (this.#nullSeen) return false;
      this.#nullSeen = true;
    }
    return e.removedAt === undefined || e.removedAt > this.time;
  }
}

/**
 * The point-in-time primitive: the write of `key` that was its state at `time` (ms; see
 * PastFilter), or undefined when the key had never been written by then (or only by writes
 * gone by then). The key existed at `time` iff the result has a record that is not a delete
 * marker. Cost: one seek, then the key's entries newer than `time` are stepped over. Throws
 * StoreError 'NoSuchBucket' and what reading the log throws.
 */
export async function versionAt(repo: Repository, bucket: string, key: string, time: number): Promise<PastState | undefined> {
  const b = requireBucketState(repo, bucket);
  return stateAt(b.versions.sources(), key, time);
}

/**
 * versionAt over explicit log sources (committed: `bucket.versions.sources()`, or a
 * transaction's). The entries stepped over are decoded only as far as their times and flags.
 */
export async function stateAt(sources: readonly SortedSource[], key: string, time: number): Promise<PastState | undefined> {
  const filter = new PastFilter(time);
  const start = logKeyStart(key);
  const it = mergeSources(sources, { key: start, inclusive: true });
  const what = `version log entry of ${key}`;
  try {
    for (;;) {
      let e;
      try {
        e = it.nextSync();
        if (e === undefined) {
          const r = await it.next();
          e = r.done ? null : r.value;
        }
      } catch (err) {
        throw blobError(err, `version log of ${key}`);
      }
      if (e === null || e.key.length !== start.length + VERSION_ID_LENGTH || !e.key.startsWith(start)) return undefined;
      if (isLogTombstone(e.value)) continue; // dropped by expiry
      const head = decodeEntryHeader(e.value, what);
      if (!filter.decides(head)) continue;
      const position = logKeyPosition(e.key);
      if (!position) throw new StoreError('Corrupt', `version log key ${JSON.stringify(e.key)} is malformed`);
      const entry = decodeEntry(e.value.slice(), what);
      const out: PastState = { position, entry };
      if (entry.record) out.record = entry.record;
      return out;
    }
  } finally {
    await it.return();
  }
}
