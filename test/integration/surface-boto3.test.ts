/**
 * The S3 surface as boto3 drives it (test/integration/surface_boto3.py runs the scenarios
 * and prints what it saw; every assertion is here, against values computed in this file).
 *
 * Proves, with a real Python client: `generate_presigned_post` forms (SigV4 fields) upload
 * as multipart forms with their fields stored and their content-length-range enforced;
 * non-ASCII user metadata signed by botocore verifies and comes back RFC 2047-encoded, as
 * S3 returns it; a PUT with plain `Transfer-Encoding: chunked` is stored; If-None-Match
 * `*` and ETag give 412 when they match and 200 otherwise, If-Match `*` on a missing key
 * 404 NoSuchKey; GetObjectAttributes answers ETag (unquoted), the SHA-256 checksum, size
 * and class, and no ObjectParts for a single PUT; a malformed x-amz-checksum value is
 * BadDigest; presigned URLs with ExpiresIn 0, negative, over a week (and an expired PUT)
 * are 403 while a valid one works; ListBuckets pages with MaxBuckets / ContinuationToken /
 * Prefix and refuses a forged token.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { botocoreEnv } from './support/aws-client-env.js';
import { mustRun } from './support/run-cli.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

/** The python3 that has boto3 (skipped with the install command when there is none). */
const BOTO3 = clientSuite(CLIENTS.boto3);

const SCRIPT = fileURLToPath(new URL('./surface_boto3.py', import.meta.url));

interface Failure {
  code: string | null;
  status: number | null;
}

interface Observed {
  boto3: string;
  post: { status: number; fields: string[]; body: string; type: string; meta: Record<string, string> };
  post_too_large: { status: number; code: string | null };
  unicode_meta: string;
  chunked: { status: number; body: string };
  cond: { star_again: Failure; etag_match: Failure; etag_other: number; if_match_star_missing: Failure };
  attributes: { etag: string; checksum: Record<string, string>; size: number; class: string; parts: unknown; sha: string; md5: string };
  bad_checksum: Failure;
  presigned: Record<'zero' | 'negative' | 'over_week' | 'ok' | 'put_expired', number>;
  list_buckets: { names: string[]; prefix: string | null; token: boolean }[];
  list_buckets_bad_token: Failure;
}

let s: TestServer;
let seen: Observed;

BOTO3.describe('the S3 surface with boto3', () => {
  beforeAll(async () => {
    s = await startTestServer();
    const r = await mustRun(BOTO3.path, [SCRIPT, JSON.stringify({ endpoint: s.url, bucket: 'surface' })], { env: botocoreEnv() });
    seen = JSON.parse(r.stdout) as Observed;
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('generate_presigned_post forms upload with requests and keep their fields and limits', () => {
    expect(seen.post.fields).toEqual(['Content-Type', 'key', 'policy', 'x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-meta-origin', 'x-amz-signature']);
    expect(seen.post).toMatchObject({ status: 204, body: 'posted by boto3', type: 'text/plain', meta: { origin: 'boto3' } });
    expect(seen.post_too_large).toEqual({ status: 400, code: 'EntityTooLarge' });
  });

  it('non-ASCII metadata signed by botocore verifies and is returned RFC 2047-encoded', () => {
    expect(seen.unicode_meta).toBe(`=?UTF-8?B?${Buffer.from('Hello World\u00e9', 'utf8').toString('base64')}?=`);
  });

  it('a PUT with Transfer-Encoding: chunked and no Content-Length is stored', () => {
    expect(seen.chunked).toEqual({ status: 200, body: 'chunked body' });
  });

  it('conditional PUT: If-None-Match * and ETag, If-Match * on a missing key', () => {
    expect(seen.cond.star_again).toEqual({ code: 'PreconditionFailed', status: 412 });
    expect(seen.cond.etag_match).toEqual({ code: 'PreconditionFailed', status: 412 });
    expect(seen.cond.etag_other).toBe(200);
    expect(seen.cond.if_match_star_missing).toEqual({ code: 'NoSuchKey', status: 404 });
  });

  it('GetObjectAttributes of a single PUT', () => {
    const body = Buffer.alloc(1024, 'A');
    expect(seen.attributes.etag).toBe(createHash('md5').update(body).digest('hex'));
    expect(seen.attributes.checksum).toEqual({ ChecksumSHA256: createHash('sha256').update(body).digest('base64'), ChecksumType: 'FULL_OBJECT' });
    expect(seen.attributes).toMatchObject({ size: 1024, class: 'STANDARD', parts: null });
  });

  it('a malformed x-amz-checksum value is 400 BadDigest', () => {
    expect(seen.bad_checksum).toEqual({ code: 'BadDigest', status: 400 });
  });

  it('presigned URLs out of range are 403', () => {
    expect(seen.presigned).toEqual({ zero: 403, negative: 403, over_week: 403, ok: 200, put_expired: 403 });
  });

  it('ListBuckets pages with MaxBuckets, ContinuationToken and Prefix', () => {
    expect(seen.list_buckets).toEqual([
      { names: ['surface-page-0', 'surface-page-1'], prefix: 'surface-page-', token: true },
      { names: ['surface-page-2'], prefix: 'surface-page-', token: false },
    ]);
    expect(seen.list_buckets_bad_token).toEqual({ code: 'InvalidArgument', status: 400 });
  });
});
