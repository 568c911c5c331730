/**
 * @module Checking a run of CRC-framed blocks with one CRC32C pass over all of it.
 *
 * Fragments (fragment.ts, 16 KiB blocks) and log-copy records (log-record.ts, 4 KiB blocks)
 * store data as blocks, each followed by a 4-byte little-endian word: CRC32C(block) XOR
 * bind(block number). Checked one native call per block, the calls cost more than the CRC:
 * a 256 KiB run of 4 KiB blocks checked at 9-13 GiB/s, of 16 KiB blocks at 15-18 GiB/s, where
 * one call over the run goes at 21-22 GiB/s (aws-crt, native-crc32c.ts; with @node-rs/crc32
 * 4.3 against 5.6 and 5.2 against 5.7). CRC32C is linear, so the CRC of the whole run (blocks
 * and words) follows from each block's expected CRC (its word XOR its bind) and the words'
 * bytes:
 *
 *   crc(P || block) = shift_len(block)(crc(P)) XOR crc(block)   (zlib's crc32_combine)
 *
 * blocksPass computes that expected CRC with table lookups (a few dozen per block) and compares
 * it with one CRC32C of the run. If every block matches its word, the two agree exactly. If any
 * block does not, the difference is a sum of nonzero per-block errors, each shifted by an
 * invertible operator: one bad block is always caught (as one block's check would catch it), and
 * several cancel only by a 32-bit coincidence (about 2^-32, as for a CRC of the whole run).
 * A caller that gets false checks block by block to name the block that fails.
 */
import { fastCrc32c } from '../../checksum/native-crc32c.js';
import { checksumKernel } from '../../wasm/checksum.js';

const CRC_BYTES = 4;
/** Reflected CRC32C (Castagnoli) polynomial. */
const POLY = 0x82f63b78;

/** One byte step of the reflected CRC32C. */
const BYTE_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

let wasm: ReturnType<typeof checksumKernel> | undefined;
const kernel = () => (wasm ??= checksumKernel());

/** shift_n as four byte-indexed tables (the operator is linear over GF(2)), one per block size
 * (the two formats' block sizes: a handful at most). */
const shifts = new Map<number, Uint32Array>();

function shiftTables(n: number): Uint32Array {
  let t = shifts.get(n);
  if (t) return t;
  const len = BigInt(n);
  t = new Uint32Array(1024);
  // shift_n(v) = combine(v, 0, n): zlib's combine is shift_n(crcA) XOR crcB.
  for (let byte = 0; byte < 4; byte++) for (let v = 0; v < 256; v++) t[byte * 256 + v] = kernel().crc32cCombine((v << (8 * byte)) >>> 0, 0, len);
  shifts.set(n, t);
  return t;
}

function shift(t: Uint32Array, c: number): number {
  return (t[c & 0xff]! ^ t[256 + ((c >>> 8) & 0xff)]! ^ t[512 + ((c >>> 16) & 0xff)]! ^ t[768 + (c >>> 24)]!) >>> 0;
}

/** The stored word at `at` of `framed` (little-endian u32). */
export function storedWord(framed: Uint8Array, at: number): number {
  return (framed[at]! | (framed[at + 1]! << 8) | (framed[at + 2]! << 16) | (framed[at + 3]! << 24)) >>> 0;
}

/** Runs shorter than this many blocks are left to the caller's per-block checks (no gain). */
export const MIN_GROUPED_BLOCKS = 2;

/**
 * Whether every block of `framed` passes: blocks of `blockBytes` (the last one may be shorter),
 * each followed by its stored word, which must equal CRC32C(block) XOR bindOf(firstBlock + i).
 * `framed` must end right after a word. False when any block fails, when the layout does not
 * fit (a block with no room for its word), or when the run has fewer than MIN_GROUPED_BLOCKS
 * blocks (the caller checks those itself): false never means more than "check block by block".
 */
export function blocksPass(framed: Uint8Array, blockBytes: number, firstBlock: number, bindOf: (block: number) => number): boolean {
  const unit = blockBytes + CRC_BYTES;
  if (framed.length < MIN_GROUPED_BLOCKS * unit - blockBytes + 1) return false;
  const full = shiftTables(blockBytes);
  let acc = 0;
  let i = 0;
  for (let b = firstBlock; i < framed.length; b++) {
    const n = Math.min(blockBytes, framed.length - i - CRC_BYTES);
    if (n <= 0) return false;
    const w = i + n;
    const expected = (storedWord(framed, w) ^ bindOf(b)) >>> 0;
    // A shorter (last) block: one combine call rather than tables for its length.
    acc = n === blockBytes ? (shift(full, acc) ^ expected) >>> 0 : kernel().crc32cCombine(acc, expected, BigInt(n)) >>> 0;
    // Then the word's four bytes, one reflected-CRC byte step each (pre- and post-inverted).
    let c = ~acc;
    c = BYTE_TABLE[(c ^ framed[w]!) & 0xff]! ^ (c >>> 8);
    c = BYTE_TABLE[(c ^ framed[w + 1]!) & 0xff]! ^ (c >>> 8);
    c = BYTE_TABLE[(c ^ framed[w + 2]!) & 0xff]! ^ (c >>> 8);
    c = BYTE_TABLE[(c ^ framed[w + 3]!) & 0xff]! ^ (c >>> 8);
    acc = ~c >>> 0;
    i = w + CRC_BYTES;
  }
  return fastCrc32c(framed, 0) === acc;
}
