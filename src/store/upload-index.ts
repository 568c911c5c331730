/**
 * @module Reading a bucket's uploads keyspace: finding an upload by (key, id), its parts in
 * order, and the carrier chunks of parts that are about to become unreachable.
 *
 * Everything here is a seek plus a scan of the merged overlay and runs, so its cost follows
 * what it returns, not how many uploads the bucket holds. Values handed out are decoded (or
 * copied): merge values may be views into cached blocks.
 */
import { mergeSources } from './index/merge.js';
import { StoreError } from './errors.js';
import { blobError } from './body-reader.js';
import type { UploadSpace } from './upload-space.js';
import { decodePart, type PartRecord } from './uploads.js';
import {
  afterUpload,
  escapeKey,
  isGone,
  parseEntryKey,
  parseUploadId,
  partKey,
  UPLOAD_PREFIX,
  uploadKey,
  type ParsedEntry,
  type UploadRef,
} from './upload-keys.js';

/** MAX_PART_NUMBER of multipart.ts: part keys have 4 hex digits, so nothing sorts past it. */
const LAST_PART = 10000;

export function corruptKey(k: string): StoreError {
  return new StoreError('Corrupt', `uploads keyspace: malformed key ${JSON.stringify(k)}`);
}

/**
 * Where the upload `uploadId` of `key` lives under `prefix` ('u' in progress, 'c' completed).
 * Ids made by makeUploadId name their place themselves (no read; the caller looks the record
 * up); an id of an upload created before the uploads keyspace is looked for among the key's
 * uploads (one scan of them). Undefined when no such upload can be found. Throws StoreError
 * 'Corrupt' / 'MissingBlob' if the index cannot be read.
 */
export async function resolveUpload(space: UploadSpace, key: string, uploadId: string, prefix = UPLOAD_PREFIX): Promise<UploadRef | undefined> {
  const parsed = parseUploadId(uploadId);
  if (parsed === undefined) return undefined;
  if (parsed !== 'legacy') return { key, initiated: parsed.initiated, uploadId };
  const start = prefix + escapeKey(key);
  const it = mergeSources(space.sources(), { key: start, inclusive: true });
  try {
    for (;;) {
      const r = await it.next();
      if (r.done || !r.value.key.startsWith(start)) return undefined;
      const p = parseEntryKey(r.value.key);
      if (!p) throw corruptKey(r.value.key);
      if (p.part !== undefined) it.seek(afterUpload(p));
      else if (!isGone(r.value.value) && p.uploadId === uploadId) return { key: p.key, initiated: p.initiated, uploadId };
    }
  } catch (err) {
    throw blobError(err, 'uploads index');
  } finally {
    await it.return();
  }
}

/**
 * The parts of upload `u` numbered `from` or more, in part-number order, decoded. Reads the
 * committed keyspace; the parts of an upload that ended stay readable until a compaction
 * drops them. Throws StoreError 'Corrupt' / 'MissingBlob'.
 */
export async function* uploadParts(space: UploadSpace, u: UploadRef, from = 1): AsyncGenerator<[number, PartRecord]> {
  if (from > LAST_PART) return;
  const prefix = `${uploadKey(u)}\0`;
  const it = mergeSources(space.sources(), { key: partKey(u, Math.max(1, from)), inclusive: true });
  try {
    for (;;) {
      let r;
      try {
        r = await it.next();
      } catch (err) {
        throw blobError(err, 'uploads index');
      }
      if (r.done || !r.value.key.startsWith(prefix)) return;
      if (isGone(r.value.value)) continue;
      const p = parseEntryKey(r.value.key);
      if (p?.part === undefined) throw corruptKey(r.value.key);
      yield [p.part, decodePart(r.value.value)];
    }
  } finally {
    await it.return();
  }
}

/** The chunk blobs of upload `u`'s parts, except the part numbers in `keep`. */
export async function* partChunkBlobs(space: UploadSpace, u: UploadRef, keep?: ReadonlySet<number>): AsyncGenerator<string> {
  for await (const [n, part] of uploadParts(space, u)) {
    if (keep?.has(n)) continue;
    for (const c of part.chunks) yield c.blob;
  }
}

/**
 * The chunk blobs of every part of every upload still in progress in `space` (a bucket that
 * was just deleted: those parts were never completed into an object). Parts of ended uploads
 * are skipped: a completed upload's parts are its object's chunks.
 */
export async function* liveUploadChunkBlobs(space: UploadSpace): AsyncGenerator<string> {
  const it = mergeSources(space.sources(), { key: UPLOAD_PREFIX, inclusive: true });
  let live: ParsedEntry | undefined;
  try {
    for (;;) {
      const r = await it.next();
      if (r.done || !r.value.key.startsWith(UPLOAD_PREFIX)) return;
      const p = parseEntryKey(r.value.key);
      if (!p) throw corruptKey(r.value.key);
      if (p.part === undefined) {
        live = isGone(r.value.value) ? undefined : p;
        if (!live) it.seek(afterUpload(p));
      } else if (live && !isGone(r.value.value) && live.uploadId === p.uploadId && live.key === p.key) {
        for (const c of decodePart(r.value.value).chunks) yield c.blob;
      }
    }
  } finally {
    await it.return();
  }
}
