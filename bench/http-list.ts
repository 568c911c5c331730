/**
 * @module LIST over HTTP against Strata: pages of 1000, delimiter listings, and a full
 * paginated pass checked for duplicates and missing keys.
 *
 * bench:http runs listBench; run alone (quick mode) it takes flags:
 *   node dist/bench/http-list.js [--objects 100000,1000000] [--samples 20] [--keep DIR] [--skip-pass]
 * `--keep DIR` populates DIR/<n> once and reuses it on later runs (populating 1,000,000 objects
 * takes minutes; listing it does not), so before/after figures list the very same repository.
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pool, signed } from './http-load.js';
import { startTarget, type Target } from './http-targets.js';
import { benchKey, GROUPS } from './http-populate.js';
import { fmt, percentile } from './lib/stats.js';
import { table } from './lib/markdown.js';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import type { Pool } from 'undici';
import { withServerMalloc } from './lib/malloc-env.js';

const here = dirname(fileURLToPath(import.meta.url));
const BUCKET = 'listbench';

/** A LIST response as received: its body's chunks and when its last byte arrived. */
interface Received {
  chunks: Buffer[];
  /** performance.now() when the body ended. */
  lastByte: number;
}

/**
 * One LIST request, read to its last byte. The body is kept as the chunks that arrived: making
 * them one string (what a check needs) is left to `text`, outside the timed window, because
 * that costs this client (not the server) ~1 ms per 300 KB page here, most of it page faults
 * of the fresh string in V8's large-object space (measured against a server sending a
 * constant 300 KB body: time to last byte 0.6-0.9 ms, with body.text() 1.5-2.5 ms).
 */
async function list(p: Pool, t: Target, query: Record<string, string>): Promise<Received> {
  const req = signed(t, 'GET', `/${BUCKET}`, {}, { 'list-type': '2', ...query });
  const res = await p.request({ method: 'GET', path: req.path, headers: req.headers });
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(c as Buffer);
  const lastByte = performance.now();
  if (res.statusCode !== 200) throw new Error(`LIST ${JSON.stringify(query)}: HTTP ${res.statusCode} ${text(chunks).slice(0, 200)}`);
  return { chunks, lastByte };
}

const text = (chunks: Buffer[]): string => Buffer.concat(chunks).toString('utf8');

const keysOf = (xml: string) => [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
const prefixesOf = (xml: string) => [...xml.matchAll(/<CommonPrefixes><Prefix>([^<]*)<\/Prefix>/g)].map((m) => m[1]!);
const tokenOf = (xml: string) => /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(xml)?.[1];

export interface ListCase {
  label: string;
  /** The first (cold) request, ms. */
  first: number;
  /** Untimed requests between the first and the timed ones (results still checked). */
  warmup?: number;
  /** The timed requests after those, ms: from sending the request to its body's last byte. */
  ms: number[];
  /** The same requests, ms, with this client's decoding of the body into one string added. */
  msDecoded?: number[];
  wrong: number;
}

export interface ListStats {
  objects: number;
  populateSeconds: number;
  /** One per request kind, in the order of `cases` (page, page after a key, root delimiter, prefix delimiter). */
  cases: ListCase[];
  pass: { pages: number; keys: number; seconds: number; dup: number; missing: number; order: number; pageP50: number; pageP95: number };
}

/**
 * Runs `fn` once (its latency returned as `first`, the cold request), then `warmup` times
 * untimed, then `n` timed times. A request is timed from its start to its body's last byte;
 * the decoding of the body into a string is timed apart (msDecoded adds it), and every result
 * is checked after that, outside the timed window.
 */
async function timed(n: number, warmup: number, fn: () => Promise<Received>, check: (xml: string) => boolean): Promise<{ first: number; warmup: number; ms: number[]; msDecoded: number[]; wrong: number }> {
  const ms: number[] = [];
  const msDecoded: number[] = [];
  let wrong = 0;
  let first = 0;
  for (let i = 0; i <= warmup + n; i++) {
    const t0 = performance.now();
    const r = await fn();
    const dt = r.lastByte - t0;
    const d0 = performance.now();
    const xml = text(r.chunks);
    const decode = performance.now() - d0;
    if (i === 0) first = dt;
    else if (i > warmup) {
      ms.push(dt);
      msDecoded.push(dt + decode);
    }
    if (!check(xml)) wrong++;
    // The check's garbage (a regex pass over ~300 KB) is collected here, not during the next
    // timed request (about 0.8 ms of its p50 here). Node needs --expose-gc (npm run bench:http).
    gc?.();
  }
  return { first, warmup, ms, msDecoded, wrong };
}

/**
 * Untimed requests of each kind between its first (cold) one and the timed ones: a server
 * answers listings for hours, so the percentiles are of the code V8 has optimised, not of its
 * first tiers (a page of 1,000 at 100,000 objects cost the server 4.4 ms of CPU one request
 * after start and 2.6 ms after 20). The cold request is still shown, as "first".
 */
export const LIST_WARMUP = 30;

/** V8's collector when node runs with --expose-gc. */
const gc = (globalThis as { gc?: () => void }).gc;

export interface ListBenchOptions {
  samples: number;
  log: (m: string) => void;
  /** A directory to populate once and reuse (kept afterwards); default a fresh temp dir. */
  keepDir?: string;
  /** Skip the full paginated pass (its pages are reported as 0). */
  skipPass?: boolean;
}

/** Marker written after a kept directory is fully populated. */
const POPULATED = 'populated.json';

/** Populates `n` objects (or reuses a kept directory), then measures listing latencies and a full pass. */
export async function listBench(n: number, opts: ListBenchOptions): Promise<ListStats> {
  const dir = opts.keepDir ?? mkdtempSync(join(tmpdir(), 'bench-list-'));
  try {
    const t0 = performance.now();
    let populateSeconds = 0;
    if (opts.keepDir && existsSync(join(dir, POPULATED))) {
      opts.log(`reusing ${n} objects in ${dir}`);
    } else {
      if (opts.keepDir) rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      execFileSync(process.execPath, [join(here, 'http-populate.js'), dir, BUCKET, String(n)], { stdio: ['ignore', 'pipe', 'inherit'] });
      populateSeconds = (performance.now() - t0) / 1000;
      if (opts.keepDir) writeFileSync(join(dir, POPULATED), JSON.stringify({ n, populateSeconds }));
      opts.log(`populated ${n} objects in ${populateSeconds.toFixed(1)} s`);
    }
    const t = await startTarget('strata', { dataDir: dir });
    const p = pool(t, 1);
    try {
      const results: ListCase[] = [];
      const cases: [string, Record<string, string>, (xml: string) => boolean][] = [
        ['page (max-keys=1000)', { 'max-keys': '1000' }, (x) => keysOf(x).length === 1000],
        ['page after a random key', { 'max-keys': '1000', 'start-after': benchKey(Math.floor(n / 3)) }, (x) => keysOf(x).length === 1000],
        ['delimiter / (root)', { delimiter: '/', 'max-keys': '1000' }, (x) => prefixesOf(x).length === Math.min(1000, GROUPS)],
        ['delimiter / prefix=p042/', { delimiter: '/', prefix: 'p042/', 'max-keys': '1000' }, (x) => keysOf(x).length === Math.min(1000, Math.ceil(n / GROUPS))],
      ];
      for (const [label, q, ok] of cases) {
        results.push({ label, ...(await timed(opts.samples, opts.samples >= 50 ? LIST_WARMUP : 0, () => list(p, t, q), ok)) });
      }
      // Full paginated pass.
      const pages: number[] = [];
      let token: string | undefined;
      let count = 0;
      let dup = 0;
      let order = 0;
      let missing = 0;
      let prev = '';
      const seen = new Set<string>();
      const passStart = performance.now();
      if (!opts.skipPass) do {
        const q: Record<string, string> = { 'max-keys': '1000' };
        if (token) q['continuation-token'] = token;
        const s = performance.now();
        const r = await list(p, t, q);
        pages.push(r.lastByte - s);
        const xml = text(r.chunks);
        for (const k of keysOf(xml)) {
          if (seen.has(k)) dup++;
          if (k <= prev) order++;
          seen.add(k);
          prev = k;
          count++;
        }
        token = tokenOf(xml);
      } while (token);
      const seconds = (performance.now() - passStart) / 1000;
      if (!opts.skipPass) for (let i = 0; i < n; i++) if (!seen.has(benchKey(i))) missing++;
      return {
        objects: n,
        populateSeconds,
        cases: results,
        pass: { pages: pages.length, keys: count, seconds, dup, missing, order, pageP50: percentile(pages, 50), pageP95: percentile(pages, 95) },
      };
    } finally {
      await p.close();
      await t.stop();
    }
  } finally {
    if (!opts.keepDir) {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.master-key`, { force: true });
    }
  }
}

/** What came between a kind's first request and its timed ones, as the table text says it. */
function warmupText(cases: ListCase[]): string {
  const w = cases[0]?.warmup ?? 0;
  return w > 0 && cases.every((c) => c.warmup === w) ? `it and ${w} untimed warm-up requests of the same kind` : 'it';
}

export function renderList(s: ListStats): string {
  return [
    `Bucket of ${fmt(s.objects)} objects (${s.populateSeconds > 0 ? `populated through the Store API in ${s.populateSeconds.toFixed(1)} s` : 'populated through the Store API by an earlier run, kept with --keep'}, then served by a fresh server process), 1 connection, sequential requests. "first" is the first request of each kind (cold); the percentiles are over the n requests after ${warmupText(s.cases)}. ${s.cases.every((c) => c.msDecoded) ? 'A request is timed from its start to the last byte of its body (as wrk times one); "p50 ms with decode" adds this client\'s decoding of the body into one string, which earlier runs timed with the request.' : 'A request is timed from its start to its body decoded into one string (a run before 2026-12-05: this client\'s decoding is inside the figures).'} Results are checked outside the timed window${gc ? ', and the load generator collects its own garbage between requests (--expose-gc)' : ''}.`,
    '',
    table(
      ['Request', 'first ms', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'p50 ms with decode', 'wrong result'],
      s.cases.map((c) => [
        c.label,
        fmt(c.first, 2),
        String(c.ms.length),
        fmt(percentile(c.ms, 50), 2),
        fmt(percentile(c.ms, 95), 2),
        fmt(percentile(c.ms, 99), 2),
        c.msDecoded ? fmt(percentile(c.msDecoded, 50), 2) : 'n/a',
        String(c.wrong),
      ]),
      ['l']
    ),
    '',
    table(
      ['Full paginated pass', 'pages', 'keys', 'wall s', 'page p50 ms', 'page p95 ms', 'dup', 'missing', 'order viol.'],
      [['max-keys=1000', String(s.pass.pages), fmt(s.pass.keys), s.pass.seconds.toFixed(1), fmt(s.pass.pageP50, 2), fmt(s.pass.pageP95, 2), String(s.pass.dup), String(s.pass.missing), String(s.pass.order)]],
      ['l']
    ),
  ].join('\n');
}

/** The value after `--name` on the command line, if any. */
function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const sizes = (flag(args, '--objects') ?? '100000').split(',').map(Number);
  if (sizes.some((n) => !Number.isSafeInteger(n) || n < GROUPS)) throw new Error(`--objects: sizes of at least ${GROUPS}`);
  const samples = Number(flag(args, '--samples') ?? '20');
  const keep = flag(args, '--keep');
  const log = (m: string): void => void process.stderr.write(`${m}\n`);
  for (const n of sizes) {
    const s = await listBench(n, { samples, log, skipPass: args.includes('--skip-pass'), ...(keep ? { keepDir: join(keep, String(n)) } : {}) });
    console.log(`### LIST, ${fmt(n)} objects (quick: ${samples} samples, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})\n\n${renderList(s)}\n`);
  }
}

if (process.argv[1]?.endsWith('http-list.js')) {
  await withServerMalloc();
  await main();
}
