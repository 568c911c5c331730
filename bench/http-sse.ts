/**
 * @module `npm run bench:sse`: what encryption at rest costs over HTTP. 8 MiB PUT and GET
 * on one connection against one Strata server, plain vs SSE-S3 vs SSE-C in the same run,
 * runs interleaved across modes so machine noise hits all three. Prints markdown (MiB/s
 * medians with ranges, server CPU per request from /proc, PASS/MISS against the target:
 * encrypted >= 80% of plain, judged on the median of each round's encrypted sample against
 * that round's plain one) and rewrites the `bench:sse` section of bench/RESULTS.md. The load
 * generator runs with the servers' malloc settings (lib/malloc-env.ts).
 *
 * Flags: --quick (short runs, not for publication), --no-write, --runs=N (default 5)
 */
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { startTarget } from './http-targets.js';
import { closedLoop, pool, send, type RunResult } from './http-load.js';
import { machineLine } from './lib/machine.js';
import { writeSection } from './lib/results.js';
import { table } from './lib/markdown.js';
import { fmt, median, medianRange, pairedRatios, percentile } from './lib/stats.js';
import { withServerMalloc } from './lib/malloc-env.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const write = !args.includes('--no-write');
const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? (quick ? 2 : 5));
/** The object size the target names. */
const SIZE = 8 * 1024 * 1024;
/** Objects each mode's GETs cycle over (written once, before the samples): many keys, not
 * one hot key, as the other benchmarks' GETs read. */
const GET_KEYS = 8;
/** Length of one closed-loop sample, ms: long enough for tens of 8 MiB requests. */
const SAMPLE_MS = quick ? 600 : 3000;
/** The target: encrypted throughput at least this fraction of plain, in the same run. */
const TARGET_RATIO = 0.8;
const BUCKET = 'bench-sse';
const started = Date.now();
const log = (m: string) => process.stderr.write(`[bench:sse +${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);

type Mode = 'plain' | 'SSE-S3' | 'SSE-C';
const MODES: Mode[] = ['plain', 'SSE-S3', 'SSE-C'];
const customerKey = randomBytes(32);
const HEADERS: Record<Mode, Record<string, string>> = {
  plain: {},
  'SSE-S3': { 'x-amz-server-side-encryption': 'AES256' },
  'SSE-C': {
    'x-amz-server-side-encryption-customer-algorithm': 'AES256',
    'x-amz-server-side-encryption-customer-key': customerKey.toString('base64'),
    'x-amz-server-side-encryption-customer-key-md5': createHash('md5').update(customerKey).digest('base64'),
  },
};
/** What a GET must send: the customer key for SSE-C, nothing otherwise. */
const readHeaders = (m: Mode) => (m === 'SSE-C' ? HEADERS['SSE-C'] : {});

const mibps = (r: RunResult) => (r.n * SIZE) / r.seconds / 2 ** 20;

async function main(): Promise<void> {
  const t = await startTarget('strata');
  const results = new Map<string, RunResult[]>();
  try {
    const p = pool(t, 1);
    await send(p, t, 'PUT', `/${BUCKET}`);
    const body = randomBytes(SIZE);
    for (const m of MODES) {
      for (let i = 0; i < GET_KEYS; i++) {
        body.writeUInt32LE(i, 0); // a body of its own per key
        await send(p, t, 'PUT', `/${BUCKET}/get-${m}-${i}`, body, HEADERS[m]);
      }
    }
    for (let run = 0; run < runs; run++) {
      for (const op of ['PUT', 'GET'] as const) {
        for (const m of run % 2 ? [...MODES].reverse() : MODES) {
          const r = await closedLoop(t, 1, SAMPLE_MS, (_w, i) =>
            op === 'PUT' ? send(p, t, 'PUT', `/${BUCKET}/put-${m}-${i % 4}`, body, HEADERS[m]) : send(p, t, 'GET', `/${BUCKET}/get-${m}-${i % GET_KEYS}`, undefined, readHeaders(m))
          );
          if (r.errors) throw new Error(`${m} ${op}: ${r.errors} errors (${r.firstError})`);
          const key = `${m} ${op}`;
          results.set(key, [...(results.get(key) ?? []), r]);
          log(`run ${run + 1}/${runs} ${key}: ${fmt(mibps(r))} MiB/s, ${r.n} requests, server CPU ${fmt((r.serverCpuSeconds * 1000) / r.n, 1)} ms/request`);
        }
      }
    }
    await p.close();
  } finally {
    await t.stop();
    // The generated master key lives beside the data directory, not in it.
    if (t.dataDir) rmSync(`${t.dataDir}.master-key`, { force: true });
  }
  const body = render(results);
  console.log(body);
  if (write) {
    writeSection('bench:sse', body);
    log('wrote bench/RESULTS.md');
  }
}

function render(results: Map<string, RunResult[]>): string {
  const rows: string[][] = [];
  for (const op of ['PUT', 'GET'] as const) {
    const plainSpeeds = (results.get(`plain ${op}`) ?? []).map(mibps);
    for (const m of MODES) {
      const rs = results.get(`${m} ${op}`) ?? [];
      const speeds = rs.map(mibps);
      const n = rs.reduce((a, r) => a + r.n, 0);
      const cpu = rs.reduce((a, r) => a + r.serverCpuSeconds, 0);
      const shares = pairedRatios(speeds, plainSpeeds);
      const ratio = median(shares);
      rows.push([
        `8 MiB ${op}`,
        m,
        String(rs.length),
        String(n),
        medianRange(speeds),
        medianRange(rs.map((r) => percentile(r.latenciesMs, 50)), 1),
        n ? fmt((cpu * 1000) / n, 1) : 'n/a',
        m === 'plain' ? '—' : `${medianRange(shares.map((x) => 100 * x))}% (medians: ${fmt((100 * median(speeds)) / median(plainSpeeds))}%)`,
        m === 'plain' ? '' : ratio >= TARGET_RATIO ? 'PASS' : 'MISS',
      ]);
    }
  }
  return [
    '## Encryption at rest over HTTP (`npm run bench:sse`)',
    '',
    machineLine(['hono', '@hono/node-server', 'undici']),
    '',
    `One Strata server (child process, fs repository in the temp directory), one keep-alive connection, SigV4 with UNSIGNED-PAYLOAD, 8 MiB bodies; ${runs} samples of ${SAMPLE_MS / 1000} s per cell, interleaved across modes. ` +
      `PUTs cycle over 4 keys per mode, GETs over ${GET_KEYS} objects per mode written before the samples (each GET reads the next one, never one hot key). ` +
      'SSE-S3 and SSE-C seal every 256 KiB segment with AES-256-GCM (node:crypto); a GET opens every segment it serves. ' +
      'MiB/s and p50 show the median of the samples (min–max); server CPU is read from /proc over each sample. ' +
      'The load generator shares the 2-core machine with the server and runs with the malloc settings the server runs with (bench/lib/malloc-env.ts; before 2026-12-05 it ran without them). ' +
      "Target: encrypted throughput >= 80% of plain in the same run, judged on the median of the rounds' shares (each encrypted sample against the plain sample of its round, seconds apart; min–max beside it, and the ratio of the medians).",
    quick ? '\n**Quick run: short samples, not for publication.**' : '',
    '',
    table(['Workload', 'Mode', 'samples', 'requests', 'MiB/s', 'p50 ms', 'server CPU ms/request', 'vs plain', '>= 80%'], rows, ['l', 'l']),
  ].join('\n');
}

await withServerMalloc();
await main();
