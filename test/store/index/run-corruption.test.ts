/**
 * Corruption, truncation and forgery of run blobs: every failure is an IndexError with a
 * stable code, and no read ever returns data that differs from what was written.
 */
import { describe, expect, test } from 'vitest';
import { BloomBuilder } from '../../../src/store/index/bloom.js';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { keyBytes } from '../../../src/store/index/compare.js';
import { IndexError } from '../../../src/store/index/errors.js';
import {
  BlockBuilder,
  FooterBuilder,
  HEADER_BYTES,
  TRAILER_BYTES,
  decodeFooter,
  decodeRunMeta,
  encodeHeader,
  encodeRunMeta,
  encodeTrailer,
  type RunMeta,
} from '../../../src/store/index/run-format.js';
import { openRun, readRunMeta } from '../../../src/store/index/run-reader.js';
import { writeRun, type RunEntry } from '../../../src/store/index/run-writer.js';
import { CountingProvider, valueOf } from './support.js';

const ENTRIES: RunEntry[] = Array.from({ length: 40 }, (_, i) => [
  `key/${String(i).padStart(3, '0')}é`,
  valueOf(String(i), i),
]);

/** Reads everything a reader can be asked for; returns 'ok' if it all matched ENTRIES. */
async function readAll(provider: CountingProvider, meta: RunMeta): Promise<'ok'> {
  const run = await openRun(provider, meta, new BlockCache());
  const seen: RunEntry[] = [];
  for await (const e of run.entries()) seen.push(e);
  expect(seen).toEqual(ENTRIES);
  for (const [k, v] of ENTRIES) expect(await run.get(k)).toEqual(v);
  return 'ok';
}

async function outcome(provider: CountingProvider, meta: RunMeta): Promise<string> {
  try {
    return await readAll(provider, meta);
  } catch (err) {
    if (err instanceof IndexError) return err.code;
    throw err; // a wrong value (assertion) or an untyped error fails the test
  }
}

async function setup(version: 1 | 2 = 2) {
  const provider = new CountingProvider();
  const meta = await writeRun(provider, 'runs/good', ENTRIES, { blockBytes: 200, version });
  const blob = await provider.bytesOf('runs/good');
  return { provider, meta, blob };
}

describe.each([1, 2] as const)('run corruption, format version %i', (version) => {
  test('every flipped byte (all bits, and the lowest bit) is detected', async () => {
    const { provider, meta, blob } = await setup(version);
    expect(await outcome(provider, meta)).toBe('ok');
    const codes = new Map<string, number>();
    for (let i = 0; i < blob.length; i++) {
      for (const mask of [0xff, 0x01]) {
        const bad = blob.slice();
        bad[i]! ^= mask;
        await provider.put('runs/good', bad);
        const code = await outcome(provider, meta);
        expect(code, `byte ${i} of ${blob.length} ^ ${mask}`).not.toBe('ok');
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
    }
    expect(codes.get('ERR_RUN_CORRUPT')).toBeGreaterThan(blob.length);
    expect(codes.has('ERR_RUN_FORMAT')).toBe(true); // header and trailer magic
  });

  test('every truncation is detected, by openRun and by readRunMeta', async () => {
    const { provider, meta, blob } = await setup(version);
    for (let n = 0; n < blob.length; n++) {
      await provider.put('runs/good', blob.subarray(0, n));
      expect(await outcome(provider, meta), `truncated to ${n}`).not.toBe('ok');
      await expect(readRunMeta(provider, 'runs/good')).rejects.toBeInstanceOf(IndexError);
    }
  });

  test('a different run under the same key is refused, even with the same size', async () => {
    // Uncompressed (v1) blocks: the same size whatever the values. (v2 sizes depend on the
    // values; the footer checksum in RunMeta tells runs apart all the same.)
    const { provider, meta } = await setup(1);
    const other = ENTRIES.map(([k, v]) => [k, v.map((b) => b ^ 1)] as const);
    const otherMeta = await writeRun(provider, 'runs/other', other, { blockBytes: 200, version: 1 });
    expect(otherMeta.size).toBe(meta.size);
    await expect(
      openRun(provider, { ...meta, blobKey: 'runs/other' }, new BlockCache())
    ).rejects.toMatchObject({
      code: 'ERR_RUN_FORMAT',
    });
  });

});

describe('run metadata', () => {
  test('encoded RunMeta: every truncation and a bad version are ERR_RUN_META', () => {
    const meta: RunMeta = {
      blobKey: 'runs/ü',
      size: 1000,
      entryCount: 3,
      firstKey: 'a',
      lastKey: '😀',
      footerOffset: 900,
      footerLength: 76,
      footerCrc: 0xdeadbeef,
    };
    const bytes = encodeRunMeta(meta);
    expect(decodeRunMeta(bytes)).toEqual(meta);
    for (let n = 0; n < bytes.length; n++)
      expect(() => decodeRunMeta(bytes.subarray(0, n))).toThrow(IndexError);
    expect(() => decodeRunMeta(Uint8Array.of(...bytes, 0))).toThrow(IndexError);
    expect(() => decodeRunMeta(Uint8Array.of(9, ...bytes.subarray(1)))).toThrow(IndexError);
    expect(() => decodeRunMeta(encodeRunMeta({ ...meta, size: 999 }))).toThrow(IndexError);
  });
});

interface ForgedBlock {
  bytes: Uint8Array;
  firstKey: string;
  count: number;
  offset?: number;
  length?: number;
  crc?: number;
}

/** Lays out header + blocks + a footer built from `blocks` (checksums all valid). */
async function forge(
  provider: CountingProvider,
  key: string,
  blocks: ForgedBlock[],
  lastKey: string,
  entryCount?: number
): Promise<RunMeta> {
  const footer = new FooterBuilder();
  const bloom = new BloomBuilder();
  // Forged blocks are v1 blocks (BlockBuilder.finish): old runs must keep reading.
  const parts = [encodeHeader(1)];
  let offset = HEADER_BYTES;
  let total = 0;
  for (const b of blocks) {
    const crc = new DataView(b.bytes.buffer, b.bytes.byteOffset).getUint32(
      b.bytes.length - 4,
      true
    );
    footer.addBlock(
      keyBytes(b.firstKey).slice(),
      b.offset ?? offset,
      b.length ?? b.bytes.length,
      b.count,
      b.crc ?? crc
    );
    bloom.addKeyBytes(keyBytes(b.firstKey));
    parts.push(b.bytes);
    offset += b.bytes.length;
    total += b.count;
  }
  const f = footer.finish(entryCount ?? total, keyBytes(lastKey).slice(), bloom.build());
  parts.push(f, encodeTrailer({ footerOffset: offset, footerLength: f.length }, 1));
  await provider.put(key, parts);
  const footerCrc = new DataView(f.buffer, f.byteOffset).getUint32(f.length - 4, true);
  return {
    blobKey: key,
    size: offset + f.length + TRAILER_BYTES,
    entryCount: entryCount ?? total,
    firstKey: blocks[0]!.firstKey,
    lastKey,
    footerOffset: offset,
    footerLength: f.length,
    footerCrc,
  };
}

function block(keys: string[]): ForgedBlock {
  const b = new BlockBuilder(1024);
  for (const k of keys) b.add(keyBytes(k).slice(), valueOf(k));
  return { bytes: b.finish(), firstKey: keys[0]!, count: keys.length };
}

async function codeOf(provider: CountingProvider, meta: RunMeta): Promise<string> {
  try {
    const run = await openRun(provider, meta, new BlockCache());
    for await (const _ of run.entries()) void _;
    return 'ok';
  } catch (err) {
    if (err instanceof IndexError) return err.code;
    throw err;
  }
}

describe('forged runs (valid checksums, impossible structure)', () => {
  test('a well-formed forgery reads back (the harness itself is sound)', async () => {
    const p = new CountingProvider();
    expect(await codeOf(p, await forge(p, 'f', [block(['a', 'b']), block(['c', 'd'])], 'd'))).toBe(
      'ok'
    );
  });

  const cases: [
    string,
    (a: ForgedBlock, b: ForgedBlock) => [ForgedBlock[], string, number?],
    string,
  ][] = [
    [
      'a block offset far past the end',
      (a, b) => [[a, { ...b, offset: 1e9 }], 'd'],
      'ERR_RUN_FORMAT',
    ],
    [
      'a block length running into the footer',
      (a, b) => [[a, { ...b, length: b.bytes.length + 10 }], 'd'],
      'ERR_RUN_FORMAT',
    ],
    [
      'overlapping blocks',
      (a, b) => [[a, { ...b, offset: HEADER_BYTES + 1 }], 'd'],
      'ERR_RUN_FORMAT',
    ],
    ['an entry count that does not add up', (a, b) => [[a, b], 'd', 5], 'ERR_RUN_FORMAT'],
    [
      'a block claiming more entries than it holds',
      (a, b) => [[a, { ...b, count: 3 }], 'd'],
      'ERR_RUN_FORMAT',
    ],
    ['block first keys out of order', (a, b) => [[b, a], 'b'], 'ERR_RUN_UNSORTED'],
    [
      'a first key that differs from the block',
      (a, b) => [[a, { ...b, firstKey: 'bb' }], 'd'],
      'ERR_RUN_FORMAT',
    ],
    ['a last key that differs from the last block', (a, b) => [[a, b], 'e'], 'ERR_RUN_UNSORTED'],
    [
      'a block whose index checksum names other content',
      (a, b) => [[a, { ...b, crc: 1 }], 'd'],
      'ERR_RUN_FORMAT',
    ],
    ['keys unsorted inside a block', (a) => [[a, block(['d', 'c'])], 'c'], 'ERR_RUN_UNSORTED'],
    [
      'a block overlapping the next one in key range',
      () => [[block(['a', 'x']), block(['c', 'd'])], 'd'],
      'ERR_RUN_UNSORTED',
    ],
  ];
  for (const [name, make, code] of cases) {
    test(`${name}: ${code}`, async () => {
      const p = new CountingProvider();
      const [blocks, last, count] = make(block(['a', 'b']), block(['c', 'd']));
      expect(await codeOf(p, await forge(p, 'f', blocks, last, count))).toBe(code);
    });
  }

  test('decodeFooter refuses a block count that cannot fit', async () => {
    const p = new CountingProvider();
    const meta = await forge(p, 'f', [block(['a'])], 'a');
    const footer = (await p.bytesOf('f')).slice(
      meta.footerOffset,
      meta.footerOffset + meta.footerLength
    );
    expect(() => decodeFooter(footer, meta.footerOffset, 'f')).not.toThrow();
    expect(() => decodeFooter(footer, meta.footerOffset + 1, 'f')).toThrow(IndexError);
  });
});
