/**
 * @module `npm run bench:providers`: the same small-object workload through the Store API on
 * the fs provider (a local directory) and on the s3 provider over a real Ceph RADOS Gateway
 * (a throwaway single-node cluster, memstore OSD, started here), side by side:
 *   - PUT throughput: 2,000 puts of 1 KiB with 64 in flight (group commits);
 *   - PUT latency: puts one at a time (each waits for its own durable commit);
 *   - GET latency: cold reads of random keys after a reopen (empty caches);
 *   - LIST: pages of 1,000 keys over 6,000 keys.
 * Then the same through the S3 API of a Strata server (in this process) whose repository is
 * on each provider, driven by an S3 client (our s3 provider, pointed at that server): what an
 * S3 client sees, HTTP and SigV4 included (GETs there are warm: the server keeps its caches).
 * Each figure is the median of its samples with the range (min–max); throughput is sampled
 * once per round. Prints markdown and rewrites the `bench:providers` section of
 * bench/RESULTS.md (`--no-write`: print only; `--quick`: fewer samples, not for publication).
 * Without the Ceph packages, the RGW column is left out and the reason printed.
 */
// First, as in the `strata` command: the Reed-Solomon build the server runs (src/wasm/relaxed-simd.ts).
import '../src/wasm/relaxed-simd.js';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsProvider } from '../src/provider/fs/index.js';
import type { Provider } from '../src/provider/provider.js';
import { createS3Provider } from '../src/provider/s3/index.js';
import { Store } from '../src/store/store.js';
import { machineLine } from './lib/machine.js';
import { table } from './lib/markdown.js';
import { writeSection } from './lib/results.js';
import { medianRange } from './lib/stats.js';
import { startServer } from '../src/server/server.js';
import { createCephBucket, startCephCluster } from './providers-ceph.js';

const fmtLoad = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');
const loadAtStart = fmtLoad();
const quick = process.argv.includes('--quick');
const write = !process.argv.includes('--no-write') && !quick;
const ROUNDS = quick ? 1 : 3;
const PUTS = quick ? 500 : 2000;
const IN_FLIGHT = 64;
const SERIAL_PUTS = quick ? 10 : 40;
const GETS = quick ? 50 : 200;
const LIST_KEYS = 6000;
const BODY_BYTES = 1024;
const BUCKET = 'bench';

const started = Date.now();
const log = (msg: string) =>
  process.stderr.write(`[bench:providers +${((Date.now() - started) / 1000).toFixed(0)}s] ${msg}\n`);

interface Figures {
  putsPerSec: number[];
  putMs: number[];
  getMs: number[];
  listPageMs: number[];
}

async function* once(b: Uint8Array): AsyncGenerator<Uint8Array> {
  yield b;
}

const keyOf = (round: number, i: number) => `r${round}/k${String(i).padStart(6, '0')}`;
const body = Buffer.alloc(BODY_BYTES, 7);

async function drain(store: Store, key: string): Promise<number> {
  let n = 0;
  for await (const c of (await store.getObject(BUCKET, key)).body) n += c.byteLength;
  return n;
}

/** Runs the workload on repositories opened by `open` (a fresh provider each time). */
async function workload(name: string, open: () => Promise<Provider>): Promise<Figures> {
  const f: Figures = { putsPerSec: [], putMs: [], getMs: [], listPageMs: [] };
  let store = await Store.open(await open());
  await store.createBucket(BUCKET);
  for (let round = 0; round < ROUNDS; round++) {
    log(`${name}: round ${round + 1}/${ROUNDS}`);
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < PUTS) {
          const i = next++;
          await store.putObject(BUCKET, keyOf(round, i), once(body), { size: body.length });
        }
      })
    );
    f.putsPerSec.push(PUTS / ((performance.now() - t0) / 1000));
    for (let i = 0; i < SERIAL_PUTS; i++) {
      const t = performance.now();
      await store.putObject(BUCKET, `serial/${round}/${i}`, once(body), { size: body.length });
      f.putMs.push(performance.now() - t);
    }
    // Cold reads: a reopened repository has empty block and body caches.
    await store.checkpoint();
    await store.close();
    store = await Store.open(await open());
    for (let j = 0; j < GETS; j++) {
      const i = (j * 7919) % PUTS;
      const t = performance.now();
      if ((await drain(store, keyOf(round, i))) !== BODY_BYTES) throw new Error('short read');
      f.getMs.push(performance.now() - t);
    }
  }
  // LIST over the keys of the first rounds (6,000 with the full run).
  let token: string | undefined;
  let listed = 0;
  do {
    const t = performance.now();
    const page = await store.listObjects(BUCKET, {
      maxKeys: 1000,
      ...(token ? { continuationToken: token } : {}),
    });
    f.listPageMs.push(performance.now() - t);
    listed += page.contents.length;
    token = page.isTruncated ? page.nextContinuationToken : undefined;
  } while (token && listed < LIST_KEYS);
  await store.close();
  return f;
}

/** A Strata server (in this process) on `data`, with one key; returns its URL and a stop. */
async function strataServer(data: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = await startServer(
    {
      host: '127.0.0.1',
      port: 0,
      data,
      log: 'off',
      credentials: [{ accessKeyId: SERVER_KEY, secretAccessKey: SERVER_SECRET }],
    },
    { write: () => {} }
  );
  return { url: server.url, stop: () => server.close() };
}

const SERVER_KEY = 'BENCHPROVIDERSKEY001';
const SERVER_SECRET = 'bench-providers-secret-0123456789abcdef';

/** The workload through a Strata server's S3 API, with an S3 client (our s3 provider). */
async function httpWorkload(name: string, url: string): Promise<Figures> {
  const f: Figures = { putsPerSec: [], putMs: [], getMs: [], listPageMs: [] };
  await createCephBucket({ endpoint: url, accessKeyId: SERVER_KEY, secretAccessKey: SERVER_SECRET }, BUCKET);
  const client = await createS3Provider({
    endpoint: url,
    bucket: BUCKET,
    accessKeyId: SERVER_KEY,
    secretAccessKey: SERVER_SECRET,
    connections: IN_FLIGHT,
  });
  try {
    for (let round = 0; round < ROUNDS; round++) {
      log(`${name}: round ${round + 1}/${ROUNDS}`);
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < PUTS) await client.put(keyOf(round, next++), body);
        })
      );
      f.putsPerSec.push(PUTS / ((performance.now() - t0) / 1000));
      for (let i = 0; i < SERIAL_PUTS; i++) {
        const t = performance.now();
        await client.put(`serial/${round}/${i}`, body);
        f.putMs.push(performance.now() - t);
      }
      for (let j = 0; j < GETS; j++) {
        const t = performance.now();
        const got = await client.get(keyOf(round, (j * 7919) % PUTS));
        let n = 0;
        for await (const c of got.body as AsyncIterable<Uint8Array>) n += c.byteLength;
        if (n !== BODY_BYTES) throw new Error('short read');
        f.getMs.push(performance.now() - t);
      }
    }
    let startAfter: string | undefined;
    let listed = 0;
    do {
      const t = performance.now();
      const page = await client.list({ limit: 1000, ...(startAfter ? { startAfter } : {}) });
      f.listPageMs.push(performance.now() - t);
      listed += page.items.length;
      startAfter = page.next;
    } while (startAfter && listed < LIST_KEYS);
  } finally {
    await client.close();
  }
  return f;
}

const columns: [string, Figures][] = [];
const httpColumns: [string, Figures][] = [];
const notes: string[] = [];

const fsDir = mkdtempSync(join(tmpdir(), 'bench-providers-fs-'));
try {
  columns.push(['fs (local directory)', await workload('fs', () => createFsProvider({ dir: fsDir }))]);
} finally {
  rmSync(fsDir, { recursive: true, force: true });
}
const serverDir = mkdtempSync(join(tmpdir(), 'bench-providers-srv-'));
try {
  const srv = await strataServer(join(serverDir, 'data'));
  try {
    httpColumns.push(['Strata on fs', await httpWorkload('server on fs', srv.url)]);
  } finally {
    await srv.stop();
  }
} finally {
  rmSync(serverDir, { recursive: true, force: true });
}

let cluster;
try {
  log('starting a Ceph cluster (mon, memstore OSD, RGW)');
  cluster = await startCephCluster();
} catch (err) {
  notes.push(`Ceph RGW column left out: ${(err as Error).message.split('\n')[0]}`);
}
if (cluster) {
  try {
    const c = cluster;
    await createCephBucket(c, 'bench');
    const open = () =>
      createS3Provider({
        endpoint: c.endpoint,
        bucket: 'bench',
        prefix: 'repo/',
        accessKeyId: c.accessKeyId,
        secretAccessKey: c.secretAccessKey,
        conditionalWrites: 'probe',
      });
    columns.push(['s3 on Ceph RGW 16.2', await workload('rgw', open)]);
    // The server opens its repository from a URL: credentials from the environment, and a
    // master key given inline (an S3-hosted repository has no directory to keep one beside).
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: c.accessKeyId,
      AWS_SECRET_ACCESS_KEY: c.secretAccessKey,
      STRATA_MASTER_KEY: process.env.STRATA_MASTER_KEY ?? randomBytes(32).toString('base64'),
    });
    const srv = await strataServer(`${c.endpoint}/bench/server/`);
    try {
      httpColumns.push(['Strata on Ceph RGW 16.2', await httpWorkload('server on rgw', srv.url)]);
    } finally {
      await srv.stop();
    }
  } finally {
    await cluster.stop();
  }
}

function rowsOf(cols: [string, Figures][], getLabel: string): string[][] {
  return [
    ['PUT 1 KiB, 64 in flight (puts/s)', ...cols.map(([, f]) => medianRange(f.putsPerSec))],
    ['PUT 1 KiB, one at a time (ms)', ...cols.map(([, f]) => medianRange(f.putMs, 1))],
    [getLabel, ...cols.map(([, f]) => medianRange(f.getMs, 1))],
    ['LIST page of 1,000 keys (ms)', ...cols.map(([, f]) => medianRange(f.listPageMs, 1))],
  ];
}
const align = (cols: unknown[]) => ['l' as const, ...cols.map(() => 'r' as const)];
const md = [
  '## Providers (`npm run bench:providers`)',
  '',
  machineLine(),
  quick ? '\n**Quick run: small N, not for publication.**' : '',
  '',
  `The same workload through the Store API on each provider: ${ROUNDS} rounds of ${PUTS} puts of ` +
    `${BODY_BYTES} bytes with ${IN_FLIGHT} in flight (one throughput sample per round), ` +
    `${SERIAL_PUTS} puts one at a time per round, ${GETS} cold GETs per round after a reopen, ` +
    `and LIST pages of 1,000 keys. Figures: median (min–max). RGW is a single-node cluster on ` +
    'this machine (memstore OSD, no replication, data in RAM), so it shows the s3 provider and ' +
    'RGW request costs, not network or disk latency; the fs provider fdatasyncs every commit ' +
    'to this machine\'s disk, which is why its puts one at a time are slower here.',
  '',
  '### Store API',
  '',
  table(['', ...columns.map(([n]) => n)], rowsOf(columns, 'GET 1 KiB, cold, one at a time (ms)'), align(columns)),
  '',
  '### S3 API of a Strata server on each provider (client: the s3 provider, keep-alive, SigV4)',
  '',
  table(
    ['', ...httpColumns.map(([n]) => n)],
    rowsOf(httpColumns, 'GET 1 KiB, warm, one at a time (ms)'),
    align(httpColumns)
  ),
  ...(notes.length ? ['', ...notes] : []),
  '',
  `Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s; load average (1, 5, 15 min) ` +
    `${loadAtStart} at the start, ${fmtLoad()} at the end (2 cores shared with other work: RGW ` +
    'latency grows with the load, its daemons wait for a core on every request).',
].join('\n');
process.stdout.write(`${md}\n`);
if (write) writeSection('bench:providers', md);
