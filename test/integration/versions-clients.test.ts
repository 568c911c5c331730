/**
 * S3 versioning with real clients against a real Strata server, as operators and tools use it:
 *
 *   - the aws CLI (v1): put-bucket-versioning, put-object versions, `s3api list-object-versions`
 *     in pages of 2, `get-object --version-id`, delete markers (404 latest, 405 by id), undelete
 *     by deleting the marker, permanent delete of the latest version;
 *   - boto3 (versions_boto3.py): versions including a multipart one, the list_object_versions
 *     paginator, reads by id, restore by copying an old version over the key, undelete, and a
 *     strict version-by-version cleanup (DeleteObjects with VersionId) before DeleteBucket;
 *   - rclone: `backend versioning`, `lsf --s3-versions` (old versions listed under
 *     timestamped names and readable through them), `--s3-version-at` (the tree as of a time),
 *     and `backend cleanup-hidden` (removing every old version).
 *
 * Every body read back is compared with what was written.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { botocoreEnv } from './support/aws-client-env.js';
import { clientEnv, mustRun, run, type CliResult } from './support/run-cli.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

const AWS_CLI = clientSuite(CLIENTS.aws);
const BOTO3 = clientSuite(CLIENTS.boto3);
const RCLONE = clientSuite(CLIENTS.rclone);
const BOTO3_SCRIPT = fileURLToPath(new URL('./versions_boto3.py', import.meta.url));

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');

let s: TestServer;
let work: string;
beforeAll(async () => {
  s = await startTestServer();
  work = mkdtempSync(join(tmpdir(), 'strata-versions-clients-'));
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** No request of the run answered 5xx. */
function noServerErrors(): void {
  expect(s.logs.filter((l) => /"status":5\d\d/.test(l))).toEqual([]);
}

AWS_CLI.describe('aws CLI: s3api versioning', () => {
  const bucket = 'awscli-versions';
  const key = 'logs/app.log';
  const aws = (args: string[]): Promise<CliResult> => run(AWS_CLI.path, [...args, '--endpoint-url', s.url], { env: botocoreEnv(), cwd: work });
  const json = async <T>(args: string[]): Promise<T> => {
    const r = await mustRun(AWS_CLI.path, [...args, '--endpoint-url', s.url, '--output', 'json'], { env: botocoreEnv(), cwd: work });
    return (r.stdout.trim() ? JSON.parse(r.stdout) : {}) as T;
  };
  type Listing = {
    Versions?: { Key: string; VersionId: string; IsLatest: boolean; ETag: string; Size: number }[];
    DeleteMarkers?: { Key: string; VersionId: string; IsLatest: boolean }[];
  };
  const bodies = ['first line\n', 'first line\nsecond line\n', 'rotated\n'];

  it('lists versions and markers, reads by --version-id, undeletes and deletes a version for good', async () => {
    await json(['s3api', 'create-bucket', '--bucket', bucket]);
    await json(['s3api', 'put-bucket-versioning', '--bucket', bucket, '--versioning-configuration', 'Status=Enabled']);

    const ids: string[] = [];
    for (const [i, b] of bodies.entries()) {
      const file = join(work, `aws-body-${i}`);
      writeFileSync(file, b);
      const r = await json<{ VersionId: string; ETag: string }>(['s3api', 'put-object', '--bucket', bucket, '--key', key, '--body', file]);
      expect(r.ETag).toBe(`"${md5(b)}"`);
      ids.push(r.VersionId);
    }
    expect(new Set(ids).size).toBe(3);
    const del = await json<{ DeleteMarker: boolean; VersionId: string }>(['s3api', 'delete-object', '--bucket', bucket, '--key', key]);
    expect(del.DeleteMarker).toBe(true);

    // Pages of 2: the CLI follows NextKeyMarker/NextVersionIdMarker and joins them.
    const listed = await json<Listing>(['s3api', 'list-object-versions', '--bucket', bucket, '--page-size', '2']);
    expect(listed.Versions?.map((v) => [v.VersionId, v.IsLatest, v.ETag, v.Size])).toEqual(
      [2, 1, 0].map((i) => [ids[i], false, `"${md5(bodies[i]!)}"`, bodies[i]!.length])
    );
    expect(listed.DeleteMarkers?.map((m) => [m.Key, m.VersionId, m.IsLatest])).toEqual([[key, del.VersionId, true]]);
    const s3 = s.logs.filter((l) => l.includes('"op":"ListObjectVersions"'));
    expect(s3.length).toBeGreaterThanOrEqual(2);

    // The oldest version, by id (each aws run costs seconds: one read by id stands for all).
    const oldest = await json<{ VersionId: string }>(['s3api', 'get-object', '--bucket', bucket, '--key', key, '--version-id', ids[0]!, join(work, 'aws-oldest')]);
    expect(oldest.VersionId).toBe(ids[0]);
    expect(readFileSync(join(work, 'aws-oldest'), 'utf8')).toBe(bodies[0]);
    const latest = await aws(['s3api', 'get-object', '--bucket', bucket, '--key', key, join(work, 'aws-latest')]);
    expect(latest.code).not.toBe(0);
    expect(latest.stderr).toContain('NoSuchKey');
    const marker = await aws(['s3api', 'head-object', '--bucket', bucket, '--key', key, '--version-id', del.VersionId]);
    expect(marker.code).not.toBe(0);
    expect(marker.stderr).toMatch(/405|Method Not Allowed/);

    // Undelete: remove the marker (the newest version is the latest again).
    const undo = await json<{ DeleteMarker: boolean; VersionId: string }>(['s3api', 'delete-object', '--bucket', bucket, '--key', key, '--version-id', del.VersionId]);
    expect(undo).toMatchObject({ DeleteMarker: true, VersionId: del.VersionId });
    // Permanently delete the newest version: the one before it is the latest.
    await json(['s3api', 'delete-object', '--bucket', bucket, '--key', key, '--version-id', ids[2]!]);
    await json(['s3api', 'get-object', '--bucket', bucket, '--key', key, join(work, 'aws-previous')]);
    expect(readFileSync(join(work, 'aws-previous'), 'utf8')).toBe(bodies[1]);
    const after = await json<Listing>(['s3api', 'list-object-versions', '--bucket', bucket]);
    expect(after.Versions?.map((v) => [v.VersionId, v.IsLatest])).toEqual([
      [ids[1], true],
      [ids[0], false],
    ]);
    expect(after.DeleteMarkers ?? []).toEqual([]);
    noServerErrors();
  });
});

interface BotoVersion {
  kind: 'version' | 'marker';
  key: string;
  id: string;
  latest: boolean;
  etag?: string;
  size?: number;
}
interface BotoFailure {
  code: string | null;
  status: number | null;
  delete_marker: string | null;
}
interface BotoObserved {
  versioning_before: string | null;
  versioning_after: string;
  ids: string[];
  bodies_md5: string[];
  other: { id: string; marker: boolean; marker_id: string };
  get_deleted: BotoFailure;
  get_marker: BotoFailure;
  listing: BotoVersion[];
  pages: number;
  reads: string[];
  latest: string;
  restore: { id: string; source: string };
  restored: string;
  undelete: { marker: boolean; id: string };
  undeleted: string;
  listing_after: BotoVersion[];
  cleanup_deleted: number;
  cleanup_errors?: unknown[];
  left: BotoVersion[];
  bucket_gone: BotoFailure;
}

BOTO3.describe('boto3: versioned backup, restore and strict cleanup', () => {
  it('lists with the paginator, reads every version, restores, undeletes, and empties the bucket version by version', async () => {
    const cfg = JSON.stringify({ endpoint: s.url, bucket: 'boto3-versions' });
    const r = await mustRun(BOTO3.path, [BOTO3_SCRIPT, cfg], { env: botocoreEnv(), timeoutMs: 120_000 });
    const o = JSON.parse(r.stdout) as BotoObserved;
    expect(o.versioning_before).toBeNull();
    expect(o.versioning_after).toBe('Enabled');
    expect(new Set(o.ids).size).toBe(3);
    expect(o.other.marker).toBe(true);
    expect(o.get_deleted).toEqual({ code: 'NoSuchKey', status: 404, delete_marker: 'true' });
    expect(o.get_marker).toMatchObject({ code: 'MethodNotAllowed', status: 405, delete_marker: 'true' });

    // Six entries in pages of 2 (the paginator followed the markers).
    expect(o.pages).toBe(3);
    const key = 'db/backup.bin';
    expect(o.listing.filter((v) => v.key === key).map((v) => [v.id, v.latest])).toEqual([
      [o.ids[2], true],
      [o.ids[1], false],
      [o.ids[0], false],
    ]);
    expect(o.listing.filter((v) => v.key === 'db/other.txt').map((v) => [v.kind, v.id, v.latest]).sort()).toEqual(
      [
        ['marker', o.other.marker_id, true],
        ['version', o.other.id, false],
      ].sort()
    );
    // The multipart version lists a multipart ETag.
    expect(o.listing.find((v) => v.id === o.ids[2])?.etag).toMatch(/^"[0-9a-f]{32}-2"$/);
    expect(o.reads).toEqual(o.bodies_md5);
    expect(o.latest).toBe(o.bodies_md5[2]);

    expect(o.restore.source).toBe(o.ids[0]);
    expect(o.ids).not.toContain(o.restore.id);
    expect(o.restored).toBe(o.bodies_md5[0]);
    expect(o.undelete).toEqual({ marker: true, id: o.other.marker_id });
    expect(o.undeleted).toBe('other\n');
    expect(o.listing_after.filter((v) => v.key === key).map((v) => v.id)).toEqual([o.restore.id, ...[...o.ids].reverse()]);
    expect(o.listing_after.filter((v) => v.kind === 'marker')).toEqual([]);

    // Strict cleanup: 4 versions of the key and 1 of the other; nothing left; bucket deleted.
    expect(o.cleanup_errors).toBeUndefined();
    expect(o.cleanup_deleted).toBe(5);
    expect(o.left).toEqual([]);
    expect(o.bucket_gone.status).toBe(404);
    noServerErrors();
  });
});

RCLONE.describe('rclone: --s3-versions, --s3-version-at and cleanup-hidden', () => {
  const bucket = 'rclone-versions';
  let env: NodeJS.ProcessEnv;
  const rc = (args: string[]) => mustRun(RCLONE.path, [...args, '--retries', '1', '--low-level-retries', '1'], { env, cwd: work });
  const lsf = async (args: string[]) => (await rc(['lsf', '-R', ...args])).stdout.split('\n').filter(Boolean).sort();
  /** rclone names an old version `<name>-vYYYY-MM-DD-HHMMSS-mmm<.ext>`. */
  const VERSIONED = /^dir\/notes-v\d{4}-\d\d-\d\d-\d{6}-\d{3}\.txt$/;

  beforeAll(() => {
    env = clientEnv({
      RCLONE_CONFIG: join(work, 'rclone.conf'),
      RCLONE_CONFIG_STRATA_TYPE: 's3',
      RCLONE_CONFIG_STRATA_PROVIDER: 'Other',
      RCLONE_CONFIG_STRATA_ENDPOINT: s.url,
      RCLONE_CONFIG_STRATA_ACCESS_KEY_ID: ACCESS_KEY,
      RCLONE_CONFIG_STRATA_SECRET_ACCESS_KEY: SECRET_KEY,
      RCLONE_CONFIG_STRATA_FORCE_PATH_STYLE: 'true',
    });
  });

  it('lists and reads old versions, shows the tree as of a time, and cleans up hidden versions', async () => {
    await rc(['mkdir', `strata:${bucket}`]);
    expect((await rc(['backend', 'versioning', `strata:${bucket}`, 'Enabled'])).stdout.trim()).toBe('Enabled');
    const bodies = ['v1\n', 'version two\n', 'version three, the last\n'];
    const file = join(work, 'notes.txt');
    let between = '';
    for (const [i, b] of bodies.entries()) {
      writeFileSync(file, b);
      await rc(['copyto', file, `strata:${bucket}/dir/notes.txt`]);
      if (i === 0) {
        // A moment after the first version and before the second (server times are ms).
        await sleep(1100);
        between = new Date().toISOString();
        await sleep(1100);
      }
    }
    await rc(['copyto', file, `strata:${bucket}/dir/keep.txt`]);

    expect(await lsf([`strata:${bucket}`])).toEqual(['dir/', 'dir/keep.txt', 'dir/notes.txt']);
    const all = await lsf(['--s3-versions', `strata:${bucket}`]);
    const old = all.filter((n) => VERSIONED.test(n));
    expect(old.length).toBe(2);
    expect(all.filter((n) => !VERSIONED.test(n))).toEqual(['dir/', 'dir/keep.txt', 'dir/notes.txt']);
    // Old versions download under their timestamped names (GET ?versionId= underneath).
    // (rclone 1.60 prints nothing for `cat --s3-versions` of one versioned file name given as
    // the root, after listing the right versions; a directory root with a filter reads it.)
    const restore = join(work, 'rclone-restore');
    await rc(['copy', '--s3-versions', `strata:${bucket}/dir`, restore]);
    expect(readFileSync(join(restore, 'notes.txt'), 'utf8')).toBe(bodies[2]);
    expect(old.map((n) => readFileSync(join(restore, n.slice('dir/'.length)), 'utf8')).sort()).toEqual([bodies[0], bodies[1]].sort());
    expect((await rc(['cat', '--s3-versions', `strata:${bucket}/dir`, '--include', 'notes-v*'])).stdout.length).toBe(bodies[0]!.length + bodies[1]!.length);

    // As of a time between the first and second versions: only the first existed.
    expect(await lsf(['--s3-version-at', between, `strata:${bucket}`])).toEqual(['dir/', 'dir/notes.txt']);
    expect((await rc(['cat', '--s3-version-at', between, `strata:${bucket}/dir`])).stdout).toBe(bodies[0]);

    // A delete leaves a marker: the file is gone from the listing, its versions are not.
    await rc(['deletefile', `strata:${bucket}/dir/notes.txt`]);
    expect(await lsf([`strata:${bucket}`])).toEqual(['dir/', 'dir/keep.txt']);
    expect((await lsf(['--s3-versions', `strata:${bucket}`])).filter((n) => VERSIONED.test(n)).length).toBe(3);

    // cleanup-hidden removes every old version (and the marker): only current files remain.
    await rc(['backend', 'cleanup-hidden', `strata:${bucket}`]);
    expect(await lsf(['--s3-versions', `strata:${bucket}`])).toEqual(['dir/', 'dir/keep.txt']);
    const versions = await s.server!.store.listVersions(bucket);
    expect(versions.versions.map((v) => [v.key, v.isLatest, v.version.deleteMarker])).toEqual([['dir/keep.txt', true, false]]);
    noServerErrors();
  });
});
