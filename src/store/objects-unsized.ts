/**
 * @module PutObject for a body whose length is not known in advance: a PUT sent with
 * `Transfer-Encoding: chunked` and no Content-Length, or the file of a POST Object form.
 *
 *   admission (bucket, precondition) -> read the first PACK_MAX_BODY bytes (charged) ->
 *     the stream ended: a packed body, handed to the sized putObject
 *     more follows:     a carrier, written piece by piece (each UNSIZED_PIECE_BYTES piece
 *                       charged while held) through writeCarrier with its known length
 *   -> size bounds (EntityTooLarge while streaming, EntityTooSmall at the end) -> claims
 *   -> commit (preconditions re-checked atomically).
 *
 * Encrypted (SSE-S3 / SSE-C), a packed body is sealed by the sized path; a carrier's pieces
 * are each sealed as a stream of their own under the object's one data key.
 *
 * Memory per upload: one piece (or the head), whatever the body's size or how the client
 * fragments it. On failure the pieces already written are deleted (best effort; GC
 * reclaims the rest), except after an ambiguous commit.
 */
import type { Repository } from './repository.js';
import { abandonChunks, carrierIo, ExactReader, writeCarrier } from './carrier.js';
import { finishDigest, startDigest } from './digest.js';
import { PACK_MAX_BODY, SEGMENT_SIZE } from './layout.js';
import { commitPut, MAX_PUT_BYTES, newBodyCrypt, precheck, putObject, type PutOptions, type PutResult } from './objects-write.js';
import { newStreamId, streamKey, type BodyStream } from './crypto/envelope.js';
import { StreamSealer } from './crypto/body-crypto.js';
import { sealedLength } from './crypto/segment-cipher.js';
import type { ChunkRef } from './records.js';
import { checkKey } from './validate.js';
import { StoreError } from './errors.js';
import { assertHistoryRoom, minEntryBytes } from './history-budget.js';

/**
 * Bytes an unsized carrier buffers before writing them as one chunk blob: 4 segments
 * (1 MiB). Small enough that many concurrent unsized uploads fit the pending budget, large
 * enough that the per-blob cost (create + fsync) stays a few percent of the write.
 */
export const UNSIZED_PIECE_BYTES = 4 * SEGMENT_SIZE;

export interface UnsizedPutOptions extends Omit<PutOptions, 'size'> {
  /** Largest body accepted, bytes (StoreError EntityTooLarge, detected while streaming).
   * Default and ceiling: MAX_PUT_BYTES. */
  maxBytes?: number;
  /** Smallest body accepted, bytes (StoreError EntityTooSmall). Default 0. */
  minBytes?: number;
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  if (bytes.length > 0) yield bytes;
}

function tooLarge(max: number): StoreError {
  return new StoreError('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', { detail: { MaxSizeAllowed: max } });
}

function checkMin(size: number, min: number): void {
  if (size < min) {
    throw new StoreError('EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed size', {
      detail: { MinSizeAllowed: min, ProposedSize: size },
    });
  }
}

/**
 * Stores `body` (read to its end) as the new version of `key`. Same contract as putObject
 * (conditions, claims, metadata) without a size; `maxBytes`/`minBytes` bound it. Throws
 * StoreError NoSuchBucket, PreconditionFailed, EntityTooLarge, EntityTooSmall, BadDigest,
 * InvalidDigest, SlowDown (pending budget), and what the body stream throws.
 */
export async function putObjectUnsized(
  repo: Repository,
  bucket: string,
  key: string,
  body: AsyncIterable<Uint8Array>,
  opts: UnsizedPutOptions
): Promise<PutResult> {
  checkKey(key);
  const max = Math.min(opts.maxBytes ?? MAX_PUT_BYTES, MAX_PUT_BYTES);
  const min = opts.minBytes ?? 0;
  if (!Number.isSafeInteger(max) || !Number.isSafeInteger(min) || max < 0 || min < 0) {
    throw new StoreError('InvalidArgument', `invalid body bounds ${min}..${max}`);
  }
  const headBytes = Math.min(max, PACK_MAX_BODY);
  const budget = opts.budget ?? repo.budget;
  let release = budget.reserve(headBytes + (opts.encryption ? sealedLength(SEGMENT_SIZE) : 0));
  const reader = new ExactReader(body);
  const chunks: ChunkRef[] = [];
  const inflight = repo.inflight.open();
  let failure: unknown; // a failure that may yet commit keeps the ticket (closeTicket)
  try {
    await precheck(repo, bucket, key, opts.conditions);
    const head = await reader.read(headBytes);
    if (head.length < headBytes || (await reader.atEnd())) {
      checkMin(head.length, min);
      // A packed body: the sized path charges it again; the swap is synchronous.
      release();
      return await putObject(repo, bucket, key, once(head), { ...opts, size: head.length });
    }
    if (headBytes === max) throw tooLarge(max);
    // Before the first chunk: refused if even the smallest entry cannot fit the history budget
    // (the size is unknown, so no upper bound; staging checks exactly and a refusal there
    // abandons the chunks written).
    assertHistoryRoom(repo.state, minEntryBytes(key));
    const digest = startDigest(opts);
    // Encrypted, each piece is a stream of its own (its length is known once it is read).
    const crypt = opts.encryption ? newBodyCrypt(opts.encryption) : undefined;
    const streams: BodyStream[] = [];
    let piece = head;
    let total = 0;
    for (;;) {
      total += piece.length;
      if (total > max) throw tooLarge(max);
      let sealer: StreamSealer | undefined;
      if (crypt) {
        const id = newStreamId();
        sealer = new StreamSealer(streamKey(crypt.dataKey, id), piece.length, SEGMENT_SIZE);
        streams.push({ id, size: piece.length });
      }
      const refs = await writeCarrier(repo.provider, new ExactReader(once(piece)), piece.length, (c) => digest.update(c), carrierIo(opts), sealer, inflight);
      chunks.push(...refs);
      if (piece.length < UNSIZED_PIECE_BYTES && piece !== head) break;
      // The next piece (and a sealed segment in flight) is charged before it is read; the
      // previous one is released.
      const next = budget.reserve(UNSIZED_PIECE_BYTES + (crypt ? sealedLength(SEGMENT_SIZE) : 0));
      release();
      release = next;
      piece = await reader.read(UNSIZED_PIECE_BYTES);
      if (piece.length === 0) break;
    }
    checkMin(total, min);
    const { digests: d, primary } = finishDigest(digest, opts);
    return await commitPut(repo, bucket, key, opts, d, primary, { location: { kind: 'chunks', chunks } }, crypt && { crypt, streams });
  } catch (err) {
    failure = err;
    await abandonChunks(repo.provider, reader, chunks, err);
    throw err;
  } finally {
    repo.closeTicket(inflight, failure);
    release();
  }
}
