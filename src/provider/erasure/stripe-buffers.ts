/**
 * @module Reused heap buffers for the framed stripes a striped write hands to its fragment
 * sinks (write.ts), so that a large put does not allocate (and page-fault, and the collector
 * reclaim) one fresh buffer per stripe: a 64 MiB put at (10,4) frames ~90 MiB. Fresh memory
 * costs the main thread ~2.5 ms per MiB here (page faults on first touch, unmapping on
 * collection), more than the copy into it.
 *
 * A stripe buffer goes back to the pool only once every child put it was pushed to said it
 * has written its cell (PutOptions.released). A child that never says so (a provider that does
 * not call `released`, a fragment that failed, a put still holding the bytes in a socket queue)
 * keeps the buffer out of the pool for good: it is left to the collector, never reused.
 */

/** Idle bytes kept at most, process-wide: 6 stripes of (10,4) at 256 KiB cells (~3.5 MiB each);
 * a put holds about three stripes at a time (one being filled, one being written, one queued). */
export const MAX_IDLE_BYTES = 24 * 1024 * 1024;

const idle: Buffer[] = [];
let idleBytes = 0;

/** One framed stripe's buffer and how many pushed cells of it are not yet released. */
export class StripeBuffer {
  /** The whole buffer; a stripe uses its first bytes (the last stripe of a blob is shorter). */
  readonly buf: Buffer;
  #pending = 0;
  #sealed = false;
  #returned = false;

  constructor(buf: Buffer) {
    this.buf = buf;
  }

  /** Counts one cell handed to a sink (call before the push). */
  hold(cell: Uint8Array): void {
    this.#pending++;
    OWNER.set(cell, this);
  }

  /** No more cells will be pushed: the buffer returns to the pool once every held cell is
   * released (at once when none was held). */
  seal(): void {
    this.#sealed = true;
    this.#maybeReturn();
  }

  /** One held cell was written by its child put. */
  release(): void {
    this.#pending--;
    this.#maybeReturn();
  }

  #maybeReturn(): void {
    if (!this.#sealed || this.#pending !== 0 || this.#returned) return;
    this.#returned = true;
    if (idleBytes + this.buf.length > MAX_IDLE_BYTES) return;
    idle.push(this.buf);
    idleBytes += this.buf.length;
  }
}

/** Which stripe buffer a pushed cell is a view of (to count its release). */
const OWNER = new WeakMap<Uint8Array, StripeBuffer>();

/** A stripe buffer of at least `n` bytes (contents undefined: the caller writes every byte it
 * pushes). Takes the smallest idle buffer that fits, else allocates one of exactly `n`. */
export function takeStripeBuffer(n: number): StripeBuffer {
  let best = -1;
  for (let i = 0; i < idle.length; i++) {
    const len = idle[i]!.length;
    if (len >= n && (best < 0 || len < idle[best]!.length)) best = i;
  }
  if (best < 0) return new StripeBuffer(Buffer.allocUnsafe(n));
  const [buf] = idle.splice(best, 1);
  idleBytes -= buf!.length;
  return new StripeBuffer(buf!);
}

/** PutOptions.released for the sinks: a written cell counts towards its buffer's return.
 * Chunks that are not cells of a stripe buffer (headers, trailers) are ignored; a cell is
 * counted once however often it is reported. */
export function releaseCell(chunk: Uint8Array): void {
  const owner = OWNER.get(chunk);
  if (!owner) return;
  OWNER.delete(chunk);
  owner.release();
}
