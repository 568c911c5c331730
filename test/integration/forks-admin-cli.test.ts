/**
 * Forks through the admin API (POST /_strata/admin/v1/buckets/{bucket}/fork) and `strata fork`
 * (the built CLI from dist/), on a stopped repository and through a running server.
 *
 * Proves that the admin route forks (201, the fork keeps the source's owner unless `owner`
 * names another key or '' for none), and refuses: non-admin keys (403), a missing or unknown
 * field (400), an unknown owner key (404), a missing source (404), an existing target (409), a
 * bad target name (400), a time before the source existed (400), another method (405). That the CLI forks a stopped
 * repository (taking its lock, printing progress on stderr and the result on stdout) and,
 * while a server holds the lock, goes through that server's admin API, whose fork is visible
 * to S3 clients at once; exit 1 for refusals, 2 for bad usage.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetBucketAclCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { ACCESS_KEY, CLI, removeDataDir, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { clientEnv, run } from './support/run-cli.js';
import { bytesOf, createS3Client, WireLog } from './support/sdk-v3-client.js';
import { adminRequest, AdminClientError } from '../../src/admin/client.js';

const OWNER = { accessKeyId: 'FKOWNERKEY0000000001', secretAccessKey: 'owner-secret-0123456789-abcdefghijklmnop' };
const OTHER = { accessKeyId: 'FKOTHERKEY0000000002', secretAccessKey: 'other-secret-0123456789-abcdefghijklmnop' };
const CREDENTIALS = [
  { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY, name: 'admin' },
  { ...OWNER, admin: false, name: 'Owner' },
  { ...OTHER, admin: false, name: 'Other' },
];

const wire = new WireLog();
let dataDir: string;

function fork(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [CLI, 'fork', ...args, '--data', dataDir], {
    env: clientEnv({ STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY, ...env }),
  });
}

async function withServer<T>(fn: (s: TestServer) => Promise<T>): Promise<T> {
  const s = await startTestServer({ dataDir, config: { credentials: CREDENTIALS } });
  try {
    return await fn(s);
  } finally {
    await s.stop();
  }
}

async function keysIn(s: TestServer, bucket: string): Promise<string[]> {
  const c = createS3Client(s.url, wire);
  try {
    return ((await c.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key!);
  } finally {
    c.destroy();
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strata-fork-cli-'));
  await withServer(async (s) => {
    const c = createS3Client(s.url, wire, { credentials: OWNER });
    await c.send(new CreateBucketCommand({ Bucket: 'data' }));
    await c.send(new PutObjectCommand({ Bucket: 'data', Key: 'doc', Body: 'fork me' }));
    c.destroy();
  });
}, 60_000);
afterAll(() => removeDataDir(dataDir));

describe('admin API', () => {
  it('forks, keeping the source owner unless told otherwise, and refuses bad requests', async () => {
    await withServer(async (s) => {
      const api = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
      const post = (bucket: string, body: unknown) => adminRequest(api, 'POST', ['buckets', bucket, 'fork'], body);
      const r = (await post('api-fork', { source: 'data' })) as { bucket: string; source: string; owner: string | null; created: string };
      expect(r).toMatchObject({ bucket: 'api-fork', source: 'data', owner: OWNER.accessKeyId });
      expect(Math.abs(Date.parse(r.created) - Date.now())).toBeLessThan(60_000);
      expect(await keysIn(s, 'api-fork')).toEqual(['doc']);
      expect(((await post('api-fork-other', { source: 'data', owner: OTHER.accessKeyId })) as { owner: string }).owner).toBe(OTHER.accessKeyId);
      expect(((await post('api-fork-none', { source: 'data', owner: '' })) as { owner: string | null }).owner).toBeNull();
      const other = createS3Client(s.url, wire, { credentials: OTHER });
      try {
        expect((await other.send(new GetBucketAclCommand({ Bucket: 'api-fork-other' }))).Owner?.ID).toBe(OTHER.accessKeyId);
      } finally {
        other.destroy();
      }
      const refusal = async (p: Promise<unknown>) => {
        try {
          await p;
        } catch (err) {
          if (err instanceof AdminClientError) return [err.status, err.code];
          throw err;
        }
        throw new Error('expected a refusal');
      };
      expect(await refusal(post('x-fork', {}))).toEqual([400, 'InvalidJson']);
      expect(await refusal(post('x-fork', { source: 'data', target: 'y' }))).toEqual([400, 'InvalidJson']);
      expect(await refusal(post('x-fork', { source: 7 }))).toEqual([400, 'InvalidJson']);
      expect(await refusal(post('x-fork', { source: 'data', owner: 'NOSUCHKEY' }))).toEqual([404, 'NoSuchAccessKey']);
      expect(await refusal(post('x-fork', { source: 'nothing-here' }))).toEqual([404, 'NoSuchBucket']);
      expect(await refusal(post('api-fork', { source: 'data' }))).toEqual([409, 'BucketAlreadyExists']);
      expect(await refusal(post('Bad_Name', { source: 'data' }))).toEqual([400, 'InvalidBucketName']);
      expect(await refusal(post('data', { source: 'data' }))).toEqual([400, 'InvalidRequest']);
      expect(await refusal(post('x-fork', { source: 'data', at: '2020-01-01T00:00:00Z' }))).toEqual([400, 'InvalidArgument']); // before the source existed
      expect(await refusal(post('x-fork', { source: 'data', at: 'last tuesday' }))).toEqual([400, 'InvalidArgument']);
      expect(await refusal(adminRequest(api, 'GET', ['buckets', 'x-fork', 'fork']))).toEqual([405, 'MethodNotAllowed']);
      expect(await refusal(adminRequest({ ...api, credentials: OWNER }, 'POST', ['buckets', 'x-fork', 'fork'], { source: 'data' }))).toEqual([403, 'AccessDenied']);
      expect((await keysIn(s, 'data')).length).toBe(1);
    });
  });
});

describe('strata fork', () => {
  it('forks a stopped repository, with progress on stderr and the result on stdout', async () => {
    const r = await fork(['data', 'cli-fork', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ bucket: 'cli-fork', source: 'data', owner: OWNER.accessKeyId });
    expect(r.stderr).toMatch(/fork: opening repository/);
    expect(r.stderr).toMatch(/fork: done in [\d.]+ ms/);
    const human = await fork(['cli-fork', 'cli-fork-2', '--no-owner']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/forked cli-fork into cli-fork-2/);
    expect(human.stdout).toMatch(/owner: +\(none/);
    await withServer(async (s) => {
      expect(await keysIn(s, 'cli-fork')).toEqual(['doc']);
      expect(await keysIn(s, 'cli-fork-2')).toEqual(['doc']);
    });
  });

  it('goes through the running server that holds the repository, visible to clients at once', async () => {
    await withServer(async (s) => {
      const r = await fork(['data', 'live-fork']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/forking through http/);
      const c = createS3Client(s.url, wire, { credentials: OWNER });
      try {
        expect((await bytesOf((await c.send(new GetObjectCommand({ Bucket: 'live-fork', Key: 'doc' }))).Body)).toString()).toBe('fork me');
      } finally {
        c.destroy();
      }
      const again = await fork(['data', 'live-fork']);
      expect([again.code, again.stderr]).toEqual([1, expect.stringMatching(/BucketAlreadyExists/)]);
      const viaFlag = await fork(['data', 'flag-fork', '--endpoint', s.url]);
      expect(viaFlag.code, viaFlag.stderr).toBe(0);
      const badKey = await fork(['data', 'refused-fork'], { STRATA_SECRET_KEY: 'wrong-secret-000000000000' });
      expect(badKey.code).toBe(2);
    });
  });

  it('exits 1 for refusals and 2 for bad usage', async () => {
    expect((await fork(['nothing-here', 'x-fork'])).code).toBe(1);
    expect((await fork(['data', 'Bad_Name'])).code).toBe(1);
    expect((await fork(['data', 'x-fork', '--at', '2020-01-01T00:00:00Z'])).code).toBe(1);
    expect((await fork(['data', 'x-fork', '--at', 'soon'])).code).toBe(1);
    expect((await fork(['data'])).code).toBe(2);
    expect((await fork(['data', 'x-fork', 'extra'])).code).toBe(2);
    expect((await fork(['data', 'x-fork', '--bogus'])).code).toBe(2);
    expect((await fork(['data', 'x-fork', '--owner', OWNER.accessKeyId, '--no-owner'])).code).toBe(2);
    expect((await fork(['data', 'x-fork', '--owner', 'NOSUCHKEY'])).code).toBe(1);
    const nodir = await run(process.execPath, [CLI, 'fork', 'a-b', 'c-d', '--data', join(dataDir, 'missing')], { env: clientEnv({}) });
    expect(nodir.code).toBe(2);
    const help = await fork(['--help']);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining('strata fork SRC DST')]);
  });
});
