/**
 * @module Streaming pack writer: frames entries one at a time when their lengths are known
 * up front (carrier chunks: fixed-size segments of a streamed body). Memory holds one entry
 * at a time; the blob's total size is known before the first byte, so it can be streamed
 * to a provider with an exact content length.
 */
import { packKernel, type FooterRow, type PackKernel } from '../wasm/pack.js';
import type { Flavor } from '../wasm/loader.js';
import { crc32cOf } from '../checksum/accelerator.js';
import { PackError } from './errors.js';
import { randomIdBytes } from './random-pool.js';

export const PACK_HEADER_SIZE = 32;
export const ENTRY_HEADER_SIZE = 24;
export const TRAILER_SIZE = 32;
export const FOOTER_ROW_SIZE = 16;
/** Largest body one entry may hold: the header's u32 length field. */
export const MAX_ENTRY_BODY = 0xffffffff;

/** The tag of a 12-byte pack id: its first four bytes, little-endian. */
export function tagOf(id: Uint8Array): number {
  return (id[0]! | (id[1]! << 8) | (id[2]! << 16) | (id[3]! << 24)) >>> 0;
}

/** Size in bytes of a pack holding bodies of `lengths`. */
export function packSize(lengths: readonly number[]): number {
  let size = PACK_HEADER_SIZE + lengths.length * (ENTRY_HEADER_SIZE + FOOTER_ROW_SIZE) + TRAILER_SIZE;
  for (const n of lengths) size += n;
  return size;
}

export class PackStream {
  readonly id: Uint8Array;
  readonly tag: number;
  /** Total blob size, known before any entry is written. */
  readonly size: number;
  readonly rows: FooterRow[] = [];
  readonly #lengths: readonly number[];
  readonly #kernel: PackKernel;
  readonly #flavor: Flavor | undefined;
  #headerCrc = -1;
  #at = PACK_HEADER_SIZE;

  /**
   * Prepares a pack of `lengths.length` entries with those body lengths. Throws PackError
   * 'ERR_PACK_TOO_LARGE' for no entries, too many, or a body over 4 GiB - 1.
   */
  constructor(lengths: readonly number[], options: { id?: Uint8Array; flavor?: Flavor } = {}) {
    this.#kernel = packKernel(options.flavor);
    this.#flavor = options.flavor;
    if (lengths.length === 0 || lengths.length > this.#kernel.maxEntries) {
      throw new PackError('ERR_PACK_TOO_LARGE', `a pack holds 1..${this.#kernel.maxEntries} entries, got ${lengths.length}`);
    }
    lengths.forEach((n, i) => {
      if (!Number.isInteger(n) || n < 0 || n > MAX_ENTRY_BODY) {
        throw new PackError('ERR_PACK_TOO_LARGE', `entry ${i} length ${n} is not 0..${MAX_ENTRY_BODY}`);
      }
    });
    const id = options.id ? options.id.slice(0, 12) : randomIdBytes(12);
    if (id.length !== 12) throw new PackError('ERR_PACK_TOO_LARGE', 'pack id must be 12 bytes');
    this.id = id;
    this.tag = tagOf(id);
    this.#lengths = lengths;
    this.size = packSize(lengths);
  }

  /** The 32-byte pack header; call first. */
  header(): Uint8Array {
    const h = this.#kernel.packHeader(this.#lengths.length, this.id);
    this.#headerCrc = h.crc;
    return h.bytes;
  }

  /**
   * The framing for the next entry: its 24-byte header followed by `body` itself (not
   * copied). Entries must come in order with the lengths given to the constructor.
   */
  entry(body: Uint8Array): Uint8Array[] {
    const index = this.rows.length;
    if (this.#headerCrc < 0) throw new Error('PackStream: header() must come first');
    if (index >= this.#lengths.length) throw new Error(`PackStream: more than ${this.#lengths.length} entries`);
    if (body.length !== this.#lengths[index]) {
      throw new PackError('ERR_PACK_MISMATCH', `entry ${index} is ${body.length} bytes, ${this.#lengths[index]} announced`);
    }
    const crc = crc32cOf(this.#kernel, body, this.#flavor);
    this.rows.push({ offset: this.#at, length: body.length, crc });
    this.#at += ENTRY_HEADER_SIZE + body.length;
    const head = this.#kernel.entryHeader(this.tag, index, body.length, crc);
    return body.length > 0 ? [head, body] : [head];
  }

  /**
   * The 24-byte header of the next entry, whose `length` body bytes (CRC32C `crc`, computed
   * by the caller) the caller writes right after it. Same checks and bookkeeping as
   * {@link entry}; for writers that lay header and body out in one buffer themselves.
   */
  entryHeader(length: number, crc: number): Uint8Array {
    const index = this.rows.length;
    if (this.#headerCrc < 0) throw new Error('PackStream: header() must come first');
    if (index >= this.#lengths.length) throw new Error(`PackStream: more than ${this.#lengths.length} entries`);
    if (length !== this.#lengths[index]) {
      throw new PackError('ERR_PACK_MISMATCH', `entry ${index} is ${length} bytes, ${this.#lengths[index]} announced`);
    }
    this.rows.push({ offset: this.#at, length, crc: crc >>> 0 });
    this.#at += ENTRY_HEADER_SIZE + length;
    return this.#kernel.entryHeader(this.tag, index, length, crc >>> 0);
  }

  /** The footer table and trailer; call after the last entry. */
  finish(): Uint8Array[] {
    if (this.rows.length !== this.#lengths.length) {
      throw new Error(`PackStream: ${this.rows.length} of ${this.#lengths.length} entries written`);
    }
    const { footer, trailer } = this.#kernel.footerAndTrailer(this.rows, this.#at, this.#headerCrc);
    return [footer, trailer];
  }
}
