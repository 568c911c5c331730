/**
 * The HTTP fuzzer in CI, and a regression it found that needs a server in its own process.
 *
 * A short run of the HTTP fuzzer (scripts/fuzz-http.mjs, test/fuzz/http/): 1500
 * seeded malformed requests against `strata serve` in a child process (bundled from src/
 * with esbuild, so it is the current source). It proves the same as a long run, on less
 * traffic: the server never crashes, never answers a 5xx other than 501 NotImplemented /
 * 503 SlowDown and never logs an internal error, refuses every tampered or unauthenticated
 * request, keeps its memory bounded (RSS after warm-up vs at the end, after GC), releases
 * its pending-write budget, and leaves the stored objects byte-exact and the listing exact.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { build } from 'esbuild';
import { request } from 'undici';
import { runHttpFuzz } from '../fuzz/http/fuzz.js';
import { rssOf, startServerChild } from '../fuzz/http/server-child.js';
import { ROOT } from './harness.js';
import { errorCode, signedChunked, signV4 } from './wire.js';

const REQUESTS = 1500;
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_130);

let dir: string;
let serverEntry: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-fuzz-test-'));
  serverEntry = join(dir, 'server.mjs');
  await build({
    entryPoints: [join(ROOT, 'src/cli/main.ts')],
    outfile: serverEntry,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // CommonJS dependencies bundled into ESM need a real `require` for Node built-ins.
    banner: { js: "import { createRequire as __fuzzRequire } from 'node:module'; const require = __fuzzRequire(import.meta.url);" },
  });
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it(`survives ${REQUESTS} malformed requests (seed ${SEED}): no crash, no unexpected 5xx, bounded memory, data intact`, { timeout: 120_000 }, async () => {
  const lines: string[] = [];
  const report = await runHttpFuzz({ seed: SEED, requests: REQUESTS, quick: true, serverEntry, print: (l) => lines.push(l) });
  const summary = lines.join('\n');
  expect(report.crashed, summary).toBeUndefined();
  expect(report.requests).toBe(REQUESTS);
  expect(report.internalErrors, summary).toEqual([]);
  expect(report.dataProblems, summary).toEqual([]);
  expect(report.memory.growthMiB, summary).toBeLessThanOrEqual(report.memory.boundMiB);
  // Every 5xx seen is an expected one (501 NotImplemented, 503 SlowDown): the fuzzer counts
  // any other as a failure, with the request that caused it.
  expect(report.failures, summary).toEqual([]);
  expect(report.failureCount, summary).toBe(0);
  expect(report.ok).toBe(true);
  // The run did reach the handlers: successes and S3 errors of many kinds.
  expect(report.byClass['2xx'] ?? 0).toBeGreaterThan(100);
  expect(Object.keys(report.byCode).length).toBeGreaterThan(20);
});

// Regression (found by fuzz:http, seed 3, case 7751): XML bodies were collected as the views
// the aws-chunked decoder yields; sent in 1-byte chunks, each view pinned the 64 KiB socket
// buffer it came from, so a 1 MiB document held ~90 MB of framing plus a million view
// objects. For this 512 KiB document: peak RSS +145 MiB, +76 MiB still resident after GC;
// +13 MiB with the fix (readBody copies into one buffer of the announced size).
it('an XML body sent in 1-byte aws-chunked frames does not pin the framing in memory', { timeout: 120_000 }, async () => {
  const server = await startServerChild({ entry: serverEntry, accessKey: 'AKIDFRAMES', secretKey: 'frames-secret' });
  try {
    const host = new URL(server.url).host;
    const base = { host, credentials: { accessKeyId: 'AKIDFRAMES', secretAccessKey: 'frames-secret' }, region: 'us-east-1' };
    const mk = await request(`${server.url}/frames`, { method: 'PUT', headers: signV4({ ...base, method: 'PUT', path: '/frames' }).headers });
    expect(mk.statusCode).toBe(200);
    await mk.body.dump();
    const size = 512 * 1024;
    const doc = Buffer.alloc(size, 0x3c); // '<' * 512 KiB: framing ~45 MB
    const req = signV4({
      ...base,
      method: 'PUT',
      path: '/frames',
      query: { cors: '' },
      payloadHash: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      headers: { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': String(size) },
    });
    const frames = Array.from({ length: size }, (_, i) => ({ data: doc.subarray(i, i + 1) }));
    const body = signedChunked(req.chain, req.signature, frames);
    const before = await server.measure();
    let peak = before.rss;
    const poll = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 10);
    const res = await request(`${server.url}${req.target}`, { method: 'PUT', headers: req.headers, body });
    const text = await res.body.text();
    clearInterval(poll);
    const after = await server.measure();
    expect(res.statusCode, text).toBe(400);
    expect(errorCode(text)).toBe('MalformedXML');
    const MiB = 1024 * 1024;
    const growth = `peak RSS +${((peak - before.rss) / MiB).toFixed(1)} MiB, after GC +${((after.rss - before.rss) / MiB).toFixed(1)} MiB`;
    expect(peak - before.rss, growth).toBeLessThan(48 * MiB);
    expect(after.rss - before.rss, growth).toBeLessThan(40 * MiB);
  } finally {
    await server.stop();
  }
});
