import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { blocksPass, MIN_GROUPED_BLOCKS } from '../../src/provider/erasure/block-crcs.js';
import { bind, FragmentError, sealFramed, unframe, unframeRange } from '../../src/provider/erasure/fragment.js';
import { BLOCK_BYTES, framedLength } from '../../src/provider/erasure/geometry.js';
import { fastCrc32c } from '../../src/checksum/native-crc32c.js';
import { blockSpan, encodeRecord, LOG_BLOCK_BYTES, RECORD_HEADER_BYTES, unframeBlocks, type LogRecord } from '../../src/provider/erasure/log-record.js';

/** `blocks` blocks of `size` bytes (the last `last` bytes long), each sealed with its bound CRC
 * word exactly as the formats store them, computed one block at a time (the reference). */
function framedRun(size: number, blocks: number, last: number, firstBlock: number, bindOf: (b: number) => number): Uint8Array {
  const out = randomBytes((blocks - 1) * (size + 4) + last + 4);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let b = 0, at = 0; b < blocks; b++) {
    const n = b === blocks - 1 ? last : size;
    v.setUint32(at + n, (fastCrc32c(out.subarray(at, at + n), 0) ^ bindOf(firstBlock + b)) >>> 0, true);
    at += n + 4;
  }
  return new Uint8Array(out);
}

/** The per-block reference check. */
function eachBlockPasses(framed: Uint8Array, size: number, firstBlock: number, bindOf: (b: number) => number): boolean {
  const v = new DataView(framed.buffer, framed.byteOffset, framed.byteLength);
  for (let at = 0, b = firstBlock; at < framed.length; b++) {
    const n = Math.min(size, framed.length - at - 4);
    if (n <= 0) return false;
    if (((fastCrc32c(framed.subarray(at, at + n), 0) ^ bindOf(b)) >>> 0) !== v.getUint32(at + n, true)) return false;
    at += n + 4;
  }
  return true;
}

const bindA = (b: number) => bind(12345, 6, b);

describe('blocksPass: one CRC32C over a run of framed blocks', () => {
  it('agrees with the per-block check on intact runs of every shape (both formats, short last blocks)', () => {
    for (const size of [LOG_BLOCK_BYTES, BLOCK_BYTES]) {
      for (const blocks of [MIN_GROUPED_BLOCKS, 3, 17, 65]) {
        for (const last of [1, 3, size - 1, size]) {
          const run = framedRun(size, blocks, last, 40, bindA);
          expect(eachBlockPasses(run, size, 40, bindA)).toBe(true);
          expect(blocksPass(run, size, 40, bindA), `${size} x ${blocks}, last ${last}`).toBe(true);
        }
      }
    }
  });

  it('refuses any flipped bit, in a block or in a stored word', () => {
    const run = framedRun(LOG_BLOCK_BYTES, 9, 100, 0, bindA);
    const positions = [0, 1, LOG_BLOCK_BYTES - 1, LOG_BLOCK_BYTES, LOG_BLOCK_BYTES + 3, LOG_BLOCK_BYTES + 4, 5 * (LOG_BLOCK_BYTES + 4) + 77, run.length - 5, run.length - 4, run.length - 1];
    for (let i = 0; i < 200; i++) positions.push(Math.floor(Math.random() * run.length));
    for (const at of positions) {
      for (const bit of [0x01, 0x80]) {
        const bad = run.slice();
        bad[at]! ^= bit;
        expect(blocksPass(bad, LOG_BLOCK_BYTES, 0, bindA), `byte ${at}`).toBe(false);
      }
    }
  });

  it('refuses blocks (with their words) swapped, copied from another position, or claimed by another fragment', () => {
    const unit = BLOCK_BYTES + 4;
    const run = framedRun(BLOCK_BYTES, 6, BLOCK_BYTES, 100, bindA);
    const swapped = run.slice();
    swapped.set(run.subarray(unit, 2 * unit), 2 * unit);
    swapped.set(run.subarray(2 * unit, 3 * unit), unit);
    expect(blocksPass(swapped, BLOCK_BYTES, 100, bindA)).toBe(false);
    const copied = run.slice();
    copied.set(run.subarray(0, unit), 4 * unit);
    expect(blocksPass(copied, BLOCK_BYTES, 100, bindA)).toBe(false);
    expect(blocksPass(run, BLOCK_BYTES, 101, bindA)).toBe(false);
    expect(blocksPass(run, BLOCK_BYTES, 100, (b) => bind(12345, 7, b))).toBe(false);
    expect(blocksPass(run, BLOCK_BYTES, 100, (b) => bind(12346, 6, b))).toBe(false);
  });

  it('returns false without throwing for runs it does not check: too few blocks, or bytes that are not whole framed blocks', () => {
    const one = framedRun(LOG_BLOCK_BYTES, 1, LOG_BLOCK_BYTES, 0, bindA);
    expect(eachBlockPasses(one, LOG_BLOCK_BYTES, 0, bindA)).toBe(true);
    expect(blocksPass(one, LOG_BLOCK_BYTES, 0, bindA)).toBe(false);
    const run = framedRun(LOG_BLOCK_BYTES, 4, LOG_BLOCK_BYTES, 0, bindA);
    // A run cut inside a word, or leaving a block no room for its word: the layout does not fit.
    for (const cut of [run.length - 1, run.length - 3, 3 * (LOG_BLOCK_BYTES + 4) + 2, 3 * (LOG_BLOCK_BYTES + 4) + 4])
      expect(blocksPass(run.subarray(0, cut), LOG_BLOCK_BYTES, 0, bindA), `cut at ${cut}`).toBe(false);
    expect(blocksPass(new Uint8Array(0), LOG_BLOCK_BYTES, 0, bindA)).toBe(false);
    // Zeros (a preallocated copy's tail) are not a valid run.
    expect(blocksPass(new Uint8Array(5 * (LOG_BLOCK_BYTES + 4)), LOG_BLOCK_BYTES, 0, bindA)).toBe(false);
  });
});

describe('the readers that use it still name the block that fails', () => {
  it('unframe and unframeRange: intact ranges copy the same bytes; a bad block is named', () => {
    const cellLen = 5 * BLOCK_BYTES + 123;
    const framed = new Uint8Array(randomBytes(framedLength(cellLen)));
    sealFramed(framed, 9, 2, 30, 0);
    const out = new Uint8Array(cellLen);
    unframe(framed, out, 9, 2, 30);
    for (let b = 0, at = 0; b < 6; b++) {
      const n = Math.min(BLOCK_BYTES, cellLen - b * BLOCK_BYTES);
      expect(Buffer.from(out.subarray(b * BLOCK_BYTES, b * BLOCK_BYTES + n)).equals(framed.subarray(at, at + n))).toBe(true);
      at += n + 4;
    }
    const part = new Uint8Array(1000);
    unframeRange(framed, 9, 2, 30, 0, 2 * BLOCK_BYTES - 500, 2 * BLOCK_BYTES + 500, part, 0);
    expect(Buffer.from(part).equals(out.subarray(2 * BLOCK_BYTES - 500, 2 * BLOCK_BYTES + 500))).toBe(true);
    const bad = framed.slice();
    bad[3 * (BLOCK_BYTES + 4) + 10]! ^= 4;
    expect(() => unframe(bad, new Uint8Array(cellLen), 9, 2, 30)).toThrow(new FragmentError('block 33 of fragment 2 fails its CRC32C'));
    expect(() => unframeRange(bad, 9, 2, 30, 0, 0, cellLen, new Uint8Array(cellLen), 0)).toThrow(/block 33 of fragment 2 fails/);
  });

  it('unframeBlocks (log records): ranges across blocks read back; a bad block in the range fails, one outside it does not', () => {
    const data = new Uint8Array(randomBytes(6 * LOG_BLOCK_BYTES + 999));
    const rec = new Uint8Array(encodeRecord(555, 3, 0, [data.subarray(0, 7000), data.subarray(7000)], data.length));
    const r: LogRecord = { phys: 0, logical: 0, length: data.length, attempt: 3 };
    const read = (bytes: Uint8Array, from: number, to: number): Uint8Array | undefined => {
      const s = blockSpan(r, from, to);
      const out = new Uint8Array(to - from);
      return unframeBlocks(bytes.subarray(s.start, s.start + s.length), r, 555, s.firstBlock, s.dataStart, from, to, out, 0) ? out : undefined;
    };
    for (const [from, to] of [[0, data.length], [10, 20], [LOG_BLOCK_BYTES - 5, 3 * LOG_BLOCK_BYTES + 5], [data.length - 1000, data.length]] as const)
      expect(Buffer.from(read(rec, from, to)!).equals(data.subarray(from, to)), `[${from}, ${to})`).toBe(true);
    const bad = rec.slice();
    bad[RECORD_HEADER_BYTES + 2 * (LOG_BLOCK_BYTES + 4) + 9]! ^= 1; // in block 2
    expect(read(bad, 0, data.length)).toBeUndefined();
    expect(read(bad, LOG_BLOCK_BYTES, 3 * LOG_BLOCK_BYTES)).toBeUndefined();
    expect(Buffer.from(read(bad, 3 * LOG_BLOCK_BYTES, data.length)!).equals(data.subarray(3 * LOG_BLOCK_BYTES))).toBe(true);
    expect(read(rec, 0, data.length)).toBeDefined();
  });
});
