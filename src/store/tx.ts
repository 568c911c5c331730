/**
 * @module Batches and transactions of the group commit.
 *
 * A batch gathers the operations that will share one commit blob. Each operation runs in
 * its own transaction: it reads through the batch (seeing what earlier operations of the
 * same batch staged), stages mutations and bodies, and is either merged into the batch or
 * discarded when it throws (e.g. a failed precondition) — its bodies are the batch's last
 * entries, so discarding them is a truncation.
 */
import { ENTRY_HEADER_SIZE, PACK_HEADER_SIZE, tagOf } from '../pack/stream-writer.js';
import { randomIdBytes } from '../pack/random-pool.js';
import type { Mutation } from './commit.js';
import type { BucketState, RepoState, RunHandle } from './state.js';
import { runMetaKey } from './run-meta-key.js';
import type { Location } from './records.js';
import type { KeyRecord } from './keys-record.js';
import { StoreError } from './errors.js';
import { isGone, type UploadRef } from './upload-keys.js';
import { uploadCountDelta, uploadWrites, type UploadMutation } from './upload-space.js';
import { SortedMap } from './index/sorted-map.js';
import type { SortedSource } from './index/merge.js';
import { logKey, parseLogKey, type Position } from './version-id.js';
import { ENTRY_ABSENCE, LOG_TOMBSTONE, namespaceValue } from './version-log.js';
import { dropLogEntryBytes, logEntryBytes } from './history-budget.js';

const stageKey = (bucket: string, key: string) => `${bucket}\u0000${key}`;
/** Version-log entry flag byte (version-log.ts): the entry was removed. */
const FLAG_REMOVED = 2;

export class Batch {
  readonly seq: number;
  readonly blob: string;
  readonly packId: Uint8Array;
  readonly tag: number;
  readonly time: number;
  readonly bodies: Uint8Array[] = [];
  readonly mutations: Mutation[] = [];
  /** Offset the next body entry will have in the commit blob (or log segment, after `base`). */
  nextOffset: number;
  bodyBytes = 0;
  readonly staged = new Map<string, Uint8Array>();
  /** Buckets created (their state) or deleted (null) by this batch. */
  readonly buckets = new Map<string, { id: string; created: number } | null>();
  /**
   * Uploads keyspace writes staged (bucket id NUL key -> value; an empty value deletes). By
   * id, so a bucket deleted and created again in one batch does not see its predecessor's.
   */
  readonly uploadStaged = new Map<string, Uint8Array>();
  /** Change in the number of uploads in progress, per bucket id. */
  readonly uploadDelta = new Map<string, number>();
  /** Bucket configurations set (value) or removed (null), by stageKey(bucket, name). */
  readonly configs = new Map<string, Uint8Array | null>();
  /** Access keys created or replaced (record) or deleted (null) by this batch. */
  readonly keys = new Map<string, KeyRecord | null>();
  /**
   * History bytes (history-budget.ts): the committed total this batch is staged on (set by its
   * first transaction: the batch in flight's total after, else the committed total), the change
   * its mutations make, and per bucket name the change relative to what the bucket held before
   * this batch, or (for a bucket created, forked or deleted here) its bytes since then.
   */
  historyBase: number | undefined;
  historyDelta = 0;
  readonly bucketHistory = new Map<string, number>();
  /** Version log entries staged, by stageKey(bucket id, object key), then log key. */
  readonly logStaged = new Map<string, Map<string, Uint8Array>>();
  /**
   * The batch in flight before this one (pipelined commit): its staged mutations are not
   * applied yet, so transactions here read through them. Cleared once it is durable.
   */
  prev: Batch | undefined;
  /**
   * Set by the commit loop in the same synchronous step that applies this batch's mutations to
   * the state. From then on the state holds them: a batch staged on top of this one may still
   * read values through it (the same values), but its summed reads (a bucket's history bytes,
   * uploads in progress) skip it, or they would count its changes twice.
   */
  applied = false;
  /**
   * Holds one operation run with Repository.run's `alone` (a fork): staged with nothing in
   * flight before it and nothing after it in the batch, and no batch is staged on top of it
   * until it is applied — so it reads, and its successors read, committed state only.
   */
  alone = false;

  /**
   * `base`: where the batch's pack image starts in `blob` — 0 for a commit blob, the frame's
   * payload offset in a commit log segment (commit-log/frame.ts).
   */
  constructor(seq: number, blob: string, time: number, prev?: Batch, base = 0) {
    this.seq = seq;
    this.blob = blob;
    this.nextOffset = base + PACK_HEADER_SIZE;
    this.time = time;
    this.prev = prev;
    this.packId = randomIdBytes(12);
    this.tag = tagOf(this.packId);
  }

  /** The repository's accounted history bytes once this batch is applied (its commit record's). */
  get historyAfter(): number {
    return (this.historyBase ?? 0) + this.historyDelta;
  }
}

/** What a transaction can see of a bucket. */
export interface BucketView {
  name: string;
  id: string;
  created: number;
  /** The committed state, absent for a bucket created in this batch. */
  state?: BucketState;
}

export class Tx {
  readonly #repo: RepoState;
  readonly #batch: Batch;
  readonly #mark: { bodies: number; mutations: number; offset: number; bodyBytes: number };
  readonly #undo: (() => void)[] = [];

  /**
   * The batch in flight this one is staged on, while its mutations are not applied yet; once
   * applied (Batch.applied) the state holds them. Reads of values may go on reading through
   * `prev` (its staged values are what the state now holds); summed reads (historyOf,
   * uploadsInProgress, the batch's history base) must use this, or they count it twice.
   */
  get #unappliedPrev(): Batch | undefined {
    const p = this.#batch.prev;
    return p && !p.applied ? p : undefined;
  }

  constructor(repo: RepoState, batch: Batch) {
    this.#repo = repo;
    this.#batch = batch;
    this.#mark = { bodies: batch.bodies.length, mutations: batch.mutations.length, offset: batch.nextOffset, bodyBytes: batch.bodyBytes };
    batch.historyBase ??= this.#unappliedPrev ? this.#unappliedPrev.historyAfter : repo.history.bytes;
  }

  /** Accounted history bytes of bucket `name` as this transaction sees it (staged changes included). */
  historyOf(name: string): number {
    let n = 0;
    for (const b of [this.#batch, this.#unappliedPrev]) {
      if (!b) continue;
      n += b.bucketHistory.get(name) ?? 0;
      if (b.buckets.has(name)) return n; // created, forked or deleted in that batch: nothing older applies
    }
    return n + (this.#repo.buckets.get(name)?.historyBytes ?? 0);
  }

  /** Repository history bytes once this batch applies as staged so far. */
  get historyAfter(): number {
    return this.#batch.historyAfter;
  }

  /**
   * Records a change of `delta` history bytes in `bucket` made by the mutation about to be
   * staged (history-budget.ts), after checking it fits: a growth that would take the total
   * after this batch past the budget throws StoreError 'HistoryBudgetFull' and records nothing,
   * unless `exempt` (changes that only make history expirable). `reset`: the bucket is created,
   * forked or deleted by this mutation, and `delta` is its bytes from here on.
   */
  noteHistory(bucket: string, delta: number, opts: { exempt?: boolean; reset?: boolean } = {}): void {
    const b = this.#batch;
    const account = this.#repo.history;
    const after = b.historyAfter;
    const change = opts.reset ? delta - this.historyOf(bucket) : delta;
    if (change > 0 && !opts.exempt && after + change > account.limit) throw account.fullError(after, change);
    const had = b.bucketHistory.has(bucket);
    const prevBucket = b.bucketHistory.get(bucket);
    const prevDelta = b.historyDelta;
    b.bucketHistory.set(bucket, opts.reset ? delta : (prevBucket ?? 0) + delta);
    b.historyDelta += change;
    this.#undo.push(() => {
      b.historyDelta = prevDelta;
      if (had) b.bucketHistory.set(bucket, prevBucket!);
      else b.bucketHistory.delete(bucket);
    });
  }

  get time(): number {
    return this.#batch.time;
  }

  get seq(): number {
    return this.#batch.seq;
  }

  /** Number of operations' worth of bytes staged in the batch so far. */
  get batchBytes(): number {
    return this.#batch.bodyBytes;
  }

  bucket(name: string): BucketView | undefined {
    const staged = this.#batch.buckets.has(name) ? this.#batch.buckets.get(name) : this.#batch.prev?.buckets.get(name);
    if (staged === null) return undefined;
    if (staged) return { name, id: staged.id, created: staged.created };
    const s = this.#repo.buckets.get(name);
    return s ? { name, id: s.id, created: s.created, state: s } : undefined;
  }

  /** Like bucket(), but throws StoreError 'NoSuchBucket'. */
  requireBucket(name: string): BucketView {
    const b = this.bucket(name);
    if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: name } });
    return b;
  }

  /** Bucket names visible to this transaction, unsorted. */
  bucketNames(): string[] {
    const names = new Set(this.#repo.buckets.keys());
    for (const b of [this.#batch.prev, this.#batch]) for (const [n, v] of b?.buckets ?? []) v ? names.add(n) : names.delete(n);
    return [...names];
  }

  /** The newest value of `key`: staged in this batch, else committed. */
  async get(bucket: string, key: string): Promise<Uint8Array | undefined> {
    const sk = stageKey(bucket, key);
    const staged = this.#batch.staged.get(sk) ?? this.#batch.prev?.staged.get(sk);
    if (staged) return staged;
    const view = this.bucket(bucket);
    return view?.state ? view.state.lookup(key) : undefined;
  }

  put(bucket: string, key: string, value: Uint8Array): void {
    const sk = stageKey(bucket, key);
    const prev = this.#batch.staged.get(sk);
    this.#batch.staged.set(sk, value);
    this.#undo.push(() => (prev ? this.#batch.staged.set(sk, prev) : this.#batch.staged.delete(sk)));
    this.#batch.mutations.push({ op: 'put', bucket, key, value });
  }

  /** The position the next staged write will have: this batch's sequence, the next mutation index. */
  nextPosition(): Position {
    return { seq: this.#batch.seq, index: this.#batch.mutations.length };
  }

  /**
   * Stages a new write of `key` (version-log.ts `entry`) at nextPosition(): appended to the
   * version log and made the key's current state. Returns the position. The caller built
   * `entry` for that position (its record's id); StoreError 'NoSuchBucket' if the bucket is gone.
   */
  putVersion(bucket: string, key: string, entry: Uint8Array): Position {
    const pos = this.nextPosition();
    const id = this.requireBucket(bucket).id;
    // An absence (unversioned DELETE of an existing key) only makes history expirable.
    this.noteHistory(bucket, logEntryBytes(logKey(key, pos), entry), { exempt: entry[0] === ENTRY_ABSENCE });
    const sk = stageKey(bucket, key);
    const prev = this.#batch.staged.get(sk);
    this.#batch.staged.set(sk, namespaceValue(entry));
    this.#undo.push(() => (prev ? this.#batch.staged.set(sk, prev) : this.#batch.staged.delete(sk)));
    this.#stageLog(id, key, logKey(key, pos), entry);
    this.#batch.mutations.push({ op: 'putVersion', bucket, key, seq: pos.seq, index: pos.index, entry });
    return pos;
  }

  /**
   * Stages replacing the version log entry of `key` at `pos`, whose bytes were `replaced`, by
   * `entry` (the namespace is not touched). A growth past the history budget throws StoreError
   * 'HistoryBudgetFull', except a removal (the entry gains the removed flag), which only makes
   * history expirable, and a `relocation` (GC re-pointing a body), which adds no retained point.
   */
  rewriteVersion(bucket: string, key: string, pos: Position, entry: Uint8Array, replaced: Uint8Array, opts: { relocation?: boolean } = {}): void {
    const id = this.requireBucket(bucket).id;
    const historyDelta = entry.length - replaced.length;
    const removal = (entry[1]! & FLAG_REMOVED) !== 0 && (replaced[1]! & FLAG_REMOVED) === 0;
    this.noteHistory(bucket, historyDelta, { exempt: removal || opts.relocation === true });
    this.#stageLog(id, key, logKey(key, pos), entry);
    this.#batch.mutations.push({ op: 'rewriteVersion', bucket, key, seq: pos.seq, index: pos.index, entry, historyDelta });
  }

  /**
   * Stages dropping the version log entries under `keys` (log keys) of `bucket`: tombstones that
   * later reads of this batch see too (expiry.ts; commit.ts 'expireVersions'). `sizes` are the
   * dropped entries' byte lengths. The namespace is not touched. Throws StoreError
   * 'NoSuchBucket', and RangeError for a malformed log key.
   */
  expireVersions(bucket: string, keys: string[], sizes: number[]): void {
    const id = this.requireBucket(bucket).id;
    // Drops free room: recorded in the batch's history total, never refused (history-budget.ts).
    dropLogEntryBytes(this, bucket, keys.map((k, i) => [k, sizes[i]!] as const));
    for (const k of keys) {
      const parsed = parseLogKey(k);
      if (!parsed) throw new RangeError(`not a version log key: ${JSON.stringify(k)}`);
      this.#stageLog(id, parsed.key, k, LOG_TOMBSTONE);
    }
    this.#batch.mutations.push({ op: 'expireVersions', bucket, keys, sizes });
  }

  #stageLog(bucketId: string, key: string, k: string, entry: Uint8Array): void {
    const b = this.#batch;
    const sk = stageKey(bucketId, key);
    let m = b.logStaged.get(sk);
    if (!m) b.logStaged.set(sk, (m = new Map()));
    const map = m;
    const had = map.has(k);
    const prev = map.get(k);
    map.set(k, entry);
    this.#undo.push(() => (had ? map.set(k, prev!) : map.delete(k)));
  }

  /**
   * Sources of `key`'s version log entries as this transaction sees them, newest first: what
   * this batch and the one in flight staged (as one map), then the committed log. Empty for a
   * missing bucket. The caller merges them (mergeSources) from logKeyStart(key).
   */
  logSources(bucket: string, key: string): SortedSource[] {
    const view = this.bucket(bucket);
    if (!view) return [];
    const staged = new SortedMap('staged versions');
    const sk = stageKey(view.id, key);
    for (const b of [this.#batch.prev, this.#batch]) for (const [k, v] of b?.logStaged.get(sk) ?? []) staged.set(k, v);
    return view.state ? [staged, ...view.state.versions.sources()] : [staged];
  }

  /**
   * The version log value under log key `k` of `bucket` (`key` is its object key) as this
   * transaction sees it: staged in this batch or the one in flight, else committed; a
   * tombstone included; undefined when absent or the bucket is not visible.
   */
  async logLookup(bucket: string, key: string, k: string): Promise<Uint8Array | undefined> {
    const view = this.bucket(bucket);
    if (!view) return undefined;
    const sk = stageKey(view.id, key);
    for (const b of [this.#batch, this.#batch.prev]) {
      const v = b?.logStaged.get(sk)?.get(k);
      if (v) return v;
    }
    return view.state?.versions.lookup(k);
  }

  /** Adds a body to the commit blob and returns where it will be. */
  addBody(body: Uint8Array): Location {
    const b = this.#batch;
    const loc: Location = { kind: 'pack', blob: b.blob, offset: b.nextOffset, length: body.length, tag: b.tag, index: b.bodies.length };
    b.bodies.push(body);
    b.nextOffset += ENTRY_HEADER_SIZE + body.length;
    b.bodyBytes += body.length;
    return loc;
  }

  createBucket(name: string, id: string, created: number): void {
    this.noteHistory(name, 0, { reset: true });
    const prev = this.#batch.buckets.get(name);
    this.#batch.buckets.set(name, { id, created });
    this.#undo.push(() => (prev === undefined ? this.#batch.buckets.delete(name) : this.#batch.buckets.set(name, prev)));
    this.#batch.mutations.push({ op: 'createBucket', bucket: name, id, created });
    this.#dropStagedConfigs(name);
  }

  /**
   * Stages bucket `name` (new `id`, `created`) as a fork of the committed bucket `source`:
   * once applied it reads everything `source` reads then (state.ts, keyspace.ts). Only in a
   * batch of its own (Repository.run `alone`): throws Error otherwise, since staged writes
   * to `source` in this batch or the one in flight would be invisible to the fork.
   */
  forkBucket(name: string, source: string, id: string, created: number): void {
    const b = this.#batch;
    if (!b.alone || b.prev || this.#mark.mutations > 0 || b.buckets.size > 0) {
      throw new Error('a fork must run alone in its batch (Repository.run with alone)');
    }
    // A fork counts its own log: it adds the source's bytes (history-budget.ts).
    this.noteHistory(name, this.historyOf(source), { reset: true });
    b.buckets.set(name, { id, created });
    this.#undo.push(() => b.buckets.delete(name));
    b.mutations.push({ op: 'forkBucket', bucket: name, source, id, created });
  }

  /**
   * Stages bucket `name` as a fork of `source` as it was at `at`, onto the runs written for it
   * (fork-at-time.ts prepareForkAt): registered in the state's preparedRuns for the commit's
   * apply (and unregistered if this transaction is discarded).
   */
  forkBucketAt(name: string, source: string, p: { id: string; at: number; runs: RunHandle[]; versionRuns: RunHandle[]; historyBytes: number }, created: number): void {
    this.noteHistory(name, p.historyBytes, { reset: true });
    const prev = this.#batch.buckets.get(name);
    this.#batch.buckets.set(name, { id: p.id, created });
    this.#undo.push(() => (prev === undefined ? this.#batch.buckets.delete(name) : this.#batch.buckets.set(name, prev)));
    for (const h of [...p.runs, ...p.versionRuns]) {
      const k = runMetaKey(h.meta);
      this.#repo.preparedRuns.set(k, h);
      this.#undo.push(() => this.#repo.preparedRuns.delete(k));
    }
    this.#batch.mutations.push({ op: 'forkBucketAt', bucket: name, source, id: p.id, created, at: p.at, runs: p.runs.map((h) => h.meta), versionRuns: p.versionRuns.map((h) => h.meta), historyDelta: p.historyBytes });
    this.#dropStagedConfigs(name);
  }

  deleteBucket(name: string): void {
    this.noteHistory(name, 0, { reset: true });
    const prev = this.#batch.buckets.get(name);
    this.#batch.buckets.set(name, null);
    this.#undo.push(() => (prev === undefined ? this.#batch.buckets.delete(name) : this.#batch.buckets.set(name, prev)));
    this.#batch.mutations.push({ op: 'deleteBucket', bucket: name });
    this.#dropStagedConfigs(name);
  }

  /** A bucket created or deleted in this batch keeps none of the configurations staged before. */
  #dropStagedConfigs(bucket: string): void {
    const prefix = `${bucket}\u0000`;
    for (const [k, v] of this.#batch.configs) {
      if (!k.startsWith(prefix)) continue;
      this.#batch.configs.delete(k);
      this.#undo.push(() => this.#batch.configs.set(k, v));
    }
  }

  setConfig(bucket: string, name: string, value: Uint8Array | null): void {
    const sk = stageKey(bucket, name);
    const had = this.#batch.configs.has(sk);
    const prev = this.#batch.configs.get(sk);
    this.#batch.configs.set(sk, value);
    this.#undo.push(() => (had ? this.#batch.configs.set(sk, prev!) : this.#batch.configs.delete(sk)));
    this.#batch.mutations.push({ op: 'setConfig', bucket, name, value });
  }

  /**
   * The newest value of a bucket configuration: staged in this batch (or the one in flight),
   * else committed; undefined when unset or the bucket is not visible.
   */
  config(bucket: string, name: string): Uint8Array | undefined {
    const view = this.bucket(bucket);
    if (!view) return undefined;
    const sk = stageKey(bucket, name);
    for (const b of [this.#batch, this.#batch.prev]) {
      if (b?.configs.has(sk)) return b.configs.get(sk) ?? undefined;
      if (b?.buckets.has(bucket)) return undefined; // (re)created in that batch: nothing older applies
    }
    return view.state?.configs.get(name);
  }

  /** An access key as this transaction sees it (staged, else committed), or undefined. */
  key(id: string): KeyRecord | undefined {
    for (const b of [this.#batch, this.#batch.prev]) if (b?.keys.has(id)) return b.keys.get(id) ?? undefined;
    return this.#repo.keys.get(id);
  }

  /** Every access key this transaction sees, unsorted. */
  keyRecords(): KeyRecord[] {
    const out = new Map(this.#repo.keys);
    for (const b of [this.#batch.prev, this.#batch]) for (const [id, k] of b?.keys ?? []) k ? out.set(id, k) : out.delete(id);
    return [...out.values()];
  }

  /** Stages creating/replacing (`record`, encoded as `bytes`) or deleting (null) access key `id`. */
  setKey(id: string, record: KeyRecord | null, bytes: Uint8Array | null): void {
    const had = this.#batch.keys.has(id);
    const prev = this.#batch.keys.get(id);
    this.#batch.keys.set(id, record);
    this.#undo.push(() => (had ? this.#batch.keys.set(id, prev!) : this.#batch.keys.delete(id)));
    this.#batch.mutations.push({ op: 'setKey', bucket: '', id, record: bytes });
  }

  /** Staged puts of this batch under `bucket` (for emptiness checks). */
  stagedKeys(bucket: string): [string, Uint8Array][] {
    const prefix = `${bucket}\u0000`;
    const out = new Map<string, Uint8Array>();
    for (const b of [this.#batch.prev, this.#batch]) {
      for (const [k, v] of b?.staged ?? []) if (k.startsWith(prefix)) out.set(k.slice(prefix.length), v);
    }
    return [...out];
  }

  /**
   * The uploads keyspace value under `key` of `bucket`: staged in this batch (or the one in
   * flight before it), else committed; undefined when absent or deleted.
   */
  async uploadGet(bucket: string, key: string): Promise<Uint8Array | undefined> {
    const view = this.bucket(bucket);
    if (!view) return undefined;
    const sk = stageKey(view.id, key);
    const staged = this.#batch.uploadStaged.get(sk) ?? this.#batch.prev?.uploadStaged.get(sk);
    if (staged) return isGone(staged) ? undefined : staged;
    return view.state ? view.state.uploads.lookup(key) : undefined;
  }

  /** Uploads in progress in `bucket` as this transaction sees them (0 for a missing bucket). */
  uploadsInProgress(bucket: string): number {
    const view = this.bucket(bucket);
    if (!view) return 0;
    // The committed count, when the committed bucket is this one (not one created since).
    const committed = this.#repo.buckets.get(bucket);
    let n = committed?.id === view.id ? committed.uploads.count : 0;
    for (const b of [this.#unappliedPrev, this.#batch]) n += b?.uploadDelta.get(view.id) ?? 0;
    return n;
  }

  /** Stages a new upload in progress (its record and its expiry queue entry). */
  beginUpload(bucket: string, u: UploadRef, record: Uint8Array): void {
    this.#stageUpload({ op: 'beginUpload', bucket, key: u.key, initiated: u.initiated, uploadId: u.uploadId, record });
  }

  /** Stages part `number` of an upload (replacing any earlier part of that number). */
  setPart(bucket: string, u: UploadRef, number: number, record: Uint8Array): void {
    this.#stageUpload({ op: 'setPart', bucket, key: u.key, initiated: u.initiated, uploadId: u.uploadId, number, record });
  }

  /** Stages the end of an upload: aborted (no completion) or completed (leaving `completion`). */
  closeUpload(bucket: string, u: UploadRef, completion?: { time: number; record: Uint8Array }): void {
    const m: UploadMutation = { op: 'closeUpload', bucket, key: u.key, initiated: u.initiated, uploadId: u.uploadId };
    if (completion) m.completion = completion;
    this.#stageUpload(m);
  }

  /** Stages the removal of a completion record written at `completed`. */
  dropCompletion(bucket: string, u: UploadRef, completed: number): void {
    this.#stageUpload({ op: 'dropCompletion', bucket, key: u.key, initiated: u.initiated, uploadId: u.uploadId, completed });
  }

  /** Stages `m`; StoreError 'NoSuchBucket' if its bucket is gone (it could not be applied). */
  #stageUpload(m: UploadMutation): void {
    const b = this.#batch;
    const id = this.requireBucket(m.bucket).id;
    for (const [key, value] of uploadWrites(m)) {
      const sk = stageKey(id, key);
      const prev = b.uploadStaged.get(sk);
      b.uploadStaged.set(sk, value);
      this.#undo.push(() => (prev ? b.uploadStaged.set(sk, prev) : b.uploadStaged.delete(sk)));
    }
    const delta = uploadCountDelta(m);
    if (delta) {
      const prev = b.uploadDelta.get(id) ?? 0;
      b.uploadDelta.set(id, prev + delta);
      this.#undo.push(() => b.uploadDelta.set(id, prev));
    }
    b.mutations.push(m);
  }

  /** Undoes everything this transaction staged (its operation failed). */
  discard(): void {
    const b = this.#batch;
    b.bodies.length = this.#mark.bodies;
    b.mutations.length = this.#mark.mutations;
    b.nextOffset = this.#mark.offset;
    b.bodyBytes = this.#mark.bodyBytes;
    for (const undo of this.#undo.reverse()) undo();
  }
}
