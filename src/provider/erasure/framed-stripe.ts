/**
 * @module Building one stripe of a write of known length straight in its framed layout.
 *
 * The body is read block by block into the data cells' block slots of k + m framed cells
 * (geometry.ts draws a framed cell: block, CRC, block, CRC, ...) held in the codec's wasm
 * memory; the codec computes each block column's parity into the parity cells' slots in
 * place; the cells are then copied once into the heap buffer handed to the sinks, and
 * fragment.ts sealFramed writes the CRCs there. Per byte of body that is one copy in and
 * 1.4 out at (10,4), with no copy into or out of the kernel. Only for a known length: the
 * last stripe's (shorter) cell length must be known before its first byte is placed.
 */
import { ProviderError } from '../provider.js';
import type { ReedSolomon } from '../../codec/reed-solomon.js';
import { ArenaBudgetError, type ResidentStripe } from '../../codec/resident-stripe.js';
import type { ByteSource } from './byte-source.js';
import { BLOCK_BYTES, CRC_BYTES, framedLength, type Geometry } from './geometry.js';
import { takeStripeBuffer, type StripeBuffer } from './stripe-buffers.js';

/** A stripe laid out as k + m framed cells of `framedCell` bytes each, CRC slots unwritten. */
export interface FramedStripe {
  buf: Uint8Array;
  /** The reusable buffer `buf` is a view of (stripe-buffers.ts): the caller holds each cell
   * it pushes and seals it. */
  owner: StripeBuffer;
  cellLength: number;
  framedCell: number;
  /** Body bytes the stripe holds. */
  bytes: number;
}

/**
 * Reads stripe `s` of geometry `g` from `source` into a new framed buffer (padding the last
 * stripe's cells with zeros) and computes its parity into the parity cells. Throws
 * ProviderError 'LengthMismatch' when the body ends early; the body's own errors pass through.
 *
 * The stripe is built in the codec's wasm memory (a resident stripe: the body is read
 * straight into it and the parity computed in place, no copy into or out of the kernel),
 * then copied once into the heap buffer the sinks are given: a child put may hold a pushed
 * chunk for as long as it likes (a socket queue, a hung domain), so resident memory, which
 * the next stripe reuses, is never handed to one. The heap buffer comes from the stripe
 * buffer pool (stripe-buffers.ts): it is reused only once every child said it wrote its cell. When the resident pool is exhausted the
 * stripe is built in the heap buffer directly and encoded through the copying API.
 */
export async function readFramedStripe(
  source: ByteSource,
  codec: ReedSolomon,
  g: Geometry,
  s: number,
  n: number,
  key: string
): Promise<FramedStripe> {
  const cl = g.cellLength(s);
  const fl = framedLength(cl);
  let stripe: ResidentStripe | undefined;
  try {
    stripe = codec.allocStripe(fl);
  } catch (err) {
    if (!(err instanceof ArenaBudgetError)) throw err;
  }
  // Not zero-filled: every block slot is filled from the body, zero padding or the codec,
  // and every CRC slot by sealFramed, before the buffer is pushed.
  const owner = takeStripeBuffer(fl * n);
  const buf = owner.buf.subarray(0, fl * n);
  if (!stripe) {
    await fillBlocks(source, g, s, buf, fl, key);
    const blocks = Math.ceil(cl / BLOCK_BYTES);
    for (let b = 0; n > g.k && b < blocks; b++) {
      const len = Math.min(BLOCK_BYTES, cl - b * BLOCK_BYTES);
      const slot = (i: number) => buf.subarray(i * fl + b * (BLOCK_BYTES + CRC_BYTES), i * fl + b * (BLOCK_BYTES + CRC_BYTES) + len);
      codec.encode(Array.from({ length: n }, (_, i) => slot(i)));
    }
    return { buf, owner, cellLength: cl, framedCell: fl, bytes: g.stripeData(s) };
  }
  try {
    // The resident pool never grows memory under a live stripe: this view stays valid
    // across the body's awaits.
    const view = stripe.bytes;
    await fillBlocks(source, g, s, view, stripe.stride, key);
    if (n > g.k) encodeBlocks(codec, stripe, cl);
    for (let i = 0; i < n; i++) buf.set(view.subarray(i * stripe.stride, i * stripe.stride + fl), i * fl);
  } finally {
    stripe.release();
  }
  return { buf, owner, cellLength: cl, framedCell: fl, bytes: g.stripeData(s) };
}

/** Computes the parity of every block column of a resident framed stripe, in place: the
 * blocks of column b sit at b * (BLOCK_BYTES + CRC_BYTES) in every cell. */
function encodeBlocks(codec: ReedSolomon, stripe: ResidentStripe, cl: number): void {
  const blocks = Math.ceil(cl / BLOCK_BYTES);
  for (let b = 0; b < blocks; b++) {
    const length = Math.min(BLOCK_BYTES, cl - b * BLOCK_BYTES);
    codec.encodeResident(stripe, { offset: b * (BLOCK_BYTES + CRC_BYTES), length });
  }
}

/**
 * Reads the body bytes of stripe `s` into the data cells' block slots of `into` (cell i at
 * i * stride), zero-padding the last stripe. Throws ProviderError 'LengthMismatch' when the
 * body ends early.
 */
async function fillBlocks(source: ByteSource, g: Geometry, s: number, into: Uint8Array, stride: number, key: string): Promise<void> {
  const cl = g.cellLength(s);
  const data = g.stripeData(s);
  const blocks = Math.ceil(cl / BLOCK_BYTES);
  for (let i = 0; i < g.k; i++) {
    for (let b = 0; b < blocks; b++) {
      const at = i * stride + b * (BLOCK_BYTES + CRC_BYTES);
      const len = Math.min(BLOCK_BYTES, cl - b * BLOCK_BYTES);
      const real = Math.max(0, Math.min(len, data - (i * cl + b * BLOCK_BYTES)));
      if (real > 0) {
        let got = source.take(into, at, real);
        if (got < real) got += await source.fill(into, at + got, real - got);
        if (got !== real)
          throw new ProviderError('LengthMismatch', `${key}: body has ${g.stripeStart(s) + i * cl + b * BLOCK_BYTES + got} bytes, contentLength says ${g.length}`);
      }
      into.fill(0, at + real, at + len);
    }
  }
}
