/**
 * @module Carriers: bodies too large to pack, streamed into chunk blobs.
 *
 * A body of `size` bytes is cut into chunks of CHUNK_SIZE (or the provider's larger
 * preference, layout.ts chunkSizeFor); each chunk blob is a pack whose
 * entries are consecutive SEGMENT_SIZE slices of the body (the last one shorter), so every
 * segment carries its own CRC32C and a reader can verify any part before serving it.
 * Memory: one segment buffer per upload, whatever the body size; the provider write
 * pulls the next segment only when it has written the previous one (backpressure).
 */
import type { InflightTicket } from './inflight-blobs.js';
import type { BudgetAccount } from './budget.js';
import type { Provider } from '../provider/provider.js';
import { PackStream } from '../pack/stream-writer.js';
import { SEGMENT_SIZE, chunkKey, chunkSizeFor } from './layout.js';
import type { ChunkRef } from './records.js';
import { isStoreError, StoreError } from './errors.js';
import type { StreamSealer } from './crypto/body-crypto.js';
import { sealedLength } from './crypto/segment-cipher.js';

/** Pulls exactly `n` bytes at a time out of an async byte stream. */
export class ExactReader {
  readonly #it: AsyncIterator<Uint8Array>;
  #pending: Uint8Array | null = null;
  #done = false;

  constructor(body: AsyncIterable<Uint8Array>) {
    this.#it = body[Symbol.asyncIterator]();
  }

  /** The next `n` bytes as one array; fewer only if the stream ended. */
  async read(n: number): Promise<Uint8Array> {
    if (this.#pending && this.#pending.length >= n) {
      const out = this.#pending.subarray(0, n);
      this.#pending = this.#pending.length > n ? this.#pending.subarray(n) : null;
      return out;
    }
    const out = new Uint8Array(n);
    let have = 0;
    if (this.#pending) {
      out.set(this.#pending);
      have = this.#pending.length;
      this.#pending = null;
    }
    while (have < n && !this.#done) {
      const r = await this.#it.next();
      if (r.done) {
        this.#done = true;
        break;
      }
      const chunk = r.value;
      const take = Math.min(chunk.length, n - have);
      out.set(chunk.subarray(0, take), have);
      have += take;
      if (take < chunk.length) this.#pending = chunk.subarray(take);
    }
    return have === n ? out : out.subarray(0, have);
  }

  /**
   * Fills `target` with the next bytes of the stream, in place (one copy out of the
   * stream's pieces); returns how many it wrote: target.length, fewer only if the stream
   * ended. Throws what the stream throws.
   */
  async readInto(target: Uint8Array): Promise<number> {
    const n = target.length;
    let have = 0;
    if (this.#pending) {
      const take = Math.min(n, this.#pending.length);
      target.set(this.#pending.subarray(0, take));
      have = take;
      this.#pending = this.#pending.length > take ? this.#pending.subarray(take) : null;
    }
    while (have < n && !this.#done) {
      const r = await this.#it.next();
      if (r.done) {
        this.#done = true;
        break;
      }
      const chunk = r.value;
      const take = Math.min(chunk.length, n - have);
      target.set(take === chunk.length ? chunk : chunk.subarray(0, take), have);
      have += take;
      if (take < chunk.length) this.#pending = chunk.subarray(take);
    }
    return have;
  }

  /** True if the stream has no more bytes (reads ahead at most one chunk). */
  async atEnd(): Promise<boolean> {
    if (this.#pending && this.#pending.length > 0) return false;
    while (!this.#done) {
      const r = await this.#it.next();
      if (r.done) {
        this.#done = true;
        break;
      }
      if (r.value.length > 0) {
        this.#pending = r.value;
        return false;
      }
    }
    return true;
  }

  /** Stops the underlying stream early (error paths). */
  async cancel(): Promise<void> {
    if (!this.#done) {
      this.#done = true;
      await this.#it.return?.();
    }
  }
}

/** Lengths of the segments of a chunk holding `n` data bytes. */
function segmentLengths(n: number): number[] {
  const out: number[] = [];
  for (let off = 0; off < n; off += SEGMENT_SIZE) out.push(Math.min(SEGMENT_SIZE, n - off));
  return out;
}

/** How a carrier's blobs are written: the request's abort signal, and whom they are for
 * (PutOptions.owner: the request's access key, when it has a per-key share). */
export interface CarrierIo {
  signal?: AbortSignal;
  owner?: string;
}

/** The CarrierIo of a write with options `o`. */
export function carrierIo(o: { signal?: AbortSignal | undefined; budget?: BudgetAccount | undefined }): CarrierIo {
  return { ...(o.signal ? { signal: o.signal } : {}), ...(o.budget?.owner !== undefined ? { owner: o.budget.owner } : {}) };
}

/**
 * Streams exactly `size` bytes of `reader` into chunk blobs and returns their refs, in
 * order. `onData` sees every body byte once (for digests). With `sealer` (an encrypted
 * body), each segment is stored sealed (plaintext never reaches the provider); refs still
 * count plaintext bytes and segment sizes. Throws StoreError
 * 'IncompleteBody' if the stream ends early or has more bytes than `size`; chunk blobs
 * already written are deleted (best effort) before the error propagates.
 */
export async function writeCarrier(
  provider: Provider,
  reader: ExactReader,
  size: number,
  onData: (chunk: Uint8Array) => void,
  io: CarrierIo = {},
  sealer?: StreamSealer,
  inflight?: InflightTicket
): Promise<ChunkRef[]> {
  const chunks: ChunkRef[] = [];
  const chunkSize = chunkSizeFor(provider.capabilities.chunkBytes);
  // The provider may wrap an error thrown by the body it pulls; keep ours to rethrow it.
  let bodyError: unknown;
  try {
    for (let done = 0; done < size; ) {
      const n = Math.min(chunkSize, size - done);
      const lengths = segmentLengths(n);
      const pack = new PackStream(sealer ? lengths.map(sealedLength) : lengths);
      const key = chunkKey();
      inflight?.add(key); // before the write starts: GC must not sweep it (inflight-blobs.ts)
      async function* frames(): AsyncGenerator<Uint8Array> {
        yield pack.header();
        for (const len of lengths) {
          let seg: Uint8Array;
          try {
            seg = await reader.read(len);
          } catch (err) {
            bodyError = err; // e.g. a bad aws-chunked signature: the client's error, not an I/O one
            throw err;
          }
          if (seg.length !== len) {
            const got = done + pack.rows.length * SEGMENT_SIZE + seg.length;
            bodyError = new StoreError('IncompleteBody', `body ended after ${got} of ${size} bytes`);
            throw bodyError;
          }
          onData(seg);
          yield* pack.entry(sealer ? sealer.seal(seg) : seg);
        }
        yield* pack.finish();
      }
      await provider.put(key, frames(), { contentLength: pack.size, ifNoneMatch: '*', bulk: true, ...io });
      chunks.push({ blob: key, size: n, segment: SEGMENT_SIZE, tag: pack.tag });
      done += n;
    }
    if (!(await reader.atEnd())) {
      throw new StoreError('IncompleteBody', `body is longer than the ${size} bytes announced`);
    }
    return chunks;
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    await Promise.all(chunks.map((c) => provider.delete(c.blob).catch(() => undefined)));
    throw bodyError ?? err;
  }
}

/**
 * Cleans up after a write that failed once its chunks were written: stops reading the
 * body, and deletes the chunks (best effort) unless the failure was an ambiguous commit
 * ('Unsafe': the anchor may name the commit, so the chunks may be live) or one that may yet
 * commit (StoreError.mayCommit: an anchor move read back as not moved that the backend may
 * still apply); those are left to GC. Every other failure is definite, so the chunks are
 * garbage. Never throws.
 */
export async function abandonChunks(provider: Provider, reader: ExactReader, chunks: readonly ChunkRef[], err: unknown): Promise<void> {
  await reader.cancel().catch(() => undefined);
  if (isStoreError(err, 'Unsafe') || (err instanceof StoreError && err.mayCommit)) return;
  await Promise.all(chunks.map((c) => provider.delete(c.blob).catch(() => undefined)));
}
