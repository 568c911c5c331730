/**
 * Retention expiry through a real server: the background worker at a short interval with
 * `--retention 0` expires history written over HTTP (AWS SDK v3) while what S3 shows stays
 * (current objects, noncurrent versions, delete markers), reads as of the past are refused
 * afterwards (400), progress and totals reach the logs and /metrics; `strata expire` (built
 * CLI) through the running server's admin API (POST + polled GET) and on the stopped
 * repository; the admin routes refuse non-admin keys and unknown buckets.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { ACCESS_KEY, CLI, METRICS_AUTH, removeDataDir, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { clientEnv, run } from './support/run-cli.js';
import { bytesOf, createS3Client, WireLog } from './support/sdk-v3-client.js';
import { adminRequest } from '../../src/admin/client.js';

const wire = new WireLog();
const BOB = { accessKeyId: 'EXPIREBOBKEY00000002', secretAccessKey: 'bob-secret-0123456789-abcdefghijklmnopqr' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDataDir(d);
});

/** A client that sends `x-strata-as-of` (signed) on every request. */
function asOfClient(url: string, at: string): S3Client {
  const c = createS3Client(url, wire);
  c.middlewareStack.add(
    (next) => async (args) => {
      (args as unknown as { request: { headers: Record<string, string> } }).request.headers['x-strata-as-of'] = at;
      return next(args);
    },
    { step: 'build', name: 'strataAsOf' }
  );
  return c;
}

async function metric(s: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no metric ${name}`);
  return Number(line.split(' ')[1]);
}

/** Writes history: 6 overwrites of an unversioned key, and a versioned key with a removed version. */
async function writeHistory(c: S3Client): Promise<{ kept: string; removed: string; marker: string }> {
  await c.send(new CreateBucketCommand({ Bucket: 'plain' }));
  for (let i = 0; i < 6; i++) await c.send(new PutObjectCommand({ Bucket: 'plain', Key: 'k', Body: `v${i}` }));
  await c.send(new CreateBucketCommand({ Bucket: 'vers' }));
  await c.send(new PutBucketVersioningCommand({ Bucket: 'vers', VersioningConfiguration: { Status: 'Enabled' } }));
  const kept = (await c.send(new PutObjectCommand({ Bucket: 'vers', Key: 'k', Body: 'kept' }))).VersionId!;
  const removed = (await c.send(new PutObjectCommand({ Bucket: 'vers', Key: 'k', Body: 'removed' }))).VersionId!;
  const marker = (await c.send(new DeleteObjectCommand({ Bucket: 'vers', Key: 'k' }))).VersionId!;
  await c.send(new DeleteObjectCommand({ Bucket: 'vers', Key: 'k', VersionId: removed }));
  return { kept, removed, marker };
}

describe('the expiry worker', () => {
  it('expires history with --retention 0 every interval; S3 views stay, past reads are refused, logs and metrics tell', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'strata-expiry-'));
    dirs.push(dataDir);
    const s = await startTestServer({ dataDir, config: { retention: 0, expiryInterval: 300 } });
    const c = createS3Client(s.url, wire);
    try {
      const before = new Date().toISOString();
      await sleep(5);
      const v = await writeHistory(c);
      // 5 replaced null versions + 1 removed version, once a run after the writes is done.
      const deadline = Date.now() + 20_000;
      while ((await metric(s, 'strata_expiry_entries_expired_total')) < 6 && Date.now() < deadline) await sleep(100);
      expect(await metric(s, 'strata_expiry_entries_expired_total')).toBe(6);
      expect(await metric(s, 'strata_expiry_runs_total')).toBeGreaterThanOrEqual(1);
      expect(await metric(s, 'strata_expiry_bytes_total')).toBeGreaterThan(6 * 20);
      expect(await metric(s, 'strata_expiry_failures_total')).toBe(0);
      const runs = s.logs.map((l) => JSON.parse(l) as { msg: string; expired?: number }).filter((l) => l.msg === 'history.expired');
      expect(runs.reduce((n, l) => n + l.expired!, 0)).toBe(6);
      // What S3 shows did not change.
      expect((await bytesOf((await c.send(new GetObjectCommand({ Bucket: 'plain', Key: 'k' }))).Body)).toString()).toBe('v5');
      const lv = await c.send(new ListObjectVersionsCommand({ Bucket: 'vers' }));
      expect(lv.DeleteMarkers?.map((m) => m.VersionId)).toEqual([v.marker]);
      expect(lv.Versions?.map((x) => x.VersionId)).toEqual([v.kept]);
      // The past is out of the window (0): refused, not read as now.
      const past = asOfClient(s.url, before);
      const err = await past.send(new GetObjectCommand({ Bucket: 'plain', Key: 'k' })).catch((e) => e);
      expect(err.$metadata.httpStatusCode).toBe(400);
      expect(err.name).toBe('InvalidArgument');
      past.destroy();
      // Later runs find nothing more.
      const runsNow = await metric(s, 'strata_expiry_runs_total');
      while ((await metric(s, 'strata_expiry_runs_total')) === runsNow && Date.now() < deadline + 10_000) await sleep(100);
      expect(await metric(s, 'strata_expiry_entries_expired_total')).toBe(6);
    } finally {
      c.destroy();
      await s.stop();
    }
  }, 60_000);
});

describe('strata expire and the admin endpoint', () => {
  it('runs now through the server (progress to the end), refuses others; and on the stopped repository', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'strata-expire-cli-'));
    dirs.push(dataDir);
    const creds = [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, { ...BOB, admin: false }];
    const s = await startTestServer({ dataDir, config: { credentials: creds, retention: 0, expiryInterval: 0 } });
    const c = createS3Client(s.url, wire);
    const strata = (args: string[]) => run(process.execPath, [CLI, ...args, '--data', dataDir], { env: clientEnv({ STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY }) });
    try {
      await writeHistory(c);
      const api = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
      expect(await adminRequest(api, 'GET', ['expire'])).toEqual({ running: false });
      await expect(adminRequest({ endpoint: s.url, credentials: BOB }, 'POST', ['expire'], {})).rejects.toMatchObject({ status: 403 });
      await expect(adminRequest(api, 'POST', ['expire'], { bucket: 'nope' })).rejects.toMatchObject({ status: 404, code: 'NoSuchBucket' });
      await expect(adminRequest(api, 'POST', ['expire'], { bucket: 5 })).rejects.toMatchObject({ status: 400, code: 'InvalidJson' });
      // Only one bucket first, through the server (it holds the repository's lock).
      const one = await strata(['expire', '--bucket', 'plain', '--json']);
      expect(one.code, one.stderr).toBe(0);
      expect(one.stderr).toMatch(/acting through/);
      expect(JSON.parse(one.stdout)).toMatchObject({ buckets: 1, expired: 5, skipped: 0 });
      const all = await strata(['expire']);
      expect(all.code, all.stderr).toBe(0);
      expect(all.stdout).toMatch(/^expired 1 of \d+ history entries \(\d+ bytes\) in 2 bucket\(s\)/);
      expect(await adminRequest(api, 'GET', ['expire'])).toMatchObject({ running: false, last: { report: { expired: 1 } } });
      expect(await metric(s, 'strata_expiry_runs_total')).toBe(2);
      const bad = await strata(['expire', '--bucket', 'nope']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/NoSuchBucket|does not exist/);
    } finally {
      c.destroy();
      await s.stop();
    }
    // Stopped: the verb opens the repository itself, with the default window it is told.
    const s2 = await startTestServer({ dataDir, config: { credentials: creds, retention: 30 * 86_400_000, expiryInterval: 0 } });
    const c2 = createS3Client(s2.url, wire);
    for (let i = 0; i < 3; i++) await c2.send(new PutObjectCommand({ Bucket: 'plain', Key: 'again', Body: `a${i}` }));
    c2.destroy();
    await s2.stop();
    const kept = await strata(['expire', '--json']);
    expect(kept.code, kept.stderr).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({ expired: 0 }); // 30d default: nothing is old enough
    const gone = await strata(['expire', '--retention', '0', '--json']);
    expect(gone.code, gone.stderr).toBe(0);
    expect(gone.stderr).toMatch(/expire: opened repository/);
    expect(JSON.parse(gone.stdout)).toMatchObject({ expired: 2 });
    const verify = await run(process.execPath, [CLI, 'verify', dataDir], { env: clientEnv({}) });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 90_000);
});
