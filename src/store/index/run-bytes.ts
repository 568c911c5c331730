/**
 * @module Byte-level encoding shared by the run format and RunMeta: a growable little-endian
 * sink, a bounds-checked reader, and unsigned LEB128 varints limited to safe integers.
 */

/** LEB128 bytes needed for 2^53 - 1 (7 payload bits per byte). */
const MAX_VARINT_BYTES = 8;

/** Length of the common prefix of `a[0, aLength)` and `b`. */
export function sharedPrefix(a: Uint8Array, aLength: number, b: Uint8Array): number {
  const n = Math.min(aLength, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** A growable byte buffer written front to back. */
export class ByteSink {
  #buf: Uint8Array;
  #length = 0;

  constructor(initialBytes = 256) {
    this.#buf = new Uint8Array(Math.max(16, initialBytes));
  }

  get length(): number {
    return this.#length;
  }

  #reserve(n: number): void {
    if (this.#length + n <= this.#buf.length) return;
    const grown = new Uint8Array(Math.max(this.#length + n, this.#buf.length * 2));
    grown.set(this.#buf.subarray(0, this.#length));
    this.#buf = grown;
  }

  u8(x: number): void {
    this.#reserve(1);
    this.#buf[this.#length++] = x;
  }

  u32(x: number): void {
    this.#reserve(4);
    const b = this.#buf;
    const o = this.#length;
    b[o] = x;
    b[o + 1] = x >>> 8;
    b[o + 2] = x >>> 16;
    b[o + 3] = x >>> 24;
    this.#length += 4;
  }

  /** A safe integer as 8 bytes. */
  u64(x: number): void {
    this.u32(x >>> 0);
    this.u32(Math.floor(x / 2 ** 32));
  }

  /** A non-negative safe integer as unsigned LEB128. Throws RangeError otherwise. */
  varint(x: number): void {
    if (!Number.isSafeInteger(x) || x < 0) throw new RangeError(`varint out of range: ${x}`);
    this.#reserve(MAX_VARINT_BYTES);
    while (x >= 0x80) {
      this.#buf[this.#length++] = (x % 0x80) | 0x80;
      x = Math.floor(x / 0x80);
    }
    this.#buf[this.#length++] = x;
  }

  bytes(b: Uint8Array): void {
    this.#reserve(b.length);
    this.#buf.set(b, this.#length);
    this.#length += b.length;
  }

  /** The bytes written so far: a view, valid until the next write or reset. */
  view(): Uint8Array {
    return this.#buf.subarray(0, this.#length);
  }

  reset(): void {
    this.#length = 0;
  }
}

/** Reads `bytes[pos, end)`; every read past `end` or malformed varint calls `fail` (which throws). */
export class ByteReader {
  pos: number;
  readonly #bytes: Uint8Array;
  readonly #end: number;
  readonly #fail: (message: string) => never;

  constructor(bytes: Uint8Array, pos: number, end: number, fail: (message: string) => never) {
    this.#bytes = bytes;
    this.pos = pos;
    this.#end = end;
    this.#fail = fail;
  }

  get remaining(): number {
    return this.#end - this.pos;
  }

  /** Advances past `n` bytes and returns where they start. */
  skip(n: number): number {
    if (n > this.#end - this.pos)
      this.#fail(`${n} bytes needed at ${this.pos}, ${this.remaining} left`);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  take(n: number): Uint8Array {
    const at = this.skip(n);
    return this.#bytes.subarray(at, at + n);
  }

  u8(): number {
    return this.#bytes[this.skip(1)]!;
  }

  u32(): number {
    const o = this.skip(4);
    const b = this.#bytes;
    return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
  }

  u64(): number {
    const low = this.u32();
    const high = this.u32();
    if (high >= 2 ** 21) this.#fail(`64-bit value above 2^53 at ${this.pos - 8}`);
    return high * 2 ** 32 + low;
  }

  varint(): number {
    let x = 0;
    let scale = 1;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
      if (this.pos >= this.#end) this.#fail(`varint runs past the end at ${this.pos}`);
      const b = this.#bytes[this.pos++]!;
      x += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (!Number.isSafeInteger(x) || (b === 0 && i > 0))
          this.#fail(`non-canonical varint at ${this.pos}`);
        return x;
      }
      scale *= 0x80;
    }
    return this.#fail(`varint longer than ${MAX_VARINT_BYTES} bytes at ${this.pos}`);
  }
}
