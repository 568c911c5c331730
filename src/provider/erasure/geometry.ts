/**
 * @module Where a blob's bytes sit: stripes, cells, checksum blocks and fragment offsets.
 *
 * A blob of `length` bytes is cut into stripes of k data cells of `cellSize` bytes; the last
 * stripe is shortened to cells of ceil(rest / k) bytes (zero-padded at the end), so the
 * padding never exceeds k - 1 bytes per fragment. A replicated copy is the same with k = 1.
 *
 * Each cell is stored in its fragment as checksum blocks of BLOCK_BYTES (the last one of a
 * cell may be short), every block followed by its 4-byte CRC32C, so a small ranged read
 * touches one or two blocks of one fragment, not a whole cell:
 *
 *   fragment = header | cell 0 of stripe 0 | cell of stripe 1 | … | trailer
 *   cell     = block 0 | crc 0 | block 1 | crc 1 | … | block n-1 | crc n-1
 */

/** Bytes covered by one CRC32C: a 4 KiB read costs one 16 KiB read and check, and the
 * framing overhead is 4 bytes in 16 KiB (0.025 %). */
export const BLOCK_BYTES = 16 * 1024;
/** Bytes of the CRC stored after each block. */
export const CRC_BYTES = 4;
/** Fragment header and trailer sizes (fragment.ts). */
export const HEADER_BYTES = 64;
export const TRAILER_BYTES = 24;

/** Framed size of a cell of `n` bytes (blocks plus their CRCs). */
export function framedLength(n: number): number {
  return n + CRC_BYTES * Math.ceil(n / BLOCK_BYTES);
}

export class Geometry {
  readonly k: number;
  readonly cellSize: number;
  readonly length: number;
  /** Number of stripes (0 for an empty blob). */
  readonly stripes: number;
  /** Cell length of the last stripe. */
  readonly lastCell: number;
  /** Bytes of data one full stripe holds (k * cellSize). */
  readonly stripeBytes: number;

  constructor(k: number, cellSize: number, length: number) {
    this.k = k;
    this.cellSize = cellSize;
    this.length = length;
    this.stripeBytes = k * cellSize;
    this.stripes = Math.ceil(length / this.stripeBytes);
    const rest = length - (this.stripes - 1) * this.stripeBytes;
    this.lastCell = this.stripes === 0 ? 0 : Math.ceil(rest / k);
  }

  /** Cell length of stripe `s`. */
  cellLength(s: number): number {
    return s === this.stripes - 1 ? this.lastCell : this.cellSize;
  }

  /** Logical offset of the first byte of stripe `s`. */
  stripeStart(s: number): number {
    return s * this.stripeBytes;
  }

  /** Data bytes of stripe `s` (the last may be short of k * its cell length). */
  stripeData(s: number): number {
    return Math.min(this.stripeBytes, this.length - this.stripeStart(s));
  }

  /** Offset in a fragment of the framed cell of stripe `s`. */
  sectionOffset(s: number): number {
    return HEADER_BYTES + s * framedLength(this.cellSize);
  }

  /** Index of the first checksum block of stripe `s` within a fragment. */
  firstBlock(s: number): number {
    return s * Math.ceil(this.cellSize / BLOCK_BYTES);
  }

  /** Blocks in one fragment. */
  get blockCount(): number {
    return this.stripes === 0 ? 0 : this.firstBlock(this.stripes - 1) + Math.ceil(this.lastCell / BLOCK_BYTES);
  }

  /** Bytes of one fragment, header and trailer included. */
  get fragmentSize(): number {
    if (this.stripes === 0) return HEADER_BYTES + TRAILER_BYTES;
    return this.sectionOffset(this.stripes - 1) + framedLength(this.lastCell) + TRAILER_BYTES;
  }

  /** Offset of the trailer in a fragment. */
  get trailerOffset(): number {
    return this.fragmentSize - TRAILER_BYTES;
  }

  /**
   * The cell pieces a logical range [start, start + length) covers, in order: for each, the
   * stripe, the data cell index, and the byte range inside the cell.
   */
  *pieces(start: number, length: number): Generator<Piece> {
    let pos = start;
    const end = start + length;
    while (pos < end) {
      const s = Math.floor(pos / this.stripeBytes);
      const cl = this.cellLength(s);
      const off = pos - this.stripeStart(s);
      const cell = Math.floor(off / cl);
      const from = off - cell * cl;
      const to = Math.min(cl, from + (end - pos));
      yield { stripe: s, cell, from, to };
      pos += to - from;
    }
  }
}

/** Bytes [from, to) of data cell `cell` of stripe `stripe`. */
export interface Piece {
  stripe: number;
  cell: number;
  from: number;
  to: number;
}

/** The framed byte range of a fragment that holds cell bytes [from, to) of stripe `s`, whole
 * blocks: where it starts in the fragment, its length, and the in-cell offset of its first block. */
export function framedRange(
  g: Geometry,
  s: number,
  from: number,
  to: number
): { offset: number; length: number; cellStart: number; firstBlock: number } {
  const cl = g.cellLength(s);
  const b0 = Math.floor(from / BLOCK_BYTES);
  const b1 = Math.ceil(to / BLOCK_BYTES); // exclusive
  const cellStart = b0 * BLOCK_BYTES;
  const dataEnd = Math.min(cl, b1 * BLOCK_BYTES);
  return {
    offset: g.sectionOffset(s) + b0 * (BLOCK_BYTES + CRC_BYTES),
    length: dataEnd - cellStart + (b1 - b0) * CRC_BYTES,
    cellStart,
    firstBlock: g.firstBlock(s) + b0,
  };
}
