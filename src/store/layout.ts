/**
 * @module Blob names of a repository and the tuning constants of its layout.
 *
 *   anchor                     the only mutable blob: names the newest commit and root
 *   config                     created once: format, repository id, token secret
 *   commits/<seq>-<rand>       a pack: small bodies (entries 0..n-1) + the commit record (last)
 *   roots/<seq>-<rand>         a pack of one entry: a checkpoint of the whole catalog
 *   log/<seq>.<rand>           a commit log segment: keyed frames of commits from <seq> on
 *   log/<seq>-<rand>           a segment written before frames were keyed (commit-log/frame.ts)
 *   runs/<bucket-id>/<rand>    index runs (sorted key -> version list)
 *   runs/<bucket-id>/u-<rand>  runs of the bucket's uploads keyspace (upload-keys.ts)
 *   runs/<bucket-id>/v-<rand>  runs of the bucket's version log (version-log.ts)
 *   chunks/<hour><rand>        carrier chunks: packs of fixed-size segments of one body
 *
 * Sequence numbers are zero-padded hex so that names sort in commit order; the random
 * part makes every name unique even across crashed attempts at the same sequence. Names
 * of frequent blobs are at most 31 bytes with a slowly changing first 16 bytes: the fs
 * provider turns each 16 key bytes into a directory level, so these names share a
 * directory instead of creating (and fsyncing) a new one per blob.
 */
import { randomIdBytes } from '../pack/random-pool.js';

/** Bodies up to this size are packed into the commit blob; larger ones become carriers.
 * 512 KiB keeps a batch's buffered bodies small while a carrier's per-chunk overhead is
 * already below 0.01 %. */
export const PACK_MAX_BODY = 512 * 1024;
/** Segment size of carrier chunks: the unit verified (CRC32C) before any byte is served,
 * so also the memory a GET stream holds. */
export const SEGMENT_SIZE = 256 * 1024;
/** Data bytes per carrier chunk blob (a whole number of segments). Big enough that the
 * per-blob cost (create + fsync) is amortised, small enough for one provider PUT. */
export const CHUNK_SIZE = 32 * SEGMENT_SIZE;
/** Largest chunk blob a provider may ask for (ProviderCapabilities.chunkBytes). */
export const MAX_CHUNK_SIZE = 256 * SEGMENT_SIZE;

/**
 * Data bytes per chunk blob for carriers written to a provider whose preference is
 * `preferred` (ProviderCapabilities.chunkBytes): it when it is a whole number of segments
 * from CHUNK_SIZE to MAX_CHUNK_SIZE, else CHUNK_SIZE. Never smaller than CHUNK_SIZE, so the
 * chunk count a body's history entry is sized for (objects-write.ts) is an upper bound.
 */
export function chunkSizeFor(preferred: number | undefined): number {
  return preferred !== undefined && Number.isSafeInteger(preferred) && preferred % SEGMENT_SIZE === 0 && preferred >= CHUNK_SIZE && preferred <= MAX_CHUNK_SIZE
    ? preferred
    : CHUNK_SIZE;
}
/** A batch closes at this many operations or bytes of packed bodies. */
export const BATCH_MAX_OPS = 1024;
export const BATCH_MAX_BYTES = 16 * 1024 * 1024;

const rand = (bytes = 8) => Buffer.from(randomIdBytes(bytes).buffer).toString('hex');
const seqHex = (seq: number) => seq.toString(16).padStart(12, '0');
const randHex = (chars: number) => rand(Math.ceil(chars / 2)).slice(0, chars);

export const ANCHOR_KEY = 'anchor';
export const CONFIG_KEY = 'config';

/** 8 + 12 + 1 + 10 = 31 bytes. */
export function commitKey(seq: number): string {
  return `commits/${seqHex(seq)}-${randHex(10)}`;
}

/** 4 + 12 + 1 + 10 = 27 bytes; `firstSeq`: the first commit it will hold (commit-log/segments.ts).
 * The "." says its frames are keyed (commit-log/frame.ts); segments written before have "-". */
export function logKey(firstSeq: number): string {
  return `log/${seqHex(firstSeq)}.${randHex(10)}`;
}

/** Whether log segment `key` holds keyed frames (named by logKey), not the SHA-256 frames of a
 * segment written before ("log/<seq>-<rand>"). */
export function keyedLogSegment(key: string): boolean {
  return /^log\/[0-9a-f]{12,}\./.test(key);
}

/** 6 + 12 + 1 + 12 = 31 bytes. */
export function rootKey(seq: number): string {
  return `roots/${seqHex(seq)}-${randHex(12)}`;
}

export function runKey(bucketId: string): string {
  return `runs/${bucketId}/${rand()}`;
}

export function uploadRunKey(bucketId: string): string {
  return `runs/${bucketId}/u-${rand()}`;
}

export function versionRunKey(bucketId: string): string {
  return `runs/${bucketId}/v-${rand()}`;
}

/** 7 + 9 + 15 = 31 bytes; the first 16 change once an hour. */
export function chunkKey(): string {
  const hour = Math.floor(Date.now() / 3_600_000).toString(16).padStart(9, '0');
  return `chunks/${hour}${randHex(15)}`;
}

/** A fresh random identifier (buckets, uploads, the repository). */
export function newId(bytes = 12): string {
  return rand(bytes);
}
