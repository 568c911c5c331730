/**
 * A client's bad body must not count against the erasure domains. Against the real `strata
 * serve --erasure 4+2` over 6 directories: a streaming (aws-chunked) PUT whose chunk signature
 * is forged midway, one whose body is cut short, and one whose connection drops mid-body are
 * each refused with nothing stored; then every domain is still in service and the next striped
 * PUT lands at once. The fragments' child puts used to fail with the body's error, which
 * counted as each domain failing: one forged chunk took all six out of service for their
 * cooldown, and every write in that time answered 503.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS_AUTH, startTestServer, type TestServer } from './harness.js';
import { errorCode, framesOf, rawExchange, requestHead, signedChunked } from './wire.js';
import { signedSender } from './support/signed-send.js';
import { randomBytes } from '../support/random.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-ec-badbody-'));
const BUCKET = 'bad-body';
/** Above the 1 MiB stripe threshold: the body's chunk blob is striped over all six domains. */
const SIZE = 1536 * 1024;
const STREAMING = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';

let s: TestServer;
const { signed, send } = signedSender(() => s);

/** The server's /metrics page. */
async function metricsText(): Promise<string> {
  return (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
}

/** The value of series `series` (name and labels, as written) in `text`; NaN when absent. */
function metricValue(text: string, series: string): number {
  return Number(new RegExp(`^${series.replace(/[{}+"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

async function failedDomains(): Promise<number> {
  return metricValue(await metricsText(), 'strata_erasure_domains_failed');
}

/** A plain signed PUT of a striped object: 200, and it reads back. */
async function putWorks(key: string): Promise<void> {
  const data = randomBytes(SIZE, key.length);
  const r = await send(signed({ method: 'PUT', path: `/${BUCKET}/${key}`, body: data }));
  expect(r.status, r.body.toString()).toBe(200);
  const got = await send(signed({ method: 'GET', path: `/${BUCKET}/${key}` }));
  expect(got.body.equals(Buffer.from(data))).toBe(true);
}

beforeAll(async () => {
  s = await startTestServer({
    child: true,
    dataDir: `${dir}/disk{1...6}`,
    args: ['--erasure', '4+2', '--gc-interval', '0', '--lifecycle-interval', '0', '--expiry-interval', '0'],
  });
  expect((await send(signed({ method: 'PUT', path: `/${BUCKET}` }))).status).toBe(200);
  await putWorks('before');
}, 60_000);

afterAll(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}.master-key`, { force: true });
});

describe('a bad body on an erasure set', () => {
  it('a forged chunk signature midway: 403, nothing stored, no domain counted failed', async () => {
    const data = randomBytes(SIZE, 11);
    const req = signed({
      method: 'PUT',
      path: `/${BUCKET}/forged`,
      headers: { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': String(SIZE) },
      payloadHash: STREAMING,
    });
    const frames = framesOf(data, 64 * 1024);
    frames[frames.length - 2]!.signature = 'f'.repeat(64);
    const r = await send({ ...req, body: signedChunked(req.chain, req.signature, frames) });
    expect(r.status).toBe(403);
    expect(errorCode(r.body)).toBe('SignatureDoesNotMatch');
    expect((await send(signed({ method: 'HEAD', path: `/${BUCKET}/forged` }))).status).toBe(404);
    expect(await failedDomains()).toBe(0);
    await putWorks('after-forged');
  });

  it('a body that ends early, and a connection dropped mid-body: nothing stored, no domain counted failed', async () => {
    const data = randomBytes(SIZE, 12);
    const short = signed({ method: 'PUT', path: `/${BUCKET}/short`, headers: { 'content-length': String(SIZE) }, payloadHash: 'UNSIGNED-PAYLOAD' });
    // Half the body, then the connection closes.
    await rawExchange(Number(new URL(s.url).port), [requestHead(short), data.subarray(0, SIZE / 2)], { close: 'destroy', lingerMs: 200 });
    await new Promise((r) => setTimeout(r, 300));
    expect((await send(signed({ method: 'HEAD', path: `/${BUCKET}/short` }))).status).toBe(404);
    expect(await failedDomains()).toBe(0);
    await putWorks('after-short');
  });

  it('times each append of a commit to the replicated commit log (strata_commit_log_append_seconds)', async () => {
    await putWorks('timed');
    const text = await metricsText();
    const metric = (series: string): number => metricValue(text, series);
    expect(text).toContain('# TYPE strata_commit_log_append_seconds histogram');
    const commits = metric('strata_commits_total');
    expect(commits).toBeGreaterThan(0);
    expect(metric('strata_commit_log_append_seconds_count'), 'every commit went through the log').toBe(commits);
    expect(metric('strata_commit_log_append_seconds_bucket{le="+Inf"}')).toBe(commits);
    expect(metric('strata_commit_log_append_seconds_sum')).toBeGreaterThan(0);
  });
});
