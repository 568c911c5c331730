/**
 * @module The versions section of `bench:history`, over HTTP: 100,000 overwrites of one key
 * in a versioned bucket (target of issue 9: PUT p50 of the last 1,000 within 20% of the first
 * 1,000), then, in the same run and on the same server, GET of the latest (plain GET), GET by
 * versionId of random old versions, ListObjectVersions pages of 1000 from random points of
 * the key's 100,000 versions, and a ListObjectsV2 page of 1000 as the listing reference.
 *
 * One Strata server in a child process (`strata serve`, default options, fs repository in
 * the temp directory), one keep-alive connection, SigV4 with UNSIGNED-PAYLOAD, one request at
 * a time (latency, not throughput: no group commit shares a PUT's fsync). Reads are
 * interleaved in rounds so machine noise hits every kind alike. Every sampled GET by version
 * is checked byte for byte (each overwrite has its own body), and the pages of
 * ListObjectVersions are checked to be full, newest first and contiguous.
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Pool } from 'undici';
import { startTarget, cpuSeconds, type Target } from './http-targets.js';
import { signed } from './http-load.js';
import { filesystemOf } from './engine-fixture.js';
import { table } from './lib/markdown.js';
import { fmt, median, medianRange, percentile } from './lib/stats.js';

/** Issue 9: PUT p50 of the last 1,000 overwrites at most 20% above that of the first 1,000. */
const TARGET_RATIO = 1.2;
/** The window at each end of the overwrite run whose p50s are compared. */
const WINDOW = 1000;
/** Body of every overwrite: 4 KiB, as the write-amplification rows. */
const BODY_BYTES = 4096;
const BUCKET = 'bench-versions';
const LIST_BUCKET = 'bench-versions-list';
const KEY = 'one/key';
/** The fresh key whose first overwrites run beside the last ones of KEY. */
const CONTROL_KEY = 'one/control';
/** Keys of the ListObjectsV2 reference bucket: two pages of 1000. */
const LIST_KEYS = 2000;
const PAGE = 1000;

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One signed request; the whole answer. */
async function call(p: Pool, t: Target, method: string, path: string, query?: Record<string, string>, body?: Uint8Array): Promise<Reply> {
  const headers: Record<string, string> = body ? { 'content-length': String(body.length) } : {};
  const req = signed(t, method, path, headers, query);
  const res = await p.request({ method, path: req.path, headers: req.headers, ...(body ? { body } : {}) });
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(c as Buffer);
  const out = { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
  if (out.status >= 300) throw new Error(`${method} ${path} ${JSON.stringify(query ?? {})}: HTTP ${out.status}: ${out.body.toString().slice(0, 300)}`);
  return out;
}

/** The body of overwrite `i`: distinct per i, so a GET by version proves which one it got. */
function bodyOf(i: number): Buffer {
  const b = Buffer.alloc(BODY_BYTES);
  let x = (i * 2654435761) >>> 0 || 1;
  for (let j = 0; j < BODY_BYTES; j += 4) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    b.writeUInt32LE(x, j);
  }
  return b;
}

/** Seeded xorshift32: the same versions are sampled on every run. */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>>= 0);
  };
}

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

async function timed<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await f();
  return [performance.now() - t0, v];
}

export interface VersionsBenchOptions {
  quick: boolean;
  log: (m: string) => void;
  /** Overwrites (default 100,000; quick 5,000). */
  overwrites?: number;
}

interface Measured {
  n: number;
  putMs: Float64Array;
  /** The first WINDOW PUTs of a fresh key, alternating with the last WINDOW of KEY. */
  controlMs: number[];
  putSeconds: number;
  putCpu: number;
  plainGet: number[];
  versionGet: number[];
  versionPage: number[];
  firstPage: number[];
  objectsPage: number[];
  checkedGets: number;
  checkedPages: number;
  dataBytes: number;
}

/** Checks one ListObjectVersions page of `KEY`: `want` ids, in order, all versions. */
function checkPage(xml: string, want: readonly string[]): void {
  const ids = [...xml.matchAll(/<Version><Key>[^<]*<\/Key><VersionId>([^<]+)<\/VersionId>/g)].map((m) => m[1]!);
  if (ids.length !== want.length) throw new Error(`a ListObjectVersions page held ${ids.length} versions, expected ${want.length}`);
  for (let i = 0; i < ids.length; i++) if (ids[i] !== want[i]) throw new Error(`ListObjectVersions page entry ${i}: ${ids[i]}, expected ${want[i]}`);
}

async function measure(t: Target, o: VersionsBenchOptions): Promise<Measured> {
  const n = o.overwrites ?? (o.quick ? 5_000 : 100_000);
  const p = new Pool(t.url, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 });
  try {
    await call(p, t, 'PUT', `/${BUCKET}`);
    const enable = Buffer.from('<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>');
    await call(p, t, 'PUT', `/${BUCKET}`, { versioning: '' }, enable);

    // The overwrites, one at a time; every id kept (newest last). The last WINDOW of them
    // alternate with the first WINDOW overwrites of a fresh key of the same bucket: the same
    // moment's machine, so a difference is the key's history, not the machine's load.
    const ids: string[] = new Array<string>(n);
    const putMs = new Float64Array(n);
    const controlMs: number[] = [];
    const cpu0 = cpuSeconds(t.pid);
    const t0 = performance.now();
    const put = async (key: string, i: number): Promise<[number, string]> => {
      const body = bodyOf(i);
      const s = performance.now();
      const r = await call(p, t, 'PUT', `/${BUCKET}/${key}`, undefined, body);
      const id = r.headers['x-amz-version-id'];
      if (typeof id !== 'string') throw new Error(`PUT ${i} answered no x-amz-version-id`);
      return [performance.now() - s, id];
    };
    for (let i = 0; i < n; i++) {
      [putMs[i], ids[i]] = await put(KEY, i);
      if (i >= n - WINDOW) controlMs.push((await put(CONTROL_KEY, n + i))[0]);
      if ((i + 1) % 10_000 === 0 || i + 1 === n) {
        o.log(`versions: ${fmt(i + 1)} overwrites, ${fmt((i + 1) / ((performance.now() - t0) / 1000))}/s, p50 of the last 1000 ${fmt(percentile([...putMs.subarray(Math.max(0, i - 999), i + 1)], 50), 2)} ms`);
      }
    }
    const putSeconds = (performance.now() - t0) / 1000;
    const putCpu = cpuSeconds(t.pid) - cpu0;

    o.log('versions: listing reference bucket');
    await call(p, t, 'PUT', `/${LIST_BUCKET}`);
    const wide = new Pool(t.url, { connections: 16, pipelining: 1 });
    for (let i = 0; i < LIST_KEYS; i += 16) {
      await Promise.all(Array.from({ length: Math.min(16, LIST_KEYS - i) }, (_, j) => call(wide, t, 'PUT', `/${LIST_BUCKET}/k/${String(i + j).padStart(6, '0')}`, undefined, bodyOf(i + j))));
    }
    await wide.close();

    // Reads, in rounds: plain GET, GET by versionId, a ListObjectVersions page, a ListObjectsV2 page.
    const rounds = o.quick ? 50 : 200;
    const next = prng(0x5eed);
    const m: Measured = { n, putMs, controlMs, putSeconds, putCpu, plainGet: [], versionGet: [], versionPage: [], firstPage: [], objectsPage: [], checkedGets: 0, checkedPages: 0, dataBytes: 0 };
    const newest = bodyOf(n - 1);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < 5; k++) {
        const [ms, got] = await timed(() => call(p, t, 'GET', `/${BUCKET}/${KEY}`));
        if (!got.body.equals(newest)) throw new Error('GET of the latest returned the wrong bytes');
        m.plainGet.push(ms);
        const i = next() % n;
        const [vms, v] = await timed(() => call(p, t, 'GET', `/${BUCKET}/${KEY}`, { versionId: ids[i]! }));
        if (md5(v.body) !== md5(bodyOf(i))) throw new Error(`GET by versionId of overwrite ${i} returned the wrong bytes`);
        m.versionGet.push(vms);
        m.checkedGets++;
      }
      // A page of 1000 starting after a random version (newest first: ids run backwards).
      const from = PAGE + (next() % Math.max(1, n - PAGE));
      const [lms, page] = await timed(() => call(p, t, 'GET', `/${BUCKET}`, { versions: '', prefix: KEY, 'key-marker': KEY, 'version-id-marker': ids[from]!, 'max-keys': String(PAGE) }));
      const want = Array.from({ length: Math.min(PAGE, from) }, (_, j) => ids[from - 1 - j]!);
      checkPage(page.body.toString(), want);
      m.versionPage.push(lms);
      m.checkedPages++;
      if (r % 4 === 0) {
        const [fms, first] = await timed(() => call(p, t, 'GET', `/${BUCKET}`, { versions: '', prefix: KEY, 'max-keys': String(PAGE) }));
        checkPage(first.body.toString(), Array.from({ length: Math.min(PAGE, n) }, (_, j) => ids[n - 1 - j]!));
        m.firstPage.push(fms);
        m.checkedPages++;
      }
      const [oms, objects] = await timed(() => call(p, t, 'GET', `/${LIST_BUCKET}`, { 'list-type': '2', 'max-keys': String(PAGE) }));
      const keys = objects.body.toString().match(/<Key>/g)?.length ?? 0;
      if (keys !== PAGE) throw new Error(`a ListObjectsV2 page held ${keys} keys`);
      m.objectsPage.push(oms);
      if (r % 50 === 49) o.log(`versions: read round ${r + 1}/${rounds}`);
    }
    m.dataBytes = n * BODY_BYTES;
    return m;
  } finally {
    await p.close();
  }
}

/** Runs the measurement on a fresh server; the markdown of this section. */
export async function benchVersions(o: VersionsBenchOptions): Promise<string> {
  const t = await startTarget('strata');
  let m: Measured;
  try {
    m = await measure(t, o);
  } finally {
    await t.stop();
    if (t.dataDir) rmSync(`${t.dataDir}.master-key`, { force: true });
  }
  return render(m, o);
}

function render(m: Measured, o: VersionsBenchOptions): string {
  const ms = [...m.putMs];
  const first = percentile(ms.slice(0, WINDOW), 50);
  const last = percentile(ms.slice(-WINDOW), 50);
  const ratio = last / first;
  const control = percentile(m.controlMs, 50);
  const sameTime = last / control;
  const blocks: string[][] = [];
  const step = Math.max(WINDOW, Math.floor(m.n / 10));
  for (let from = 0; from < m.n; from += step) {
    const xs = ms.slice(from, from + step);
    blocks.push([`${fmt(from + 1)}–${fmt(Math.min(m.n, from + step))}`, fmt(percentile(xs, 50), 2), fmt(percentile(xs, 90), 2), fmt(percentile(xs, 99), 2), fmt(Math.max(...xs), 1)]);
  }
  const plain = median(m.plainGet);
  const row = (what: string, xs: number[], vs?: number): string[] => [
    what,
    fmt(xs.length),
    medianRange(xs, 2),
    fmt(percentile(xs, 99), 2),
    vs === undefined ? '—' : `${fmt(median(xs) / vs, 2)}x`,
  ];
  return [
    '### Versions: 100,000 overwrites of one key (HTTP)',
    '',
    `One Strata server (child process, default options, fs repository on ${filesystemOf(process.env.BENCH_TMPDIR ?? '/tmp')}), ` +
      `one keep-alive connection, one request at a time, SigV4 UNSIGNED-PAYLOAD; ${fmt(m.n)} PUTs of a distinct ${BODY_BYTES / 1024} KiB body to one key of a versioned bucket ` +
      `(with the fresh key's ${fmt(m.controlMs.length)}: ${fmt((m.n + m.controlMs.length) / m.putSeconds)} PUT/s, server CPU ${fmt((m.putCpu * 1000) / (m.n + m.controlMs.length), 2)} ms per PUT). Latency in ms. ` +
      'The load generator shares the machine with the server.',
    o.quick ? `\n**Quick run: ${fmt(m.n)} overwrites, not for publication.**` : '',
    '',
    table(
      ['Target', 'First 1,000 p50', 'Last 1,000 p50', 'Last / first', 'Result'],
      [
        [`PUT p50 of the last ${fmt(WINDOW)} within 20% of the first ${fmt(WINDOW)}`, fmt(first, 2), fmt(last, 2), `${fmt(ratio, 2)}x`, ratio <= TARGET_RATIO ? 'PASS' : 'MISS'],
        [
          `The same, first ${fmt(WINDOW)} of a fresh key alternating with the last ${fmt(WINDOW)}`,
          fmt(control, 2),
          fmt(last, 2),
          `${fmt(sameTime, 2)}x`,
          sameTime <= TARGET_RATIO ? 'PASS' : 'MISS',
        ],
      ],
      ['l']
    ),
    '',
    'The first row compares the two ends of the run, minutes apart on a shared machine; the second compares the ' +
      `last ${fmt(WINDOW)} overwrites with a fresh key's first ${fmt(WINDOW)}, sent alternately on the same connection at the same time, ` +
      'so it isolates what 100,000 versions of a key cost a PUT from how busy the machine was.',
    '',
    'PUT latency along the run:',
    '',
    table(['Overwrites', 'p50', 'p90', 'p99', 'max'], blocks, ['l']),
    '',
    `Reads after the run, in ${fmt(m.plainGet.length / 5)} interleaved rounds (median (min–max), p99; "vs plain GET" divides medians). ` +
      `GET by versionId picks a random one of the ${fmt(m.n)} versions; every one of the ${fmt(m.checkedGets)} is checked byte for byte. ` +
      `A ListObjectVersions page starts at a random version-id-marker of the key and must list the next 1000 versions in order (${fmt(m.checkedPages)} pages checked); ` +
      `the ListObjectsV2 page lists 1000 of ${fmt(LIST_KEYS)} keys of another bucket.`,
    '',
    table(
      ['Request', 'samples', 'ms', 'p99 ms', 'vs plain GET'],
      [
        row('GET latest (plain GET, 4 KiB)', m.plainGet),
        row('GET ?versionId= (random old version)', m.versionGet, plain),
        row('ListObjectVersions, 1000 versions, random marker', m.versionPage, plain),
        row('ListObjectVersions, first page of 1000', m.firstPage, plain),
        row('ListObjectsV2, 1000 keys (reference)', m.objectsPage, plain),
      ],
      ['l']
    ),
  ].join('\n');
}
