/**
 * @module Streaming a plain carrier chunk out with scatter reads (Provider.readv; fs: one
 * preadv per span). A chunk blob stores its segments as [24-byte entry header][segment]
 * entries; one read puts the headers of a span of segments into a small buffer of their own
 * and the segments side by side into one *span buffer*, so a span (2 MiB) reaches the client
 * as one write instead of one write per segment, and no byte is copied on the way.
 *
 * Every entry is verified (header: pack tag, index, length; body: CRC32C) before its span is
 * yielded: a corrupted blob ends the stream with StoreError 'Corrupt', never with wrong bytes.
 * These checks cover every byte of a span, so a span is first read with ReadOptions.endToEnd
 * (the erasure provider then skips its fragment block CRCs, which would check the same bytes a
 * second time); a span that fails them is read once more without it, checked by the provider
 * as well (which finds a damaged fragment, rebuilds around it and queues it for repair), before
 * the stream fails.
 *
 * Span buffers come from a small process-wide pool ({@link SPAN_POOL_BUFFERS} at most kept
 * idle) and return to it only when whoever wrote the yielded bytes to the client says the
 * socket has taken them ({@link writtenCallback}, respond.ts). A consumer that never says
 * so (a copy, a test) simply lets the buffer be garbage collected: a buffer is reused only
 * after an explicit release, never while anything may still read it. So a steady stream of
 * GETs allocates (and page-faults) no new span memory, and one GET holds at most three spans
 * ({@link GET_HELD_BYTES}): the one being written, the one yielded next, and one being read
 * and checked ahead.
 */
import { END_TO_END, ProviderError, type Provider } from '../provider/provider.js';
import { checkEntryParts } from '../pack/reader.js';
import { PackError } from '../pack/errors.js';
import { HashWorkerError, type HashPool, type RemoteHasher } from '../checksum/hash-pool.js';
import { ENTRY_HEADER_SIZE, PACK_HEADER_SIZE } from '../pack/stream-writer.js';
import type { ChunkRef } from './records.js';
import { blobError } from './blob-error.js';
import { StoreError } from './errors.js';

/**
 * Body bytes of one span: one scatter read and one client write (8 segments of 256 KiB). 2 MiB
 * rather than 1: per span a GET pays a thread-pool read, a socket write, a promise turn and a
 * drain; paired runs of 8 MiB GETs at one connection (9-11 rounds each, 2026-12-05) measured
 * 7-15% less server CPU per GET with 2 MiB spans (and with 4 MiB, at four times the memory).
 */
export const SPAN_BODY_BYTES = 2 * 1024 * 1024;
/**
 * Idle span buffers kept for reuse, process-wide (16 MiB): enough for a few concurrent large
 * GETs to recycle all their spans; beyond it a released buffer is left to the GC.
 */
export const SPAN_POOL_BUFFERS = 8;
/**
 * Spans read and checked ahead of the one being sent: one, so that the next span's read
 * (thread pool) and CRCs (here with the CPU's CRC32C, or on a hash worker with the wasm
 * kernel) overlap the socket taking this one. Two (with 1 MiB spans, before the native CRC32C)
 * measured no faster at 2 MiB spans than one (paired, 11 rounds: 1.04, within the noise) and
 * held a third more memory.
 */
export const READ_AHEAD_SPANS = 1;
/**
 * Span bytes one GET of a carrier holds at most: the span the socket is taking, the one
 * yielded next, and {@link READ_AHEAD_SPANS} being read (what a GET reserves of the budget).
 */
export const GET_HELD_BYTES = (READ_AHEAD_SPANS + 2) * SPAN_BODY_BYTES;

/** Fixed-size buffers handed out and taken back; other sizes are never pooled. */
class SpanPool {
  readonly #free: Uint8Array[] = [];

  /** A buffer of `bytes` bytes (contents undefined): a pooled one when the size is standard. */
  take(bytes: number): Uint8Array {
    if (bytes === SPAN_BODY_BYTES) {
      const b = this.#free.pop();
      if (b) return b;
    }
    return Buffer.allocUnsafeSlow(bytes);
  }

  /** Takes `buf` back: the caller and everyone it gave `buf` to are done with it. */
  give(buf: Uint8Array): void {
    if (buf.length === SPAN_BODY_BYTES && this.#free.length < SPAN_POOL_BUFFERS) this.#free.push(buf);
  }

  get idle(): number {
    return this.#free.length;
  }
}

const spans = new SpanPool();
/** Yielded views whose span buffer goes back to the pool once written: view -> its buffer. */
const leases = new WeakMap<Uint8Array, Uint8Array>();

/** Span buffers idle in the pool now (for tests and diagnostics). */
export function idleSpanBuffers(): number {
  return spans.idle;
}

/**
 * For a chunk yielded by {@link scatterReadChunk}: the callback to pass to the write that
 * sends it (`res.write(chunk, cb)`), which gives its span buffer back to the pool once the
 * write completed without error (Node calls it when the socket has taken the bytes). Any
 * other chunk: undefined. Each chunk's callback is handed out once (a second call for the
 * same chunk returns undefined), so a buffer cannot be given back twice.
 */
export function writtenCallback(chunk: Uint8Array): ((err?: Error | null) => void) | undefined {
  const buf = leases.get(chunk);
  if (!buf) return undefined;
  leases.delete(chunk);
  return (err) => {
    if (!err) spans.give(buf);
  };
}

/** Provider with the scatter read this path needs. */
export type ScatterProvider = Provider & Required<Pick<Provider, 'readv'>>;

interface Span {
  /** The buffer taken from the pool (what goes back to it). */
  buffer: Uint8Array;
  /** Its first bytes: the span's segments, side by side. */
  bodies: Uint8Array;
}

/**
 * Yields data bytes [from, to] (inclusive, within the chunk) of the plain chunk `c`, a span
 * at a time, each verified before it is yielded; the next spans are read (and verified) while
 * the previous one is being sent. With `pool` (the process's hash workers), the CRC32C of
 * each span's segments is computed on a worker thread, so that checking span i+1 overlaps
 * writing span i to the client; the entry headers are always checked here, and the CRCs the
 * worker answers are compared with theirs here. Without a pool, or if the pool has no slot
 * or its worker dies, the CRCs are computed on this thread (a span whose worker died is read
 * again). Throws StoreError 'Corrupt' (a bad entry header, length or CRC, or a short blob)
 * or 'MissingBlob', naming the blob.
 */
export async function* scatterReadChunk(provider: ScatterProvider, c: ChunkRef, from: number, to: number, pool?: HashPool): AsyncGenerator<Uint8Array> {
  const s0 = Math.floor(from / c.segment);
  const s1 = Math.floor(to / c.segment);
  const lenOf = (i: number) => Math.min(c.segment, c.size - i * c.segment);
  const offsetOf = (i: number) => PACK_HEADER_SIZE + i * (ENTRY_HEADER_SIZE + c.segment);
  const per = Math.max(1, Math.floor(SPAN_BODY_BYTES / c.segment));
  // Only worth a worker when there is more than one span to overlap.
  let hasher: RemoteHasher | undefined = s1 - s0 + 1 > per ? pool?.open([]) : undefined;
  // First read of a span: the provider may leave its own per-block checks to ours
  // (ReadOptions.endToEnd); a span that fails ours is read again with them (`checked`), so a
  // damaged erasure fragment is found, rebuilt around and queued for repair there.
  const spanRead = async (seg: number, checked = false): Promise<Span> => {
    const last = Math.min(s1, seg + per - 1);
    let total = 0;
    for (let i = seg; i <= last; i++) total += lenOf(i);
    let buffer = spans.take(total === per * c.segment ? per * c.segment : total);
    const headers = new Uint8Array(ENTRY_HEADER_SIZE * (last - seg + 1));
    const targets: Uint8Array[] = [];
    const bodySpans: number[] = [];
    for (let i = seg, at = 0; i <= last; at += lenOf(i), i++) {
      const h = (i - seg) * ENTRY_HEADER_SIZE;
      targets.push(headers.subarray(h, h + ENTRY_HEADER_SIZE), buffer.subarray(at, at + lenOf(i)));
      bodySpans.push(at, lenOf(i));
    }
    const remote = hasher;
    try {
      await provider.readv(c.blob, offsetOf(seg), targets, checked ? undefined : END_TO_END);
      const want: number[] = [];
      for (let i = seg, at = 0; i <= last; at += lenOf(i), i++) {
        const h = (i - seg) * ENTRY_HEADER_SIZE;
        const expect = { tag: c.tag, index: i, length: lenOf(i), authenticated: remote !== undefined };
        want.push(checkEntryParts(headers.subarray(h, h + ENTRY_HEADER_SIZE), buffer.subarray(at, at + lenOf(i)), expect));
      }
      if (remote) {
        // The buffer goes to the worker and comes back (transferred, never copied).
        const answer = await remote.hash(buffer, bodySpans);
        buffer = answer.bytes;
        answer.crcs.forEach((crc, k) => {
          if (crc >>> 0 !== want[k]! >>> 0) throw new PackError('ERR_PACK_CHECKSUM', `entry ${seg + k}: body checksum mismatch (corrupted bytes)`);
        });
      }
    } catch (err) {
      if (err instanceof HashWorkerError && remote) {
        // The worker is gone (its slice with it): check this and later spans here.
        if (hasher === remote) hasher = undefined;
        return spanRead(seg, checked);
      }
      // Our check failed on bytes the provider did not check: read them again, checked there.
      if (err instanceof PackError && !checked) return spanRead(seg, true);
      if (err instanceof ProviderError && err.code === 'InvalidRange') throw new StoreError('Corrupt', `${c.blob}: shorter than its segments`, { cause: err });
      throw blobError(err, c.blob);
    }
    return { buffer, bodies: buffer.subarray(0, total) };
  };
  // Spans read (and being checked) ahead of the one yielded: span i+2's read runs on the
  // thread pool while span i+1's CRCs are computed, so the hash worker never waits on a read.
  const ahead: Promise<Span>[] = [];
  let next = s0;
  const readAhead = () => {
    while (ahead.length < READ_AHEAD_SPANS && next <= s1) {
      const p = spanRead(next);
      p.catch(() => undefined); // awaited in its turn, or when the stream stops
      ahead.push(p);
      next += per;
    }
  };
  try {
    for (let seg = s0; seg <= s1; seg += per) {
      readAhead();
      const span = await ahead.shift()!;
      readAhead();
      const base = seg * c.segment;
      const view = span.bodies.subarray(Math.max(from, base) - base, Math.min(to, base + span.bodies.length - 1) - base + 1);
      leases.set(view, span.buffer);
      yield view;
    }
  } finally {
    // A stream stopped early leaves no read running unobserved; an unsent span goes back.
    for (const p of ahead.splice(0)) {
      const left = await p.catch(() => undefined);
      if (left) spans.give(left.buffer);
    }
    hasher?.abort();
  }
}
