import { describe, expect, it } from 'vitest';
import { encodePack, concatPack, ENTRY_HEADER_SIZE, TRAILER_SIZE, PACK_HEADER_SIZE } from '../../src/pack/writer.js';
import { checkEntryParts, decodePack, readEntry, readEntryAt, entryRange } from '../../src/pack/reader.js';
import { PackError } from '../../src/pack/errors.js';
import { packKernel } from '../../src/wasm/pack.js';
import { availableFlavors } from '../../src/wasm/loader.js';
import { randomBytes, prng } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';

const FLAVORS = availableFlavors('pack');

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof PackError) return e.code;
    throw e;
  }
  return 'no error';
}

const le32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const put32 = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset).setUint32(at, v >>> 0, true);

describe.each(FLAVORS)('pack framing (%s)', (flavor) => {
  const crc = (b: Uint8Array) => packKernel(flavor).crc32c(b);

  it('round-trips batches of mixed sizes, whole and entry by entry', () => {
    const next = prng(5);
    for (const n of [1, 2, 7, 64, 300]) {
      const bodies = Array.from({ length: n }, (_, i) => randomBytes(i % 17 === 0 ? 0 : next() % (i % 5 === 0 ? 70000 : 600), n * 1000 + i));
      const pack = encodePack(bodies, { flavor });
      const blob = concatPack(pack);
      expect(blob.length).toBe(pack.size);
      const decoded = decodePack(blob, flavor);
      expect(decoded.tag).toBe(pack.tag);
      expect(decoded.entries.map((e) => e.offset)).toEqual(pack.entries.map((e) => e.offset));
      decoded.entries.forEach((e, i) => expectBytes(e.body, bodies[i]!, `entry ${i}`));
      for (const ref of pack.entries) {
        const { start, end } = entryRange(ref);
        const one = readEntry(blob.slice(start, end + 1), { tag: pack.tag, index: ref.index, length: ref.length, flavor });
        expectBytes(one, bodies[ref.index]!, `ranged entry ${ref.index}`);
        expectBytes(readEntryAt(blob, ref.offset, flavor), bodies[ref.index]!, `entry at ${ref.offset}`);
      }
    }
  });

  it('keeps the caller bodies as chunks instead of copying them', () => {
    const bodies = [randomBytes(1000, 1), randomBytes(10, 2)];
    const pack = encodePack(bodies, { flavor });
    expect(pack.chunks).toContain(bodies[0]);
    expect(pack.chunks).toContain(bodies[1]);
    expect(pack.size).toBe(PACK_HEADER_SIZE + 2 * ENTRY_HEADER_SIZE + 1010 + 2 * 16 + TRAILER_SIZE);
  });

  it('rejects every truncation of a pack and of an entry read', () => {
    const bodies = [randomBytes(40, 1), randomBytes(0, 2), randomBytes(33, 3)];
    const pack = encodePack(bodies, { flavor });
    const blob = concatPack(pack);
    for (let len = 0; len < blob.length; len++) {
      expect(() => decodePack(blob.slice(0, len), flavor), `length ${len}`).toThrow(PackError);
    }
    const ref = pack.entries[2]!;
    const { start, end } = entryRange(ref);
    for (let len = 0; len <= end - start; len++) {
      const code = codeOf(() => readEntry(blob.slice(start, start + len), { tag: pack.tag, index: 2, flavor }));
      expect(code, `entry length ${len}`).toBe('ERR_PACK_TRUNCATED');
    }
  });

  it('detects a flipped bit anywhere in the pack', () => {
    const bodies = [randomBytes(100, 1), randomBytes(1, 2), randomBytes(0, 3), randomBytes(57, 4)];
    const blob = concatPack(encodePack(bodies, { flavor }));
    for (let i = 0; i < blob.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const bad = blob.slice();
        bad[i]! ^= bit;
        expect(() => decodePack(bad, flavor), `byte ${i} bit ${bit}`).toThrow(PackError);
      }
    }
  });

  it('detects a flipped body byte in a single-entry read', () => {
    const bodies = [randomBytes(4096, 9)];
    const pack = encodePack(bodies, { flavor });
    const blob = concatPack(pack);
    const { start, end } = entryRange(pack.entries[0]!);
    for (const at of [start, start + 12, start + 24, start + 2000, end]) {
      const read = blob.slice(start, end + 1);
      read[at - start]! ^= 0x10;
      const code = codeOf(() => readEntry(read, { tag: pack.tag, index: 0, length: 4096, flavor }));
      expect(['ERR_PACK_CHECKSUM', 'ERR_PACK_MAGIC'], `flip at ${at}`).toContain(code);
    }
  });

  it('checks an entry read in two parts (header, body) as readEntry does', () => {
    const bodies = [randomBytes(4096, 21), randomBytes(0, 22), randomBytes(77, 23)];
    const pack = encodePack(bodies, { flavor });
    const blob = concatPack(pack);
    const parts = (i: number) => {
      const { start, end } = entryRange(pack.entries[i]!);
      const read = blob.slice(start, end + 1);
      return { header: read.subarray(0, ENTRY_HEADER_SIZE), body: read.subarray(ENTRY_HEADER_SIZE) };
    };
    for (let i = 0; i < bodies.length; i++) {
      const { header, body } = parts(i);
      expect(codeOf(() => checkEntryParts(header, body, { tag: pack.tag, index: i, length: bodies[i]!.length, flavor }))).toBe('no error');
    }
    const { header, body } = parts(0);
    const expect0 = { tag: pack.tag, index: 0, length: 4096, flavor };
    expect(codeOf(() => checkEntryParts(header.subarray(0, 23), body, expect0))).toBe('ERR_PACK_TRUNCATED');
    expect(codeOf(() => checkEntryParts(header, body.subarray(0, 4095), { ...expect0, length: undefined }))).toBe('ERR_PACK_TRUNCATED');
    expect(codeOf(() => checkEntryParts(header, body, { ...expect0, length: 4095 }))).toBe('ERR_PACK_MISMATCH');
    expect(codeOf(() => checkEntryParts(header, body, { ...expect0, index: 1 }))).not.toBe('no error');
    expect(codeOf(() => checkEntryParts(header, body, { ...expect0, tag: pack.tag ^ 1 }))).not.toBe('no error');
    for (const at of [0, 2047, 4095]) {
      const bad = body.slice();
      bad[at]! ^= 0x01;
      expect(codeOf(() => checkEntryParts(header, bad, expect0)), `body flip at ${at}`).toBe('ERR_PACK_CHECKSUM');
      expect(codeOf(() => checkEntryParts(header, bad, { ...expect0, authenticated: true }))).toBe('no error');
    }
    for (let at = 0; at < ENTRY_HEADER_SIZE; at++) {
      const bad = header.slice();
      bad[at]! ^= 0x80;
      expect(codeOf(() => checkEntryParts(bad, body, expect0)), `header flip at ${at}`).not.toBe('no error');
    }
  });

  it('an authenticated read skips only the body CRC: the header is still checked in full', () => {
    const pack = encodePack([randomBytes(4096, 9), randomBytes(100, 10)], { flavor });
    const blob = concatPack(pack);
    const { start, end } = entryRange(pack.entries[0]!);
    const flipped = blob.slice(start, end + 1);
    flipped[ENTRY_HEADER_SIZE + 100]! ^= 0x01;
    // The caller authenticates the body itself (an AEAD tag), so a flipped body byte passes here...
    expect(readEntry(flipped, { tag: pack.tag, index: 0, length: 4096, authenticated: true, flavor })[100]).toBe(flipped[ENTRY_HEADER_SIZE + 100]);
    expect(codeOf(() => readEntry(flipped, { tag: pack.tag, index: 0, length: 4096, flavor }))).toBe('ERR_PACK_CHECKSUM');
    // ...but a wrong pack, index, length or truncation is still refused.
    const intact = blob.slice(start, end + 1);
    expect(codeOf(() => readEntry(intact, { tag: pack.tag ^ 1, index: 0, authenticated: true, flavor }))).not.toBe('no error');
    expect(codeOf(() => readEntry(intact, { tag: pack.tag, index: 1, authenticated: true, flavor }))).not.toBe('no error');
    expect(codeOf(() => readEntry(intact, { tag: pack.tag, index: 0, length: 4095, authenticated: true, flavor }))).toBe('ERR_PACK_MISMATCH');
    expect(codeOf(() => readEntry(intact.subarray(0, intact.length - 1), { tag: pack.tag, index: 0, authenticated: true, flavor }))).toBe('ERR_PACK_TRUNCATED');
  });

  it('refuses a read of another pack or another entry', () => {
    const a = encodePack([randomBytes(10, 1), randomBytes(10, 2)], { flavor });
    const b = encodePack([randomBytes(10, 1)], { flavor });
    const blob = concatPack(a);
    const { start, end } = entryRange(a.entries[1]!);
    const bytes = blob.slice(start, end + 1);
    expect(codeOf(() => readEntry(bytes, { tag: b.tag, flavor }))).toBe('ERR_PACK_MISMATCH');
    expect(codeOf(() => readEntry(bytes, { tag: a.tag, index: 0, flavor }))).toBe('ERR_PACK_MISMATCH');
    expect(codeOf(() => readEntry(bytes, { tag: a.tag, index: 1, length: 11, flavor }))).toBe('ERR_PACK_MISMATCH');
    expect(codeOf(() => readEntry(blob.slice(start + 1, end + 1), { tag: a.tag, flavor }))).toBe('ERR_PACK_MAGIC');
  });

  it('rejects oversized lengths even when their checksums are forged to match', () => {
    const pack = encodePack([randomBytes(64, 1), randomBytes(64, 2)], { flavor });
    const blob = concatPack(pack);
    // Entry header claiming 4 GiB - 1 bytes, with its header CRC recomputed.
    const e1 = pack.entries[1]!.offset;
    const hostile = blob.slice();
    put32(hostile, e1 + 12, 0xffffffff);
    put32(hostile, e1 + 20, crc(hostile.subarray(e1, e1 + 20)));
    expect(codeOf(() => readEntryAt(hostile, e1, flavor))).toBe('ERR_PACK_BOUNDS');
    expect(codeOf(() => readEntry(hostile.subarray(e1), { tag: pack.tag, flavor }))).toBe('ERR_PACK_TRUNCATED');
    // Footer row claiming a huge body, with footer and trailer CRCs recomputed.
    const t = blob.length - TRAILER_SIZE;
    const footerAt = le32(blob, t);
    const forged = blob.slice();
    put32(forged, footerAt + 16 + 8, 0x7fffffff);
    put32(forged, t + 12, crc(forged.subarray(footerAt, t)));
    put32(forged, t + 20, crc(forged.subarray(t, t + 20)));
    expect(codeOf(() => decodePack(forged, flavor))).toBe('ERR_PACK_TRUNCATED');
    // Trailer claiming a billion entries.
    const many = blob.slice();
    put32(many, t + 8, 1_000_000_000);
    put32(many, t + 20, crc(many.subarray(t, t + 20)));
    expect(codeOf(() => decodePack(many, flavor))).toBe('ERR_PACK_BOUNDS');
    // Out-of-range offsets for readEntryAt.
    for (const off of [-1, 0, 31, blob.length, 2 ** 40, 1.5]) {
      expect(codeOf(() => readEntryAt(blob, off, flavor)), `offset ${off}`).toBe('ERR_PACK_BOUNDS');
    }
  });

  it('refuses to write an empty or oversized batch', () => {
    expect(codeOf(() => encodePack([], { flavor }))).toBe('ERR_PACK_TOO_LARGE');
    const tooMany = Array.from({ length: packKernel(flavor).maxEntries + 1 }, () => new Uint8Array(0));
    expect(codeOf(() => encodePack(tooMany, { flavor }))).toBe('ERR_PACK_TOO_LARGE');
  });

  it('rejects random garbage without reading out of bounds', () => {
    const next = prng(77);
    for (let i = 0; i < 500; i++) {
      const junk = randomBytes(next() % 300, i);
      expect(() => decodePack(junk, flavor)).toThrow(PackError);
    }
  });
});

describe('streaming pack writer', () => {
  it('produces the same blob as encodePack, entry by entry, for lengths known up front', async () => {
    const { PackStream } = await import('../../src/pack/stream-writer.js');
    const bodies = [randomBytes(262144, 1), randomBytes(262144, 2), randomBytes(1000, 3)];
    const id = randomBytes(12, 4);
    const s = new PackStream(bodies.map((b) => b.length), { id });
    const parts = [s.header(), ...bodies.flatMap((b) => s.entry(b)), ...s.finish()];
    const blob = Buffer.concat(parts);
    expect(blob.length).toBe(s.size);
    expectBytes(blob, concatPack(encodePack(bodies, { id })), 'stream vs batch');
    expect(decodePack(blob).entries.map((e) => e.length)).toEqual([262144, 262144, 1000]);
  });

  it('refuses an entry whose length differs from the one announced, and entries out of turn', async () => {
    const { PackStream } = await import('../../src/pack/stream-writer.js');
    const s = new PackStream([10, 20]);
    expect(() => s.entry(new Uint8Array(10))).toThrow(/header\(\) must come first/);
    s.header();
    expect(codeOf(() => s.entry(new Uint8Array(11)))).toBe('ERR_PACK_MISMATCH');
    s.entry(new Uint8Array(10));
    expect(() => s.finish()).toThrow(/1 of 2 entries/);
  });
});
