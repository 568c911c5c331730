/**
 * @module Scanning a bucket's version log key by key for what each key was at a past time
 * and what it is now — what restore compares — and the sequence bound that lets such scans
 * skip a key's writes made after that time with one seek.
 *
 * The log holds every key's writes newest first (version-id.ts), so one merge walks the keys
 * in namespace order; for each, the entries are fed to a PastFilter for "now" and one for the
 * time until both have decided, and the rest of the key is skipped with one seek.
 */
import type { BucketState } from './state.js';
import type { LogEntry } from './version-log.js';
import { decodeEntry, decodeEntryHeader, isLogTombstone } from './version-log.js';
import { mergeSources } from './index/merge.js';
import { compareKeys } from './index/compare.js';
import { logKey, logKeyEnd, MAX_INDEX, parseLogKey, type Position } from './version-id.js';
import { escapePrefix } from './upload-keys.js';
import { PastFilter } from './versions-read.js';
import type { ObjectVersion } from './records.js';
import { StoreError } from './errors.js';
import { blobError } from './body-reader.js';

/**
 * What is known of the last commit at or before a time `at`, learned from the entries a scan
 * reads: every sequence >= `newer` was committed after `at`. Sound because commit times never
 * go back as sequences rise (a commit's time is at least its parent's). Sequence 0 (objects
 * written before the version log, at their own times) teaches nothing.
 */
export class SeqBound {
  readonly at: number;
  newer = Number.POSITIVE_INFINITY;

  constructor(at: number) {
    this.at = at;
  }

  learn(seq: number, time: number): void {
    if (seq > 0 && time > this.at && seq < this.newer) this.newer = seq;
  }

  /**
   * Where to seek in `key`'s entries to skip every one known to be later than `at`, or
   * undefined when the entry at `seq` (just read, later than `at`) is the earliest known.
   */
  skipFrom(key: string, seq: number): string | undefined {
    return seq > this.newer ? logKey(key, { seq: this.newer - 1, index: MAX_INDEX }) : undefined;
  }
}

/** A write that was (or is) a key's state: where it is in the log, and its record. */
export interface StateEntry {
  position: Position;
  entry: Omit<LogEntry, 'record'>;
  /** The version or delete marker; undefined for an absence (an unversioned delete). */
  record?: ObjectVersion;
}

/** One key as a scan sees it. */
export interface KeyPastAndNow {
  key: string;
  /** Its state at the time (undefined: not written by then, or only by writes gone by then). */
  past?: StateEntry;
  /** Its state now (undefined: nothing S3 shows). */
  now?: StateEntry;
}

/**
 * Every key of `bucket`'s log under `prefix` and after `after` (exclusive), in order, with
 * its state at `at` and now. Reads the committed log (a consistent view per key: entries
 * written meanwhile may or may not be seen, as for any listing). Throws StoreError 'Corrupt'
 * for a malformed log, and what reading a run throws (the blob named).
 */
export async function* pastAndNow(bucket: BucketState, at: number, opts: { prefix?: string; after?: string } = {}): AsyncGenerator<KeyPastAndNow> {
  const prefix = opts.prefix ?? '';
  let from = escapePrefix(prefix);
  if (opts.after !== undefined && compareKeys(logKeyEnd(opts.after), from) > 0) from = logKeyEnd(opts.after);
  const it = mergeSources(bucket.versions.sources(), { key: from, inclusive: true });
  const bound = new SeqBound(at);
  let cur: { key: string; pastF: PastFilter; nowF: PastFilter; out: KeyPastAndNow; nowDone: boolean; pastDone: boolean } | undefined;
  try {
    for (;;) {
      let r;
      try {
        r = await it.next();
      } catch (err) {
        throw blobError(err, `bucket ${bucket.name} version log`);
      }
      if (r.done) break;
      if (isLogTombstone(r.value.value)) continue; // dropped by expiry
      const parsed = parseLogKey(r.value.key);
      if (!parsed) throw new StoreError('Corrupt', `bucket ${bucket.name}: version log key ${JSON.stringify(r.value.key)} is malformed`);
      const { key, position } = parsed;
      if (!key.startsWith(prefix)) {
        if (compareKeys(key, prefix) > 0) break;
        continue;
      }
      if (cur?.key !== key) {
        if (cur) yield cur.out;
        cur = { key, pastF: new PastFilter(at), nowF: new PastFilter(Number.POSITIVE_INFINITY), out: { key }, nowDone: false, pastDone: false };
      }
      const what = `version log entry of ${bucket.name}/${key}`;
      const head = decodeEntryHeader(r.value.value, what);
      bound.learn(position.seq, head.time);
      const state = (): StateEntry => {
        const s: StateEntry = { position, entry: head };
        if (head.kind === 'version') s.record = decodeEntry(r.value.value, what).record!;
        return s;
      };
      if (!cur.nowDone && cur.nowF.decides(head)) {
        cur.nowDone = true;
        const s = state();
        // Nothing S3 shows now unless a version or a marker (an absence is no object).
        if (s.record) cur.out.now = s;
      }
      if (!cur.pastDone && cur.pastF.decides(head)) {
        cur.pastDone = true;
        const s = state();
        if (s.record) cur.out.past = s;
      }
      if (cur.pastDone && cur.nowDone) {
        it.seek(logKeyEnd(key), true);
        continue;
      }
      const skip = cur.nowDone && head.time > at ? bound.skipFrom(key, position.seq) : undefined;
      if (skip) it.seek(skip, true);
    }
    if (cur) yield cur.out;
  } finally {
    await it.return();
  }
}
