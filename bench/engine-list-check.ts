/**
 * @module Checks a listing against the key sequence it should produce, streaming: the
 * keys a LIST pass returns are compared, in order, with the expected keys in listing
 * order, so a million keys are checked without holding either set in memory.
 *
 * Keys must be ASCII (JavaScript `<` is then byte order), which the bench's keys are.
 */

export interface ListVerdict {
  /** Keys the listing returned. */
  keys: number;
  /** Keys returned again right after themselves, or out of order (not after the last one). */
  duplicates: number;
  /** Expected keys the listing never returned. */
  missing: number;
  /** Keys returned that were not expected at all. */
  unexpected: number;
}

export class ListChecker {
  readonly #expected: Iterator<string>;
  #want: string | undefined;
  #last: string | undefined;
  #v: ListVerdict = { keys: 0, duplicates: 0, missing: 0, unexpected: 0 };

  /** `expected` yields the keys in listing (ascending byte) order. */
  constructor(expected: Iterable<string>) {
    this.#expected = expected[Symbol.iterator]();
    this.#advance();
  }

  #advance(): void {
    const r = this.#expected.next();
    this.#want = r.done ? undefined : r.value;
  }

  /** Records the next key the listing returned. */
  see(key: string): void {
    this.#v.keys++;
    if (this.#last !== undefined && key <= this.#last) {
      this.#v.duplicates++; // a repeat, or a step back: either way the pass is not a clean scan
      return;
    }
    this.#last = key;
    while (this.#want !== undefined && this.#want < key) {
      this.#v.missing++;
      this.#advance();
    }
    if (this.#want === key) this.#advance();
    else this.#v.unexpected++;
  }

  /** The verdict once the listing ended: expected keys never seen count as missing. */
  finish(): ListVerdict {
    while (this.#want !== undefined) {
      this.#v.missing++;
      this.#advance();
    }
    return { ...this.#v };
  }
}
