/**
 * `strata history`, `strata restore` and `strata history-window` from the built CLI (dist/),
 * on a stopped repository and through a running server, and the admin endpoints behind them.
 *
 * Proves that the CLI lists what changed when (text and JSON, by key, with time filters and
 * paging), sets and shows the window, dry-runs and runs a restore with progress on stderr —
 * on the repository directly and, while a server holds it, through the server's admin API
 * (bounded requests repeated to the end) — with the same results; that the admin routes
 * refuse non-admin keys and bad input (times, windows, JSON); and that bad usage exits 2 and
 * refusals (no such bucket, a time outside the window) exit 1.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { ACCESS_KEY, CLI, removeDataDir, SECRET_KEY, startTestServer } from './harness.js';
import { clientEnv, run } from './support/run-cli.js';
import { bytesOf, createS3Client, WireLog } from './support/sdk-v3-client.js';
import { adminRequest, AdminClientError } from '../../src/admin/client.js';

const wire = new WireLog();
const B = 'cli-hist';
const BOB = { accessKeyId: 'HISTBOBKEY0000000002', secretAccessKey: 'bob-secret-0123456789-abcdefghijklmnopqr' };
let dataDir: string;
let t1 = '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function strata(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [CLI, ...args, '--data', dataDir], { env: clientEnv({ STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY, ...env }) });
}

async function json<T>(args: string[]): Promise<T> {
  const r = await strata([...args, '--json']);
  if (r.code !== 0) throw new Error(`strata ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

type Hist = { entries: { time: string; key: string; op: string; versionId: string; size?: number }[]; next?: string; window: string };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strata-hist-cli-'));
  const s = await startTestServer({ dataDir, config: { credentials: [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, { ...BOB, admin: false }] } });
  const c = createS3Client(s.url, wire);
  await c.send(new CreateBucketCommand({ Bucket: B }));
  for (const k of ['a', 'b', 'logs/1', 'logs/2']) await c.send(new PutObjectCommand({ Bucket: B, Key: k, Body: `${k} then` }));
  await sleep(20);
  t1 = new Date().toISOString();
  await sleep(20);
  await c.send(new PutObjectCommand({ Bucket: B, Key: 'a', Body: 'a later' }));
  await c.send(new DeleteObjectCommand({ Bucket: B, Key: 'b' }));
  await c.send(new PutObjectCommand({ Bucket: B, Key: 'logs/3', Body: 'logs/3 later' }));
  await c.send(new PutObjectCommand({ Bucket: B, Key: 'logs/1', Body: 'logs/1 later' }));
  c.destroy();
  await s.stop();
});
afterAll(() => removeDataDir(dataDir));

describe('on a stopped repository', () => {
  it('lists what changed when, by key, by time, in pages', async () => {
    const all = await json<Hist>(['history', B]);
    expect(all.window).toBe('30d');
    expect(all.entries.map((e) => [e.key, e.op])).toEqual([
      ['a', 'put'],
      ['a', 'put'],
      ['b', 'delete'],
      ['b', 'put'],
      ['logs/1', 'put'],
      ['logs/1', 'put'],
      ['logs/2', 'put'],
      ['logs/3', 'put'],
    ]);
    expect(all.entries[0]!.size).toBe('a later'.length);
    const since = await json<Hist>(['history', B, '--since', t1]);
    expect(since.entries.map((e) => e.key)).toEqual(['a', 'b', 'logs/1', 'logs/3']);
    const key = await json<Hist>(['history', B, 'a', '--until', t1]);
    expect(key.entries.map((e) => e.size)).toEqual(['a then'.length]);
    const paged = await json<Hist>(['history', B, '--prefix', 'logs/', '--limit', '2']);
    expect(paged.entries).toHaveLength(2);
    expect(paged.next).toBeTruthy();
    const rest = await json<Hist>(['history', B, '--prefix', 'logs/', '--cursor', paged.next!]);
    expect([...paged.entries, ...rest.entries].map((e) => e.key)).toEqual(['logs/1', 'logs/1', 'logs/2', 'logs/3']);
    const text = await strata(['history', B, '--since', '1d', '--limit', '3']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^history of cli-hist since .* \(window 30d\)\n.*put .* a\n/);
    expect(text.stdout).toMatch(/\(more: add --cursor \S+\)/);
  });

  it('dry-runs, restores a prefix and reports progress; shows and sets the window', async () => {
    const dry = await strata(['restore', B, '--to', t1, '--prefix', 'logs/', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('3 keys examined: 1 would restore, 1 would delete, 1 unchanged');
    expect(dry.stdout).toMatch(/restore {2}logs\/1 {2}\(version null\)/);
    expect(dry.stdout).toMatch(/delete {3}logs\/3/);
    const r = await strata(['restore', B, '--to', t1, '--prefix', 'logs/']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/restore: restoring cli-hist \(keys under logs\/\) to .*Z \(repository /);
    expect(r.stderr).toMatch(/restore: 3 keys examined, 1 restored, 1 deleted, 1 unchanged, 1 commits/);
    const again = await json<{ restored: number; deleted: number; commits: number }>(['restore', B, '--to', t1, '--prefix', 'logs/']);
    expect(again).toMatchObject({ restored: 0, deleted: 0, commits: 0 });
    expect(await json<{ window: string }>(['history-window', B])).toMatchObject({ window: '30d', windowMs: 30 * 86_400_000, own: false });
    expect(await json<{ window: string }>(['history-window', B, '--retention', '2d'])).toMatchObject({ window: '2d', own: false });
    expect(await json<{ window: string }>(['history-window', B, '7d'])).toMatchObject({ window: '7d', own: true });
    const w = await strata(['history-window', B]);
    expect(w.stdout).toBe(`${B}: history window 7d\n`);
    // `default`: back to the server default (--retention), which the bucket then follows.
    const d = await strata(['history-window', B, 'default', '--retention', '45d']);
    expect(d.stdout).toBe(`${B}: history window 45d (server default)\n`);
    await strata(['history-window', B, '7d']);
  });

  it('answers bad usage with 2 and refusals with 1', async () => {
    for (const args of [
      ['restore', B],
      ['restore', B, '--to', 'soonish'],
      ['history'],
      ['history', B, 'k', '--prefix', 'p'],
      ['history', B, '--limit', '0'],
      ['history', B, '--bogus'],
      ['history-window', B, '1', '2'],
    ]) {
      const r = await strata(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
    }
    for (const args of [
      ['restore', 'no-such-bucket', '--to', '1h'],
      ['restore', B, '--to', '30d'], // before the bucket (and older than the 7-day window set above)
      ['restore', B, '--to', '2999-01-01T00:00:00Z'],
      ['history', 'no-such-bucket'],
      ['history', B, '--cursor', 'garbage'],
      ['history-window', B, 'forever'],
      ['history-window', B, '36501d'],
    ]) {
      const r = await strata(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(1);
    }
    const outside = await strata(['restore', B, '--to', '30d']);
    expect(outside.stderr).toMatch(/InvalidArgument: restore time .* is before bucket cli-hist was created .* can be read as of .*\(history window 7 days\)/);
    const noRepo = await run(process.execPath, [CLI, 'history', B, '--data', join(dataDir, 'nope')], { env: clientEnv({}) });
    expect(noRepo.code).toBe(2);
  });
});

describe('strata fork --at', () => {
  it('forks the bucket as it was at the time, on the stopped repository', async () => {
    const r = await strata(['fork', B, 'cli-hist-then', '--at', t1]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`forked ${B} into cli-hist-then`);
    // Its history starts at its creation (what it inherited is the source's): nothing yet.
    expect((await json<Hist>(['history', 'cli-hist-then'])).entries).toEqual([]);
    const early = await strata(['fork', B, 'cli-hist-early', '--at', '2001-01-01T00:00:00Z']);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/InvalidArgument: fork time .* before bucket cli-hist was created/);
  });
});

describe('through the running server', () => {
  it('finds the server from the lock holder; restores in bounded requests; the routes are admin-only', async () => {
    const s = await startTestServer({ dataDir, config: { credentials: [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, { ...BOB, admin: false }] } });
    const c = createS3Client(s.url, wire);
    try {
      // The fork made as of t1 on the stopped repository (above) holds the bucket as it was then.
      const forked = await c.send(new ListObjectsV2Command({ Bucket: 'cli-hist-then' }));
      expect(forked.Contents?.map((o) => o.Key)).toEqual(['a', 'b', 'logs/1', 'logs/2']);
      for (const k of ['a', 'b', 'logs/1', 'logs/2']) expect((await bytesOf((await c.send(new GetObjectCommand({ Bucket: 'cli-hist-then', Key: k }))).Body)).toString()).toBe(`${k} then`);
      const hist = await strata(['history', B, 'a', '--json']);
      expect(hist.code, hist.stderr).toBe(0);
      expect(hist.stderr).toContain('acting through');
      expect((JSON.parse(hist.stdout) as Hist).entries).toHaveLength(2);
      // A restore of the whole bucket through the admin API.
      const r = await strata(['restore', B, '--to', t1]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/restore: 5 keys examined, 2 restored, 0 deleted, 3 unchanged/);
      const listed = await c.send(new ListObjectsV2Command({ Bucket: B }));
      expect(listed.Contents?.map((o) => o.Key)).toEqual(['a', 'b', 'logs/1', 'logs/2']);
      for (const k of ['a', 'b', 'logs/1', 'logs/2']) expect((await bytesOf((await c.send(new GetObjectCommand({ Bucket: B, Key: k }))).Body)).toString()).toBe(`${k} then`);
      // Bounded requests: maxKeys per request, `next` to go on.
      const api = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
      const step = (await adminRequest(api, 'POST', ['buckets', B, 'restore'], { to: t1, dryRun: true, maxKeys: 2 })) as { scanned: number; next?: string };
      expect(step).toMatchObject({ scanned: 2, next: 'b' });
      const step2 = (await adminRequest(api, 'POST', ['buckets', B, 'restore'], { to: t1, dryRun: true, maxKeys: 2, after: step.next })) as { scanned: number; next?: string };
      expect(step2.scanned).toBe(2);
      const win = (await adminRequest(api, 'PUT', ['buckets', B, 'history-window'], { window: '12h' })) as { window: string };
      expect(win.window).toBe('12h');
      expect(await adminRequest(api, 'GET', ['buckets', B, 'history-window'])).toMatchObject({ windowMs: 12 * 3_600_000 });
      // Refusals: a non-admin key, bad times and windows, bad JSON, missing fields.
      const bob = { endpoint: s.url, credentials: BOB };
      await expect(adminRequest(bob, 'POST', ['buckets', B, 'history'], {})).rejects.toMatchObject({ status: 403 });
      await expect(adminRequest(bob, 'POST', ['buckets', B, 'restore'], { to: t1 })).rejects.toMatchObject({ status: 403 });
      await expect(adminRequest(bob, 'PUT', ['buckets', B, 'history-window'], { window: '0' })).rejects.toMatchObject({ status: 403 });
      const bad = async (method: string, path: string[], body: unknown) => {
        const e = (await adminRequest(api, method, path, body).catch((err) => err)) as AdminClientError;
        expect(e).toBeInstanceOf(AdminClientError);
        return { status: e.status, code: e.code };
      };
      expect(await bad('POST', ['buckets', B, 'restore'], {})).toEqual({ status: 400, code: 'InvalidJson' });
      expect(await bad('POST', ['buckets', B, 'restore'], { to: 'now' })).toEqual({ status: 400, code: 'InvalidArgument' });
      expect(await bad('POST', ['buckets', B, 'restore'], { to: t1, maxKeys: 0 })).toEqual({ status: 400, code: 'InvalidArgument' });
      expect(await bad('POST', ['buckets', B, 'restore'], { to: t1, maxKeys: '5' })).toEqual({ status: 400, code: 'InvalidJson' });
      expect(await bad('POST', ['buckets', B, 'restore'], { to: '2999-01-01T00:00:00Z' })).toEqual({ status: 400, code: 'InvalidArgument' });
      expect(await bad('POST', ['buckets', 'nope', 'restore'], { to: t1 })).toEqual({ status: 404, code: 'NoSuchBucket' });
      expect(await bad('POST', ['buckets', B, 'history'], { limit: 5000 })).toEqual({ status: 400, code: 'InvalidArgument' });
      expect(await bad('POST', ['buckets', B, 'history'], { since: 'x' })).toEqual({ status: 400, code: 'InvalidArgument' });
      expect(await bad('POST', ['buckets', B, 'history'], { extra: 1 })).toEqual({ status: 400, code: 'InvalidJson' });
      expect(await bad('PUT', ['buckets', B, 'history-window'], { window: '-1d' })).toEqual({ status: 400, code: 'InvalidArgument' });
      expect(await bad('PUT', ['buckets', B, 'history-window'], {})).toEqual({ status: 400, code: 'InvalidJson' });
      expect(await bad('POST', ['buckets', B, 'history-window'], undefined)).toEqual({ status: 405, code: 'MethodNotAllowed' });
      expect(await bad('DELETE', ['buckets', 'nope', 'history-window'], undefined)).toEqual({ status: 404, code: 'NoSuchBucket' });
    } finally {
      c.destroy();
      await s.stop();
    }
  });
});
