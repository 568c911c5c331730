/**
 * Proof with a real client: boto3 (path-style, SigV4) against a real Strata server, once
 * with boto3's post-1.36 defaults (CRC32 on uploads, response validation) and once with
 * `Config(request_checksum_calculation="when_required", response_checksum_validation=
 * "when_required")`. The scenario runs in test/integration/boto3_client.py, which prints
 * what it observed as JSON; every assertion is here, against digests computed in this file.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { botocoreEnv } from './support/aws-client-env.js';
import { mustRun } from './support/run-cli.js';
import { etagOf, md5hex, multipartEtag, seeded, splitParts } from './seeded.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

/** The python3 that has boto3 (not necessarily the first python3 on PATH). */
const BOTO3 = clientSuite(CLIENTS.boto3);
const SCRIPT = fileURLToPath(new URL('./boto3_client.py', import.meta.url));
const MiB = 1024 * 1024;
/** The part size the script's TransferConfig uses (S3's minimum). */
const PART = 5 * MiB;
/** Three parts, the last one short. */
const BIG = 2 * PART + 123_457;

interface Failure {
  code: string | null;
  status: number | null;
}

/** The JSON boto3_client.py prints (see the script for what each field is). */
interface Observed {
  mode: string;
  boto3: string;
  create_again: Failure;
  list_buckets: string[];
  head_bucket: number;
  put: { etag: string; crc32: string | null; sent: Record<string, string> };
  get: {
    md5: string;
    length: number;
    content_type: string;
    metadata: Record<string, string>;
    etag: string;
    sent: Record<string, string>;
  };
  head: { length: number; etag: string };
  head_missing: Failure;
  get_missing: Failure;
  get_missing_bucket: Failure;
  checksum: { put_sha256: string; get_sha256: string; md5: string };
  bad_checksum: Failure;
  range: { content_range: string; md5: string; status: number };
  list_v2: { keys: string[]; prefixes: string[]; key_count: number };
  list_v2_paged: string[];
  list_v1_paged: string[];
  copy: {
    etag: string;
    copied_metadata: Record<string, string>;
    copied_type: string;
    replaced_metadata: Record<string, string>;
    replaced_type: string;
    md5: string;
  };
  multipart: {
    etag: string;
    length: number;
    upload_ops: string[];
    part_checksum_headers: string[];
    download_ranges: (string | null)[];
    download_md5: string;
    download_length: number;
  };
  multipart_copy: {
    ops: string[];
    copy_ranges: string[];
    etag: string;
    length: number;
    slice_md5: string;
  };
  presigned: Record<
    'default' | 's3v4',
    { url: string; status: number; md5?: string; body?: string }
  >;
  delete_objects: {
    deleted: string[];
    errors: unknown[];
    sent: Record<string, string>;
    left: number;
  };
  deleted_head: Failure;
}

let s: TestServer;
let work: string;
let big: Buffer;
let bigFile: string;

async function runScenario(mode: 'default' | 'when_required', bucket: string): Promise<Observed> {
  const cfg = JSON.stringify({ endpoint: s.url, bucket, mode, big_file: bigFile });
  const r = await mustRun(BOTO3.path, [SCRIPT, cfg], { env: botocoreEnv() });
  try {
    return JSON.parse(r.stdout) as Observed;
  } catch (e) {
    throw new Error(
      `boto3_client.py (${mode}) printed no JSON: ${String(e)}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`
    );
  }
}

const results = new Map<string, Observed>();

beforeAll(async () => {
  s = await startTestServer();
  work = mkdtempSync(join(tmpdir(), 'strata-boto3-'));
  big = seeded(BIG, 4242);
  bigFile = join(work, 'big.bin');
  writeFileSync(bigFile, big);
  // The two scenarios use different buckets and run side by side.
  const [d, w] = await Promise.all([
    runScenario('default', 'boto3-default'),
    runScenario('when_required', 'boto3-when-required'),
  ]);
  results.set('default', d);
  results.set('when_required', w);
}, 120_000);
afterAll(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
  await s?.stop();
});

const smallBody = Buffer.from('héllo from boto3\n');
const sumsBody = Buffer.concat(
  Array.from({ length: 100 }, () => Buffer.from(Array.from({ length: 256 }, (_, i) => i)))
);

for (const mode of ['default', 'when_required'] as const) {
  BOTO3.describe(`boto3 (${mode})`, () => {
    const r = () => results.get(mode)!;
    const bucket = mode === 'default' ? 'boto3-default' : 'boto3-when-required';

    it('buckets: create, create again by the owner succeeds (us-east-1), list, head', () => {
      expect(r().create_again).toEqual({ code: null, status: null });
      expect(r().list_buckets).toContain(bucket);
      expect(r().head_bucket).toBe(200);
    });

    it('put/get/head round-trip bytes, ETag, content type and metadata', () => {
      const o = r();
      expect(o.put.etag).toBe(etagOf(smallBody));
      if (mode === 'default') {
        // botocore >= 1.36 over plain HTTP: a CRC32 header, the body signed as hex SHA-256.
        expect(o.put.sent['x-amz-checksum-crc32']).toBeTruthy();
        expect(o.put.crc32).toBe(o.put.sent['x-amz-checksum-crc32']);
        expect(o.get.sent['x-amz-checksum-mode']).toBe('ENABLED');
      } else {
        expect(Object.keys(o.put.sent).filter((h) => h.startsWith('x-amz-checksum-'))).toEqual([]);
        expect(o.get.sent['x-amz-checksum-mode']).toBeUndefined();
      }
      expect(o.put.sent['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$|^UNSIGNED-PAYLOAD$/);
      expect(o.get).toMatchObject({
        md5: md5hex(smallBody),
        length: smallBody.length,
        content_type: 'text/plain; charset=utf-8',
        metadata: { origin: 'boto3' },
        etag: etagOf(smallBody),
      });
      expect(o.head).toEqual({ length: smallBody.length, etag: etagOf(smallBody) });
    });

    it('errors: HEAD 404, NoSuchKey, NoSuchBucket, BadDigest', () => {
      expect(r().head_missing).toEqual({ code: '404', status: 404 });
      expect(r().get_missing).toEqual({ code: 'NoSuchKey', status: 404 });
      expect(r().get_missing_bucket).toEqual({ code: 'NoSuchBucket', status: 404 });
      expect(r().bad_checksum).toEqual({ code: 'BadDigest', status: 400 });
    });

    it('ChecksumAlgorithm SHA256 is stored and returned (and validated) with ChecksumMode ENABLED; Range reads a slice', () => {
      const sha = createHash('sha256').update(sumsBody).digest('base64');
      expect(r().checksum).toEqual({ put_sha256: sha, get_sha256: sha, md5: md5hex(sumsBody) });
      expect(r().range).toEqual({
        content_range: `bytes 100-355/${sumsBody.length}`,
        md5: md5hex(sumsBody.subarray(100, 356)),
        status: 206,
      });
    });

    it('list_objects_v2 (prefix, delimiter), and both paginators with PageSize 2', () => {
      expect(r().list_v2).toEqual({
        keys: ['l/a', 'l/b c', 'l/d+e', 'l/ü'],
        prefixes: ['l/sub/'],
        key_count: 5,
      });
      const all = ['l/a', 'l/b c', 'l/d+e', 'l/sub/f', 'l/ü'];
      expect(r().list_v2_paged).toEqual(all);
      expect(r().list_v1_paged).toEqual(all);
    });

    it('copy_object with COPY and REPLACE metadata directives', () => {
      expect(r().copy).toEqual({
        etag: etagOf(smallBody),
        copied_metadata: { origin: 'boto3' },
        copied_type: 'text/plain; charset=utf-8',
        replaced_metadata: { new: '1' },
        replaced_type: 'application/x-replaced',
        md5: md5hex(smallBody),
      });
    });

    it('upload_fileobj goes multipart in 5 MiB parts; download_fileobj reads ranges back byte-exact', () => {
      const m = r().multipart;
      expect(m.etag).toBe(multipartEtag(splitParts(big, PART)));
      expect(m.length).toBe(BIG);
      expect(m.upload_ops.filter((o) => o === 'UploadPart')).toHaveLength(3);
      expect(m.upload_ops[0]).toBe('CreateMultipartUpload');
      expect(m.upload_ops.at(-1)).toBe('CompleteMultipartUpload');
      expect(m.part_checksum_headers).toEqual(mode === 'default' ? ['x-amz-checksum-crc32'] : []);
      // s3transfer asks for each part's range, the last one open-ended.
      expect([...m.download_ranges].sort()).toEqual([
        `bytes=0-${PART - 1}`,
        `bytes=${2 * PART}-`,
        `bytes=${PART}-${2 * PART - 1}`,
      ]);
      expect(m.download_length).toBe(BIG);
      expect(m.download_md5).toBe(md5hex(big));
    });

    it('copy (managed) of a multipart object is a server-side UploadPartCopy per 5 MiB range', () => {
      const c = r().multipart_copy;
      expect(c.ops.filter((o) => o === 'UploadPartCopy')).toHaveLength(3);
      expect(c.ops).not.toContain('GetObject');
      expect(c.copy_ranges).toEqual([
        `bytes=0-${PART - 1}`,
        `bytes=${2 * PART}-${BIG - 1}`,
        `bytes=${PART}-${2 * PART - 1}`,
      ]);
      expect(c.etag).toBe(multipartEtag(splitParts(big, PART)));
      expect(c.length).toBe(BIG);
      expect(c.slice_md5).toBe(md5hex(big.subarray(PART - 100, PART + 100)));
    });

    it('generate_presigned_url: the default (SigV2 query auth) and s3v4 URLs both download with urllib', () => {
      const p = r().presigned;
      expect(p.default.url).toContain('Signature=');
      expect(p.default.url).toContain('AWSAccessKeyId=');
      expect(p.default.url).not.toContain('X-Amz-Signature=');
      expect(p.s3v4.url).toContain('X-Amz-Signature=');
      expect(p.s3v4.url).toContain('X-Amz-Algorithm=AWS4-HMAC-SHA256');
      for (const v of [p.default, p.s3v4])
        expect(v).toMatchObject({ status: 200, md5: md5hex(smallBody) });
    });

    it('delete_objects (CRC32, no Content-MD5) deletes every key; delete_object then head is 404', () => {
      const d = r().delete_objects;
      expect(d.deleted).toEqual(['l/a', 'l/b c', 'l/d+e', 'l/sub/f', 'l/ü', 'never-existed']);
      expect(d.errors).toEqual([]);
      expect(d.sent['content-md5']).toBeUndefined();
      expect(Object.keys(d.sent).some((h) => h.startsWith('x-amz-checksum-'))).toBe(true);
      expect(d.left).toBe(0);
      expect(r().deleted_head).toEqual({ code: '404', status: 404 });
    });
  });
}
