/**
 * Proof with a real client: the `aws` CLI (v1, botocore) run as a child process against a
 * real Strata server, with its 2025+ defaults (CRC32 on uploads, checksum validation on
 * downloads) and with AWS_REQUEST_CHECKSUM_CALCULATION / AWS_RESPONSE_CHECKSUM_VALIDATION
 * set to when_required.
 *
 * What each command put on the wire is read from `--debug` (botocore logs every request's
 * headers) and from the server's request log; the results are checked byte for byte.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { botocoreEnv } from './support/aws-client-env.js';
import { mustRun, run, type CliResult } from './support/run-cli.js';
import { listFiles } from './support/tree.js';
import { etagOf, multipartEtag, seeded, splitParts } from './seeded.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

const MiB = 1024 * 1024;
/** aws-cli's default multipart_threshold and multipart_chunksize. */
const CLI_CHUNK = 8 * MiB;
const BIG = 20 * MiB;
const AWS_CLI = clientSuite(CLIENTS.aws);

let s: TestServer;
let work: string;
let bigFile: string;
let big: Buffer;

/** Runs `aws <args> --endpoint-url <server>`; never throws on a non-zero exit. */
function aws(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const opts = { env: botocoreEnv(env), cwd: work };
  return run(AWS_CLI.path, [...args, '--endpoint-url', s.url], opts);
}

/** Like {@link aws} but the command must succeed. */
function ok(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const opts = { env: botocoreEnv(env), cwd: work };
  return mustRun(AWS_CLI.path, [...args, '--endpoint-url', s.url], opts);
}

async function json<T = Record<string, unknown>>(
  args: string[],
  env: Record<string, string> = {}
): Promise<T> {
  return JSON.parse((await ok([...args, '--output', 'json'], env)).stdout) as T;
}

interface LogLine {
  msg: string;
  op?: string;
  bucket?: string;
  key?: string;
  status?: number;
  ms?: number;
  time?: string;
}

/** Server log lines logged since `mark` (an index into s.logs). */
function requestsSince(mark: number): LogLine[] {
  return s.logs
    .slice(mark)
    .map((l) => JSON.parse(l) as LogLine)
    .filter((l) => l.msg === 'request');
}

/** The botocore debug lines describing each sent request ("Sending http request: ..."). */
function sentRequests(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.includes('Sending http request:'));
}

beforeAll(async () => {
  s = await startTestServer();
  work = mkdtempSync(join(tmpdir(), 'strata-awscli-'));
  big = seeded(BIG, 2024);
  bigFile = join(work, 'big.bin');
  writeFileSync(bigFile, big);
});
afterAll(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
  await s?.stop();
});

AWS_CLI.describe('aws s3 (high-level commands)', () => {
  const bucket = 'cli-high';

  it('mb creates a bucket, a second mb by its owner succeeds as in us-east-1, ls lists it', async () => {
    const mb = await ok(['s3', 'mb', `s3://${bucket}`]);
    expect(mb.stdout).toContain(`make_bucket: ${bucket}`);
    const [again, ls] = await Promise.all([aws(['s3', 'mb', `s3://${bucket}`]), ok(['s3', 'ls'])]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`make_bucket: ${bucket}`);
    expect(ls.stdout).toMatch(
      new RegExp(`\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d ${bucket}$`, 'm')
    );
  });

  for (const mode of ['default', 'when_required'] as const) {
    const env: Record<string, string> =
      mode === 'when_required'
        ? {
            AWS_REQUEST_CHECKSUM_CALCULATION: 'when_required',
            AWS_RESPONSE_CHECKSUM_VALIDATION: 'when_required',
          }
        : {};

    it(`${mode}: cp of 20 MiB up (3 parts, concurrent) and down (ranged GETs with If-Match) is byte-exact`, async () => {
      const key = `${mode}/dir/big file ü.bin`;
      const mark = s.logs.length;
      const up = await ok(['s3', 'cp', bigFile, `s3://${bucket}/${key}`, '--debug'], env);
      const upReqs = sentRequests(up.stderr);
      const partReqs = upReqs.filter((l) => /partNumber=\d+/.test(l) && l.includes('method=PUT'));
      expect(partReqs).toHaveLength(3);
      if (mode === 'default')
        for (const p of partReqs) expect(p).toMatch(/'x-amz-checksum-crc32': b'[A-Za-z0-9+/=]+'/);
      else for (const p of partReqs) expect(p).not.toContain('x-amz-checksum-crc32');

      const log = requestsSince(mark);
      const parts = log.filter((l) => l.op === 'UploadPart' && l.key === key);
      expect(parts.map((l) => l.status)).toEqual([200, 200, 200]);
      expect(
        log.filter((l) => l.op === 'CompleteMultipartUpload' && l.key === key).map((l) => l.status)
      ).toEqual([200]);
      // The three parts were in flight at the same time (at least two overlapping).
      const spans = parts.map((l) => {
        const end = Date.parse(l.time!);
        return [end - l.ms!, end] as const;
      });
      const overlaps = spans.some((a, i) =>
        spans.some((b, j) => i !== j && a[0] < b[1] && b[0] < a[1])
      );
      expect(overlaps).toBe(true);

      const head = await json<{ ETag: string; ContentLength: number }>(
        ['s3api', 'head-object', '--bucket', bucket, '--key', key],
        env
      );
      expect(head.ETag).toBe(multipartEtag(splitParts(big, CLI_CHUNK)));
      expect(head.ContentLength).toBe(BIG);

      const dest = join(work, `down-${mode}.bin`);
      const markDown = s.logs.length;
      const down = await ok(['s3', 'cp', `s3://${bucket}/${key}`, dest, '--debug'], env);
      const gets = sentRequests(down.stderr).filter((l) => l.includes('method=GET'));
      expect(gets).toHaveLength(3);
      for (const g of gets) {
        expect(g).toMatch(/'Range': b'bytes=\d+-\d*'/);
        expect(g).toContain(`'If-Match': b'${head.ETag}'`);
      }
      const served = requestsSince(markDown).filter((l) => l.op === 'GetObject' && l.key === key);
      expect(served.map((l) => l.status)).toEqual([206, 206, 206]);
      const back = readFileSync(dest);
      expect(back.length).toBe(BIG);
      expect(back.equals(big)).toBe(true);
      rmSync(dest);
    });
  }

  it('cp s3 -> s3 of 20 MiB is a server-side multipart copy (UploadPartCopy with ranges)', async () => {
    const src = `default/dir/big file ü.bin`;
    const dst = `copies/big copy+1.bin`;
    const mark = s.logs.length;
    await ok(['s3', 'cp', '--no-progress', `s3://${bucket}/${src}`, `s3://${bucket}/${dst}`]);
    const log = requestsSince(mark);
    expect(log.filter((l) => l.op === 'UploadPartCopy').map((l) => l.status)).toEqual([
      200, 200, 200,
    ]);
    expect(log.some((l) => l.op === 'UploadPart' || l.op === 'GetObject')).toBe(false);
    // Bytes 8 MiB - 100 .. 8 MiB + 99 straddle the first two copied parts.
    const slice = join(work, 'copy-slice.bin');
    const first = CLI_CHUNK - 100;
    const [head, g] = await Promise.all([
      json<{ ETag: string; ContentLength: number }>([
        's3api',
        'head-object',
        '--bucket',
        bucket,
        '--key',
        dst,
      ]),
      json<{ ContentRange: string }>([
        's3api',
        'get-object',
        '--bucket',
        bucket,
        '--key',
        dst,
        '--range',
        `bytes=${first}-${first + 199}`,
        slice,
      ]),
    ]);
    expect(head.ETag).toBe(multipartEtag(splitParts(big, CLI_CHUNK)));
    expect(head.ContentLength).toBe(BIG);
    expect(g.ContentRange).toBe(`bytes ${first}-${first + 199}/${BIG}`);
    expect(readFileSync(slice).equals(big.subarray(first, first + 200))).toBe(true);
  });

  it('sync uploads a directory tree, a second sync uploads nothing, sync down restores it exactly', async () => {
    const src = join(work, 'tree');
    const files: Record<string, Buffer> = {
      'a.txt': Buffer.from('alpha\n'),
      empty: Buffer.alloc(0),
      'sub/b.bin': seeded(70_001, 1),
      'sub/deeper/c d+e.txt': Buffer.from('spaces and plus'),
      'sub/deeper/ünï.txt': Buffer.from('unicode'),
      'other/f.bin': seeded(1_000_000, 2),
    };
    for (const [p, b] of Object.entries(files)) {
      mkdirSync(join(src, p, '..'), { recursive: true });
      writeFileSync(join(src, p), b);
    }
    const up = await ok(['s3', 'sync', '--no-progress', src, `s3://${bucket}/tree/`]);
    expect(up.stdout.split('\n').filter((l) => l.startsWith('upload:'))).toHaveLength(
      Object.keys(files).length
    );
    // Sizes and LastModified from the listing match the local files: nothing to do.
    const again = await ok(['s3', 'sync', '--no-progress', src, `s3://${bucket}/tree/`]);
    expect(again.stdout.trim()).toBe('');

    const dst = join(work, 'tree-down');
    const down = await ok(['s3', 'sync', '--no-progress', `s3://${bucket}/tree/`, dst]);
    expect(down.stdout.split('\n').filter((l) => l.startsWith('download:'))).toHaveLength(
      Object.keys(files).length
    );
    expect(listFiles(dst)).toEqual(Object.keys(files).sort());
    for (const [p, b] of Object.entries(files))
      expect(readFileSync(join(dst, p)).equals(b)).toBe(true);

    // A changed file is the only one uploaded next time.
    writeFileSync(join(src, 'sub/b.bin'), seeded(70_002, 3));
    const changed = await ok(['s3', 'sync', '--no-progress', src, `s3://${bucket}/tree/`]);
    expect(changed.stdout.split('\n').filter((l) => l.startsWith('upload:'))).toEqual([
      expect.stringContaining('sub/b.bin'),
    ]);
  });

  it('ls shows prefixes and objects; ls --recursive lists every key with its size', async () => {
    const [top, rec] = await Promise.all([
      ok(['s3', 'ls', `s3://${bucket}/tree/`]),
      ok(['s3', 'ls', `s3://${bucket}/tree/`, '--recursive']),
    ]);
    const lines = top.stdout.split('\n').filter(Boolean);
    expect(lines.filter((l) => l.includes('PRE ')).map((l) => l.trim())).toEqual([
      'PRE other/',
      'PRE sub/',
    ]);
    expect(lines.some((l) => /\s6 a\.txt$/.test(l))).toBe(true);
    expect(lines.some((l) => /\s0 empty$/.test(l))).toBe(true);

    const entries = rec.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => /^\S+ \S+\s+(\d+) (.*)$/.exec(l)!)
      .map((m) => [m[2], Number(m[1])]);
    expect(new Map(entries as [string, number][])).toEqual(
      new Map([
        ['tree/a.txt', 6],
        ['tree/empty', 0],
        ['tree/other/f.bin', 1_000_000],
        ['tree/sub/b.bin', 70_002],
        ['tree/sub/deeper/c d+e.txt', 15],
        ['tree/sub/deeper/ünï.txt', 7],
      ])
    );
  });

  it('rm removes one key; rm --recursive removes a prefix; rb removes the emptied bucket', async () => {
    const one = await ok(['s3', 'rm', `s3://${bucket}/tree/a.txt`]);
    expect(one.stdout).toContain('delete: s3://cli-high/tree/a.txt');
    const all = await ok(['s3', 'rm', `s3://${bucket}/`, '--recursive']);
    // Five files left under tree/, the two 20 MiB uploads and the copy (rm prints progress
    // lines between them and has no --no-progress).
    expect(all.stdout.split(/[\r\n]+/).filter((l) => l.startsWith('delete:'))).toHaveLength(8);
    const left = await json<{ KeyCount: number }>([
      's3api',
      'list-objects-v2',
      '--bucket',
      bucket,
      '--no-paginate',
    ]);
    expect(left.KeyCount).toBe(0);
    await ok(['s3', 'rb', `s3://${bucket}`]);
    const gone = await aws(['s3', 'ls', `s3://${bucket}`]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('NoSuchBucket');
  });
});

AWS_CLI.describe('aws s3api', () => {
  const bucket = 'cli-api';
  beforeAll(async () => {
    await ok(['s3api', 'create-bucket', '--bucket', bucket]);
  });

  for (const mode of ['default', 'when_required'] as const) {
    const env: Record<string, string> =
      mode === 'when_required' ? { AWS_REQUEST_CHECKSUM_CALCULATION: 'when_required' } : {};

    it(`${mode}: put-object --checksum-algorithm, head-object --checksum-mode, get-object --range`, async () => {
      const body = seeded(300_000, 5);
      const file = join(work, `put-${mode}.bin`);
      writeFileSync(file, body);
      const key = `${mode}/obj ü+.bin`;
      const put = await json<Record<string, string>>(
        [
          's3api',
          'put-object',
          '--bucket',
          bucket,
          '--key',
          key,
          '--body',
          file,
          '--checksum-algorithm',
          'SHA256',
          '--content-type',
          'application/x-cli',
          '--metadata',
          'color=blue',
        ],
        env
      );
      expect(put.ETag).toBe(etagOf(body));
      const sha = createHash('sha256').update(body).digest('base64');
      // An explicit algorithm is honoured even under when_required.
      expect(put.ChecksumSHA256).toBe(sha);

      const part = join(work, `range-${mode}.bin`);
      const whole = join(work, `whole-${mode}.bin`);
      // Independent reads, run side by side (each aws start costs about a second here).
      const [head, g, gw] = await Promise.all([
        json<Record<string, unknown>>(
          ['s3api', 'head-object', '--bucket', bucket, '--key', key, '--checksum-mode', 'ENABLED'],
          env
        ),
        json<Record<string, unknown>>(
          [
            's3api',
            'get-object',
            '--bucket',
            bucket,
            '--key',
            key,
            '--range',
            'bytes=1000-1999',
            part,
          ],
          env
        ),
        json<Record<string, unknown>>(
          [
            's3api',
            'get-object',
            '--bucket',
            bucket,
            '--key',
            key,
            '--checksum-mode',
            'ENABLED',
            whole,
          ],
          env
        ),
      ]);
      expect(head).toMatchObject({
        ContentLength: body.length,
        ETag: etagOf(body),
        ContentType: 'application/x-cli',
        Metadata: { color: 'blue' },
        ChecksumSHA256: sha,
      });
      expect(g.ContentRange).toBe(`bytes 1000-1999/${body.length}`);
      // Never a whole-object checksum on a partial body.
      expect(g.ChecksumSHA256).toBeUndefined();
      expect(readFileSync(part).equals(body.subarray(1000, 2000))).toBe(true);
      expect(gw.ChecksumSHA256).toBe(sha);
      expect(readFileSync(whole).equals(body)).toBe(true);
    });
  }

  it('list-objects-v2 with prefix, delimiter, pagination; delete-objects', async () => {
    const keys = ['l/a', 'l/b c', 'l/d+e', 'l/sub/f', 'l/sub/g', 'l/ü'];
    const dir = join(work, 'listing');
    for (const k of keys) {
      mkdirSync(join(dir, k, '..'), { recursive: true });
      writeFileSync(join(dir, k), k);
    }
    // One process uploads them all (each aws start costs about a second here).
    await ok(['s3', 'cp', '--recursive', '--no-progress', join(dir, 'l'), `s3://${bucket}/l/`]);
    type Listing = { Contents: { Key: string }[]; CommonPrefixes: { Prefix: string }[] };
    const [listed, paged, v1] = await Promise.all([
      json<Listing>([
        's3api',
        'list-objects-v2',
        '--bucket',
        bucket,
        '--prefix',
        'l/',
        '--delimiter',
        '/',
      ]),
      // --page-size 2 makes the CLI follow continuation tokens / markers page by page.
      json<Listing>([
        's3api',
        'list-objects-v2',
        '--bucket',
        bucket,
        '--prefix',
        'l/',
        '--page-size',
        '2',
      ]),
      json<Listing>([
        's3api',
        'list-objects',
        '--bucket',
        bucket,
        '--prefix',
        'l/',
        '--page-size',
        '2',
      ]),
    ]);
    expect(listed.Contents.map((c) => c.Key)).toEqual(['l/a', 'l/b c', 'l/d+e', 'l/ü']);
    expect(listed.CommonPrefixes.map((p) => p.Prefix)).toEqual(['l/sub/']);
    expect(paged.Contents.map((c) => c.Key)).toEqual(keys);
    expect(v1.Contents.map((c) => c.Key)).toEqual(keys);

    const res = await ok([
      's3api',
      'delete-objects',
      '--bucket',
      bucket,
      '--delete',
      JSON.stringify({ Objects: [...keys, 'l/never'].map((Key) => ({ Key })) }),
      '--output',
      'json',
      '--debug',
    ]);
    // botocore >= 1.36 sends a CRC32 instead of Content-MD5; the server must accept it.
    const sent = sentRequests(res.stderr).find(
      (l) => l.includes('method=POST') && l.includes('?delete')
    );
    expect(sent).toMatch(/'x-amz-checksum-crc32': b'/);
    expect(sent).not.toMatch(/Content-MD5/i);
    const del = JSON.parse(res.stdout) as { Deleted: { Key: string }[]; Errors?: unknown[] };
    expect(new Set(del.Deleted.map((d) => d.Key))).toEqual(new Set([...keys, 'l/never']));
    expect(del.Errors ?? []).toEqual([]);
    const after = await json<{ KeyCount: number }>([
      's3api',
      'list-objects-v2',
      '--bucket',
      bucket,
      '--prefix',
      'l/',
      '--no-paginate',
    ]);
    expect(after.KeyCount).toBe(0);
  });

  it('errors carry S3 codes: head-object 404, get-object NoSuchKey, delete-bucket BucketNotEmpty', async () => {
    const [head, get, del] = await Promise.all([
      aws(['s3api', 'head-object', '--bucket', bucket, '--key', 'missing']),
      aws(['s3api', 'get-object', '--bucket', bucket, '--key', 'missing', join(work, 'nothing')]),
      aws(['s3api', 'delete-bucket', '--bucket', bucket]),
    ]);
    expect(head.code).not.toBe(0);
    expect(head.stderr).toContain(
      'An error occurred (404) when calling the HeadObject operation: Not Found'
    );
    expect(get.code).not.toBe(0);
    expect(get.stderr).toContain('(NoSuchKey)');
    expect(del.code).not.toBe(0);
    expect(del.stderr).toContain('(BucketNotEmpty)');
  });
});
