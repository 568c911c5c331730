/** Fragment names and the fragment format: order, round trips, and hostile input. */
import { describe, expect, it } from 'vitest';
import {
  checkLogicalKey,
  childKey,
  escapeKey,
  fragmentPrefix,
  MAX_LOGICAL_KEY_BYTES,
  parseChildKey,
  unescapeKey,
  type FragmentName,
} from '../../src/provider/erasure/child-key.js';
import {
  encodeHeader,
  encodeTrailer,
  FragmentError,
  frameCell,
  keyHash,
  MAX_CELL_BYTES,
  parseHeader,
  parseTrailer,
  unframe,
} from '../../src/provider/erasure/fragment.js';
import { BLOCK_BYTES, framedLength, Geometry, HEADER_BYTES } from '../../src/provider/erasure/geometry.js';
import { compareKeys } from '../../src/provider/key.js';
import { bytes, prng } from './helpers.js';

const name = (over: Partial<FragmentName> = {}): FragmentName => ({
  key: 'commits/000000000001-abc',
  layout: 'striped',
  k: 10,
  m: 4,
  cellSize: 256 * 1024,
  length: 64 * 1024 * 1024 + 3,
  generation: Date.now() * 1000,
  index: 13,
  ...over,
});

describe('fragment names', () => {
  it('round-trip every field, striped and replicated, sized and unsized', () => {
    for (const n of [
      name(),
      name({ length: undefined }),
      name({ layout: 'replicated', k: 1, m: 0, index: 0, length: 0 }),
      name({ key: 'k/\u0000 "!#\u0001é😀', index: 0 }),
    ]) {
      expect(parseChildKey(childKey(n))).toEqual(n);
    }
  });

  it('keep logical byte order for random keys with low bytes, prefixes and separators', () => {
    const rand = prng(7);
    const alphabet = ['\u0000', '\u0001', ' ', '!', '"', '#', '$', '-', '/', 'a', 'z', '~', 'é', '\uffff', '😀'];
    const keys = new Set<string>();
    while (keys.size < 400) {
      let k = '';
      for (let i = 0, n = 1 + Math.floor(rand() * 6); i < n; i++) k += alphabet[Math.floor(rand() * alphabet.length)];
      keys.add(k);
    }
    const sorted = [...keys].sort(compareKeys);
    const children = sorted.map((k, i) => childKey(name({ key: k, generation: 1 + ((i * 7919) % 1000) })));
    expect([...children].sort(compareKeys)).toEqual(children);
    for (const k of sorted) {
      expect(unescapeKey(escapeKey(k))).toBe(k);
      expect(fragmentPrefix(k).endsWith('!')).toBe(true);
    }
  });

  it('refuses malformed names (foreign objects on a shared child are skipped, not misread)', () => {
    const good = childKey(name());
    for (const bad of [
      'plain-key',
      '!s.a.4.1.1.1.0',
      good.replace('!s.', '!x.'),
      good + '.1',
      good.replace(/\.d$/, '.zz'), // index out of range
      'k!s.0.4.1.1.1.0', // k = 0
      'k!s.a.4.0.1.1.0', // cell 0
      'k!s.8.8.1.1.1.0', // k + m = 16 fine, index 0 fine: control below
      'k!r.1.1',
      'k!r.0.1.1',
      'k\u0001!r.1.1.1', // unescaped low byte
      'k"!r.1.1.1', // dangling escape
      'k!s.a.4.1.1.' + 'z'.repeat(12) + '.0', // generation beyond 11 digits
    ]) {
      if (bad === 'k!s.8.8.1.1.1.0') expect(parseChildKey(bad)).toBeDefined();
      else expect(parseChildKey(bad), bad).toBeUndefined();
    }
  });

  it('limit logical keys so that every child name fits a child key', () => {
    expect(() => checkLogicalKey('x'.repeat(MAX_LOGICAL_KEY_BYTES))).not.toThrow();
    expect(() => checkLogicalKey('x'.repeat(MAX_LOGICAL_KEY_BYTES + 1))).toThrow(/fragment names/);
    // Escaping doubles low bytes: a key of spaces hits the limit at half the length.
    expect(() => checkLogicalKey(' '.repeat(MAX_LOGICAL_KEY_BYTES / 2 + 1))).toThrow();
    expect(Buffer.byteLength(childKey(name({ key: 'x'.repeat(MAX_LOGICAL_KEY_BYTES), length: Number.MAX_SAFE_INTEGER, generation: Number.MAX_SAFE_INTEGER, k: 128, m: 128, index: 255, cellSize: 0xffffffff })))).toBeLessThanOrEqual(1024);
  });
});

describe('fragment header and trailer', () => {
  const header = () =>
    encodeHeader({ layout: 'striped', k: 4, m: 2, index: 5, cellSize: 65536, length: 1_000_000, generation: 1_764_000_000_000_123, keyHash: keyHash('x') });

  it('round-trips', () => {
    const h = parseHeader(header());
    expect(h).toMatchObject({ layout: 'striped', k: 4, m: 2, index: 5, cellSize: 65536, length: 1_000_000, generation: 1_764_000_000_000_123 });
    expect(Buffer.from(h.keyHash).equals(Buffer.from(keyHash('x')))).toBe(true);
    const u = parseHeader(encodeHeader({ layout: 'replicated', k: 1, m: 0, index: 0, cellSize: 1, length: undefined, generation: 1, keyHash: keyHash('y') }));
    expect(u.length).toBeUndefined();
    expect(parseTrailer(encodeTrailer({ length: 12345, blockCount: 9, fold: 0xdeadbeef }))).toEqual({ length: 12345, blockCount: 9, fold: 0xdeadbeef });
  });

  it('refuses truncated, bit-flipped and foreign headers', () => {
    const h = header();
    expect(() => parseHeader(h.subarray(0, 63))).toThrow(FragmentError);
    expect(() => parseHeader(new Uint8Array(64))).toThrow(/magic/);
    for (let i = 0; i < HEADER_BYTES; i++) {
      const bad = h.slice();
      bad[i] ^= 1 << (i % 8);
      expect(() => parseHeader(bad), `byte ${i}`).toThrow(FragmentError);
    }
    const t = encodeTrailer({ length: 1, blockCount: 1, fold: 1 });
    expect(() => parseTrailer(t.subarray(1))).toThrow(FragmentError);
    for (let i = 0; i < t.length; i++) {
      const bad = t.slice();
      bad[i] ^= 0x80;
      expect(() => parseTrailer(bad)).toThrow(FragmentError);
    }
  });

  it('refuses hostile fields even with a valid CRC', async () => {
    const { crc32c } = await import('../../src/checksum/crc.js');
    const forge = (edit: (v: DataView, b: Uint8Array) => void): Uint8Array => {
      const b = header().slice();
      const v = new DataView(b.buffer);
      edit(v, b);
      v.setUint32(60, crc32c(b.subarray(0, 60)), true);
      return b;
    };
    const cases: [string, (v: DataView, b: Uint8Array) => void, RegExp][] = [
      ['version', (_, b) => (b[4] = 2), /version/],
      ['layout', (_, b) => (b[5] = 9), /layout/],
      ['k = 0', (v) => v.setUint16(6, 0, true), /shard counts/],
      ['k + m > 256', (v) => (v.setUint16(6, 200, true), v.setUint16(8, 57, true)), /shard counts/],
      ['index >= k + m', (v) => v.setUint16(10, 6, true), /index/],
      ['cell 0', (v) => v.setUint32(12, 0, true), /cell size/],
      ['cell too large', (v) => v.setUint32(12, MAX_CELL_BYTES + 1, true), /cell size/],
      ['block size', (v) => v.setUint32(16, 4096, true), /block size/],
      ['length > 2^53', (v) => v.setUint32(24, 0x00400000, true), /length/],
      ['generation unknown', (v) => (v.setUint32(28, 0xffffffff, true), v.setUint32(32, 0xffffffff, true)), /generation/],
    ];
    for (const [what, edit, re] of cases) expect(() => parseHeader(forge(edit)), what).toThrow(re);
  });
});

describe('framed cells', () => {
  it('frame and unframe every length around block boundaries; any flipped bit or moved block fails', () => {
    for (const n of [1, BLOCK_BYTES - 1, BLOCK_BYTES, BLOCK_BYTES + 1, 3 * BLOCK_BYTES + 5]) {
      const cell = bytes(n, n);
      const framed = new Uint8Array(framedLength(n));
      frameCell(cell, framed, 77, 3, 10, 0);
      const out = new Uint8Array(n);
      unframe(framed, out, 77, 3, 10);
      expect(Buffer.from(out).equals(cell)).toBe(true);
      for (const at of [0, Math.floor(framed.length / 2), framed.length - 1]) {
        const bad = framed.slice();
        bad[at] ^= 0x10;
        expect(() => unframe(bad, new Uint8Array(n), 77, 3, 10)).toThrow(FragmentError);
      }
      // Same bytes claimed by another fragment, block position or write: refused.
      expect(() => unframe(framed, new Uint8Array(n), 77, 2, 10)).toThrow(FragmentError);
      expect(() => unframe(framed, new Uint8Array(n), 77, 3, 11)).toThrow(FragmentError);
      expect(() => unframe(framed, new Uint8Array(n), 78, 3, 10)).toThrow(FragmentError);
    }
  });

  it('geometry: fragment sizes and pieces cover every byte exactly once', () => {
    for (const [k, cell, len] of [[4, 65536, 1], [4, 65536, 262144], [4, 65536, 262145], [10, 1 << 20, 64 << 20], [3, 1000, 10_001], [1, 7, 0]] as const) {
      const g = new Geometry(k, cell, len);
      let covered = 0;
      for (const p of g.pieces(0, len)) {
        expect(p.to).toBeLessThanOrEqual(g.cellLength(p.stripe));
        covered += p.to - p.from;
      }
      expect(covered).toBe(len);
      if (len === 0) {
        expect(g.fragmentSize).toBe(64 + 24);
        continue;
      }
      // The last stripe pads at most k - 1 bytes.
      const rest = len - (g.stripes - 1) * k * cell;
      expect(g.lastCell * k - rest).toBeGreaterThanOrEqual(0);
      expect(g.lastCell * k - rest).toBeLessThan(k);
    }
  });
});
