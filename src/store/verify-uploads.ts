/**
 * @module What `strata verify` checks of multipart uploads: every entry of an uploads keyspace
 * run decodes as what its key says it is, each bucket's count of uploads in progress matches
 * its keyspace, and which part chunks must still exist.
 *
 * A part's chunks must exist while its upload is in progress at the anchor: in the newest
 * root's keyspace (or, for a root written before the keyspace, its upload list) and not ended
 * by a commit after it, or begun by such a commit. Chunks of parts of ended uploads may have
 * been deleted (carrier-reaper.ts) and are not required. Memory: the chain's upload mutations
 * (bounded by the checkpoint interval) and one merge per bucket; never the uploads themselves.
 */
import type { SortedSource } from './index/merge.js';
import { mergeSources } from './index/merge.js';
import type { Mutation } from './commit.js';
import type { RootRecord } from './root.js';
import { StoreError } from './errors.js';
import { decodeCompletion, decodePart, decodeUpload } from './uploads.js';
import { uploadWrites, type UploadMutation } from './upload-space.js';
import { afterUpload, isGone, parseEntryKey, parseQueueKey, partKey, UPLOAD_PREFIX, uploadKey, type UploadRef } from './upload-keys.js';

/** Refers a chunk blob to who needs it. */
export type Refer = (blob: string, by: string) => void;

/** Checks one entry of an uploads keyspace run; throws StoreError 'Corrupt'. */
export function checkUploadEntry(key: string, value: Uint8Array): void {
  if (isGone(value)) return;
  const bad = () => new StoreError('Corrupt', `uploads keyspace: malformed key ${JSON.stringify(key)}`);
  if (key.startsWith('t')) {
    if (!parseQueueKey(key)) throw bad();
    new TextDecoder('utf-8', { fatal: true }).decode(value);
    return;
  }
  const p = parseEntryKey(key);
  if (!p || !(key.startsWith('u') || (key.startsWith('c') && p.part === undefined))) throw bad();
  if (key.startsWith('c')) decodeCompletion(value);
  else if (p.part !== undefined) decodePart(value);
  else if (decodeUpload(value).key !== p.key) throw new StoreError('Corrupt', `uploads keyspace: record under ${JSON.stringify(key)} is for another key`);
}

/** A bucket's upload changes in the chain after the root. */
export interface ChainUploads {
  /** The bucket was deleted in the chain: the root's keyspace for it no longer counts. */
  dropped: boolean;
  /** Upload record key -> in progress (begun) or ended, as of the anchor. */
  records: Map<string, boolean>;
  /** Part key -> its newest record, with its upload's record key. */
  parts: Map<string, { record: string; value: Uint8Array }>;
}

/** Replays the chain's upload mutations (legacy ones resolved through the root's upload list). */
export function chainUploads(root: RootRecord, chain: readonly { mutations: readonly Mutation[] }[]): Map<string, ChainUploads> {
  const legacy = new Map<string, UploadRef>();
  for (const u of root.uploads) {
    const r = decodeUpload(u.record);
    legacy.set(u.uploadId, { key: r.key, initiated: r.initiated, uploadId: u.uploadId });
  }
  const out = new Map<string, ChainUploads>();
  const of = (bucket: string) => {
    let c = out.get(bucket);
    if (!c) out.set(bucket, (c = { dropped: false, records: new Map(), parts: new Map() }));
    return c;
  };
  const apply = (m: UploadMutation) => {
    const c = of(m.bucket);
    if (m.op === 'beginUpload') c.records.set(uploadKey(m), true);
    else if (m.op === 'closeUpload') c.records.set(uploadKey(m), false);
    else if (m.op === 'setPart') c.parts.set(partKey(m, m.number), { record: uploadKey(m), value: uploadWrites(m)[0]![1] });
  };
  for (const commit of chain) {
    for (const m of commit.mutations) {
      switch (m.op) {
        case 'deleteBucket':
          out.set(m.bucket, { dropped: true, records: new Map(), parts: new Map() });
          break;
        case 'beginUpload':
        case 'setPart':
        case 'closeUpload':
        case 'dropCompletion':
          apply(m);
          break;
        case 'createUpload': {
          const r = decodeUpload(m.record);
          const ref = { key: r.key, initiated: r.initiated, uploadId: m.uploadId };
          legacy.set(m.uploadId, ref);
          apply({ op: 'beginUpload', bucket: m.bucket, ...ref, record: m.record });
          break;
        }
        case 'putPart':
        case 'endUpload': {
          const ref = legacy.get(m.uploadId);
          if (!ref) throw new StoreError('BrokenChain', `a commit refers to upload ${m.uploadId}, which does not exist`);
          if (m.op === 'putPart') apply({ op: 'setPart', bucket: m.bucket, ...ref, number: m.number, record: m.record });
          else apply({ op: 'closeUpload', bucket: m.bucket, ...ref });
          break;
        }
        default:
          break;
      }
    }
  }
  return out;
}

/**
 * Refers the chunks of every part whose upload is in progress at the anchor, for one bucket
 * of the root (`sources`: its keyspace runs, newest first; `legacyRecords`: the record keys of
 * an STR1 root's uploads of this bucket) and the chain's changes to it.
 * Returns the number of uploads in progress the root's keyspace holds (to check its count).
 * Throws what reading the runs throws, StoreError 'Corrupt' for malformed entries.
 */
export async function referLiveParts(
  bucket: string,
  sources: readonly SortedSource[],
  chain: ChainUploads | undefined,
  refer: Refer,
  legacyRecords: ReadonlySet<string> = new Set()
): Promise<number> {
  let inRoot = 0;
  const overridden = (k: string) => chain?.parts.has(k) ?? false;
  {
    // Counted even when the chain deleted the bucket: the count checks the root, not the anchor.
    const it = mergeSources(sources, { key: UPLOAD_PREFIX, inclusive: true });
    let live: string | undefined;
    try {
      for (;;) {
        const r = await it.next();
        if (r.done || !r.value.key.startsWith(UPLOAD_PREFIX)) break;
        const { key, value } = r.value;
        const p = parseEntryKey(key);
        if (!p) throw new StoreError('Corrupt', `uploads keyspace of ${bucket}: malformed key ${JSON.stringify(key)}`);
        if (p.part === undefined) {
          if (!isGone(value)) inRoot++;
          live = !isGone(value) && !chain?.dropped && chain?.records.get(key) !== false ? key : undefined;
          if (!live) it.seek(afterUpload(p));
        } else if (live && !isGone(value) && key.startsWith(`${live}\0`) && !overridden(key)) {
          for (const c of decodePart(value).chunks) refer(c.blob, `${bucket}/${p.key} upload ${p.uploadId} part ${p.part}`);
        }
      }
    } finally {
      await it.return();
    }
  }
  for (const [k, part] of chain?.parts ?? []) {
    const state = chain!.records.get(part.record);
    const live = state ?? (!chain!.dropped && (legacyRecords.has(part.record) || (await inKeyspace(sources, part.record))));
    if (!live) continue;
    const p = parseEntryKey(k);
    for (const c of decodePart(part.value).chunks) refer(c.blob, `${bucket}/${p?.key ?? '?'} upload ${p?.uploadId ?? '?'} part ${p?.part ?? '?'}`);
  }
  return inRoot;
}

/** True if `key` holds a live value in the merged `sources`. */
async function inKeyspace(sources: readonly SortedSource[], key: string): Promise<boolean> {
  const it = mergeSources(sources, { key, inclusive: true });
  try {
    const r = await it.next();
    return !r.done && r.value.key === key && !isGone(r.value.value);
  } finally {
    await it.return();
  }
}

/** The record keys of an STR1 root's uploads of `bucket`. */
export function legacyRecordKeys(root: RootRecord, bucket: string): Set<string> {
  const out = new Set<string>();
  for (const u of root.uploads) {
    if (u.bucket !== bucket) continue;
    const r = decodeUpload(u.record);
    out.add(uploadKey({ key: r.key, initiated: r.initiated, uploadId: u.uploadId }));
  }
  return out;
}

/** Refers the parts of an STR1 root's uploads that no commit after it ended. */
export function referLegacyRootParts(root: RootRecord, chain: Map<string, ChainUploads>, refer: Refer): void {
  for (const u of root.uploads) {
    const c = chain.get(u.bucket);
    const r = decodeUpload(u.record);
    const ref = { key: r.key, initiated: r.initiated, uploadId: u.uploadId };
    if (c?.dropped || c?.records.get(uploadKey(ref)) === false) continue;
    for (const [n, p] of u.parts) {
      if (c?.parts.has(partKey(ref, n))) continue;
      for (const ch of decodePart(p).chunks) refer(ch.blob, `${u.bucket}/${r.key} upload ${u.uploadId} part ${n}`);
    }
  }
}
