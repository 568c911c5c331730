/**
 * @module The repository's in-memory state: buckets (overlay + runs + settings) and
 * uploads in progress, and how a committed mutation changes it.
 *
 * Only `applyMutation` changes this state, and only for mutations of a commit the anchor
 * already names (or that recovery is replaying), so memory never runs ahead of storage.
 */
import { SortedMap } from './index/sorted-map.js';
import type { SortedSource } from './index/merge.js';
import type { Mutation } from './commit.js';
import { StoreError } from './errors.js';
import { blobError } from './body-reader.js';
import { decodeKeyRecord, type KeyRecord } from './keys-record.js';

/** An open run: its encoded metadata (for roots) and its reader. */
export interface RunHandle {
  meta: Uint8Array;
  key: string;
  reader: SortedSource & { get(key: string): Promise<Uint8Array | undefined> };
}

export class BucketState {
  readonly name: string;
  readonly id: string;
  readonly created: number;
  readonly configs = new Map<string, Uint8Array>();
  overlay = new SortedMap('overlay');
  /** Newest first. */
  runs: RunHandle[] = [];

  constructor(name: string, id: string, created: number) {
    this.name = name;
    this.id = id;
    this.created = created;
  }

  /** The newest value for `key` (a version list, possibly a tombstone), or undefined. */
  async lookup(key: string): Promise<Uint8Array | undefined> {
    const hit = this.overlay.get(key);
    if (hit) return hit;
    for (const run of this.runs) {
      let v: Uint8Array | undefined;
      try {
        v = await run.reader.get(key);
      } catch (err) {
        throw blobError(err, run.key);
      }
      if (v) return v;
    }
    return undefined;
  }

  /** Sources for a merge, newest first. */
  sources(): SortedSource[] {
    return [this.overlay, ...this.runs.map((r) => r.reader)];
  }
}

export class UploadState {
  readonly bucket: string;
  readonly uploadId: string;
  readonly record: Uint8Array;
  readonly parts = new Map<number, Uint8Array>();

  constructor(bucket: string, uploadId: string, record: Uint8Array) {
    this.bucket = bucket;
    this.uploadId = uploadId;
    this.record = record;
  }
}

export class RepoState {
  readonly buckets = new Map<string, BucketState>();
  readonly uploads = new Map<string, UploadState>();
  /** Access keys by id (keys-record.ts), repository-wide. */
  readonly keys = new Map<string, KeyRecord>();

  /** Bytes held by every overlay (what a checkpoint would flush). */
  overlayBytes(): number {
    let n = 0;
    for (const b of this.buckets.values()) n += b.overlay.bytes;
    return n;
  }

  /** Applies one committed mutation. Throws StoreError 'Corrupt' if it cannot apply. */
  apply(m: Mutation): void {
    switch (m.op) {
      case 'put': {
        const b = this.#bucket(m.bucket);
        b.overlay.set(m.key, m.value);
        return;
      }
      case 'createBucket':
        if (this.buckets.has(m.bucket)) throw new StoreError('Corrupt', `commit creates existing bucket ${m.bucket}`);
        this.buckets.set(m.bucket, new BucketState(m.bucket, m.id, m.created));
        return;
      case 'deleteBucket':
        this.#bucket(m.bucket);
        this.buckets.delete(m.bucket);
        for (const [id, u] of this.uploads) if (u.bucket === m.bucket) this.uploads.delete(id);
        return;
      case 'setConfig': {
        const b = this.#bucket(m.bucket);
        if (m.value) b.configs.set(m.name, m.value);
        else b.configs.delete(m.name);
        return;
      }
      case 'createUpload':
        this.#bucket(m.bucket);
        this.uploads.set(m.uploadId, new UploadState(m.bucket, m.uploadId, m.record));
        return;
      case 'putPart':
        this.#upload(m.uploadId).parts.set(m.number, m.record);
        return;
      case 'endUpload':
        this.#upload(m.uploadId);
        this.uploads.delete(m.uploadId);
        return;
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

  #bucket(name: string): BucketState {
    const b = this.buckets.get(name);
    if (!b) throw new StoreError('Corrupt', `commit refers to missing bucket ${name}`);
    return b;
  }

  #upload(id: string): UploadState {
    const u = this.uploads.get(id);
    if (!u) throw new StoreError('Corrupt', `commit refers to missing upload ${id}`);
    return u;
  }
}
