/**
 * restic on an Object Lock bucket: the ransomware-proof backup S3 Object Lock exists for.
 *
 * The bucket is created with Object Lock and a default COMPLIANCE retention of one day;
 * restic runs with a key that holds only read and write on it (what a backup host has).
 * restic needs nothing special: its PUTs carry Content-MD5 (required for locked bodies) and
 * its lock files are "deleted" with plain DELETEs, which in a locked bucket add delete markers.
 * Proves: `init`, `backup`, `check --read-data` and a byte-exact `restore` work there; every
 * object restic wrote carries the COMPLIANCE retention; then an attacker holding restic's key
 * tries to destroy the repository (DeleteObjects of every version with the bypass header,
 * delete markers on every key, the config overwritten with garbage): no version is removed,
 * and the bucket's owner brings the repository back by removing the markers and copying the
 * old config version over the garbage, after which `check --read-data` and `restore` pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  type ObjectVersion,
  type DeleteMarkerEntry,
  type S3Client,
} from '@aws-sdk/client-s3';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { clientEnv, mustRun, run } from './support/run-cli.js';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.js';
import { diffTrees, planTree, writeTree } from './support/tree.js';
import { createS3Client, WireLog } from './support/sdk-v3-client.js';
import { adminRequest } from '../../src/admin/client.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

const RESTIC = clientSuite(CLIENTS.restic);
const BUCKET = 'restic-locked';
const BACKUP_KEY = { accessKeyId: 'RESTICBACKUPKEY00001', secretAccessKey: 'restic-backup-secret-0123456789-abcdefgh' };

let s: TestServer;
let proxy: RecordingProxy;
let work: string;
let env: NodeJS.ProcessEnv;
let repo: string;
let owner: S3Client;
let attacker: S3Client;

const r = (...args: string[]) => mustRun(RESTIC.path!, ['-r', repo, ...args], { env, cwd: work, timeoutMs: 120_000 });

/** Every version and delete marker under the repository prefix. */
async function everything(): Promise<{ versions: ObjectVersion[]; markers: DeleteMarkerEntry[] }> {
  const versions: ObjectVersion[] = [];
  const markers: DeleteMarkerEntry[] = [];
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    const page = await owner.send(new ListObjectVersionsCommand({ Bucket: BUCKET, Prefix: 'repo/', KeyMarker: keyMarker, VersionIdMarker: versionIdMarker }));
    versions.push(...(page.Versions ?? []));
    markers.push(...(page.DeleteMarkers ?? []));
    if (!page.IsTruncated) return { versions, markers };
    keyMarker = page.NextKeyMarker;
    versionIdMarker = page.NextVersionIdMarker;
  }
}

beforeAll(async () => {
  if (!RESTIC.path) return;
  s = await startTestServer({ config: { credentials: [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, { ...BACKUP_KEY, admin: false }] } });
  proxy = await startRecordingProxy(s.url);
  const wire = new WireLog();
  owner = createS3Client(s.url, wire);
  attacker = createS3Client(s.url, wire, { credentials: BACKUP_KEY });
  await owner.send(new CreateBucketCommand({ Bucket: BUCKET, ObjectLockEnabledForBucket: true }));
  await owner.send(
    new PutObjectLockConfigurationCommand({ Bucket: BUCKET, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 1 } } } })
  );
  const api = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
  await adminRequest(api, 'POST', ['keys', BACKUP_KEY.accessKeyId, 'grant'], { bucket: BUCKET, read: true, write: true });
  work = mkdtempSync(join(tmpdir(), 'strata-restic-lock-'));
  writeTree(join(work, 'src'), planTree({ count: 300, seed: 31, sizes: [0, 17, 4096, 9000, 70_000, 300_001], dirs: ['a', 'b/c', 'd'] }));
  repo = `s3:${proxy.url}/${BUCKET}/repo`;
  env = clientEnv({
    HOME: work,
    RESTIC_PASSWORD: 'strata-restic-lock-password',
    RESTIC_CACHE_DIR: join(work, 'cache'),
    AWS_ACCESS_KEY_ID: BACKUP_KEY.accessKeyId,
    AWS_SECRET_ACCESS_KEY: BACKUP_KEY.secretAccessKey,
  });
}, 60_000);

afterAll(async () => {
  owner?.destroy();
  attacker?.destroy();
  await proxy?.close();
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

RESTIC.describe('restic on an Object Lock bucket', () => {
  it('init, backup and check --read-data work; every PUT carried Content-MD5; every object is COMPLIANCE-locked', async () => {
    await r('init');
    expect((await r('backup', 'src')).stdout).toMatch(/snapshot [0-9a-f]{8} saved/);
    expect((await r('check', '--read-data')).stdout).toContain('no errors were found');
    const puts = proxy.requests.filter((q) => q.method === 'PUT' && q.target.startsWith(`/${BUCKET}/repo/`));
    expect(puts.length).toBeGreaterThan(5);
    for (const p of puts) {
      expect(p.headers['content-md5'], p.target).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(p.status, p.target).toBe(200);
    }
    // restic removed its lock files: plain DELETEs, answered with delete markers.
    const unlocks = proxy.requests.filter((q) => q.method === 'DELETE' && q.target.startsWith(`/${BUCKET}/repo/locks/`));
    expect(unlocks.length).toBeGreaterThan(0);
    for (const d of unlocks) expect(d.status, d.target).toBe(204);
    const { versions } = await everything();
    for (const v of versions) {
      const h = await owner.send(new HeadObjectCommand({ Bucket: BUCKET, Key: v.Key!, VersionId: v.VersionId! }));
      expect(h.ObjectLockMode, v.Key).toBe('COMPLIANCE');
      expect(h.ObjectLockRetainUntilDate!.getTime(), v.Key).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    }
  }, 120_000);

  it('an attacker with the backup key removes nothing; the owner restores the repository and restic verifies it', async () => {
    const before = await everything();
    const data = before.versions.filter((v) => v.Key!.startsWith('repo/data/'));
    expect(data.length).toBeGreaterThan(0);
    // 1. Remove every version, asking for the bypass.
    const targets = before.versions.map((v) => ({ Key: v.Key!, VersionId: v.VersionId! }));
    for (let i = 0; i < targets.length; i += 1000) {
      const res = await attacker.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: targets.slice(i, i + 1000) }, BypassGovernanceRetention: true }));
      expect(res.Deleted ?? []).toEqual([]);
      expect((res.Errors ?? []).every((e) => e.Code === 'AccessDenied')).toBe(true);
    }
    // 2. Hide every key behind a delete marker, and 3. overwrite the config with garbage.
    for (const v of before.versions.filter((x) => x.IsLatest)) await attacker.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: v.Key! }));
    await attacker.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'repo/config', Body: 'encrypted by ransomware' }));
    const broken = await run(RESTIC.path!, ['-r', repo, 'snapshots'], { env, cwd: work });
    expect(broken.code).not.toBe(0);
    const after = await everything();
    // Every version restic wrote is still there.
    const ids = new Set(after.versions.map((v) => v.VersionId));
    for (const v of before.versions) expect(ids.has(v.VersionId), v.Key).toBe(true);

    // Recovery by the owner: the attacker's delete markers carry no lock and go (restic's own,
    // on its removed lock files, stay: a stale lock would otherwise come back); the old config
    // comes back as a new version (the garbage one is locked too, and stays in history).
    const restics = new Set(before.markers.map((m) => m.VersionId));
    const attackers = after.markers.filter((m) => !restics.has(m.VersionId));
    expect(attackers.length).toBe(before.versions.filter((x) => x.IsLatest).length);
    for (const m of attackers) await owner.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: m.Key!, VersionId: m.VersionId! }));
    const config = before.versions.find((v) => v.Key === 'repo/config' && v.IsLatest)!;
    await owner.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'repo/config', CopySource: `${BUCKET}/repo/config?versionId=${config.VersionId}` }));
    expect((await r('check', '--read-data')).stdout).toContain('no errors were found');
    await r('restore', 'latest', '--target', join(work, 'restored'));
    expect(diffTrees(join(work, 'src'), join(work, 'restored', 'src'))).toEqual([]);
    expect(s.logs.filter((l) => /"status":5\d\d/.test(l))).toEqual([]);
  }, 180_000);
});
