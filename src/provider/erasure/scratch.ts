/**
 * @module Reusable buffers for the framed bytes a read fetches from a fragment before checking
 * and unframing them (read.ts), so that a large GET does not allocate (and the collector
 * reclaim) one buffer per cell read: a 64 MiB GET reads ~64 MiB of framed cells. Also the
 * resident stripes a rebuild unframes its sources into (takeResidentStripe).
 *
 * A buffer goes back to the pool only after the child read that filled it settled normally.
 * A read that failed or timed out may still be writing into its buffer later (a hung domain
 * answering late), so that buffer is dropped, never reused.
 */
import type { ReedSolomon } from '../../codec/reed-solomon.js';
import { ArenaBudgetError, type ResidentStripe } from '../../codec/resident-stripe.js';

/** Buffers kept at most (each at most MAX_SCRATCH_BYTES): 16 x 1 MiB bounds the pool. */
export const MAX_POOLED = 16;
/** Largest buffer pooled, bytes: a framed 256 KiB cell is ~256 KiB; 1 MiB covers cells up to
 * ~1 MiB and ranges of several blocks. Larger reads allocate as before. */
export const MAX_SCRATCH_BYTES = 1024 * 1024;

const pool: Uint8Array[] = [];

/** A buffer of at least `n` bytes (contents undefined), or undefined when `n` is too large to pool. */
export function takeScratch(n: number): Uint8Array | undefined {
  if (n > MAX_SCRATCH_BYTES) return undefined;
  for (let i = pool.length - 1; i >= 0; i--) {
    if (pool[i]!.length >= n) return pool.splice(i, 1)[0];
  }
  // Sized to the request rounded up to 64 KiB, so nearby sizes share buffers.
  return new Uint8Array(Math.min(MAX_SCRATCH_BYTES, Math.ceil(n / 65536) * 65536));
}

/** Returns `buf` (from takeScratch) for reuse; call only once its read settled normally and
 * no view of it is used any more. */
export function giveScratch(buf: Uint8Array | undefined): void {
  if (buf && pool.length < MAX_POOLED) pool.push(buf);
}

/**
 * A resident stripe (shards in the codec's wasm memory) of `length` bytes per shard for a
 * rebuild, so that sources are read or copied into it framed as stored, checked there and
 * reconstructed in place (stripe-group.ts), shard starts `stride` bytes apart when given (a
 * multiple of 64 and at least `length`; by default ResidentStripe's strideFor); or
 * undefined when the resident pool's budget is exhausted or its wasm memory cannot be had
 * (ArenaMemoryError, a subclass of ArenaBudgetError; the caller then uses heap arrays and the
 * copying codec). The caller releases it once the rebuilt bytes are copied out, and
 * writes into it only synchronously after a read settled, never from a read still running.
 */
export function takeResidentStripe(codec: ReedSolomon, length: number, stride?: number): ResidentStripe | undefined {
  try {
    return codec.allocStripe(length, stride === undefined ? {} : { stride });
  } catch (err) {
    if (err instanceof ArenaBudgetError) return undefined;
    throw err;
  }
}
