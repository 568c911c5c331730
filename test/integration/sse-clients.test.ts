/**
 * SSE-S3 and SSE-C with real botocore clients against a real server: boto3 (its SSE-C
 * helpers encode the key and add its MD5; s3transfer sends the key on every part and
 * downloads in ranges) and the `aws` CLI (`--sse AES256`, `--sse-c`, `--sse-c-copy-source`,
 * multipart uploads and multipart copies of a 20 MiB object, s3api bucket encryption).
 * The boto3 scenario runs in sse_boto3_client.py and prints what it saw; assertions are here.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { botocoreEnv } from './support/aws-client-env.js';
import { mustRun, run } from './support/run-cli.js';
import { seeded } from './seeded.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

const SCRIPT = fileURLToPath(new URL('./sse_boto3_client.py', import.meta.url));
/** The python3 that has boto3, and the aws CLI v1: each suite is skipped (with the install command) without it. */
const BOTO3 = clientSuite(CLIENTS.boto3);
const AWS_CLI = clientSuite(CLIENTS.aws);
const MiB = 1024 * 1024;
const KEY_A = Buffer.from(seeded(32, 11));
const KEY_B = Buffer.from(seeded(32, 12));
const md5hex = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const keyMd5 = (k: Buffer) => createHash('md5').update(k).digest('base64');

let s: TestServer;
let work: string;

beforeAll(async () => {
  s = await startTestServer();
  work = mkdtempSync(join(tmpdir(), 'strata-sse-clients-'));
});
afterAll(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
  await s?.stop();
});

BOTO3.describe('boto3', () => {
  interface Failure {
    code: string | null;
    status: number | null;
  }
  interface Observed {
    put: { alg: string; key_md5: string; etag: string; small_md5: string };
    head: { length: number; key_md5: string };
    get: { small: boolean; mid: boolean; s3: string };
    ranges: boolean[];
    no_key: Failure;
    wrong_key: Failure;
    head_wrong_key: Failure;
    big_md5: string;
    big_parts: number;
    copies: { c2s3: boolean; c2c: boolean; c2c_old_key: Failure; no_source_key: Failure };
    default: { put: string; algorithm: string; after_delete: Failure };
  }
  let o: Observed;
  const big = seeded(12 * MiB + 77, 31);

  beforeAll(async () => {
    const bigFile = join(work, 'boto3-big.bin');
    writeFileSync(bigFile, big);
    const cfg = { endpoint: s.url, bucket: 'sse-boto3', key_a: KEY_A.toString('hex'), key_b: KEY_B.toString('hex'), big_file: bigFile, out_dir: work };
    const r = await mustRun(BOTO3.path, [SCRIPT, JSON.stringify(cfg)], { env: botocoreEnv(), timeoutMs: 120_000 });
    o = JSON.parse(r.stdout) as Observed;
  }, 150_000);

  it('SSE-C PUT/HEAD/GET echo the algorithm and key MD5; the ETag is not the plaintext MD5', () => {
    expect(o.put.alg).toBe('AES256');
    expect(o.put.key_md5).toBe(keyMd5(KEY_A));
    expect(o.put.etag).toMatch(/^[0-9a-f]{32}$/);
    expect(o.put.etag).not.toBe(o.put.small_md5);
    expect(o.head).toEqual({ length: MiB + 5, key_md5: keyMd5(KEY_A) });
    expect(o.get).toEqual({ small: true, mid: true, s3: 'AES256' });
    expect(o.ranges).toEqual([true, true, true, true]);
  });

  it('SSE-C without the key -> 400 InvalidRequest, with another -> 403 (HEAD too)', () => {
    expect(o.no_key).toEqual({ code: 'InvalidRequest', status: 400 });
    expect(o.wrong_key).toEqual({ code: 'AccessDenied', status: 403 });
    expect(o.head_wrong_key.status).toBe(403);
  });

  it('s3transfer multipart upload and ranged download with SSE-C', () => {
    expect(o.big_md5).toBe(md5hex(big));
    expect(o.big_parts).toBe(3);
  });

  it('copies SSE-C -> SSE-S3 and SSE-C -> SSE-C (another key); the source key is required', () => {
    expect(o.copies.c2s3).toBe(true);
    expect(o.copies.c2c).toBe(true);
    expect(o.copies.c2c_old_key.status).toBe(403);
    expect(o.copies.no_source_key).toEqual({ code: 'InvalidRequest', status: 400 });
  });

  it('bucket default encryption', () => {
    expect(o.default.put).toBe('AES256');
    expect(o.default.algorithm).toBe('AES256');
    expect(o.default.after_delete).toEqual({ code: 'ServerSideEncryptionConfigurationNotFoundError', status: 404 });
  });
});

AWS_CLI.describe('aws CLI', () => {
  const bucket = 'sse-cli';
  const aws = (args: string[]) => run(AWS_CLI.path, [...args, '--endpoint-url', s.url], { env: botocoreEnv(), cwd: work, timeoutMs: 120_000 });
  const ok = (args: string[]) => mustRun(AWS_CLI.path, [...args, '--endpoint-url', s.url], { env: botocoreEnv(), cwd: work, timeoutMs: 120_000 });
  const big = seeded(20 * MiB + 5, 41);
  const small = seeded(3000, 42);

  beforeAll(async () => {
    writeFileSync(join(work, 'big.bin'), big);
    writeFileSync(join(work, 'small.bin'), small);
    writeFileSync(join(work, 'key-a'), KEY_A);
    await ok(['s3', 'mb', `s3://${bucket}`]);
  });

  it('s3 cp --sse AES256: head-object reports it, the download matches', async () => {
    await ok(['s3', 'cp', 'small.bin', `s3://${bucket}/s3/small`, '--sse', 'AES256']);
    const head = JSON.parse((await ok(['s3api', 'head-object', '--bucket', bucket, '--key', 's3/small', '--output', 'json'])).stdout) as Record<string, unknown>;
    expect(head.ServerSideEncryption).toBe('AES256');
    await ok(['s3', 'cp', `s3://${bucket}/s3/small`, 'small.down']);
    expect(readFileSync(join(work, 'small.down')).equals(Buffer.from(small))).toBe(true);
  });

  it('s3 cp --sse-c (multipart upload), download with and without the key', async () => {
    await ok(['s3', 'cp', 'big.bin', `s3://${bucket}/c/big`, '--sse-c', 'AES256', '--sse-c-key', 'fileb://key-a']);
    await ok(['s3', 'cp', `s3://${bucket}/c/big`, 'big.down', '--sse-c', 'AES256', '--sse-c-key', 'fileb://key-a']);
    expect(md5hex(readFileSync(join(work, 'big.down')))).toBe(md5hex(big));
    const denied = await aws(['s3', 'cp', `s3://${bucket}/c/big`, 'big.denied']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/400|Bad Request/);
    const head = JSON.parse(
      (await ok(['s3api', 'head-object', '--bucket', bucket, '--key', 'c/big', '--sse-customer-algorithm', 'AES256', '--sse-customer-key', 'fileb://key-a', '--output', 'json'])).stdout
    ) as Record<string, unknown>;
    expect(head.SSECustomerKeyMD5).toBe(keyMd5(KEY_A));
    expect(head.ContentLength).toBe(big.length);
  });

  it('s3 cp s3:// -> s3:// from SSE-C to SSE-S3 (a multipart copy: UploadPartCopy with the source key)', async () => {
    const mark = s.logs.length;
    await ok(['s3', 'cp', `s3://${bucket}/c/big`, `s3://${bucket}/copied/big`, '--sse-c-copy-source', 'AES256', '--sse-c-copy-source-key', 'fileb://key-a', '--sse', 'AES256']);
    const head = JSON.parse((await ok(['s3api', 'head-object', '--bucket', bucket, '--key', 'copied/big', '--output', 'json'])).stdout) as Record<string, unknown>;
    expect(head.ServerSideEncryption).toBe('AES256');
    const copies = s.logs.slice(mark).filter((l) => l.includes('"op":"UploadPartCopy"') && l.includes('"status":200'));
    expect(copies.length).toBe(3);
    await ok(['s3', 'cp', `s3://${bucket}/copied/big`, 'copied.down']);
    expect(md5hex(readFileSync(join(work, 'copied.down')))).toBe(md5hex(big));
  });

  it('s3api put-bucket-encryption, then cp without flags is SSE-S3; --sse aws:kms is refused', async () => {
    await ok(['s3api', 'put-bucket-encryption', '--bucket', bucket, '--server-side-encryption-configuration', '{"Rules":[{"ApplyServerSideEncryptionByDefault":{"SSEAlgorithm":"AES256"}}]}']);
    await ok(['s3', 'cp', 'small.bin', `s3://${bucket}/default/small`]);
    const head = JSON.parse((await ok(['s3api', 'head-object', '--bucket', bucket, '--key', 'default/small', '--output', 'json'])).stdout) as Record<string, unknown>;
    expect(head.ServerSideEncryption).toBe('AES256');
    const kms = await aws(['s3', 'cp', 'small.bin', `s3://${bucket}/kms`, '--sse', 'aws:kms']);
    expect(kms.code).not.toBe(0);
    expect(kms.stderr).toContain('NotImplemented');
  });
});
