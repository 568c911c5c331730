/**
 * @module Expiry of multipart uploads (S3's AbortIncompleteMultipartUpload, applied to every
 * bucket with one age) and of completion records, through ordinary commits.
 *
 * Each bucket's uploads keyspace keeps an expiry queue ordered by time (upload-keys.ts), so a
 * sweep reads only the entries already due: one seek per bucket when nothing is. An upload
 * that expires is aborted as AbortMultipartUpload would (and its parts' chunks deleted once the
 * abort is durable); a completion record that expires is dropped (a Complete retried after
 * that is NoSuchUpload, as before records existed). Each is re-checked inside its commit, so
 * one that a client completed or aborted meanwhile is left alone.
 */
import type { Repository } from './repository.js';
import type { BucketState } from './state.js';
import { mergeSources } from './index/merge.js';
import { compareKeys } from './index/compare.js';
import { blobError } from './body-reader.js';
import { StoreError } from './errors.js';
import { partChunkBlobs } from './upload-index.js';
import { completionKey, isGone, parseQueueKey, QUEUE_PREFIX, queueAfter, uploadKey, type UploadRef } from './upload-keys.js';

/** Queue entries taken per bucket per sweep: bounds one sweep's memory and commit burst. */
export const EXPIRE_BATCH = 1000;
/** Expirations committed at once: they share group commits without starving client writes. */
const EXPIRE_PARALLEL = 64;

export interface ExpiryOptions {
  /** Age (ms) after which an upload in progress is aborted and a completion record dropped. */
  maxAgeMs: number;
  /** The time to count ages from (default: the repository clock). */
  now?: number;
  /** Queue entries taken per bucket (default EXPIRE_BATCH). */
  batch?: number;
}

export interface ExpiryResult {
  /** Uploads in progress aborted. */
  aborted: number;
  /** Completion records dropped. */
  completionsDropped: number;
  /** Carrier chunks of the aborted uploads' parts deleted. */
  chunksDeleted: number;
  /** True if some bucket had more entries due than one sweep takes (sweep again soon). */
  more: boolean;
}

interface Due {
  kind: 'u' | 'c';
  time: number;
  ref: UploadRef;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Queue entries of `b` dated before `cutoff` (older than the age), oldest first, at most `limit`. */
async function dueEntries(b: BucketState, cutoff: number, limit: number): Promise<Due[]> {
  const end = queueAfter(cutoff - 1);
  const it = mergeSources(b.uploads.sources(), { key: QUEUE_PREFIX, inclusive: true });
  const out: Due[] = [];
  try {
    while (out.length < limit) {
      let r;
      try {
        r = await it.next();
      } catch (err) {
        throw blobError(err, `bucket ${b.name} uploads index`);
      }
      if (r.done || !r.value.key.startsWith(QUEUE_PREFIX) || compareKeys(r.value.key, end) >= 0) break;
      if (isGone(r.value.value)) continue;
      const q = parseQueueKey(r.value.key);
      let key: string;
      try {
        key = utf8.decode(r.value.value);
      } catch {
        key = '';
      }
      if (!q || key === '') throw new StoreError('Corrupt', `uploads keyspace of ${b.name}: malformed expiry entry ${JSON.stringify(r.value.key)}`);
      out.push({ kind: q.kind, time: q.time, ref: { key, initiated: q.initiated, uploadId: q.uploadId } });
    }
  } finally {
    await it.return();
  }
  return out;
}

/** Aborts or drops one due entry in its own commit; true if it did (false: already gone). */
async function expireOne(repo: Repository, b: BucketState, d: Due): Promise<boolean> {
  return repo.run(async (tx) => {
    if (tx.bucket(b.name)?.id !== b.id) return false; // deleted (and perhaps re-created) meanwhile
    if (d.kind === 'u') {
      if (!(await tx.uploadGet(b.name, uploadKey(d.ref)))) return false;
      tx.closeUpload(b.name, d.ref);
    } else {
      if (!(await tx.uploadGet(b.name, completionKey(d.ref)))) return false;
      tx.dropCompletion(b.name, d.ref, d.time);
    }
    return true;
  });
}

/**
 * Aborts every upload in progress initiated more than `maxAgeMs` ago (strictly) and drops every
 * completion record older than that, in every bucket, through ordinary commits; deletes the
 * aborted uploads' part chunks. Takes at most `batch` entries per bucket (see `more`).
 * Throws what a commit throws (e.g. 'Unsafe', 'Closed'), or 'Corrupt' / 'MissingBlob' if an
 * uploads index cannot be read; what was expired before that stays expired.
 */
export async function expireUploads(repo: Repository, opts: ExpiryOptions): Promise<ExpiryResult> {
  if (!(opts.maxAgeMs > 0)) throw new RangeError(`maxAgeMs must be positive, not ${opts.maxAgeMs}`);
  const cutoff = (opts.now ?? repo.now()) - opts.maxAgeMs;
  const limit = opts.batch ?? EXPIRE_BATCH;
  const result: ExpiryResult = { aborted: 0, completionsDropped: 0, chunksDeleted: 0, more: false };
  for (const b of [...repo.state.buckets.values()]) {
    const due = await dueEntries(b, cutoff, limit);
    if (due.length === limit) result.more = true;
    for (let i = 0; i < due.length; i += EXPIRE_PARALLEL) {
      await Promise.all(
        due.slice(i, i + EXPIRE_PARALLEL).map(async (d) => {
          if (!(await expireOne(repo, b, d))) return;
          if (d.kind === 'c') {
            result.completionsDropped++;
            return;
          }
          result.aborted++;
          result.chunksDeleted += await repo.reaper.reap(`expired upload ${d.ref.uploadId}`, partChunkBlobs(b.uploads, d.ref));
        })
      );
    }
  }
  return result;
}
