/**
 * @module Child process of the scale run, started fresh after the writer: reopens the
 * repository at `--dir`, then lists it. Reports the reopen time, a full paginated LIST pass
 * checked against the `--objects` keys the writer wrote (no duplicate, none missing),
 * the latency of pages started at random points (continuation tokens from the pass), and
 * a delimiter listing. Prints one `RESULT {json}` line (ScaleReaderResult) on stdout.
 */
import { BUCKET, KEY_ROOT, PREFIXES, RESULT_MARK, argValue, drain, keysInListOrder, objectKey, openBenchStore, peakRssMiB } from './engine-fixture.js';
import { ListChecker } from './engine-list-check.js';
import type { CountSnapshot, RequestCounts } from './lib/counting-provider.js';

export interface ScaleReaderResult {
  /** Store.open alone, and process start to the store being ready. */
  openMs: number;
  processToReadyMs: number;
  openCounts: RequestCounts;
  rssAtReadyMiB: number;
  /** One GET right after open (empty block cache), by blob class. */
  coldGet: CountSnapshot['byClass'];
  pass: { pages: number; keys: number; ms: number; duplicates: number; missing: number; unexpected: number; pageMs: number[]; counts: RequestCounts };
  randomPageMs: number[];
  randomCounts: RequestCounts;
  delimiter: { prefixes: number; ms: number[]; counts: RequestCounts };
  peakRssMiB: number;
}

const PAGE = 1000;
/** Delimiter listings timed (the first may find colder blocks than the rest). */
const DELIMITER_REPEATS = 5;
/** Object read cold right after open: written early, so its index entry is in a run. */
const COLD_OBJECT = 123_457;
/** Seed of the start-point sampler, so every run samples the same pages. */
const SEED = 11;

/** A small seeded PRNG (mulberry32): uniform in [0, 1). */
function sampler(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const dir = argValue('dir');
const objects = Number(argValue('objects'));
const samples = Number(argValue('samples') ?? 200);
if (!dir || !(objects > 0)) throw new Error('usage: engine-scale-reader --dir=DIR --objects=N [--samples=N]');

const { store, counter, openMs } = await openBenchStore(dir, { create: false });
const processToReadyMs = performance.now();
const openCounts = counter.snapshot().total;
const rssAtReadyMiB = process.memoryUsage.rss() / 2 ** 20;
process.stderr.write(`  reader: open in ${openMs.toFixed(0)} ms (${processToReadyMs.toFixed(0)} ms since process start)\n`);

// A cold GET: the index block holding the key (if its bloom filter passes), then the body.
counter.reset();
await drain((await store.getObject(BUCKET, objectKey(COLD_OBJECT % objects))).body);
const coldGet = counter.snapshot().byClass;

// Full pass: every page's keys must continue the expected sequence exactly.
const check = new ListChecker(keysInListOrder(objects));
const tokens: string[] = [];
const pageMs: number[] = [];
let pages = 0;
counter.reset();
const passStart = performance.now();
for (let token: string | undefined; ; ) {
  const t = performance.now();
  const page = await store.listObjects(BUCKET, { maxKeys: PAGE, ...(token ? { continuationToken: token } : {}) });
  pageMs.push(performance.now() - t);
  pages++;
  for (const entry of page.contents) check.see(entry.key);
  if (!page.isTruncated) break;
  token = page.nextContinuationToken!;
  tokens.push(token);
}
const passMs = performance.now() - passStart;
const verdict = check.finish();
const passCounts = counter.snapshot().total;
process.stderr.write(`  reader: full pass ${pages} pages, ${verdict.keys} keys in ${passMs.toFixed(0)} ms\n`);

// Pages from random start points: a token from the pass resumes anywhere in the bucket.
const next = sampler(SEED);
const randomPageMs: number[] = [];
counter.reset();
for (let s = 0; s < samples && tokens.length > 0; s++) {
  const token = tokens[Math.floor(next() * tokens.length)]!;
  const t = performance.now();
  const page = await store.listObjects(BUCKET, { maxKeys: PAGE, continuationToken: token });
  randomPageMs.push(performance.now() - t);
  if (page.contents.length === 0) throw new Error('a page from a mid-bucket token came back empty');
}

const randomCounts = counter.snapshot().total;

// Delimiter listing: one common prefix per group, each found with one seek.
counter.reset();
const delimiterMs: number[] = [];
let prefixes = 0;
for (let r = 0; r < DELIMITER_REPEATS; r++) {
  const t = performance.now();
  const page = await store.listObjects(BUCKET, { prefix: KEY_ROOT, delimiter: '/', maxKeys: PAGE });
  delimiterMs.push(performance.now() - t);
  prefixes = page.commonPrefixes.length;
  if (page.contents.length > 0 || prefixes !== Math.min(objects, PREFIXES)) {
    throw new Error(`delimiter listing: ${prefixes} prefixes and ${page.contents.length} keys`);
  }
}

const delimiterCounts = counter.snapshot().total;
await store.close();
const result: ScaleReaderResult = {
  openMs,
  processToReadyMs,
  openCounts,
  rssAtReadyMiB,
  coldGet,
  pass: { pages, keys: verdict.keys, ms: passMs, duplicates: verdict.duplicates, missing: verdict.missing, unexpected: verdict.unexpected, pageMs, counts: passCounts },
  randomPageMs,
  randomCounts,
  delimiter: { prefixes, ms: delimiterMs, counts: delimiterCounts },
  peakRssMiB: peakRssMiB(),
};
process.stdout.write(`${RESULT_MARK}${JSON.stringify(result)}\n`);
