/**
 * `strata keys` from the built CLI (dist/), against a stopped repository and through a
 * running server.
 *
 * Proves that on a stopped repository the CLI creates a key (printing its secret once),
 * lists, grants, revokes and deletes, and that a server started afterwards honours all of
 * it; that while a server holds the directory lock the same commands go through its admin
 * API (found in <data>/strata-server.json, signed with the admin key from the environment)
 * and take effect at once; that the created secret appears nowhere in the repository's
 * files; that a stopped repository refuses a wrong master key and never generates one; and
 * that bad usage (unknown command or flag, missing argument, no such directory) exits 2
 * and refusals (no such key, last admin) exit 1.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, ListBucketsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ACCESS_KEY, CLI, removeDataDir, SECRET_KEY, startTestServer } from './harness.js';
import { clientEnv, run } from './support/run-cli.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';

const wire = new WireLog();
let dataDir: string;

function keys(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [CLI, 'keys', ...args, '--data', dataDir], {
    env: clientEnv({ STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY, ...env }),
  });
}

async function keysJson<T>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const r = await keys([...args, '--json'], env);
  if (r.code !== 0) throw new Error(`keys ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

type Created = { key: { id: string; name: string; admin: boolean }; secretAccessKey: string };
type KeyJson = { id: string; admin: boolean; createBucket: boolean; grants: { bucket: string; read: boolean; write: boolean; owner: boolean }[] };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strata-keys-cli-'));
  // A first start creates the repository, the bootstrap admin key and a bucket.
  const s = await startTestServer({ dataDir });
  const c = createS3Client(s.url, wire);
  await c.send(new CreateBucketCommand({ Bucket: 'cli-data' }));
  await c.send(new PutObjectCommand({ Bucket: 'cli-data', Key: 'doc', Body: 'cli bytes' }));
  c.destroy();
  await s.stop();
});
afterAll(() => removeDataDir(dataDir));

describe('on a stopped repository', () => {
  let carol: Created;

  it('creates a key and prints its secret once (human output)', async () => {
    const r = await keys(['create', '--name', 'carol']);
    expect(r.code, r.stderr).toBe(0);
    const id = /access key: +(\S+)/.exec(r.stdout)?.[1];
    const secret = /secret key: +(\S+)/.exec(r.stdout)?.[1];
    expect(id).toMatch(/^STRATA[A-Z0-9]{16}$/);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{40}$/);
    carol = { key: { id: id!, name: 'carol', admin: false }, secretAccessKey: secret! };
    const listed = await keysJson<{ keys: KeyJson[] }>(['list']);
    expect(listed.keys.map((k) => k.id).sort()).toEqual([ACCESS_KEY, id].sort());
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(existsSync(join(dataDir, 'LOCK'))).toBe(false);
  });

  it('grants and revokes; a server started afterwards honours them', async () => {
    const g = await keysJson<{ key: KeyJson }>(['grant', carol.key.id, 'cli-data', '--read', '--write']);
    expect(g.key.grants).toEqual([{ bucket: 'cli-data', read: true, write: true, owner: false }]);
    const r = await keysJson<{ key: KeyJson }>(['revoke', carol.key.id, 'cli-data', '--write']);
    expect(r.key.grants).toEqual([{ bucket: 'cli-data', read: true, write: false, owner: false }]);
    const s = await startTestServer({ dataDir });
    const c = createS3Client(s.url, wire, { credentials: { accessKeyId: carol.key.id, secretAccessKey: carol.secretAccessKey } });
    try {
      expect((await bytesOf((await c.send(new GetObjectCommand({ Bucket: 'cli-data', Key: 'doc' }))).Body)).toString()).toBe('cli bytes');
      const put = await failure(c.send(new PutObjectCommand({ Bucket: 'cli-data', Key: 'nope', Body: 'x' })));
      expect(put.name).toBe('AccessDenied');
    } finally {
      c.destroy();
      await s.stop();
    }
  });

  it('keeps secrets sealed in the repository files', () => {
    const needle = Buffer.from(carol.secretAccessKey);
    const files = filesUnder(dataDir);
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) expect(readFileSync(f).includes(needle), `${f} holds the secret`).toBe(false);
  });

  it('refuses a wrong master key and never generates one', async () => {
    const wrong = join(dataDir, '..', `${dataDir.split('/').pop()}.wrong-key`);
    writeFileSync(wrong, `${'cd'.repeat(32)}\n`, { mode: 0o600 });
    try {
      const r = await keys(['create', '--master-key-file', wrong]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/wrong master key/);
      // The list needs no master key; creating without one fails instead of generating a key file.
      const master = readFileSync(`${dataDir}.master-key`);
      rmSync(`${dataDir}.master-key`);
      try {
        expect((await keys(['list'])).code).toBe(0);
        const none = await keys(['create']);
        expect(none.code).not.toBe(0);
        expect(none.stderr).toMatch(/master key/);
        expect(existsSync(`${dataDir}.master-key`)).toBe(false);
      } finally {
        writeFileSync(`${dataDir}.master-key`, master, { mode: 0o600 });
      }
    } finally {
      rmSync(wrong, { force: true });
    }
  });

  it('answers bad usage with 2 and refusals with 1', async () => {
    expect((await keys(['frobnicate'])).code).toBe(2);
    expect((await keys(['list', '--bogus'])).code).toBe(2);
    expect((await keys(['delete'])).code).toBe(2);
    expect((await keys(['grant', 'a', 'b', 'c'])).code).toBe(2);
    const nodir = await run(process.execPath, [CLI, 'keys', 'list', '--data', join(dataDir, 'missing')], { env: clientEnv({}) });
    expect(nodir.code).toBe(2);
    expect(existsSync(join(dataDir, 'missing'))).toBe(false);
    const nokey = await keys(['delete', 'NOSUCHKEY']);
    expect([nokey.code, nokey.stderr]).toEqual([1, expect.stringMatching(/NoSuchAccessKey/)]);
    const last = await keys(['delete', ACCESS_KEY]);
    expect([last.code, last.stderr]).toEqual([1, expect.stringMatching(/LastAdmin/)]);
    const help = await keys(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('strata keys');
  });
});

describe('through the running server', () => {
  it('finds the server from the lock holder and acts through its admin API', async () => {
    const s = await startTestServer({ dataDir });
    try {
      expect(JSON.parse(readFileSync(join(dataDir, 'strata-server.json'), 'utf8')).url).toBe(s.url);
      const created = await keysJson<Created>(['create', '--name', 'dave', '--admin']);
      expect(created.key.admin).toBe(true);
      const dave = createS3Client(s.url, wire, { credentials: { accessKeyId: created.key.id, secretAccessKey: created.secretAccessKey } });
      try {
        // Effective at once: an admin key sees every bucket.
        expect(((await dave.send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name)).toContain('cli-data');
        await keysJson(['revoke', created.key.id, '--admin']);
        expect(((await dave.send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name)).toEqual([]);
        const del = await keysJson<{ deleted: string }>(['delete', created.key.id]);
        expect(del.deleted).toBe(created.key.id);
        const gone = await failure(dave.send(new ListBucketsCommand({})));
        expect(gone.name).toBe('InvalidAccessKeyId');
      } finally {
        dave.destroy();
      }
      // A non-admin key is refused by the server (exit 2: cannot act), naming the refusal.
      const carolId = (await keysJson<{ keys: KeyJson[] }>(['list'])).keys.find((k) => !k.admin)!.id;
      const refused = await keys(['list'], { STRATA_ACCESS_KEY: carolId, STRATA_SECRET_KEY: 'not-the-secret-000000' });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/SignatureDoesNotMatch|AccessDenied/);
      // An explicit --endpoint works the same.
      const viaFlag = await run(process.execPath, [CLI, 'keys', 'list', '--json', '--endpoint', s.url], {
        env: clientEnv({ STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY }),
      });
      expect(viaFlag.code, viaFlag.stderr).toBe(0);
      expect((JSON.parse(viaFlag.stdout) as { keys: KeyJson[] }).keys.map((k) => k.id)).toContain(carolId);
    } finally {
      await s.stop();
    }
    expect(existsSync(join(dataDir, 'strata-server.json'))).toBe(false);
  });
});
