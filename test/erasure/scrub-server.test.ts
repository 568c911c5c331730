/**
 * Erasure maintenance in a running server (4+2 over six directories, AWS SDK v3 clients): after
 * a domain is replaced by an empty directory, GETs return every object byte-exact (rebuilt from
 * parity) and the repair worker rewrites what those reads found; the background scrub (a short
 * --scrub-interval) repairs the rest (commits, roots, runs no GET read); `strata scrub` and `strata domains` (built CLI) go through
 * the server's admin API while it holds the domains' locks (a pass started by POST, followed by
 * GET, a second POST refused, stopped with the server); /metrics carries strata_erasure_*.
 * Under a steady stream of requests the repair worker waits for them to pause between keys, for
 * a time in proportion to its work, and still repairs.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ACCESS_KEY, CLI, METRICS_AUTH, SECRET_KEY, startTestServer } from '../integration/harness.js';
import { clientEnv, run } from '../integration/support/run-cli.js';
import { bytesOf, createS3Client, WireLog } from '../integration/support/sdk-v3-client.js';
import type { ScrubReport } from '../../src/provider/erasure/scrub.js';
import type { AdminScrubStatus } from '../../src/admin/scrub.js';
import { adminRequest } from '../../src/admin/client.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { childKeys } from './domain-keys.js';
import { randomBytes } from '../support/random.js';

const wire = new WireLog();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const roots: string[] = [];
afterAll(() => {
  for (const d of roots) rmSync(d, { recursive: true, force: true });
});

/**
 * The domain (d1..d6) holding the most data fragments (index < k) of striped blobs: replacing
 * it makes the GETs below rebuild from parity whatever placement chose (a domain holding
 * only parity of every striped blob would leave no degraded read to count).
 */
async function domainWithMostDataCells(root: string): Promise<string> {
  let best = { id: '', n: -1 };
  for (let i = 1; i <= 6; i++) {
    let n = 0;
    for (const key of await childKeys(root, `d${i}`)) {
      const name = parseChildKey(key);
      if (name?.layout === 'striped' && name.index < name.k) n++;
    }
    if (n > best.n) best = { id: `d${i}`, n };
  }
  expect(best.n, 'data fragments on the fullest domain').toBeGreaterThan(0);
  return best.id;
}

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`no ${name} in /metrics`);
  return Number(m[1]);
}

/**
 * A (4,2) repository over six directories holding `puts` (written in order into a new `bucket`
 * through a server), then the domain with the most data cells (`lost`) replaced by an empty
 * directory.
 */
async function writeThenLoseDomain(prefix: string, bucket: string, puts: [string, Buffer][]): Promise<{ root: string; data: string; lost: string }> {
  const root = mkdtempSync(join(tmpdir(), prefix));
  roots.push(root);
  const data = join(root, 'd{1...6}');
  const s = await startTestServer({ dataDir: root, config: { data, erasure: '4+2', scrubInterval: 0 } });
  const s3 = createS3Client(s.url, wire);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  for (const [key, body] of puts) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  await s.stop();
  const lost = await domainWithMostDataCells(root);
  rmSync(join(root, lost), { recursive: true, force: true });
  mkdirSync(join(root, lost));
  return { root, data, lost };
}

describe('erasure maintenance in the server', () => {
  it('heal on read, background scrub with repair, and the admin verbs through the server', async () => {
    const objects = new Map<string, Buffer>();
    for (let i = 0; i < 8; i++) objects.set(`k${i}`, Buffer.from(randomBytes(i % 2 ? 1_500_000 : 3000 + i, 100 + i)));
    const { root, data, lost } = await writeThenLoseDomain('scrub-server-', 'healme', [...objects]);

    const s = await startTestServer({ dataDir: root, config: { data, erasure: '4+2', scrubInterval: 5000, scrubRate: 256 * 2 ** 20 } });
    try {
      const s3 = createS3Client(s.url, wire);
      for (const [key, body] of objects) {
        const got = await bytesOf((await s3.send(new GetObjectCommand({ Bucket: 'healme', Key: key }))).Body);
        expect(Buffer.compare(got, body), key).toBe(0);
      }
      // The repair worker rewrites what those reads rebuilt (it polls the queue every second) ...
      let text = '';
      for (let t = Date.now(); Date.now() - t < 4000; await sleep(200)) {
        text = await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
        if (metric(text, 'strata_erasure_repair_worker_repaired_total') >= 1) break;
      }
      expect(metric(text, 'strata_erasure_scrub_passes_total')).toBe(0);
      expect(metric(text, 'strata_erasure_repair_worker_repaired_total')).toBeGreaterThanOrEqual(1);
      expect(s.logs.some((l) => l.includes('"msg":"erasure.repaired"'))).toBe(true);
      // ... and the background pass (5 s after start: no pass recorded yet) repairs the rest.
      for (let t = Date.now(); Date.now() - t < 30_000; await sleep(200)) {
        text = await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
        if (metric(text, 'strata_erasure_scrub_passes_total') >= 1) break;
      }
      expect(metric(text, 'strata_erasure_scrub_passes_total')).toBeGreaterThanOrEqual(1);
      expect(metric(text, 'strata_erasure_degraded_reads_total')).toBeGreaterThan(0);
      expect(metric(text, 'strata_erasure_fragments_repaired_total')).toBeGreaterThan(0);
      expect(metric(text, 'strata_erasure_repair_bytes_total')).toBeGreaterThan(0);
      expect(metric(text, 'strata_erasure_fragments_verified_total')).toBeGreaterThan(0);
      expect(metric(text, 'strata_erasure_lost_blobs')).toBe(0);
      expect(text).toMatch(/^strata_erasure_degraded_blobs \d+$/m);
      expect(s.logs.some((l) => l.includes('"msg":"scrub.pass"'))).toBe(true);

      // The CLI finds the server (the domains are locked) and scrubs through its admin API.
      const env = clientEnv({ STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY });
      const scrub = await run(process.execPath, [CLI, 'scrub', '--data', data, '--erasure', '4+2', '--json'], { env });
      expect(scrub.code, scrub.stderr).toBe(0);
      expect(scrub.stderr).toContain('acting through');
      const r = JSON.parse(scrub.stdout) as ScrubReport;
      expect(r.complete).toBe(true);
      expect(r.damagedBlobs).toBe(0);
      // At least the 4 striped carriers, the anchor and the config (the small bodies and the
      // commits are in commit log segments now, one blob for many commits).
      expect(r.blobs).toBeGreaterThanOrEqual(6);
      const domains = await run(process.execPath, [CLI, 'domains', '--data', data, '--erasure', '4+2'], { env });
      expect(domains.code, domains.stderr).toBe(0);
      expect(domains.stdout).toMatch(new RegExp(`^${lost} +- +ok +[1-9]\\d* `, 'm'));
      for (const [key, body] of objects) {
        const got = await bytesOf((await s3.send(new GetObjectCommand({ Bucket: 'healme', Key: key }))).Body);
        expect(Buffer.compare(got, body), key).toBe(0);
      }

      // The admin API: POST starts a pass and answers at once; a second POST while it runs is
      // refused; GET follows it; stopping the server stops it (cursor saved) without waiting.
      const admin = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
      const started = (await adminRequest(admin, 'POST', ['scrub'], { rate: '1KiB', restart: true })) as AdminScrubStatus;
      expect(started).toMatchObject({ running: true });
      await expect(adminRequest(admin, 'POST', ['scrub'], {})).rejects.toMatchObject({ status: 409, code: 'ScrubInProgress' });
      await expect(adminRequest(admin, 'POST', ['scrub'], { rate: 'fast' })).rejects.toMatchObject({ status: 400, code: 'InvalidArgument' });
      await expect(adminRequest(admin, 'POST', ['scrub'], { repair: 'yes' })).rejects.toMatchObject({ status: 400, code: 'InvalidJson' });
      await expect(adminRequest(admin, 'POST', ['scrub'], { repair: true, everything: 1 })).rejects.toMatchObject({ status: 400, code: 'InvalidJson' });
      await expect(adminRequest(admin, 'POST', ['scrub'], [1, 2])).rejects.toMatchObject({ status: 400, code: 'InvalidJson' });
      await sleep(1500);
      const status = (await adminRequest(admin, 'GET', ['scrub'])) as AdminScrubStatus;
      expect(status.running).toBe(true);
      expect(status.id).toBe(started.id);
      expect(status.progress?.totalBlobs).toBeGreaterThan(0);
    } finally {
      const t0 = Date.now();
      await s.stop();
      expect(Date.now() - t0).toBeLessThan(15_000);
    }
    const verify = await run(process.execPath, [CLI, 'verify', '--data', data, '--erasure', '4+2'], { env: clientEnv({}) });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 90_000);

  it('under a steady stream of requests, heal on read waits for them between keys and still repairs', async () => {
    // Eight striped objects: the domain emptied holds data cells of several of them.
    const objects = new Map<string, Buffer>();
    for (let i = 0; i < 8; i++) objects.set(`k${i}`, Buffer.from(randomBytes(1_500_000 + i, 300 + i)));
    const { root, data } = await writeThenLoseDomain('scrub-yield-', 'busy', [...objects, ['small', Buffer.from('x')]]);

    // No body timeout: the trickling PUT below stays in flight as long as the test wants.
    const s = await startTestServer({ dataDir: root, config: { data, erasure: '4+2', scrubInterval: 0, scrubRate: 256 * 2 ** 20, bodyTimeoutMs: 0 } });
    try {
      const s3 = createS3Client(s.url, wire);
      const scrape = async () => (await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text());
      // The server is never quiet: a PUT whose body trickles in (a byte every 50 ms) is in
      // flight throughout, whatever the scheduling of this process, and four clients GET a
      // small object back to back.
      const trickle = new AbortController();
      const slow = s3
        .send(
          new PutObjectCommand({
            Bucket: 'busy', Key: 'slow', ContentLength: 400,
            Body: Readable.from((async function* () { for (let i = 0; i < 400 && !trickle.signal.aborted; i++) { yield Buffer.from('x'); await sleep(50); } })()),
          }),
          { abortSignal: trickle.signal }
        )
        .catch(() => undefined);
      let stop = false;
      const load = Array.from({ length: 4 }, async () => {
        while (!stop) await bytesOf((await s3.send(new GetObjectCommand({ Bucket: 'busy', Key: 'small' }))).Body);
      });
      try {
        // The degraded reads queue their blobs for repair, all at once, so that one look of the
        // worker (every second) finds several and waits between them.
        await Promise.all(
          [...objects].map(async ([key, body]) => {
            const got = await bytesOf((await s3.send(new GetObjectCommand({ Bucket: 'busy', Key: key }))).Body);
            expect(Buffer.compare(got, body), key).toBe(0);
          })
        );
        let text = await scrape();
        for (let t = Date.now(); Date.now() - t < 15_000; await sleep(100)) {
          text = await scrape();
          if (metric(text, 'strata_erasure_repair_worker_repaired_total') >= 2) break;
        }
        // Repaired while the requests went on, waiting for them between keys.
        expect(metric(text, 'strata_erasure_repair_worker_repaired_total')).toBeGreaterThanOrEqual(2);
        expect(metric(text, 'strata_erasure_repair_worker_yield_seconds_total')).toBeGreaterThan(0);
      } finally {
        stop = true;
        trickle.abort();
        await Promise.all([...load, slow]);
      }
      // Quiet again: the rest goes without waiting out the bound.
      for (let t = Date.now(); Date.now() - t < 10_000; await sleep(300)) {
        if (metric(await scrape(), 'strata_erasure_degraded_blobs') === 0) break;
      }
      const after = await scrape();
      expect(metric(after, 'strata_erasure_degraded_blobs')).toBe(0);
      for (const [key, body] of objects) {
        const got = await bytesOf((await s3.send(new GetObjectCommand({ Bucket: 'busy', Key: key }))).Body);
        expect(Buffer.compare(got, body), key).toBe(0);
      }
    } finally {
      await s.stop();
    }
  }, 60_000);
});
