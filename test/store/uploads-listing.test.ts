/**
 * ListMultipartUploads and ListParts against a model: uploads of awkward keys (NULs, non-BMP
 * characters, delimiters, keys that prefix other keys), several per key, some ended, spread
 * over the overlay and several runs (with compactions), listed page by page with every
 * combination of prefix, delimiter and page size. Paging with the returned markers must give
 * every upload and common prefix exactly once, in S3's order (key, then initiation).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { compareKeys } from '../../src/store/index/compare.js';
import { parseUploadId } from '../../src/store/upload-keys.js';
import { prefixSuccessor } from '../../src/store/list.js';
import { prng, randInt } from '../support/random.js';
import { makeProvider, stream } from './helpers.js';

const B = 'listing';
interface Model {
  key: string;
  uploadId: string;
  initiated: number;
}

let store: Store;
let cleanup: () => void;
const live: Model[] = [];
let withParts: Model;
let partNumbers: number[] = [];

const KEYS = ['a', 'a/', 'a/b', 'a/b/c', 'a/b/d', 'a\0', 'a\0b', 'ab', 'b/\u{1F600}', 'b/\uffff', 'b/\u00e9', 'b/x/y', 'c', 'c/d/e/f', 'dir/', 'dir/sub/'];

beforeAll(async () => {
  const p = await makeProvider('fs');
  cleanup = p.cleanup;
  let now = Date.UTC(2026, 2, 3);
  // Small overlays and few runs: the keyspace ends up in several runs, compacted at least once.
  store = await Store.open(p.provider, { now: () => now, maxRuns: 2, overlayBytes: 40_000 });
  await store.createBucket(B);
  const next = prng(99);
  const keys = [...KEYS];
  for (let i = 0; i < 120; i++) keys.push(`k/${randInt(next, 0, 30)}/${i % 7 === 0 ? '\0' : ''}${i}`);
  for (let round = 0; round < 3; round++) {
    for (const key of keys) {
      if (next() % 3 === 0) continue;
      now += randInt(next, 0, 2);
      // Uploads created together share a commit, so a millisecond: then the id orders them.
      // (Separate commits never share one: commit times strictly increase.)
      const together = next() % 4 === 0 ? 2 : 1;
      const ids = await Promise.all(Array.from({ length: together }, () => store.createMultipartUpload(B, key)));
      for (const uploadId of ids) {
        const initiated = (parseUploadId(uploadId) as { initiated: number }).initiated;
        expect(initiated).toBeGreaterThanOrEqual(now);
        if (next() % 5 === 0) await store.abortMultipartUpload(B, key, uploadId);
        else live.push({ key, uploadId, initiated });
      }
    }
    await store.checkpoint();
  }
  withParts = live[live.length - 1]!;
  const numbers = new Set<number>([1, 2, 10000]);
  while (numbers.size < 40) numbers.add(randInt(next, 1, 10000));
  partNumbers = [...numbers].sort((x, y) => x - y);
  for (const n of partNumbers) await store.uploadPart(B, withParts.key, withParts.uploadId, n, stream(Uint8Array.of(n % 256)), { size: 1 });
  await store.uploadPart(B, withParts.key, withParts.uploadId, 2, stream(Uint8Array.of(9, 9)), { size: 2 }); // replaced
  live.sort((x, y) => compareKeys(x.key, y.key) || x.initiated - y.initiated || (x.uploadId < y.uploadId ? -1 : 1));
  expect(store.repo.stats.compactions).toBeGreaterThan(0);
  expect(store.repo.state.buckets.get(B)!.uploads.runs.length).toBeGreaterThan(1);
}, 60_000);
afterAll(async () => {
  await store?.close();
  cleanup?.();
});

/** What a full listing must hold: uploads and common prefixes, in order. */
function expected(prefix: string, delimiter: string): string[] {
  const out: string[] = [];
  for (const u of live) {
    if (!u.key.startsWith(prefix)) continue;
    const cut = delimiter ? u.key.indexOf(delimiter, prefix.length) : -1;
    const item = cut >= 0 ? `P:${u.key.slice(0, cut + delimiter.length)}` : `U:${u.key}:${u.uploadId}`;
    if (out[out.length - 1] !== item) out.push(item);
  }
  return out;
}

async function pageAll(prefix: string, delimiter: string, maxUploads: number): Promise<{ items: string[]; pages: number }> {
  const items: string[] = [];
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  for (let pages = 1; ; pages++) {
    const r = await store.listMultipartUploads(B, { prefix, delimiter, maxUploads, ...(keyMarker !== undefined ? { keyMarker } : {}), ...(uploadIdMarker ? { uploadIdMarker } : {}) });
    // Within a page, uploads and prefixes interleave in key order; rebuild that order.
    const page = [...r.uploads.map((u) => ({ k: u.key, s: `U:${u.key}:${u.uploadId}` })), ...r.commonPrefixes.map((p) => ({ k: p, s: `P:${p}` }))];
    page.sort((x, y) => compareKeys(x.k, y.k));
    items.push(...page.map((p) => p.s));
    expect(r.uploads.length + r.commonPrefixes.length).toBeLessThanOrEqual(maxUploads);
    if (!r.isTruncated) return { items, pages };
    expect(r.nextKeyMarker).toBeDefined();
    keyMarker = r.nextKeyMarker;
    uploadIdMarker = r.nextUploadIdMarker;
    if (pages > 2000) throw new Error('paging does not end');
  }
}

describe('ListMultipartUploads', () => {
  it('lists every upload once, by key then initiation, across the overlay and runs', async () => {
    const all = await store.listMultipartUploads(B, { maxUploads: 1000 });
    expect(all.isTruncated).toBe(false);
    expect(all.uploads.map((u) => `${u.key}:${u.uploadId}`)).toEqual(live.map((u) => `${u.key}:${u.uploadId}`));
    expect(all.uploads.map((u) => u.initiated)).toEqual(live.map((u) => u.initiated));
    expect(live.length).toBeGreaterThan(200);
  });

  const cases: [string, string][] = [
    ['', ''],
    ['', '/'],
    ['a', '/'],
    ['a/', '/'],
    ['k/', '/'],
    ['k/1', ''],
    ['b/', '/'],
    ['a', '\0'],
    ['', 'b'],
    ['dir/', '/'],
    ['zzz', '/'],
    ['a/b', ''],
  ];
  for (const [prefix, delimiter] of cases) {
    for (const size of [1, 2, 7, 1000]) {
      it(`pages prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)} by ${size}: each entry once, in order`, async () => {
        const want = expected(prefix, delimiter);
        const { items, pages } = await pageAll(prefix, delimiter, size);
        expect(items).toEqual(want);
        // Truncation is only reported when another entry exists: no empty last page.
        expect(pages).toBe(Math.max(1, Math.ceil(want.length / size)));
      });
    }
  }

  it('resumes after a key marker, after an upload id marker, and after a common-prefix marker', async () => {
    const key = live.find((u, i) => live[i + 1]?.key === u.key && live[i + 2]?.key === u.key)!.key;
    const ofKey = live.filter((u) => u.key === key);
    const after = (m: Model) => live.filter((u) => compareKeys(u.key, m.key) > 0 || (u.key === m.key && (u.initiated > m.initiated || (u.initiated === m.initiated && u.uploadId > m.uploadId))));
    const ids = async (opts: Parameters<Store['listMultipartUploads']>[1]) => (await store.listMultipartUploads(B, { maxUploads: 1000, ...opts })).uploads.map((u) => u.uploadId);
    // key-marker alone: keys strictly after it (none of the marker key's own uploads).
    expect(await ids({ keyMarker: key })).toEqual(live.filter((u) => compareKeys(u.key, key) > 0).map((u) => u.uploadId));
    // key-marker + upload-id-marker: that key's later uploads, then later keys.
    expect(await ids({ keyMarker: key, uploadIdMarker: ofKey[0]!.uploadId })).toEqual(after(ofKey[0]!).map((u) => u.uploadId));
    // An upload-id-marker naming no upload: that key's uploads whose id sorts after it (as S3 documents).
    const fake = `${'0'.repeat(12)}${'f'.repeat(32)}`;
    const lexi = live.filter((u) => compareKeys(u.key, key) > 0 || (u.key === key && u.uploadId > 'zz'));
    expect(await ids({ keyMarker: key, uploadIdMarker: 'zz' })).toEqual(lexi.map((u) => u.uploadId));
    expect(await ids({ keyMarker: key, uploadIdMarker: fake })).toEqual(live.filter((u) => compareKeys(u.key, key) > 0 || (u.key === key && u.uploadId > fake)).map((u) => u.uploadId));
    // A common prefix as key-marker (what a truncated delimited page returns) skips all under it.
    const r = await store.listMultipartUploads(B, { delimiter: '/', keyMarker: 'k/', maxUploads: 1000 });
    expect([...r.uploads.map((u) => u.key), ...r.commonPrefixes].every((k) => compareKeys(k, prefixSuccessor('k/')) >= 0)).toBe(true);
    // A key marker before the prefix starts at the prefix; after it, nothing.
    expect(await ids({ prefix: 'b/', keyMarker: 'a' })).toEqual(live.filter((u) => u.key.startsWith('b/')).map((u) => u.uploadId));
    expect(await ids({ prefix: 'b/', keyMarker: 'c' })).toEqual([]);
  });

  it('answers max-uploads 0 with an empty, truncated page; a missing bucket with NoSuchBucket', async () => {
    const r = await store.listMultipartUploads(B, { maxUploads: 0 });
    expect(r).toMatchObject({ uploads: [], commonPrefixes: [], isTruncated: true });
    await expect(store.listMultipartUploads('no-such-bucket')).rejects.toMatchObject({ code: 'NoSuchBucket' });
  });
});

describe('ListParts', () => {
  it('pages parts in number order from any marker, with the replaced part’s newest record', async () => {
    for (const size of [1, 3, 40, 1000]) {
      const seen: number[] = [];
      let marker = 0;
      for (let pages = 0; pages < 100; pages++) {
        const r = await store.listParts(B, withParts.key, withParts.uploadId, { maxParts: size, partNumberMarker: marker });
        seen.push(...r.parts.map((p) => p.partNumber));
        if (!r.isTruncated) break;
        expect(r.nextPartNumberMarker).toBe(r.parts[r.parts.length - 1]!.partNumber);
        marker = r.nextPartNumberMarker!;
      }
      expect(seen).toEqual(partNumbers);
    }
    const r = await store.listParts(B, withParts.key, withParts.uploadId, { partNumberMarker: 1, maxParts: 1 });
    expect(r.parts[0]).toMatchObject({ partNumber: 2, size: 2 });
    expect((await store.listParts(B, withParts.key, withParts.uploadId, { partNumberMarker: 10000 })).parts).toEqual([]);
    expect((await store.listParts(B, withParts.key, withParts.uploadId, { partNumberMarker: Number.MAX_SAFE_INTEGER })).parts).toEqual([]);
    const zero = await store.listParts(B, withParts.key, withParts.uploadId, { maxParts: 0 });
    expect(zero).toMatchObject({ parts: [], isTruncated: true });
    expect(zero.nextPartNumberMarker).toBeUndefined();
  });

  it('refuses an upload of another key, an unknown or malformed id', async () => {
    const other = live.find((u) => u.key !== withParts.key)!;
    await expect(store.listParts(B, other.key, withParts.uploadId)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    for (const id of ['', 'nope', `${withParts.uploadId}0`, withParts.uploadId.replace(/.$/, (c) => (c === '0' ? '1' : '0')), '0'.repeat(32)]) {
      await expect(store.listParts(B, withParts.key, id), id).rejects.toMatchObject({ code: 'NoSuchUpload' });
    }
  });
});
