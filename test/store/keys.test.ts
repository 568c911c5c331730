/**
 * Object keys are opaque UTF-8 up to 1024 bytes.
 *
 * Proves that hostile and unusual keys — `..`, `//`, `%`, `%2F`, `+`, spaces, control
 * characters, NUL, non-BMP characters, characters whose UTF-16 order differs from their
 * UTF-8 order, keys that are prefixes of each other, 1024-byte keys of 2-, 3- and 4-byte
 * characters, and seeded random keys — round-trip exactly through PUT, GET, LIST, COPY and
 * DELETE; that 1025 bytes is 'KeyTooLong' and a lone surrogate is refused; and that LIST
 * (paged by continuation token and by marker, with and without a prefix and a delimiter)
 * returns keys in UTF-8 byte order across the overlay and index runs, before and after a
 * checkpoint, after deletes that shadow run entries, and after a reopen.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import { prng, randInt } from '../support/random.js';
import { collect, stream } from './helpers.js';

const A = 'keys-a';
const C = 'keys-copy';

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const byUtf8 = (a: string, b: string) => Buffer.compare(utf8(a), utf8(b));

const SPECIAL = [
  '..',
  '../..',
  '.',
  '//',
  '/leading',
  'a//b',
  'trailing/',
  '%',
  '%2F',
  '%252F',
  'a%2Fb',
  '+',
  'a+b',
  ' ',
  'a b',
  '  two  spaces  ',
  '\u0001',
  'ctl\u001f',
  'del\u007f',
  'nul\u0000byte',
  'tab\tnew\nline\r',
  '😀',
  'emoji/😀/🎉',
  '\u{10FFFF}',
  '\uE000private',
  '\uFFFD',
  '\uFFFF',
  'a',
  'a/',
  'a/b',
  'a/b/',
  'a/b/c',
  'ab',
  'a\u0000',
  'é'.repeat(512), // 1024 bytes of 2-byte characters
  '€'.repeat(341) + 'x', // 3 * 341 + 1 = 1024
  '😀'.repeat(256), // 1024 bytes of 4-byte characters
  'z'.repeat(1024),
];

/** Seeded random keys: code points from ASCII, Latin, CJK, private use, astral planes. */
function randomKeys(seed: number, n: number): string[] {
  const next = prng(seed);
  const ranges: [number, number][] = [
    [0x20, 0x7e],
    [0x01, 0x1f],
    [0xa0, 0x7ff],
    [0x4e00, 0x9fff],
    [0xe000, 0xfffd],
    [0x10000, 0x10ffff],
  ];
  const out = new Set<string>();
  while (out.size < n) {
    const max = next() % 5 === 0 ? 1024 : 40;
    let key = '';
    for (;;) {
      const [lo, hi] = ranges[next() % ranges.length]!;
      const c = String.fromCodePoint(randInt(next, lo, hi));
      if (utf8(key + c).length > max) break;
      key += c;
      if (next() % 12 === 0 && utf8(key).length < max - 1) key += '/';
      if (next() % 7 === 0 && max === 40) break;
    }
    if (key) out.add(key);
  }
  return [...out];
}

const bodyOf = (key: string, gen = 0) => Buffer.concat([utf8(key), Buffer.from([gen, 0xff])]);

/** ListObjects as S3 defines it, over a plain sorted key list. */
function modelList(keys: readonly string[], prefix: string, delimiter: string): string[] {
  const out: string[] = [];
  for (const k of [...keys].sort(byUtf8)) {
    if (!k.startsWith(prefix)) continue;
    const cut = delimiter ? k.indexOf(delimiter, prefix.length) : -1;
    const entry = cut >= 0 ? `P:${k.slice(0, cut + delimiter.length)}` : `K:${k}`;
    if (out[out.length - 1] !== entry) out.push(entry);
  }
  return out;
}

/** Every page of a listing, by continuation token or by marker. */
async function listAll(store: Store, bucket: string, prefix: string, delimiter: string, by: 'token' | 'marker', maxKeys: number): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  let marker: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await store.listObjects(bucket, {
      prefix,
      delimiter,
      maxKeys,
      ...(token ? { continuationToken: token } : {}),
      ...(marker ? { startAfter: marker } : {}),
    });
    const entries = [...page.contents.map((e) => `K:${e.key}`), ...page.commonPrefixes.map((p) => `P:${p}`)];
    out.push(...entries.sort((a, b) => byUtf8(a.slice(2), b.slice(2))));
    if (!page.isTruncated) return out;
    expect(entries.length).toBe(maxKeys);
    if (by === 'token') token = page.nextContinuationToken;
    else marker = page.nextMarker;
  }
  throw new Error('listing did not end');
}

async function expectListings(store: Store, keys: readonly string[], label: string): Promise<void> {
  for (const [prefix, delimiter] of [
    ['', ''],
    ['', '/'],
    ['a', '/'],
    ['a/', '/'],
    ['emoji/', '/'],
    ['\uFFFF', ''],
    ['\uE000', '/'],
    ['%', ''],
    ['😀', '😀'],
  ] as const) {
    const want = modelList(keys, prefix, delimiter);
    for (const by of ['token', 'marker'] as const) {
      const got = await listAll(store, A, prefix, delimiter, by, 7);
      expect(got, `${label}: prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)} by ${by}`).toEqual(want);
    }
  }
  const whole = await listAll(store, A, '', '', 'token', 1000);
  expect(whole.map((e) => e.slice(2))).toEqual([...keys].sort(byUtf8));
}

async function read(store: Store, bucket: string, key: string): Promise<Buffer | null> {
  try {
    return Buffer.from(await collect((await store.getObject(bucket, key)).body));
  } catch (err) {
    if ((err as { code?: string }).code === 'NoSuchKey') return null;
    throw err;
  }
}

async function open(provider: Provider): Promise<Store> {
  return Store.open(provider, { checkpointEvery: 1 << 20, overlayBytes: 1 << 30, maxRuns: 2 });
}

describe('object keys', () => {
  it('special keys and random keys round-trip through put, get, list, copy and delete, in UTF-8 order across overlay and runs', async () => {
    for (const k of SPECIAL) expect(utf8(k).length, k).toBeLessThanOrEqual(1024);
    const keys = [...new Set([...SPECIAL, ...randomKeys(11, 160)])];
    const provider = await createMemoryProvider();
    let store = await open(provider);
    await store.createBucket(A);
    await store.createBucket(C);
    const half = Math.floor(keys.length / 2);
    for (const k of keys.slice(0, half)) await store.putObject(A, k, stream(bodyOf(k)), { size: bodyOf(k).length });
    await expectListings(store, keys.slice(0, half), 'overlay only');
    await store.checkpoint();
    for (const k of keys.slice(half)) await store.putObject(A, k, stream(bodyOf(k)), { size: bodyOf(k).length });
    await expectListings(store, keys, 'overlay + run');
    // Overwrites and deletes in the overlay shadow what the run holds.
    const deleted = keys.filter((_, i) => i % 5 === 0);
    for (const k of deleted) await store.deleteObject(A, k);
    for (const k of keys.filter((_, i) => i % 5 === 1)) await store.putObject(A, k, stream(bodyOf(k, 1)), { size: bodyOf(k, 1).length });
    const present = keys.filter((_, i) => i % 5 !== 0);
    await expectListings(store, present, 'after deletes');
    await store.checkpoint();
    await store.checkpoint(); // three runs > maxRuns: compacted
    await store.close();
    store = await open(provider);
    await expectListings(store, present, 'after reopen');
    for (const [i, k] of keys.entries()) {
      const want = i % 5 === 0 ? null : bodyOf(k, i % 5 === 1 ? 1 : 0);
      expect(await read(store, A, k), `GET ${JSON.stringify(k)}`).toEqual(want);
      if (want) {
        await store.copyObject({ bucket: A, key: k }, { bucket: C, key: k });
        expect(await read(store, C, k), `copy of ${JSON.stringify(k)}`).toEqual(want);
        expect((await store.headObject(C, k)).version.size).toBe(want.length);
      }
    }
    const copied = (await store.listObjects(C, { maxKeys: 1000 })).contents.map((e) => e.key);
    expect(copied).toEqual([...present].sort(byUtf8));
    for (const k of present) await store.deleteObject(A, k);
    expect((await store.listObjects(A)).contents).toEqual([]);
    for (const k of present) expect(await read(store, A, k)).toBeNull();
    await store.close();
  });

  it('refuses 1025-byte keys (KeyTooLong) and keys that are not UTF-8, on every write path', async () => {
    const store = await open(await createMemoryProvider());
    await store.createBucket(A);
    await store.putObject(A, 'src', stream(new Uint8Array(1)), { size: 1 });
    const tooLong = ['x'.repeat(1025), 'é'.repeat(512) + 'x', '😀'.repeat(256) + 'x', '€'.repeat(342)];
    for (const k of tooLong) {
      expect(utf8(k).length).toBe(1025 + (k.startsWith('€') ? 1 : 0));
      await expect(store.putObject(A, k, stream(new Uint8Array(1)), { size: 1 })).rejects.toMatchObject({ code: 'KeyTooLong' });
      await expect(store.copyObject({ bucket: A, key: 'src' }, { bucket: A, key: k })).rejects.toMatchObject({ code: 'KeyTooLong' });
      await expect(store.createMultipartUpload(A, k)).rejects.toMatchObject({ code: 'KeyTooLong' });
      await expect(store.deleteObject(A, k)).rejects.toMatchObject({ code: 'KeyTooLong' });
    }
    for (const k of ['lone\uD800', '\uDC00x']) {
      await expect(store.putObject(A, k, stream(new Uint8Array(1)), { size: 1 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    }
    await expect(store.putObject(A, '', stream(new Uint8Array(1)), { size: 1 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    expect((await store.listObjects(A)).contents.map((e) => e.key)).toEqual(['src']);
  });
});
