/**
 * @module A growable byte queue for the form parser: chunks are appended by copy into one
 * buffer (capacity doubling, so appending n bytes costs O(n) however they are fragmented)
 * and consumed from the front. It holds no view of the network buffers it was fed, so a
 * client sending 1-byte pieces pins nothing but the queue itself.
 */

/** Smallest capacity allocated, bytes. */
const MIN_CAPACITY = 4096;

export class ByteQueue {
  #buf: Buffer = Buffer.alloc(0);
  #start = 0;
  #end = 0;

  /** Unconsumed bytes. */
  get length(): number {
    return this.#end - this.#start;
  }

  /** The unconsumed bytes as a view (valid until the next append or consume). */
  view(): Buffer {
    return this.#buf.subarray(this.#start, this.#end);
  }

  /** Appends a copy of `chunk`. */
  append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    const need = this.length + chunk.length;
    if (this.#end + chunk.length > this.#buf.length) {
      if (need <= this.#buf.length && this.#start > 0) {
        this.#buf.copy(this.#buf, 0, this.#start, this.#end); // compact in place
      } else {
        let cap = Math.max(MIN_CAPACITY, this.#buf.length);
        while (cap < need) cap *= 2;
        const next = Buffer.allocUnsafe(cap);
        this.#buf.copy(next, 0, this.#start, this.#end);
        this.#buf = next;
      }
      this.#end = this.length;
      this.#start = 0;
    }
    this.#buf.set(chunk, this.#end);
    this.#end += chunk.length;
  }

  /** Removes and returns a copy of the first `n` bytes (n <= length). */
  take(n: number): Buffer {
    const out = Buffer.from(this.#buf.subarray(this.#start, this.#start + n));
    this.skip(n);
    return out;
  }

  /** Drops the first `n` bytes (n <= length). */
  skip(n: number): void {
    this.#start += n;
    if (this.#start === this.#end) {
      this.#start = 0;
      this.#end = 0;
    }
  }

  /** Index of `needle` in the unconsumed bytes at or after `from`, or -1. */
  indexOf(needle: Uint8Array, from = 0): number {
    const i = this.view().indexOf(needle, from);
    return i;
  }
}
