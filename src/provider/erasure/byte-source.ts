/**
 * @module Pulling a request body into fixed-size buffers (stripes), one chunk at a time.
 *
 * Every byte is copied out of the body's chunks, so a chunk fully copied is no longer needed:
 * `released` (PutOptions.released of the put) hears of it, and the caller may reuse it.
 */
export class ByteSource {
  readonly #it: AsyncIterator<Uint8Array>;
  readonly #released: ((chunk: Uint8Array) => void) | undefined;
  /** The body's chunk #rest is the unread end of. */
  #chunk: Uint8Array | undefined;
  #rest: Uint8Array | undefined;
  #done = false;
  /** Bytes handed out so far. */
  total = 0;

  constructor(chunks: AsyncIterable<Uint8Array>, released?: (chunk: Uint8Array) => void) {
    this.#it = chunks[Symbol.asyncIterator]();
    this.#released = released;
  }

  /**
   * Copies up to `n` bytes into `buf` at `off`; resolves with the number copied, less than
   * `n` only at the end of the body. Errors of the body pass through.
   */
  async fill(buf: Uint8Array, off: number, n: number): Promise<number> {
    let got = 0;
    while (got < n) {
      if (!this.#rest) {
        if (this.#done) break;
        const step = await this.#it.next();
        if (step.done) {
          this.#done = true;
          break;
        }
        this.#chunk = this.#rest = step.value;
      }
      const take = Math.min(n - got, this.#rest.length);
      buf.set(this.#rest.subarray(0, take), off + got);
      got += take;
      if (take === this.#rest.length) {
        this.#rest = undefined;
        const done = this.#chunk!;
        this.#chunk = undefined;
        this.#released?.(done);
      } else this.#rest = this.#rest.subarray(take);
    }
    this.total += got;
    return got;
  }

  /**
   * Copies up to `n` bytes into `buf` at `off` from the chunk already in hand, without
   * waiting; returns the number copied (0 when no bytes are in hand). For a caller that fills
   * many small slots: `fill` only for the rest, so most slots cost no promise.
   */
  take(buf: Uint8Array, off: number, n: number): number {
    const rest = this.#rest;
    if (!rest || n <= 0) return 0;
    const take = Math.min(n, rest.length);
    buf.set(take === rest.length ? rest : rest.subarray(0, take), off);
    this.total += take;
    if (take === rest.length) {
      this.#rest = undefined;
      const done = this.#chunk!;
      this.#chunk = undefined;
      this.#released?.(done);
    } else this.#rest = rest.subarray(take);
    return take;
  }

  /** Stops the body early (releases a stream). */
  async cancel(): Promise<void> {
    if (!this.#done) await this.#it.return?.(undefined);
    this.#done = true;
  }
}
