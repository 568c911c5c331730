/**
 * `strata gc` from the built CLI (dist/) on a stopped repository and through a running server,
 * the admin route behind it, the background schedule (--gc-interval) and the strata_gc_*
 * metrics. Proves that a dry run reports exactly what a pass then frees and changes no file;
 * that a pass frees what a deleted bucket held (with progress lines and the bytes freed) while
 * every remaining object reads back exactly through a real S3 client and `strata verify` stays
 * clean; that through the server the same pass runs via POST /_strata/admin/v1/gc, refused to
 * non-admin keys and for bad input; that the schedule runs passes by itself; and that bad usage
 * exits 2.
 */
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ACCESS_KEY, CLI, METRICS_AUTH, removeDataDir, SECRET_KEY, startTestServer } from './harness.js';
import { clientEnv, run } from './support/run-cli.js';
import { bytesOf, createS3Client, WireLog } from './support/sdk-v3-client.js';
import { adminRequest, AdminClientError } from '../../src/admin/client.js';
import { randomBytes } from '../support/random.js';

const wire = new WireLog();
const BOB = { accessKeyId: 'GCBOBKEY000000000002', secretAccessKey: 'bob-secret-0123456789-abcdefghijklmnopqr' };
let dataDir: string;
const kept = new Map<string, Uint8Array>();

function strata(args: string[]) {
  return run(process.execPath, [CLI, ...args, '--data', dataDir], { env: clientEnv({ STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY }) });
}

/** Every file under the data directory with its size (what a dry run must leave alone). */
function files(dir = dataDir, out = new Map<string, number>()): Map<string, number> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    if (s.isDirectory()) files(p, out);
    else if (!/strata-(server|credentials)/.test(name) && !name.endsWith('.lock')) out.set(p, s.size);
  }
  return out;
}

type Report = { dryRun: boolean; freedBlobs: number; freedBytes: number; unreachableBlobs: number; examinedBlobs: number; grace: string };

async function fill(url: string, bucket: string, n: number, keep: boolean): Promise<void> {
  const c = createS3Client(url, wire);
  await c.send(new CreateBucketCommand({ Bucket: bucket }));
  for (let i = 0; i < n; i++) {
    const body = randomBytes(i % 4 === 0 ? 700 * 1024 : 1000 + i, i + (keep ? 1 : 5000));
    await c.send(new PutObjectCommand({ Bucket: bucket, Key: `k${i}`, Body: body }));
    if (keep) kept.set(`${bucket}/k${i}`, body);
  }
  if (!keep) {
    for (let i = 0; i < n; i++) await c.send(new DeleteObjectCommand({ Bucket: bucket, Key: `k${i}` }));
    await c.send(new DeleteBucketCommand({ Bucket: bucket }));
  }
  c.destroy();
}

async function expectKept(url: string): Promise<void> {
  const c = createS3Client(url, wire);
  for (const [path, body] of kept) {
    const [bucket, key] = path.split('/') as [string, string];
    const got = await bytesOf((await c.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body);
    expect(Buffer.compare(Buffer.from(got), Buffer.from(body)), path).toBe(0);
  }
  c.destroy();
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strata-gc-cli-'));
  const s = await startTestServer({ dataDir, config: { credentials: [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, { ...BOB, admin: false }] } });
  await fill(s.url, 'gc-kept', 12, true);
  await fill(s.url, 'gc-gone', 12, false);
  await s.stop();
});
afterAll(() => removeDataDir(dataDir));

describe('strata gc', () => {
  it('on a stopped repository: a dry run changes nothing, a pass frees it with progress, verify stays clean', async () => {
    const before = files();
    const dry = await strata(['gc', '--dry-run', '--grace', '0', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const d = JSON.parse(dry.stdout) as Report;
    expect(d).toMatchObject({ dryRun: true, grace: '0s' });
    expect(d.unreachableBlobs).toBeGreaterThan(0);
    expect(files()).toEqual(before);

    const r = await strata(['gc', '--grace', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/gc: opened repository/);
    expect(r.stdout).toMatch(/^gc of repository .*, grace 0s, anchor at \d+\n/);
    const freed = /freed {8}(\d+) blobs, (\d+) bytes/.exec(r.stdout);
    expect(freed, r.stdout).not.toBeNull();
    expect(Number(freed![1])).toBeGreaterThanOrEqual(d.freedBlobs);
    // The deleted bucket held 3 carriers of 700 KiB: at least that much came back.
    expect(Number(freed![2])).toBeGreaterThan(3 * 700 * 1024);
    expect(r.stdout).toMatch(/examined {5}\d+ blobs, .* blobs\/s/);
    const v = await run(process.execPath, [CLI, 'verify', dataDir], { env: clientEnv({}) });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it('through a running server: the admin route, refusals, the schedule and the metrics', async () => {
    const s = await startTestServer({
      dataDir,
      config: { credentials: [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, { ...BOB, admin: false }], gcInterval: 300 },
    });
    try {
      await expectKept(s.url);
      await fill(s.url, 'gc-gone2', 4, false);
      const r = await strata(['gc', '--grace', '0', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/acting through http/);
      expect((JSON.parse(r.stdout) as Report).dryRun).toBe(false);
      const admin = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
      const dry = (await adminRequest(admin, 'POST', ['gc'], { dryRun: true, grace: '0' })) as Report;
      expect(dry.dryRun).toBe(true);
      await expect(adminRequest({ ...admin, credentials: BOB }, 'POST', ['gc'], {})).rejects.toMatchObject({ status: 403 });
      for (const bad of [{ grace: 'soon' }, { cleanBelow: 2 }, { dryRun: 'yes' }, { bogus: 1 }]) {
        const err = await adminRequest(admin, 'POST', ['gc'], bad).catch((e: unknown) => e);
        expect(err, JSON.stringify(bad)).toBeInstanceOf(AdminClientError);
        expect((err as AdminClientError).status, JSON.stringify(bad)).toBe(400);
      }
      // The schedule (every 300 ms here) runs passes by itself; the metrics count them.
      await new Promise((res) => setTimeout(res, 1500));
      const m = await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
      const passes = Number(/^strata_gc_passes_total (\d+)$/m.exec(m)?.[1]);
      expect(passes).toBeGreaterThanOrEqual(3);
      expect(Number(/^strata_gc_freed_bytes_total (\d+)$/m.exec(m)?.[1])).toBeGreaterThan(0);
      expect(m).toMatch(/^strata_gc_last_pass_ms \d+$/m);
      expect(s.logs.some((l) => l.includes('"msg":"gc.pass"'))).toBe(true);
      await expectKept(s.url);
    } finally {
      await s.stop();
    }
    const v = await run(process.execPath, [CLI, 'verify', dataDir], { env: clientEnv({}) });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it('answers bad usage with 2', async () => {
    for (const args of [['gc', '--grace', 'soon'], ['gc', '--clean-below', '2'], ['gc', '--clean-below', 'x'], ['gc', 'extra'], ['gc', '--bogus']]) {
      const r = await strata(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
    }
  });
});
