/**
 * @module Typed boundary of the pack wasm module: the only code touching its memory.
 * Each method copies its input into the module, runs one export, and copies results out.
 */
import { instantiate, defaultFlavor, type Flavor } from './loader.js';

/** One row of a pack's footer table. */
export interface FooterRow {
  offset: number;
  length: number;
  crc: number;
}

interface PackExports {
  memory: WebAssembly.Memory;
  headerPtr(): number;
  idPtr(): number;
  footerPtr(): number;
  arenaPtr(): number;
  arenaSize(): number;
  maxEntries(): number;
  crcArena(crc: number, len: number): number;
  writePackHeader(count: number): number;
  checkPackHeader(): number;
  writeEntry(tag: number, index: number, length: number, bodyCrc: number): void;
  setFooterRow(index: number, at: bigint, length: number, bodyCrc: number): void;
  checkEntryHeader(tag: number, index: number): number;
  writeTrailer(footerAt: bigint, count: number, headerCrc: number): void;
  checkTrailer(packSize: bigint): number;
  checkFooter(footerAt: bigint, count: number): number;
}

export class PackKernel {
  readonly flavor: Flavor;
  readonly maxEntries: number;
  #x: PackExports;
  #mem: Uint8Array;
  #view: DataView;

  constructor(flavor: Flavor) {
    this.flavor = flavor;
    this.#x = instantiate('pack', flavor).exports as unknown as PackExports;
    this.#mem = new Uint8Array(this.#x.memory.buffer);
    this.#view = new DataView(this.#x.memory.buffer);
    this.maxEntries = this.#x.maxEntries();
  }

  /** CRC32C of `data` (continuing `crc`), streamed through the arena in slices. */
  crc32c(data: Uint8Array, crc = 0): number {
    const arena = this.#x.arenaPtr();
    const slice = this.#x.arenaSize();
    for (let off = 0; off < data.length; off += slice) {
      const n = Math.min(slice, data.length - off);
      this.#mem.set(data.subarray(off, off + n), arena);
      crc = this.#x.crcArena(crc, n);
    }
    return crc >>> 0;
  }

  /** The 32-byte pack header for `count` entries and 12-byte `id`; also its CRC. */
  packHeader(count: number, id: Uint8Array): { bytes: Uint8Array; crc: number } {
    this.#mem.set(id.subarray(0, 12), this.#x.idPtr());
    const crc = this.#x.writePackHeader(count) >>> 0;
    return { bytes: this.#copyOut(this.#x.headerPtr(), 32), crc };
  }

  /** Status of a 32-byte pack header, with its id and entry count when valid. */
  checkPackHeader(bytes: Uint8Array): { status: number; id: Uint8Array; count: number; crc: number } {
    const at = this.#x.headerPtr();
    this.#mem.set(bytes.subarray(0, 32), at);
    const status = this.#x.checkPackHeader();
    return {
      status,
      id: this.#copyOut(this.#x.idPtr(), 12),
      count: this.#view.getUint32(at + 12, true),
      crc: this.#view.getUint32(at + 28, true),
    };
  }

  /** The 24-byte header of entry `index` of the pack tagged `tag`. */
  entryHeader(tag: number, index: number, length: number, bodyCrc: number): Uint8Array {
    this.#x.writeEntry(tag, index, length, bodyCrc);
    return this.#copyOut(this.#x.headerPtr(), 24);
  }

  /** Status of a 24-byte entry header (index -1: any), with its length and body CRC. */
  checkEntryHeader(bytes: Uint8Array, tag: number, index: number): { status: number; index: number; length: number; crc: number } {
    const at = this.#x.headerPtr();
    this.#mem.set(bytes.subarray(0, 24), at);
    const status = this.#x.checkEntryHeader(tag >>> 0, index < 0 ? 0xffffffff : index);
    const v = this.#view;
    return { status, index: v.getUint32(at + 8, true), length: v.getUint32(at + 12, true), crc: v.getUint32(at + 16, true) };
  }

  /**
   * The footer table for `rows` (entry offset, body length, body CRC, in index order) and
   * the 32-byte trailer after it. One synchronous call, so interleaved writers of several
   * packs (streams) never see each other's rows.
   */
  footerAndTrailer(rows: readonly FooterRow[], footerAt: number, headerCrc: number): { footer: Uint8Array; trailer: Uint8Array } {
    if (rows.length > this.maxEntries) throw new RangeError(`${rows.length} footer rows exceed ${this.maxEntries}`);
    rows.forEach((r, i) => this.#x.setFooterRow(i, BigInt(r.offset), r.length, r.crc));
    const footer = this.#copyOut(this.#x.footerPtr(), rows.length * 16);
    this.#x.writeTrailer(BigInt(footerAt), rows.length, headerCrc);
    return { footer, trailer: this.#copyOut(this.#x.headerPtr(), 32) };
  }

  /** Status of a 32-byte trailer for a blob of `packSize`, with the footer position. */
  checkTrailer(bytes: Uint8Array, packSize: number): { status: number; footerAt: number; count: number } {
    const at = this.#x.headerPtr();
    this.#mem.set(bytes.subarray(0, 32), at);
    const status = this.#x.checkTrailer(BigInt(packSize));
    return { status, footerAt: Number(this.#view.getBigUint64(at, true)), count: this.#view.getUint32(at + 8, true) };
  }

  /**
   * Status of the footer table `rows` (count x 16 bytes); must follow checkTrailer of the
   * same pack. On success the rows are returned decoded.
   */
  checkFooter(rows: Uint8Array, footerAt: number, count: number): { status: number; entries: { offset: number; length: number; crc: number }[] } {
    const base = this.#x.footerPtr();
    this.#mem.set(rows.subarray(0, count * 16), base);
    const status = this.#x.checkFooter(BigInt(footerAt), count);
    const entries: { offset: number; length: number; crc: number }[] = [];
    if (status === 0) {
      const v = this.#view;
      for (let i = 0; i < count; i++) {
        const r = base + i * 16;
        entries.push({ offset: Number(v.getBigUint64(r, true)), length: v.getUint32(r + 8, true), crc: v.getUint32(r + 12, true) });
      }
    }
    return { status, entries };
  }

  #copyOut(at: number, n: number): Uint8Array {
    return this.#mem.slice(at, at + n);
  }
}

const kernels = new Map<Flavor, PackKernel>();

/** The shared pack kernel of `flavor` (default: the best this runtime validates). */
export function packKernel(flavor: Flavor = defaultFlavor('pack')): PackKernel {
  let k = kernels.get(flavor);
  if (!k) {
    k = new PackKernel(flavor);
    kernels.set(flavor, k);
  }
  return k;
}
