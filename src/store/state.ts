/**
 * @module The repository's in-memory state: buckets (overlay + runs + settings, and their
 * uploads keyspace), and how a committed mutation changes it.
 *
 * Only `applyMutation` changes this state, and only for mutations of a commit the anchor
 * already names (or that recovery is replaying), so memory never runs ahead of storage.
 */
import { SortedMap } from './index/sorted-map.js';
import { slabAlloc, slabCopy } from './index/value-slab.js';
import type { SortedSource } from './index/merge.js';
import type { Mutation } from './commit.js';
import { StoreError } from './errors.js';
import { forkKeyspace, frozenBytes, keyspaceLookup, keyspaceSources, MAX_FROZEN_LAYERS, type FrozenLayer, type Keyspace } from './keyspace.js';
import { applyUploadMutation, UploadSpace } from './upload-space.js';
import { decodeUpload } from './uploads.js';
import type { UploadRef } from './upload-keys.js';
import { decodeKeyRecord, type KeyRecord } from './keys-record.js';
import { LOG_TOMBSTONE, namespaceValue, VersionLog } from './version-log.js';
import { logKey, parseLogKey } from './version-id.js';
import { runMetaKey } from './run-meta-key.js';
import { applyHistoryChange, historyChange, HistoryAccount } from './history-budget.js';

/** An open run: its encoded metadata (for roots) and its reader. */
export interface RunHandle {
  meta: Uint8Array;
  key: string;
  reader: SortedSource & { get(key: string): Promise<Uint8Array | undefined> };
}

/**
 * A bucket: its object namespace (a Keyspace, keyspace.ts), settings, uploads keyspace and
 * version log (a Keyspace too: both fork).
 */
export class BucketState implements Keyspace {
  readonly name: string;
  readonly id: string;
  readonly created: number;
  readonly configs = new Map<string, Uint8Array>();
  overlay = new SortedMap('overlay');
  /** Overlays frozen by a fork, shared with the fork (keyspace.ts). Newest first. */
  frozen: FrozenLayer[] = [];
  /** Newest first. */
  runs: RunHandle[] = [];
  /** Multipart uploads: in progress, their parts, completions, expiry queue. */
  readonly uploads = new UploadSpace();
  /** Every write of every key, newest first per key (version-log.ts). */
  readonly versions = new VersionLog();
  /** Accounted history bytes and entries of this bucket's version log (history-budget.ts). */
  historyBytes = 0;
  historyPoints = 0;

  constructor(name: string, id: string, created: number) {
    this.name = name;
    this.id = id;
    this.created = created;
  }

  /** The newest value for `key` (a version list, possibly a tombstone), or undefined. */
  lookup(key: string): Promise<Uint8Array | undefined> {
    return keyspaceLookup(this, key);
  }

  /** Sources for a merge, newest first. */
  sources(): SortedSource[] {
    return keyspaceSources(this);
  }
}

export class RepoState {
  readonly buckets = new Map<string, BucketState>();
  /**
   * Uploads of the legacy mutations (createUpload / putPart / endUpload name an upload by id
   * alone) by id, while a repository written before the uploads keyspace is being opened;
   * undefined otherwise (a legacy mutation is then corruption).
   */
  legacyUploads: Map<string, { bucket: string; ref: UploadRef }> | undefined;
  /** Called with a bucket's state once a committed deleteBucket dropped it. */
  onBucketDropped: ((b: BucketState) => void) | undefined;
  /** Access keys by id (keys-record.ts), repository-wide. */
  readonly keys = new Map<string, KeyRecord>();
  /**
   * Runs opened for `forkBucketAt` mutations not applied yet (fork-at-time.ts), by
   * runMetaKey: applying a mutation is synchronous, opening a run is not.
   */
  readonly preparedRuns = new Map<string, RunHandle>();
  /** Accounted history bytes, budget and refusals (history-budget.ts), kept by apply. */
  readonly history = new HistoryAccount();

  /** Accounted history bytes, whole repository (history-budget.ts). */
  get historyBytes(): number {
    return this.history.bytes;
  }

  /** Bytes held by every overlay and frozen layer, shared layers once (what a checkpoint would flush). */
  overlayBytes(): number {
    let n = 0;
    const seen = new Set<FrozenLayer>();
    for (const b of this.buckets.values()) {
      n += b.overlay.bytes + frozenBytes(b, seen) + b.uploads.overlay.bytes + frozenBytes(b.uploads, seen) + b.versions.overlay.bytes + frozenBytes(b.versions, seen);
    }
    return n;
  }

  /** Bytes held by the overlays that take writes (not frozen layers), all buckets. */
  liveOverlayBytes(): number {
    let n = 0;
    for (const b of this.buckets.values()) n += b.overlay.bytes + b.uploads.overlay.bytes + b.versions.overlay.bytes;
    return n;
  }

  /** Whether some keyspace has so many frozen layers (forks) that a checkpoint should flush them. */
  flushDue(): boolean {
    for (const b of this.buckets.values()) if (b.frozen.length > MAX_FROZEN_LAYERS || b.versions.frozen.length > MAX_FROZEN_LAYERS) return true;
    return false;
  }

  /** Multipart uploads in progress, all buckets. */
  uploadsInProgress(): number {
    let n = 0;
    for (const b of this.buckets.values()) n += b.uploads.count;
    return n;
  }

  /**
   * Applies one committed mutation, and its change to the history account. Throws StoreError
   * 'Corrupt' if it cannot apply.
   */
  apply(m: Mutation): void {
    const change = historyChange(this, m);
    this.#apply(m);
    applyHistoryChange(this, change);
  }

  #apply(m: Mutation): void {
    switch (m.op) {
      case 'put': {
        const b = this.#bucket(m.bucket);
        b.overlay.set(m.key, slabCopy(m.value));
        return;
      }
      case 'createBucket':
        if (this.buckets.has(m.bucket)) throw new StoreError('Corrupt', `commit creates existing bucket ${m.bucket}`);
        this.buckets.set(m.bucket, new BucketState(m.bucket, m.id, m.created));
        return;
      case 'forkBucket': {
        if (this.buckets.has(m.bucket)) throw new StoreError('Corrupt', `commit forks into existing bucket ${m.bucket}`);
        const src = this.#bucket(m.source);
        const b = new BucketState(m.bucket, m.id, m.created);
        // Every per-bucket keyspace that forks is forked here (uploads in progress do not).
        forkKeyspace(src, b);
        forkKeyspace(src.versions, b.versions);
        this.buckets.set(m.bucket, b);
        return;
      }
      case 'deleteBucket': {
        const b = this.#bucket(m.bucket);
        this.buckets.delete(m.bucket);
        this.onBucketDropped?.(b);
        return;
      }
      case 'setConfig': {
        const b = this.#bucket(m.bucket);
        if (m.value) b.configs.set(m.name, m.value);
        else b.configs.delete(m.name);
        return;
      }
      case 'beginUpload':
      case 'setPart':
      case 'closeUpload':
      case 'dropCompletion':
        applyUploadMutation(this.#bucket(m.bucket).uploads, m);
        return;
      case 'createUpload': {
        const rec = decodeUpload(m.record);
        const ref: UploadRef = { key: rec.key, initiated: rec.initiated, uploadId: m.uploadId };
        this.#legacy(m.uploadId, false);
        this.legacyUploads!.set(m.uploadId, { bucket: m.bucket, ref });
        applyUploadMutation(this.#bucket(m.bucket).uploads, { op: 'beginUpload', bucket: m.bucket, ...ref, record: m.record });
        return;
      }
      case 'putPart': {
        const ref = this.#legacy(m.uploadId, true)!;
        applyUploadMutation(this.#bucket(m.bucket).uploads, { op: 'setPart', bucket: m.bucket, ...ref, number: m.number, record: m.record });
        return;
      }
      case 'endUpload': {
        const ref = this.#legacy(m.uploadId, true)!;
        this.legacyUploads!.delete(m.uploadId);
        applyUploadMutation(this.#bucket(m.bucket).uploads, { op: 'closeUpload', bucket: m.bucket, ...ref });
        return;
      }
      case 'putVersion': {
        const b = this.#bucket(m.bucket);
        // Slab copies (value-slab.ts): kept until a checkpoint, so packed, not one malloc each.
        b.versions.overlay.set(logKey(m.key, m), slabCopy(m.entry));
        b.overlay.set(m.key, namespaceValue(m.entry, slabAlloc));
        return;
      }
      case 'forkBucketAt': {
        if (this.buckets.has(m.bucket)) throw new StoreError('Corrupt', `commit forks into existing bucket ${m.bucket}`);
        const b = new BucketState(m.bucket, m.id, m.created);
        const run = (meta: Uint8Array) => {
          const k = runMetaKey(meta);
          const h = this.preparedRuns.get(k);
          if (!h) throw new StoreError('Corrupt', `commit forks ${m.bucket} onto a run that was not opened`);
          this.preparedRuns.delete(k);
          return h;
        };
        b.runs = m.runs.map(run);
        b.versions.runs = m.versionRuns.map(run);
        this.buckets.set(m.bucket, b);
        return;
      }
      case 'rewriteVersion':
        this.#bucket(m.bucket).versions.overlay.set(logKey(m.key, m), slabCopy(m.entry));
        return;
      case 'expireVersions': {
        // Tombstones shadow the entries in older layers and runs (expiry.ts, version-log.ts).
        const overlay = this.#bucket(m.bucket).versions.overlay;
        for (const k of m.keys) {
          if (!parseLogKey(k)) throw new StoreError('Corrupt', `commit expires malformed version log key ${JSON.stringify(k)}`);
          overlay.set(k, LOG_TOMBSTONE);
        }
        return;
      }
      case 'setKey': {
        if (!m.record) {
          this.keys.delete(m.id);
          return;
        }
        const k = decodeKeyRecord(m.record, `key ${m.id}`);
        if (k.id !== m.id) throw new StoreError('Corrupt', `commit stores key ${k.id} under id ${m.id}`);
        this.keys.set(m.id, k);
        return;
      }
    }
  }

  /** The legacy upload `id` (must exist when `known`, must not otherwise); Corrupt if not. */
  #legacy(id: string, known: boolean): UploadRef | undefined {
    if (!this.legacyUploads) throw new StoreError('Corrupt', `legacy upload mutation for ${id} outside a legacy replay`);
    const u = this.legacyUploads.get(id);
    if (!!u !== known) throw new StoreError('Corrupt', `commit ${known ? 'refers to missing' : 'creates existing'} upload ${id}`);
    return u?.ref;
  }

  #bucket(name: string): BucketState {
    const b = this.buckets.get(name);
    if (!b) throw new StoreError('Corrupt', `commit refers to missing bucket ${name}`);
    return b;
  }
}
