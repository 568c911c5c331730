/**
 * restic (Debian's package; minio-go underneath) against a real Strata server: `init`,
 * `backup` of a seeded tree of 3000 files (random and compressible content, duplicates,
 * sizes from 0 B to 3 MiB), `check --read-data`, `restore` byte-compared file by file, a
 * second backup of a changed tree, `forget --keep-last 1 --prune`, `check --read-data`
 * again and a restore of the surviving snapshot.
 *
 * restic uploads with signed aws-chunked bodies (STREAMING-AWS4-HMAC-SHA256-PAYLOAD, no
 * Content-Encoding) plus Content-MD5, reads packs with ranged GETs and finds "missing"
 * through the NoSuchKey code; a recording proxy in front of the server proves those paths
 * were taken.
 */
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { clientEnv, mustRun } from './support/run-cli.js';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.js';
import { diffTrees, planTree, writeTree, type TreeFile } from './support/tree.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

const RESTIC = clientSuite(CLIENTS.restic);
const MiB = 1024 * 1024;
const BUCKET = 'restic-bucket';
const DIRS = Array.from({ length: 40 }, (_, i) => `d${i % 8}/e${i}`);
/** 3000 files; a few of 3 MiB so that restic's content-defined chunker splits them. */
const FILES: TreeFile[] = planTree({
  count: 3000,
  seed: 23,
  sizes: [0, 1, 17, 512, 4095, 4096, 9000, 70_000, 300_001, 1, 17, 512, 4096, 9000],
  dirs: DIRS,
}).map((f, i) => (i % 1000 === 999 ? { ...f, size: 3 * MiB + i, text: false } : f));

let s: TestServer;
let proxy: RecordingProxy;
let work: string;
let restic: string;
let env: NodeJS.ProcessEnv;
let repo: string;

const r = (...args: string[]) => mustRun(restic, ['-r', repo, ...args], { env, cwd: work });

async function restoreAndCompare(into: string): Promise<void> {
  await r('restore', 'latest', '--target', join(work, into));
  // restic keeps the backed-up directory's name under the target.
  expect(diffTrees(join(work, 'src'), join(work, into, 'src'))).toEqual([]);
}

const snapshotIds = async () =>
  (JSON.parse((await r('snapshots', '--json')).stdout) as { short_id: string }[]).map(
    (x) => x.short_id
  );

beforeAll(async () => {
  restic = RESTIC.path;
  s = await startTestServer();
  proxy = await startRecordingProxy(s.url);
  work = mkdtempSync(join(tmpdir(), 'strata-restic-'));
  writeTree(join(work, 'src'), FILES);
  repo = `s3:${proxy.url}/${BUCKET}/repo`;
  env = clientEnv({
    HOME: work,
    RESTIC_PASSWORD: 'strata-restic-test-password',
    RESTIC_CACHE_DIR: join(work, 'cache'),
    AWS_ACCESS_KEY_ID: ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: SECRET_KEY,
  });
});

afterAll(async () => {
  await proxy?.close();
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

RESTIC.describe('restic against Strata', () => {
  it('init creates the bucket and the repository', async () => {
    const out = await r('init');
    expect(out.stdout).toContain('created restic repository');
  });

  it('backs up 3000 files with signed aws-chunked uploads carrying Content-MD5', async () => {
    const out = await r('backup', 'src');
    expect(out.stdout).toMatch(/processed 3000 files/);
    expect(out.stdout).toMatch(/snapshot [0-9a-f]{8} saved/);
    const puts = proxy.requests.filter(
      (q) => q.method === 'PUT' && q.target.startsWith(`/${BUCKET}/repo/`)
    );
    expect(puts.length).toBeGreaterThan(5);
    for (const p of puts) {
      expect(p.headers['x-amz-content-sha256'], p.target).toBe(
        'STREAMING-AWS4-HMAC-SHA256-PAYLOAD'
      );
      expect(p.headers['x-amz-decoded-content-length'], p.target).toMatch(/^\d+$/);
      expect(p.headers['content-md5'], p.target).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(p.status, p.target).toBe(200);
    }
    expect(puts.some((p) => p.target.startsWith(`/${BUCKET}/repo/data/`))).toBe(true);
  });

  it('check --read-data reads every pack back and finds no errors', async () => {
    const out = await r('check', '--read-data');
    expect(out.stdout).toContain('no errors were found');
  });

  it('restores every file byte-identical', async () => {
    await restoreAndCompare('restore-1');
    // Partial pack reads are ranged GETs.
    expect(
      proxy.requests.some(
        (q) => q.method === 'GET' && q.headers.range !== undefined && q.status === 206
      )
    ).toBe(true);
  });

  it('forget --keep-last 1 --prune after a second backup keeps the newest snapshot whole', async () => {
    // Change the tree: rewrite every 9th file, delete every 13th, add 50.
    const changed = FILES.filter((_, i) => i % 9 === 4).map((f) => ({
      ...f,
      seed: f.seed + 7,
      size: f.size + 3,
    }));
    writeTree(join(work, 'src'), changed);
    for (const f of FILES.filter((_, i) => i % 13 === 6)) unlinkSync(join(work, 'src', f.path));
    writeTree(
      join(work, 'src'),
      planTree({ count: 50, seed: 29, sizes: [10, 5000, 80_000], dirs: ['new'] })
    );
    const before = await snapshotIds();
    await r('backup', 'src');
    expect((await snapshotIds()).length).toBe(before.length + 1);

    const out = await r('forget', '--keep-last', '1', '--prune');
    expect(out.stdout).toMatch(/remove 1 snapshots/);
    expect(
      proxy.requests.some(
        (q) =>
          q.method === 'DELETE' && q.target.startsWith(`/${BUCKET}/repo/data/`) && q.status === 204
      )
    ).toBe(true);
    const after = await snapshotIds();
    expect(after.length).toBe(1);
    expect(before).not.toContain(after[0]);

    expect((await r('check', '--read-data')).stdout).toContain('no errors were found');
    await restoreAndCompare('restore-2');
    expect(s.logs.filter((l) => /"status":5\d\d/.test(l))).toEqual([]);
  }, 90_000);
});
