/**
 * rclone (Debian's package, provider "Other", path style, configured only through
 * RCLONE_CONFIG_STRATA_* variables) against a real Strata server: copy of a seeded tree of
 * ~300 files (single PUTs with Content-MD5 + UNSIGNED-PAYLOAD, and multipart uploads forced
 * by a 5 MiB upload cutoff), `check --checksum` (clean, and catching corrupted files),
 * the exact `lsf -R` listing, a byte-compared download, `delete` with a filter and `purge`.
 *
 * rclone is run with --retries 1 --low-level-retries 1 so a server error fails the step
 * instead of being retried away.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { clientEnv, mustRun, run } from './support/run-cli.js';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.js';
import { contentOf, diffTrees, planTree, writeTree, type TreeFile } from './support/tree.js';
import { expectBytes } from '../support/bytes.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

const RCLONE = clientSuite(CLIENTS.rclone);
const MiB = 1024 * 1024;
const BUCKET = 'rclone-bucket';
/** Awkward key characters rclone must encode and Strata must canonicalise the same way. */
const ODD_DIR = 'odd names/a b+c=d&e;f,g@h ü~';
/** Files at or above rclone's upload cutoff go multipart in chunks of the same size. */
const CUTOFF_FLAGS = ['--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M'];
const STRICT_FLAGS = [
  '--retries',
  '1',
  '--low-level-retries',
  '1',
  '--transfers',
  '4',
  '--checkers',
  '8',
];

/** Multipart files: exactly the cutoff (1 part), 6 MiB+ (2 parts), 13 MiB+ (3 parts). */
const LARGE: TreeFile[] = [
  { path: 'large/exact-5MiB.bin', size: 5 * MiB, seed: 501 },
  { path: 'large/six.bin', size: 6 * MiB + 123, seed: 502 },
  { path: 'large/thirteen.bin', size: 13 * MiB + 7, seed: 503 },
];
const FILES: TreeFile[] = [
  ...planTree({
    count: 300,
    seed: 17,
    sizes: [0, 1, 100, 4095, 4096, 65_537, 300_001],
    dirs: ['', 'a', 'a/b', 'a/b/c', 'docs', ODD_DIR],
  }),
  ...LARGE,
  { path: '%41(x)/#hash?q*.txt', size: 33, seed: 504, text: true },
];

let s: TestServer;
let proxy: RecordingProxy;
let work: string;
let src: string;
let rclone: string;
let env: NodeJS.ProcessEnv;

const rc = (args: string[]) => mustRun(rclone, [...args, ...STRICT_FLAGS], { env, cwd: work });

/** What `rclone lsf -R` prints for `files`: every file and every implied directory (with '/'). */
function expectedListing(files: readonly TreeFile[]): string[] {
  const out = new Set<string>();
  for (const f of files) {
    out.add(f.path);
    const parts = f.path.split('/');
    for (let i = 1; i < parts.length; i++) out.add(`${parts.slice(0, i).join('/')}/`);
  }
  return [...out].sort();
}

const lines = (text: string) => text.split('\n').filter(Boolean).sort();
const opsOf = (op: string) =>
  s.logs.map((l) => JSON.parse(l) as { op?: string; status?: number }).filter((l) => l.op === op);

beforeAll(async () => {
  rclone = RCLONE.path;
  s = await startTestServer();
  proxy = await startRecordingProxy(s.url);
  work = mkdtempSync(join(tmpdir(), 'strata-rclone-'));
  src = join(work, 'src');
  writeTree(src, FILES);
  env = clientEnv({
    RCLONE_CONFIG: join(work, 'rclone.conf'), // absent: only the variables below configure
    RCLONE_CONFIG_STRATA_TYPE: 's3',
    RCLONE_CONFIG_STRATA_PROVIDER: 'Other',
    RCLONE_CONFIG_STRATA_ENDPOINT: proxy.url,
    RCLONE_CONFIG_STRATA_ACCESS_KEY_ID: ACCESS_KEY,
    RCLONE_CONFIG_STRATA_SECRET_ACCESS_KEY: SECRET_KEY,
    RCLONE_CONFIG_STRATA_FORCE_PATH_STYLE: 'true',
  });
});

afterAll(async () => {
  await proxy?.close();
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

RCLONE.describe('rclone against Strata', () => {
  it('copies a ~300-file tree, the large files as multipart uploads', async () => {
    await rc(['copy', src, `strata:${BUCKET}/tree`, ...CUTOFF_FLAGS]);

    const puts = proxy.requests.filter(
      (r) => r.method === 'PUT' && r.target.includes('/tree/') && !r.target.includes('uploadId=')
    );
    expect(puts.length).toBe(FILES.length - LARGE.length);
    // rclone 1.60 (aws-sdk-go v1) sends single PUTs unsigned with a Content-MD5 the server checks.
    for (const p of puts) {
      expect(p.headers['x-amz-content-sha256'], p.target).toBe('UNSIGNED-PAYLOAD');
      expect(p.headers['content-md5'], p.target).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(p.status, p.target).toBe(200);
    }
    expect(opsOf('CreateMultipartUpload').map((l) => l.status)).toEqual([200, 200, 200]);
    expect(opsOf('UploadPart').length).toBe(1 + 2 + 3);
    expect(opsOf('CompleteMultipartUpload').map((l) => l.status)).toEqual([200, 200, 200]);
    expect(s.logs.filter((l) => /"status":5\d\d/.test(l))).toEqual([]);
  });

  it('check --checksum finds 0 differences, and finds corrupted files', async () => {
    const clean = await rc(['check', '--checksum', src, `strata:${BUCKET}/tree`]);
    expect(clean.stderr).toContain('0 differences found');
    expect(clean.stderr).toContain(`${FILES.length} matching files`);
    expect(clean.stderr).not.toMatch(/could not be checked|hash.*differ/i);

    // Same sizes, one flipped byte: a single-part file (ETag = MD5) and a multipart one
    // (rclone compares the whole-file MD5 it stored in X-Amz-Meta-Md5chksum).
    const victims = [FILES.find((f) => f.size === 300_001)!, LARGE[2]!];
    const saved = victims.map((f) => readFileSync(join(src, f.path)));
    try {
      victims.forEach((f, i) => {
        const b = Buffer.from(saved[i]!);
        b[b.length >> 1] ^= 0x40;
        writeFileSync(join(src, f.path), b);
      });
      const dirty = await run(
        rclone,
        ['check', '--checksum', src, `strata:${BUCKET}/tree`, ...STRICT_FLAGS],
        { env }
      );
      expect(dirty.code).not.toBe(0);
      expect(dirty.stderr).toContain('2 differences found');
      for (const f of victims) expect(dirty.stderr).toContain(f.path);
    } finally {
      victims.forEach((f, i) => writeFileSync(join(src, f.path), saved[i]!));
    }
  });

  it('a second copy uploads nothing: sizes, mtimes and MD5s read back match', async () => {
    const writes = () => opsOf('PutObject').length + opsOf('CreateMultipartUpload').length;
    const before = writes();
    await rc(['copy', src, `strata:${BUCKET}/tree`, ...CUTOFF_FLAGS]);
    expect(writes()).toBe(before);
  });

  it('copies server-side (UploadPartCopy above a 5 MiB copy cutoff) keeping the MD5s', async () => {
    await rc(['copy', `strata:${BUCKET}/tree`, `strata:${BUCKET}/copy`, '--s3-copy-cutoff', '5M']);
    expect(opsOf('CopyObject').length).toBeGreaterThan(FILES.length - LARGE.length - 1);
    // six.bin and thirteen.bin are copied in 5 MiB part copies (2 + 3).
    expect(opsOf('UploadPartCopy').length).toBeGreaterThanOrEqual(5);
    expect(opsOf('UploadPartCopy').every((l) => l.status === 200)).toBe(true);
    const check = await rc(['check', '--checksum', src, `strata:${BUCKET}/copy`]);
    expect(check.stderr).toContain('0 differences found');
    expect(check.stderr).toContain(`${FILES.length} matching files`);
    await rc(['purge', `strata:${BUCKET}/copy`]);
  });

  it('lsf -R lists exactly the uploaded files and their directories', async () => {
    const r = await rc(['lsf', '-R', `strata:${BUCKET}/tree`]);
    expect(lines(r.stdout)).toEqual(expectedListing(FILES));
  });

  it('downloads the tree byte-identical', async () => {
    const dst = join(work, 'download');
    await rc(['copy', `strata:${BUCKET}/tree`, dst]);
    expect(diffTrees(src, dst)).toEqual([]);
    // A ranged read across the first part boundary of a multipart object.
    const big = LARGE[2]!;
    const from = 5 * MiB - 100;
    const cat = await rc([
      'cat',
      '--offset',
      String(from),
      '--count',
      '300',
      `strata:${BUCKET}/tree/${big.path}`,
    ]);
    expectBytes(cat.stdoutBytes, contentOf(big).subarray(from, from + 300), 'rclone cat range');
  });

  it('delete removes only the filtered files; purge removes the rest and the bucket', async () => {
    await rc(['delete', `strata:${BUCKET}/tree`, '--include', '/a/**']);
    const left = FILES.filter((f) => !f.path.startsWith('a/'));
    expect(left.length).toBeLessThan(FILES.length);
    expect(lines((await rc(['lsf', '-R', `strata:${BUCKET}/tree`])).stdout)).toEqual(
      expectedListing(left)
    );

    const purge = await rc(['purge', `strata:${BUCKET}`]);
    // rclone reads the bucket's versioning status first (GetBucketVersioning: never
    // versioned); the purge logs no error at all.
    expect(purge.stderr.split('\n').filter((l) => l.includes('ERROR'))).toEqual([]);
    const versioning = opsOf('GetBucketVersioning').map((l) => l.status);
    expect(versioning.length).toBeGreaterThan(0);
    expect(versioning.every((st) => st === 200)).toBe(true);
    expect((await rc(['lsd', 'strata:'])).stdout).not.toContain(BUCKET);
    expect(opsOf('DeleteBucket').map((l) => l.status)).toEqual([204]);
  });
});
