/**
 * The history budget at its exact boundary, through the S3 API with AWS SDK v3 (default retry
 * policy: 3 attempts).
 *
 * Proves that writes fill the budget to the byte (use == budget after the last admitted PUT),
 * that the next PUT and a delete marker are refused with 403 QuotaExceeded whose message names
 * the budget, its size, its use and how to free room, that the SDK does not retry it (one
 * attempt on the wire), and that the refusal changed no file under the data directory; that a
 * fresh server process with the same budget opens and reads every version ever admitted
 * byte-exact; that a process with a smaller budget still opens and reads everything while its
 * writes are refused; and that deleting a version stays possible when the budget is full.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { ACCESS_KEY, METRICS_AUTH, REGION, SECRET_KEY, removeDataDir, startTestServer, type TestServer } from './harness.js';
import { snapshot } from './support/refusals.js';

const BUCKET = 'boundary';
const N = 24;
const dataDir = mkdtempSync(join(tmpdir(), 'strata-history-boundary-'));
const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  removeDataDir(dataDir);
});

const body = (i: number) => `value number ${String(i).padStart(4, '0')} `.repeat(8);
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const keyOf = (i: number) => `k/${String(i).padStart(4, '0')}`;

/** An SDK client with the default retry policy, counting the HTTP requests it sends. */
function client(s: TestServer): { c: S3Client; sent: () => number } {
  const c = new S3Client({ endpoint: s.url, region: REGION, forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });
  let n = 0;
  c.middlewareStack.add(
    (next) => async (args) => {
      n++;
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'countSends' }
  );
  return { c, sent: () => n };
}

async function metric(s: TestServer, name: string): Promise<number> {
  const text = await (await request(`${s.url}/metrics`, { headers: METRICS_AUTH })).body.text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`no metric ${name}`);
  return Number(m[1]);
}

async function start(budget: number): Promise<TestServer> {
  // Commit blobs (not the default commit log): "a budget of exactly N writes" needs every write
  // to cost the same history bytes, and with the log a body's location names its offset in a
  // growing segment (a varint: 1-3 bytes), so writes of one size differ by a byte or two.
  const s = await startTestServer({ child: true, dataDir, env: { STRATA_HISTORY_BUDGET: String(budget), STRATA_LOG: 'info', STRATA_COMMIT_LOG: 'off' } });
  servers.push(s);
  return s;
}

async function stop(s: TestServer): Promise<void> {
  await s.stop();
  servers.splice(servers.indexOf(s), 1);
}

/** Every version of the bucket (ListObjectVersions, paged), read back and checked byte-exact. */
async function walkAll(c: S3Client, expected: Map<string, string>): Promise<number> {
  let keyMarker: string | undefined;
  let versionMarker: string | undefined;
  let n = 0;
  for (;;) {
    const page = await c.send(new ListObjectVersionsCommand({ Bucket: BUCKET, MaxKeys: 7, KeyMarker: keyMarker, VersionIdMarker: versionMarker }));
    for (const v of page.Versions ?? []) {
      const got = await c.send(new GetObjectCommand({ Bucket: BUCKET, Key: v.Key!, VersionId: v.VersionId! }));
      const text = await got.Body!.transformToString();
      expect(md5(text), `${v.Key} ${v.VersionId}`).toBe(md5(expected.get(v.VersionId!)!));
      n++;
    }
    if (!page.IsTruncated) return n;
    keyMarker = page.NextKeyMarker;
    versionMarker = page.NextVersionIdMarker;
  }
}

async function refusedQuota(act: () => Promise<unknown>): Promise<S3ServiceException> {
  const err = await act().then(
    () => undefined,
    (e: unknown) => e
  );
  expect(err).toBeInstanceOf(S3ServiceException);
  const e = err as S3ServiceException;
  expect(e.name).toBe('QuotaExceeded');
  expect(e.$metadata.httpStatusCode).toBe(403);
  expect(e.$metadata.attempts, 'a 403 is not retried').toBe(1);
  return e;
}

describe('history budget boundary (SDK v3, fresh processes)', () => {
  it('fills to the byte, refuses the next write without retry or trace, and every admitted version survives a restart', async () => {
    // Measure one write's accounted size with an ample budget.
    let s = await start(64 * 1024 * 1024);
    let { c } = client(s);
    await c.send(new CreateBucketCommand({ Bucket: BUCKET }));
    await c.send(new PutBucketVersioningCommand({ Bucket: BUCKET, VersioningConfiguration: { Status: 'Enabled' } }));
    const expected = new Map<string, string>();
    const first = await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: keyOf(0), Body: body(0) }));
    expected.set(first.VersionId!, body(0));
    const per = await metric(s, 'strata_history_bytes');
    expect(per).toBeGreaterThan(0);
    await stop(s);

    // A budget of exactly N writes: N - 1 more are admitted, use == budget.
    const budget = N * per;
    s = await start(budget);
    const cl = client(s);
    c = cl.c;
    for (let i = 1; i < N; i++) {
      const r = await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: keyOf(i), Body: body(i) }));
      expected.set(r.VersionId!, body(i));
    }
    expect(await metric(s, 'strata_history_bytes')).toBe(budget);
    expect(await metric(s, 'strata_history_budget_bytes')).toBe(budget);
    expect(await metric(s, 'strata_history_points')).toBe(N);

    // One more: refused, not retried, nothing written.
    const before = snapshot(s);
    const sentBefore = cl.sent();
    const e = await refusedQuota(() => c.send(new PutObjectCommand({ Bucket: BUCKET, Key: keyOf(N), Body: body(N) })));
    expect(cl.sent() - sentBefore, 'one request on the wire').toBe(1);
    expect(e.message).toContain(`history budget is ${budget} bytes, ${budget} are in use`);
    expect(e.message).toMatch(/retention/);
    expect(e.message).toMatch(/DELETE \?versionId=/);
    expect(e.message).toMatch(/strata gc/);
    // A delete marker would add a retained point: refused the same way.
    await refusedQuota(() => c.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: keyOf(1) })));
    expect(snapshot(s), 'files under the data directory changed').toEqual(before);
    expect(await metric(s, 'strata_history_bytes')).toBe(budget);
    expect(await metric(s, 'strata_pending_bytes')).toBe(0);
    await stop(s);

    // A fresh process with the same budget walks every version ever admitted.
    s = await start(budget);
    c = client(s).c;
    expect(await metric(s, 'strata_history_bytes')).toBe(budget);
    expect(await walkAll(c, expected)).toBe(N);
    await stop(s);

    // A process with a smaller budget still opens and reads everything; writes are refused.
    s = await start(Math.floor(budget / 4));
    c = client(s).c;
    expect(await walkAll(c, expected)).toBe(N);
    await refusedQuota(() => c.send(new PutObjectCommand({ Bucket: BUCKET, Key: keyOf(N), Body: body(N) })));
    await stop(s);

    // Full budget: deleting a version stays possible (it only makes history expirable).
    s = await start(budget);
    c = client(s).c;
    const victim = first.VersionId!;
    await c.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: keyOf(0), VersionId: victim }));
    expected.delete(victim);
    expect(await walkAll(c, expected)).toBe(N - 1);
    await stop(s);
  }, 120_000);
});
