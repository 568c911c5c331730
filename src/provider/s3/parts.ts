/**
 * @module Cutting a byte stream into multipart-upload parts, one part in memory at a time.
 *
 * The s3 provider reads an unsized (or very large) body through a PartReader: each call
 * to `next()` pulls chunks from the source, with backpressure, until it holds one whole
 * part (exactly `partBytes`, except the last), and hands that part over. Nothing is read
 * ahead beyond the chunk that completes a part, so memory stays at about one part plus
 * one source chunk, whatever the body's size.
 */

export class PartReader {
  readonly #iterator: AsyncIterator<Uint8Array>;
  readonly #partBytes: number;
  /** Chunks read and not yet handed over, in order; `#carried` is their total length. */
  #carry: Uint8Array[] = [];
  #carried = 0;
  #ended = false;

  /** `partBytes`: the size of every part but the last (a positive safe integer). */
  constructor(source: AsyncIterable<Uint8Array>, partBytes: number) {
    if (!Number.isSafeInteger(partBytes) || partBytes < 1)
      throw new RangeError(`invalid part size ${partBytes}`);
    this.#iterator = source[Symbol.asyncIterator]();
    this.#partBytes = partBytes;
  }

  /**
   * Reads until more than one part is held or the source ends. Afterwards `whole`
   * says whether the entire remaining body fits in one part (the source has ended
   * and at most `partBytes` are held). Throws what the source throws.
   */
  async fill(): Promise<void> {
    while (!this.#ended && this.#carried <= this.#partBytes) {
      const step = await this.#iterator.next();
      if (step.done) {
        this.#ended = true;
        break;
      }
      if (step.value.byteLength === 0) continue;
      this.#carry.push(step.value);
      this.#carried += step.value.byteLength;
    }
  }

  /** After fill(): true when everything left is held and fits one part. */
  get whole(): boolean {
    return this.#ended && this.#carried <= this.#partBytes;
  }

  /** Bytes currently held (at most `partBytes` plus one source chunk). */
  get held(): number {
    return this.#carried;
  }

  /**
   * The next part as a list of chunks (views of the source's chunks, not copies), or
   * undefined once the body is exhausted. Every part but the last has exactly
   * `partBytes` bytes; the last has 1..partBytes. Throws what the source throws.
   */
  async next(): Promise<Uint8Array[] | undefined> {
    await this.fill();
    if (this.#carried === 0) return undefined;
    if (this.whole) {
      const part = this.#carry;
      this.#carry = [];
      this.#carried = 0;
      return part;
    }
    const part: Uint8Array[] = [];
    let need = this.#partBytes;
    while (need > 0) {
      const head = this.#carry[0];
      if (head.byteLength <= need) {
        part.push(head);
        this.#carry.shift();
        need -= head.byteLength;
      } else {
        part.push(head.subarray(0, need));
        this.#carry[0] = head.subarray(need);
        need = 0;
      }
    }
    this.#carried -= this.#partBytes;
    return part;
  }

  /** Stops the source early (releases a stream body); safe to call more than once. */
  async close(): Promise<void> {
    this.#carry = [];
    this.#carried = 0;
    if (!this.#ended) {
      this.#ended = true;
      await this.#iterator.return?.();
    }
  }
}
