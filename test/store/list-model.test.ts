/**
 * ListObjects against a brute-force model: random keys (multi-byte characters, surrogate
 * pairs, delimiters as the last character), random delimiters and prefixes, every max-keys
 * from 1 to the listing's length with continuation tokens, start-after, versions and delete
 * markers, keys spread over several runs (multi-block, through a block cache far smaller than
 * the index) and the in-memory overlay — and the same as of a past time.
 *
 * The listing seeks past every common prefix instead of stepping through its keys, and
 * serves seeks from cached blocks without a read; this checks nothing is lost or repeated
 * on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { ListOptions, ListResult } from '../../src/store/list.js';
import { prng } from '../support/random.js';

const BUCKET = 'model';
/** Characters keys are made of: few, so common prefixes are frequent. 'é' is 2 UTF-8 bytes,
 * '\u{1F600}' 4 (a surrogate pair in JS), '\uFFFD' 3 (sorts below the pair in UTF-8 but above
 * it in UTF-16 code units). */
const ALPHABET = ['a', 'b', '/', 'é', '\u{1F600}', '\uFFFD', '-'];
const DELIMITERS = ['/', 'a', 'é', '\u{1F600}', 'b/', '\uFFFD-'];
/** User metadata per object, bytes: about 60 entries per 64 KiB run block, so runs have many blocks. */
const META_BYTES = 1000;

const utf8Order = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Every page of a listing, concatenated (keys and prefixes in page order). */
interface Walk {
  entries: string[];
  pages: number;
}

/** The reference: what a listing of `live` (sorted) must return, as one ordered list. */
function reference(live: readonly string[], prefix: string, delimiter: string, after: string): string[] {
  const out: string[] = [];
  for (const k of live) {
    if (!k.startsWith(prefix)) continue;
    const cut = delimiter ? k.indexOf(delimiter, prefix.length) : -1;
    const entry = cut >= 0 ? `P:${k.slice(0, cut + delimiter.length)}` : `K:${k}`;
    // start-after: keys strictly after it; a common prefix is listed if any key under it is.
    if (after && utf8Order(k, after) <= 0) continue;
    if (out[out.length - 1] !== entry) out.push(entry);
  }
  return out;
}

function rnd(next: () => number, n: number): number {
  return next() % n;
}

function randomKey(next: () => number): string {
  const len = 1 + rnd(next, 7);
  let k = '';
  for (let i = 0; i < len; i++) k += ALPHABET[rnd(next, ALPHABET.length)]!;
  return k;
}

let store: Store;
let clock = Date.UTC(2026, 0, 1);
/** Live keys (not deleted, head not a delete marker) now, and as of `pastAt`. */
let liveNow: string[] = [];
let livePast: string[] = [];
let pastAt = 0;

async function put(key: string, seed: number): Promise<void> {
  clock += 10;
  const empty = (async function* () {})();
  await store.putObject(BUCKET, key, empty, { size: 0, userMetadata: { pad: 'x'.repeat(META_BYTES), seed: String(seed) } });
}

async function del(key: string): Promise<void> {
  clock += 10;
  await store.deleteObject(BUCKET, key);
}

beforeAll(async () => {
  const provider = await createMemoryProvider({});
  // A block cache of ~2 blocks: seeks keep evicting and re-reading blocks.
  store = await Store.open(provider, { now: () => clock, blockCacheBytes: 160 * 1024, maxRuns: 16 });
  await store.createBucket(BUCKET);
  const next = prng(20261202);
  const live = new Set<string>();
  const keys = new Set<string>();
  while (keys.size < 900) keys.add(randomKey(next));
  const all = [...keys];
  // Run 1: unversioned puts.
  for (const [i, k] of all.slice(0, 450).entries()) {
    await put(k, i);
    live.add(k);
  }
  await store.checkpoint();
  // Run 2: more keys, overwrites, plain deletes (tombstones over run 1).
  for (const [i, k] of all.slice(450, 700).entries()) {
    await put(k, i);
    live.add(k);
  }
  for (const k of all.slice(0, 450)) {
    const r = rnd(next, 6);
    if (r === 0) {
      await del(k);
      live.delete(k);
    } else if (r === 1) await put(k, 7);
  }
  await store.checkpoint();
  clock += 1000;
  pastAt = clock;
  livePast = [...live].sort(utf8Order);
  clock += 1000;
  // Run 3: versioning on; delete markers and new versions.
  await store.putVersioning(BUCKET, 'Enabled');
  for (const k of all.slice(0, 700)) {
    const r = rnd(next, 5);
    if (r === 0) {
      await del(k); // a delete marker (or a marker over nothing)
      live.delete(k);
    } else if (r === 1) {
      await put(k, 9);
      live.add(k);
    }
  }
  await store.checkpoint();
  // Overlay (memtable): newest writes, not checkpointed.
  for (const k of all.slice(700)) {
    await put(k, 11);
    live.add(k);
  }
  for (const k of all.slice(0, 300)) {
    if (rnd(next, 7) === 0) {
      await del(k);
      live.delete(k);
    } else if (rnd(next, 9) === 0) {
      await put(k, 13);
      live.add(k);
    }
  }
  liveNow = [...live].sort(utf8Order);
}, 60_000);

afterAll(async () => {
  await store?.close();
});

type Lister = (opts: ListOptions) => Promise<ListResult>;

/** Pages through a listing with `maxKeys`, checking every page's shape. */
async function walk(list: Lister, base: ListOptions, maxKeys: number, exactPages: boolean): Promise<Walk> {
  const entries: string[] = [];
  let token: string | undefined;
  let pages = 0;
  for (;;) {
    const r = await list({ ...base, maxKeys, ...(token ? { continuationToken: token } : {}) });
    pages++;
    const page = [...r.contents.map((c) => `K:${c.key}`), ...r.commonPrefixes.map((p) => `P:${p}`)];
    // Contents and prefixes interleave in key order; a page never holds more than maxKeys.
    page.sort((a, b) => utf8Order(a.slice(2), b.slice(2)));
    expect(page.length).toBeLessThanOrEqual(maxKeys);
    if (exactPages && r.isTruncated) expect(page.length).toBe(maxKeys);
    for (const c of r.contents) expect(c.version.deleteMarker).toBe(false);
    entries.push(...page);
    if (!r.isTruncated) break;
    expect(r.nextContinuationToken).toBeDefined();
    token = r.nextContinuationToken;
    if (pages > 5000) throw new Error('listing does not end');
  }
  return { entries, pages };
}

/** (prefix, delimiter) cases: random prefixes drawn from the keys, and the empty one. */
function cases(live: readonly string[], seed: number): [string, string][] {
  const next = prng(seed);
  const out: [string, string][] = [['', '']];
  for (const d of DELIMITERS) {
    out.push(['', d]);
    const k = live[rnd(next, live.length)]!;
    out.push([[...k].slice(0, 1 + rnd(next, 2)).join(''), d]);
    // A prefix that ends with the delimiter, as clients browse a "folder".
    const at = k.indexOf(d);
    if (at >= 0) out.push([k.slice(0, at + d.length), d]);
  }
  return out;
}

describe('ListObjects against a brute-force model', () => {
  it('spreads the keys over several multi-block runs and the overlay', () => {
    const b = store.repo.state.buckets.get(BUCKET)!;
    expect(b.runs.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...b.runs.map((r) => (r.reader as unknown as { blockCount: number }).blockCount))).toBeGreaterThanOrEqual(4);
    expect(b.overlay.size).toBeGreaterThan(100);
  });

  it('lists every (prefix, delimiter) exactly, with every max-keys from 1 to the listing length', async () => {
    const list: Lister = (o) => store.listObjects(BUCKET, o);
    for (const [prefix, delimiter] of cases(liveNow, 1)) {
      const want = reference(liveNow, prefix, delimiter, '');
      const full = await walk(list, { prefix, delimiter }, 1000, true);
      expect(full.entries, `prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)}`).toEqual(want);
      // Every max-keys for short listings; a spread of them for long ones (the no-delimiter
      // listing of every key would take N^2/2 page entries).
      const sizes = want.length <= 60 ? Array.from({ length: want.length + 1 }, (_, i) => i + 1) : [1, 2, 7, 31, 99, want.length - 1, want.length];
      for (const m of sizes) {
        const w = await walk(list, { prefix, delimiter }, m, true);
        expect(w.entries, `prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)} max-keys ${m}`).toEqual(want);
        expect(w.pages).toBe(Math.max(1, Math.ceil(want.length / m)));
      }
    }
  }, 60_000);

  it('resumes after start-after anywhere, inside a common prefix or past it', async () => {
    const next = prng(7);
    const list: Lister = (o) => store.listObjects(BUCKET, o);
    for (const [prefix, delimiter] of cases(liveNow, 2)) {
      for (let i = 0; i < 6; i++) {
        // A live key, a key made up, or a live key's common prefix (a V1 NextMarker).
        const k = liveNow[rnd(next, liveNow.length)]!;
        const cut = delimiter ? k.indexOf(delimiter, prefix.length) : -1;
        const after = i % 3 === 0 ? randomKey(next) : i % 3 === 1 || cut < 0 ? k : k.slice(0, cut + delimiter.length);
        const got = await walk(list, { prefix, delimiter, startAfter: after }, 1 + rnd(next, 9), true);
        let want = reference(liveNow, prefix, delimiter, after);
        // A start-after that is itself a common prefix of this listing skips that prefix.
        if (delimiter && after.startsWith(prefix) && after.endsWith(delimiter) && after.indexOf(delimiter, prefix.length) === after.length - delimiter.length) {
          want = want.filter((e) => e !== `P:${after}`);
        }
        expect(got.entries, `prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)} after ${JSON.stringify(after)}`).toEqual(want);
      }
    }
  }, 60_000);

  it('lists as of a past time exactly (before versioning, delete markers and the overlay)', async () => {
    const list: Lister = (o) => store.listObjectsAsOf(BUCKET, { ...o, at: pastAt });
    for (const [prefix, delimiter] of cases(livePast, 3)) {
      const want = reference(livePast, prefix, delimiter, '');
      for (const m of [2, 1000]) {
        // As of a time, a page may end early (its step budget): only the concatenation counts.
        const w = await walk(list, { prefix, delimiter }, m, false);
        expect(w.entries, `as of: prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)} max-keys ${m}`).toEqual(want);
      }
    }
  }, 60_000);
});
