/**
 * @module Reused read buffers of the stripe pass (stripe-pass.ts): each source fragment's group
 * (about a MiB) is read into a buffer from here, handed to the worker that checks it
 * (transferred, not copied: pass-pool.ts), and handed back when the worker is done with it.
 *
 * Without it, every group of every source was a fresh allocation of its own: on a repair of a
 * wiped (4,2) domain (2 GiB of blobs, 2.5 GiB read) the main thread spent more time in the
 * garbage collector than in reading, and the kernel in faulting in and unmapping fresh pages.
 *
 * A buffer is given back only when nothing can still write to it or read from it: after its
 * group was checked (inline or by a worker that transferred it back). One whose read failed or
 * timed out is dropped instead, since a child that did not answer in time may still be filling
 * it. The pool keeps at most POOL_BYTES; a buffer above that is left to the garbage collector.
 */

/** Bytes of idle buffers kept: the groups of a few passes in flight (8 blobs at once on a
 * stopped repository, PASS_BYTES each at most, about a third of it in source reads). */
export const POOL_BYTES = 64 * 2 ** 20;
/** Capacities are rounded up to this, so that groups of nearly equal size share buffers. */
const GRAIN = 64 * 1024;

const idle = new Map<number, ArrayBuffer[]>();
let idleBytes = 0;
/** Buffers that came from here (only those are taken back). */
const ours = new WeakSet<ArrayBuffer>();
/** Buffers idle now (a buffer given back twice must not be taken twice). */
const idleSet = new WeakSet<ArrayBuffer>();

/** A buffer of at least `length` bytes (a view of exactly `length`), idle or new. */
export function takeBuffer(length: number): Uint8Array {
  const cap = Math.max(GRAIN, Math.ceil(length / GRAIN) * GRAIN);
  const free = idle.get(cap);
  const buf = free?.pop();
  if (buf) {
    idleBytes -= cap;
    idleSet.delete(buf);
    return new Uint8Array(buf, 0, length);
  }
  const fresh = new ArrayBuffer(cap);
  ours.add(fresh);
  return new Uint8Array(fresh, 0, length);
}

/** Is `b` a view of a buffer from takeBuffer (so it may be transferred and given back)? */
export function isPooled(b: Uint8Array): boolean {
  return b.buffer instanceof ArrayBuffer && ours.has(b.buffer);
}

/**
 * Gives back the buffer under `b` (a view from takeBuffer, or of a buffer transferred back from
 * a worker, which re-registers it). The caller must hold no other view of it. Buffers that are
 * detached, not of pool size, or over the pool's bound are dropped.
 */
export function giveBuffer(b: ArrayBuffer): void {
  const cap = b.byteLength;
  if (cap === 0 || cap % GRAIN !== 0 || idleBytes + cap > POOL_BYTES || idleSet.has(b)) return;
  ours.add(b);
  idleSet.add(b);
  let free = idle.get(cap);
  if (!free) idle.set(cap, (free = []));
  free.push(b);
  idleBytes += cap;
}

/** Bytes held idle now (tests). */
export function idlePoolBytes(): number {
  return idleBytes;
}
