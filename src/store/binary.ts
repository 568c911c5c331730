/**
 * @module Compact binary encoding for repository records (commits, roots, versions).
 *
 * Unsigned LEB128 varints, length-prefixed byte strings and UTF-8 strings. The reader
 * bounds-checks every read and throws StoreError 'Corrupt' instead of reading past the
 * end or trusting a hostile length.
 */
import { StoreError } from './errors.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Largest integer a varint may carry: 2^53 - 1 (exact in a JS number). */
const MAX_VARINT = Number.MAX_SAFE_INTEGER;

export class ByteWriter {
  #buf: Uint8Array;
  #len = 0;

  constructor(initial = 256) {
    this.#buf = new Uint8Array(initial);
  }

  get length(): number {
    return this.#len;
  }

  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    let cap = this.#buf.length * 2;
    while (cap < this.#len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }

  u8(v: number): this {
    this.#reserve(1);
    this.#buf[this.#len++] = v;
    return this;
  }

  /** Unsigned varint, 0 <= v <= 2^53 - 1. */
  varint(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > MAX_VARINT) throw new RangeError(`varint out of range: ${v}`);
    this.#reserve(8);
    while (v >= 0x80) {
      this.#buf[this.#len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#len++] = v;
    return this;
  }

  u32(v: number): this {
    this.#reserve(4);
    new DataView(this.#buf.buffer, this.#buf.byteOffset).setUint32(this.#len, v >>> 0, true);
    this.#len += 4;
    return this;
  }

  raw(b: Uint8Array): this {
    this.#reserve(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
    return this;
  }

  bytes(b: Uint8Array): this {
    return this.varint(b.length).raw(b);
  }

  string(s: string): this {
    return this.bytes(encoder.encode(s));
  }

  /** Optional string: a presence byte, then the string. */
  optString(s: string | undefined): this {
    if (s === undefined) return this.u8(0);
    return this.u8(1).string(s);
  }

  /** A string map as count + sorted (key, value) pairs (sorted: canonical bytes). */
  stringMap(m: Record<string, string> | undefined): this {
    const entries = m ? Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : [];
    this.varint(entries.length);
    for (const [k, v] of entries) this.string(k).string(v);
    return this;
  }

  /** The encoded bytes (a copy, exactly `length` long). */
  finish(): Uint8Array {
    return this.#buf.slice(0, this.#len);
  }
}

export class ByteReader {
  readonly #buf: Uint8Array;
  #pos = 0;
  readonly #what: string;

  /** `what` names the record in error messages. */
  constructor(buf: Uint8Array, what: string) {
    this.#buf = buf;
    this.#what = what;
  }

  get remaining(): number {
    return this.#buf.length - this.#pos;
  }

  get position(): number {
    return this.#pos;
  }

  #need(n: number): void {
    if (n < 0 || this.#pos + n > this.#buf.length) {
      throw new StoreError('Corrupt', `${this.#what}: truncated (need ${n} bytes at ${this.#pos} of ${this.#buf.length})`);
    }
  }

  u8(): number {
    this.#need(1);
    return this.#buf[this.#pos++]!;
  }

  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * mul;
      if (!(b & 0x80)) {
        if (v > MAX_VARINT) break;
        return v;
      }
      mul *= 0x80;
    }
    throw new StoreError('Corrupt', `${this.#what}: malformed varint at ${this.#pos}`);
  }

  u32(): number {
    this.#need(4);
    const v = new DataView(this.#buf.buffer, this.#buf.byteOffset).getUint32(this.#pos, true);
    this.#pos += 4;
    return v;
  }

  raw(n: number): Uint8Array {
    this.#need(n);
    const out = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }

  bytes(): Uint8Array {
    return this.raw(this.varint());
  }

  string(): string {
    const b = this.bytes();
    try {
      return decoder.decode(b);
    } catch (cause) {
      throw new StoreError('Corrupt', `${this.#what}: invalid UTF-8 string`, { cause });
    }
  }

  optString(): string | undefined {
    const tag = this.u8();
    if (tag === 0) return undefined;
    if (tag !== 1) throw new StoreError('Corrupt', `${this.#what}: bad optional tag ${tag}`);
    return this.string();
  }

  stringMap(): Record<string, string> {
    const n = this.varint();
    if (n > this.remaining) throw new StoreError('Corrupt', `${this.#what}: map of ${n} entries cannot fit`);
    const out: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let i = 0; i < n; i++) {
      const k = this.string();
      out[k] = this.string();
    }
    return out;
  }

  /** Throws unless every byte was consumed (no trailing garbage). */
  end(): void {
    if (this.remaining !== 0) throw new StoreError('Corrupt', `${this.#what}: ${this.remaining} trailing bytes`);
  }
}
