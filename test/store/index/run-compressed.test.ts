/**
 * Run format version 2 (run-format.ts): every block's entries deflate-raw compressed on their
 * own (or stored when that does not shrink them). Runs written now are v2 and smaller; v1 runs
 * (what existing repositories hold) still read, also merged with v2 ones; and hostile v2
 * blocks with valid checksums (unknown method, lengths out of bounds, truncated payloads,
 * payloads inflating past their declared length, header/trailer versions that disagree) are
 * refused with a stable IndexError code, never read as other bytes.
 */
import { deflateRawSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { BloomBuilder } from '../../../src/store/index/bloom.js';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { keyBytes } from '../../../src/store/index/compare.js';
import { IndexError } from '../../../src/store/index/errors.js';
import { ByteSink } from '../../../src/store/index/run-bytes.js';
import { compactRuns } from '../../../src/store/index/compact.js';
import {
  BlockBuilder,
  FooterBuilder,
  HEADER_BYTES,
  MAX_BLOCK_RAW_BYTES,
  RUN_FORMAT_VERSION,
  TRAILER_BYTES,
  encodeHeader,
  encodeTrailer,
  runCrc,
  type RunMeta,
} from '../../../src/store/index/run-format.js';
import { openRun, readRunMeta } from '../../../src/store/index/run-reader.js';
import { writeRun, type RunEntry } from '../../../src/store/index/run-writer.js';
import { CountingProvider, valueOf } from './support.js';
import { randomBytes } from '../../support/random.js';

/** Index-like entries: shared prefixes, a repeated blob name, small varying numbers. */
const ENTRIES: RunEntry[] = Array.from({ length: 3000 }, (_, i) => [
  `photos/2026/${String(i).padStart(6, '0')}.jpg`,
  new TextEncoder().encode(`packs/000079cf8d5923091f5b39a1@${i * 536}:512:v${(i * 7919) % 100_000}`),
]);

async function readAll(provider: CountingProvider, meta: RunMeta): Promise<RunEntry[]> {
  const run = await openRun(provider, meta, new BlockCache());
  const seen: RunEntry[] = [];
  for await (const [k, v] of run.entries()) seen.push([k, v.slice()]);
  return seen;
}

describe('run format version 2', () => {
  test('writes version 2 by default, smaller than version 1, and both read back identically', async () => {
    const p = new CountingProvider();
    expect(RUN_FORMAT_VERSION).toBe(2);
    const v2 = await writeRun(p, 'runs/v2', ENTRIES, { blockBytes: 4096 });
    const v1 = await writeRun(p, 'runs/v1', ENTRIES, { blockBytes: 4096, version: 1 });
    expect((await p.bytesOf('runs/v2'))[4]).toBe(2);
    expect((await p.bytesOf('runs/v1'))[4]).toBe(1);
    expect(v2.size).toBeLessThan(v1.size / 2);
    expect(await readAll(p, v2)).toEqual(ENTRIES);
    expect(await readAll(p, v1)).toEqual(ENTRIES);
    // Point lookups, hits and misses, on both.
    for (const meta of [v1, v2]) {
      const run = await openRun(p, meta, new BlockCache());
      for (const i of [0, 1, 777, 2999]) expect(await run.get(ENTRIES[i]![0])).toEqual(ENTRIES[i]![1]);
      expect(await run.get('photos/2026/000777.jpgx')).toBeUndefined();
    }
    // readRunMeta recovers either from the blob alone.
    expect(await readRunMeta(p, 'runs/v1')).toEqual(v1);
    expect(await readRunMeta(p, 'runs/v2')).toEqual(v2);
  });

  test('incompressible blocks are stored as they are; an old v1 run merges with a v2 one into v2', async () => {
    const p = new CountingProvider();
    const random: RunEntry[] = Array.from({ length: 200 }, (_, i) => [`r${String(i).padStart(4, '0')}`, randomBytes(64, 40 + i)]);
    const meta = await writeRun(p, 'runs/random', random, { blockBytes: 512 });
    expect(await readAll(p, meta)).toEqual(random);
    // The first block's method byte: 0, stored.
    expect((await p.bytesOf('runs/random'))[HEADER_BYTES]).toBe(0);
    const old = await writeRun(p, 'runs/old', ENTRIES.slice(0, 1500), { version: 1 });
    const newer = await writeRun(p, 'runs/new', ENTRIES.slice(1000).map(([k]) => [k, Uint8Array.of(9)] as const));
    const cache = new BlockCache();
    const merged = await compactRuns(p, 'runs/merged', [await openRun(p, newer, cache), await openRun(p, old, cache)]);
    expect((await p.bytesOf('runs/merged'))[4]).toBe(2);
    const want = ENTRIES.map(([k, v], i) => [k, i >= 1000 ? Uint8Array.of(9) : v] as const);
    expect(await readAll(p, merged)).toEqual(want);
  });

  test('values handed out are copies: changing one changes nothing cached', async () => {
    const p = new CountingProvider();
    const meta = await writeRun(p, 'runs/c', ENTRIES.slice(0, 100));
    const run = await openRun(p, meta, new BlockCache());
    const v = (await run.get(ENTRIES[5]![0]))!;
    v.fill(0);
    expect(await run.get(ENTRIES[5]![0])).toEqual(ENTRIES[5]![1]);
  });

  test('the writer refuses an unknown version', async () => {
    await expect(writeRun(new CountingProvider(), 'runs/x', [], { version: 3 as 2 })).rejects.toBeInstanceOf(RangeError);
  });
});

/** Raw entries of one block (what a v2 block compresses). */
function rawEntries(keys: string[]): Uint8Array {
  const b = new BlockBuilder(1 << 20);
  for (const k of keys) b.add(keyBytes(k).slice(), valueOf(k));
  const v1 = b.finish();
  return v1.subarray(0, v1.length - 4);
}

/** A v2 block: method, declared raw length, payload, and a valid checksum over them. */
function v2Block(method: number, rawLength: number, payload: Uint8Array): Uint8Array {
  const s = new ByteSink(payload.length + 16);
  s.u8(method);
  s.varint(rawLength);
  s.bytes(payload);
  s.u32(runCrc(s.view()));
  return s.view().slice();
}

/** Header + one block + footer + trailer, every checksum valid; the header/trailer versions given. */
async function forge(p: CountingProvider, block: Uint8Array, keys: string[], versions: { header: number; trailer: number } = { header: 2, trailer: 2 }): Promise<RunMeta> {
  const footer = new FooterBuilder();
  const bloom = new BloomBuilder();
  const crc = new DataView(block.buffer, block.byteOffset).getUint32(block.length - 4, true);
  footer.addBlock(keyBytes(keys[0]!).slice(), HEADER_BYTES, block.length, keys.length, crc);
  for (const k of keys) bloom.addKeyBytes(keyBytes(k));
  const f = footer.finish(keys.length, keyBytes(keys[keys.length - 1]!).slice(), bloom.build());
  const offset = HEADER_BYTES + block.length;
  const header = encodeHeader(2);
  header[4] = versions.header;
  const trailer = encodeTrailer({ footerOffset: offset, footerLength: f.length }, versions.trailer as 2);
  await p.put('runs/f', [header, block, f, trailer]);
  return {
    blobKey: 'runs/f',
    size: offset + f.length + TRAILER_BYTES,
    entryCount: keys.length,
    firstKey: keys[0],
    lastKey: keys[keys.length - 1],
    footerOffset: offset,
    footerLength: f.length,
    footerCrc: new DataView(f.buffer, f.byteOffset).getUint32(f.length - 4, true),
  };
}

async function codeOf(p: CountingProvider, meta: RunMeta): Promise<string> {
  try {
    const run = await openRun(p, meta, new BlockCache());
    const seen: string[] = [];
    for await (const [k, v] of run.entries()) {
      expect(v).toEqual(valueOf(k)); // anything read must be what was written
      seen.push(k);
    }
    return `ok:${seen.length}`;
  } catch (err) {
    if (err instanceof IndexError) return err.code;
    throw err;
  }
}

describe('hostile version 2 blocks (valid checksums)', () => {
  const KEYS = ['a', 'b', 'c', 'd'];
  const raw = rawEntries(KEYS);
  const deflated = deflateRawSync(raw);

  test('the forgery harness itself reads back (stored and deflated)', async () => {
    const p = new CountingProvider();
    expect(await codeOf(p, await forge(p, v2Block(1, raw.length, deflated), KEYS))).toBe('ok:4');
    expect(await codeOf(p, await forge(p, v2Block(0, raw.length, raw), KEYS))).toBe('ok:4');
  });

  const cases: [string, () => Uint8Array, string][] = [
    ['an unknown method', () => v2Block(2, raw.length, deflated), 'ERR_RUN_FORMAT'],
    ['a raw length past MAX_BLOCK_RAW_BYTES', () => v2Block(1, MAX_BLOCK_RAW_BYTES + 1, deflated), 'ERR_RUN_FORMAT'],
    ['a raw length too small for its entries', () => v2Block(1, 11, deflated), 'ERR_RUN_FORMAT'],
    ['a stored payload shorter than declared', () => v2Block(0, raw.length + 1, raw), 'ERR_RUN_FORMAT'],
    ['a truncated deflate payload', () => v2Block(1, raw.length, deflated.subarray(0, deflated.length - 3)), 'ERR_RUN_CORRUPT'],
    ['a payload that is not deflate', () => v2Block(1, raw.length, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff)), 'ERR_RUN_CORRUPT'],
    ['a payload inflating to less than declared', () => v2Block(1, raw.length + 8, deflated), 'ERR_RUN_CORRUPT'],
    // 64 MiB of zeros declared as the 20-odd bytes of the entries: refused at the declared size.
    ['a bomb inflating far past its declared length', () => v2Block(1, raw.length, deflateRawSync(new Uint8Array(64 * 1024 * 1024))), 'ERR_RUN_CORRUPT'],
    ['a varint raw length cut off by the payload end', () => Uint8Array.of(1, 0x80, ...[0, 0, 0, 0]), 'ERR_RUN_FORMAT'],
  ];
  for (const [name, make, code] of cases) {
    test(`${name}: ${code}`, async () => {
      const p = new CountingProvider();
      let block = make();
      if (name.startsWith('a varint')) {
        // Recompute the checksum so only the structure is wrong.
        const body = block.subarray(0, block.length - 4);
        const s = new ByteSink(body.length + 4);
        s.bytes(body);
        s.u32(runCrc(body));
        block = s.view().slice();
      }
      const rss = process.memoryUsage().rss;
      expect(await codeOf(p, await forge(p, block, KEYS))).toBe(code);
      expect(process.memoryUsage().rss - rss).toBeLessThan(48 * 1024 * 1024);
    });
  }

  test('a header and a trailer that disagree on the version, or an unknown version: ERR_RUN_FORMAT', async () => {
    const p = new CountingProvider();
    const block = v2Block(1, raw.length, deflated);
    expect(await codeOf(p, await forge(p, block, KEYS, { header: 1, trailer: 2 }))).toBe('ERR_RUN_FORMAT');
    expect(await codeOf(p, await forge(p, block, KEYS, { header: 2, trailer: 1 }))).toBe('ERR_RUN_FORMAT');
    expect(await codeOf(p, await forge(p, block, KEYS, { header: 3, trailer: 3 }))).toBe('ERR_RUN_FORMAT');
  });
});
