/**
 * @module The reference model of the model-based history test: S3 versioning as AWS documents
 * it (the user guide's "Using versioning in S3 buckets", "Working with delete markers",
 * "Deleting objects from versioning-suspended buckets", and the API reference of PutObject,
 * CopyObject, DeleteObject, DeleteObjects, GetObject, ListObjectVersions), written from those
 * documents and not from Strata's code: plain arrays, no positions, no logs.
 *
 *   - A bucket is unversioned until PutBucketVersioning first sets Enabled or Suspended, and
 *     never unversioned again.
 *   - Enabled: every PUT/COPY adds a version with a new unique id; a DELETE without versionId
 *     adds a delete marker with a new id (even when the key does not exist, or its latest is
 *     already a marker).
 *   - Suspended (and unversioned): a write gets the id `null` and replaces the key's null
 *     version (wherever it sits in the key's history) as its newest entry; a DELETE removes the
 *     null version and (Suspended only) adds a delete marker whose id is `null`.
 *   - DELETE with versionId removes exactly that version or marker, for good; the next newest
 *     becomes the latest. A version id the key does not have deletes nothing (204).
 *   - GET/HEAD without versionId: the latest; 404 when there is none, 404 with
 *     x-amz-delete-marker when it is a marker. With versionId: that version; 404 NoSuchVersion
 *     when it does not exist (never did, or was removed), 405 when it is a marker.
 *   - CopyObject: the latest or a named version of the source; a source whose latest is a
 *     marker (or none) is 404 NoSuchKey, a named version that does not exist 404
 *     NoSuchVersion, a named delete marker 400 InvalidRequest.
 *   - ListObjectVersions: keys in UTF-8 binary order, each key's versions and markers newest
 *     first, the first one IsLatest.
 *
 * Version ids are the server's (learned from its answers); the model checks they are new
 * and never `null` in an Enabled bucket.
 */
import { createHash } from 'node:crypto';

export type Versioning = 'Unversioned' | 'Enabled' | 'Suspended';

export const NULL_ID = 'null';

/** A body, by content: the bytes are made from (seed, size) when needed. */
export interface Content {
  seed: number;
  size: number;
  /** Hex MD5 of the bytes (the ETag of a single-part upload). */
  md5: string;
}

/** One version or delete marker of a key. */
export interface MVersion {
  id: string;
  marker: boolean;
  /** Versions only. */
  content?: Content;
  /** x-amz-meta-model of the version (the write that made it; a copy keeps its source's). */
  meta?: string;
  /** Hex ETag, unquoted: the MD5 of a PUT, `<hex>-<parts>` of a multipart upload, what a copy answered. */
  etag?: string;
  /** The value of the version's one tag `t` (PutObjectTagging by versionId; a copy keeps its source's). */
  tag?: string;
}

/** One entry of ListObjectVersions as the model expects it. */
export interface ListedEntry {
  key: string;
  id: string;
  isLatest: boolean;
  marker: boolean;
  etag?: string;
  size?: number;
}

/** What a read answers, as the model expects it. */
export type ReadExpect =
  | { status: 200; version: MVersion }
  | { status: 404; code: 'NoSuchKey'; marker?: MVersion }
  | { status: 404; code: 'NoSuchVersion' }
  | { status: 405; code: 'MethodNotAllowed'; marker: MVersion };

/** What the source of a copy resolves to. */
export type CopySource =
  | { ok: true; version: MVersion }
  | { ok: false; status: 404; code: 'NoSuchKey' | 'NoSuchVersion' }
  | { ok: false; status: 400; code: 'InvalidRequest' };

/** Byte order of S3 listings: UTF-8, unsigned bytes. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function md5Hex(b: Uint8Array): string {
  return createHash('md5').update(b).digest('hex');
}

/** Every bucket of a run, by name. */
export type World = Map<string, BucketModel>;

/** One bucket. Mutators take the id the server gave (the model cannot know it in advance). */
export class BucketModel {
  versioning: Versioning = 'Unversioned';
  /** Key -> versions and markers, newest first. Keys with no entry left are removed. */
  readonly keys = new Map<string, MVersion[]>();
  /** Every non-null id ever handed out in this bucket (never reused, never `null`). */
  readonly ids = new Set<string>();
  /** `key\0id` of versions removed for good (a GET by that id must be NoSuchVersion). */
  readonly removed = new Set<string>();

  constructor(readonly name: string) {}

  clone(name = this.name): BucketModel {
    const m = new BucketModel(name);
    m.versioning = this.versioning;
    for (const [k, vs] of this.keys) m.keys.set(k, vs.map((v) => ({ ...v })));
    for (const id of this.ids) m.ids.add(id);
    for (const r of this.removed) m.removed.add(r);
    return m;
  }

  setVersioning(status: 'Enabled' | 'Suspended'): void {
    this.versioning = status;
  }

  /** Whether a write now makes a null version. */
  get nullWrites(): boolean {
    return this.versioning !== 'Enabled';
  }

  versionsOf(key: string): readonly MVersion[] {
    return this.keys.get(key) ?? [];
  }

  latest(key: string): MVersion | undefined {
    return this.keys.get(key)?.[0];
  }

  find(key: string, id: string): MVersion | undefined {
    return this.keys.get(key)?.find((v) => v.id === id);
  }

  /**
   * PUT or COPY of `key` answered with `id` (`null` for a null write). Throws when the id
   * is not what S3 gives in this state (a repeated id, `null` when Enabled, a real id when not).
   */
  write(key: string, content: Content, meta: string, id: string, etag = content.md5, tag?: string): MVersion {
    this.#checkNewId(id);
    const v: MVersion = { id, marker: false, content, meta, etag };
    if (tag !== undefined) v.tag = tag;
    this.#push(key, v);
    return v;
  }

  /**
   * DELETE of `key` without versionId; `markerId` is the marker's id from the answer.
   * Returns the marker made (none in an unversioned bucket).
   */
  deleteKey(key: string, markerId: string | undefined): MVersion | undefined {
    if (this.versioning === 'Unversioned') {
      const rest = this.versionsOf(key).filter((v) => v.id !== NULL_ID);
      this.#set(key, rest);
      return undefined;
    }
    if (markerId === undefined) throw new Error(`DELETE ${key} in a ${this.versioning} bucket made no delete marker`);
    this.#checkNewId(markerId);
    const m: MVersion = { id: markerId, marker: true };
    this.#push(key, m);
    return m;
  }

  /** DELETE ?versionId=: the version or marker removed, or undefined when the key had none by that id. */
  deleteVersion(key: string, id: string): MVersion | undefined {
    const vs = this.versionsOf(key);
    const v = vs.find((x) => x.id === id);
    if (!v) return undefined;
    this.#set(key, vs.filter((x) => x !== v));
    this.removed.add(`${key}\0${id}`);
    return v;
  }

  /** GET/HEAD (latest, or `id`). */
  read(key: string, id?: string): ReadExpect {
    if (id === undefined) {
      const v = this.latest(key);
      if (!v) return { status: 404, code: 'NoSuchKey' };
      if (v.marker) return { status: 404, code: 'NoSuchKey', marker: v };
      return { status: 200, version: v };
    }
    const v = this.find(key, id);
    if (!v) return { status: 404, code: 'NoSuchVersion' };
    if (v.marker) return { status: 405, code: 'MethodNotAllowed', marker: v };
    return { status: 200, version: v };
  }

  copySource(key: string, id?: string): CopySource {
    const r = this.read(key, id);
    if (r.status === 200) return { ok: true, version: r.version };
    if (r.status === 405) return { ok: false, status: 400, code: 'InvalidRequest' };
    return { ok: false, status: 404, code: r.code };
  }

  /** Keys in listing order. */
  sortedKeys(): string[] {
    return [...this.keys.keys()].sort(compareUtf8);
  }

  /** Every version and marker, as a full ListObjectVersions (no prefix, no delimiter) lists them. */
  listVersions(prefix = ''): ListedEntry[] {
    const out: ListedEntry[] = [];
    for (const key of this.sortedKeys()) {
      if (!key.startsWith(prefix)) continue;
      this.versionsOf(key).forEach((v, i) => {
        const e: ListedEntry = { key, id: v.id, isLatest: i === 0, marker: v.marker };
        if (v.content) {
          e.etag = v.etag!;
          e.size = v.content.size;
        }
        out.push(e);
      });
    }
    return out;
  }

  /**
   * ListObjectVersions with a delimiter, all pages joined: versions of keys without the
   * delimiter after `prefix`, and each common prefix once, in key order.
   */
  listVersionsDelimited(prefix: string, delimiter: string): (ListedEntry | { prefix: string })[] {
    const out: (ListedEntry | { prefix: string })[] = [];
    let lastPrefix: string | undefined;
    for (const e of this.listVersions(prefix)) {
      const rest = e.key.slice(prefix.length);
      const at = rest.indexOf(delimiter);
      if (at >= 0) {
        const p = prefix + rest.slice(0, at + delimiter.length);
        if (p !== lastPrefix) out.push({ prefix: p });
        lastPrefix = p;
        continue;
      }
      out.push(e);
    }
    return out;
  }

  /** Current objects (ListObjects): keys whose latest is a version, with it. */
  current(): { key: string; version: MVersion }[] {
    const out: { key: string; version: MVersion }[] = [];
    for (const key of this.sortedKeys()) {
      const v = this.latest(key)!;
      if (!v.marker) out.push({ key, version: v });
    }
    return out;
  }

  #checkNewId(id: string): void {
    if (this.nullWrites) {
      if (id !== NULL_ID) throw new Error(`a write in a ${this.versioning} bucket got id ${id}, not null`);
      return;
    }
    if (id === NULL_ID || id === '') throw new Error(`a write in an Enabled bucket got id ${JSON.stringify(id)}`);
    if (this.ids.has(id)) throw new Error(`version id ${id} handed out twice`);
    this.ids.add(id);
  }

  /** Adds `v` as the newest entry of `key`; a null write replaces the key's null version. */
  #push(key: string, v: MVersion): void {
    const vs = this.versionsOf(key).filter((x) => v.id !== NULL_ID || x.id !== NULL_ID);
    this.#set(key, [v, ...vs]);
  }

  #set(key: string, vs: MVersion[]): void {
    if (vs.length === 0) this.keys.delete(key);
    else this.keys.set(key, vs);
  }
}
