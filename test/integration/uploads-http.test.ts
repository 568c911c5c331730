/**
 * Multipart uploads in the index, over HTTP with the AWS SDK v3 against a real server:
 * many uploads paged by ListMultipartUploads, the per-bucket cap (400 InvalidRequest naming
 * the limit), a Complete retried after success (200, same ETag and Location; another part list
 * is InvalidPart), DeleteBucket of a bucket holding only unfinished uploads (204, and they are
 * gone), and expiry by the server's worker (a short age here) with its log line and metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { startTestServer, type TestServer } from './harness.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { seeded } from './seeded.js';

const UPLOADS = 1500;
const MiB = 1024 * 1024;

let big: TestServer;
let small: TestServer;
let s3: S3Client;
let s3small: S3Client;
const wire = new WireLog();

beforeAll(async () => {
  big = await startTestServer({ config: { maxUploadsPerBucket: UPLOADS + 10 } });
  // A tight cap and a short age: the cap and the expiry worker are seen within a test.
  small = await startTestServer({ config: { maxUploadsPerBucket: 3, uploadExpiry: 1500, uploadSweepInterval: 100 } });
  s3 = createS3Client(big.url, wire);
  s3small = createS3Client(small.url, wire);
});
afterAll(async () => {
  s3?.destroy();
  s3small?.destroy();
  await big?.stop();
  await small?.stop();
});

describe('multipart uploads in the index, over HTTP', () => {
  it(`pages ${UPLOADS} uploads in progress: each exactly once, in order, with prefix and delimiter`, async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'many' }));
    const ids = new Map<string, string>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < UPLOADS) {
          const i = next++;
          const key = `d${i % 10}/k${String(i).padStart(5, '0')}`;
          const r = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'many', Key: key }));
          ids.set(r.UploadId!, key);
        }
      })
    );
    await big.server!.store.checkpoint();
    expect(big.server!.store.repo.state.buckets.get('many')!.uploads.overlay.size).toBe(0);
    const seen: { key: string; id: string }[] = [];
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    for (;;) {
      const r = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'many', MaxUploads: 200, KeyMarker, UploadIdMarker }));
      for (const u of r.Uploads ?? []) seen.push({ key: u.Key!, id: u.UploadId! });
      if (!r.IsTruncated) break;
      KeyMarker = r.NextKeyMarker;
      UploadIdMarker = r.NextUploadIdMarker;
    }
    expect(seen).toHaveLength(UPLOADS);
    expect(new Set(seen.map((u) => u.id)).size).toBe(UPLOADS);
    for (const u of seen) expect(ids.get(u.id)).toBe(u.key);
    const keys = seen.map((u) => u.key);
    expect(keys).toEqual([...keys].sort());
    const top = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'many', Delimiter: '/' }));
    expect((top.CommonPrefixes ?? []).map((p) => p.Prefix)).toEqual(Array.from({ length: 10 }, (_, i) => `d${i}/`));
    const one = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'many', Prefix: 'd3/', MaxUploads: 1000 }));
    expect(one.Uploads).toHaveLength(UPLOADS / 10);
    expect(big.server!.metrics.render()).toMatch(new RegExp(`^strata_uploads_in_progress ${UPLOADS}$`, 'm'));
  }, 120_000);

  it('answers a Complete retried after success with 200 and the same ETag and Location', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'retry' }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'retry', Key: 'obj' }));
    const p1 = seeded(5 * MiB, 1);
    const p2 = seeded(1000, 2);
    const e1 = (await s3.send(new UploadPartCommand({ Bucket: 'retry', Key: 'obj', UploadId, PartNumber: 1, Body: p1 }))).ETag!;
    const e2 = (await s3.send(new UploadPartCommand({ Bucket: 'retry', Key: 'obj', UploadId, PartNumber: 2, Body: p2 }))).ETag!;
    const Parts = [
      { PartNumber: 1, ETag: e1 },
      { PartNumber: 2, ETag: e2 },
    ];
    const first = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'retry', Key: 'obj', UploadId, MultipartUpload: { Parts } }));
    const again = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'retry', Key: 'obj', UploadId, MultipartUpload: { Parts } }));
    expect(again.$metadata.httpStatusCode).toBe(200);
    expect(again.ETag).toBe(first.ETag);
    expect(again.Location).toBe(first.Location);
    expect(first.ETag).toMatch(/^"[0-9a-f]{32}-2"$/);
    const other = await failure(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'retry', Key: 'obj', UploadId, MultipartUpload: { Parts: [Parts[0]!] } })));
    expect(other).toMatchObject({ status: 400, name: 'InvalidPart' });
    const gone = await failure(s3.send(new ListPartsCommand({ Bucket: 'retry', Key: 'obj', UploadId })));
    expect(gone).toMatchObject({ status: 404, name: 'NoSuchUpload' });
    const body = await bytesOf((await s3.send(new GetObjectCommand({ Bucket: 'retry', Key: 'obj' }))).Body);
    expect(Buffer.compare(body, Buffer.concat([p1, p2]))).toBe(0);
  });

  it('deletes a bucket that holds only unfinished uploads', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'unfinished' }));
    for (const key of ['a', 'b/c', 'b/c']) {
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'unfinished', Key: key }));
      await s3.send(new UploadPartCommand({ Bucket: 'unfinished', Key: key, UploadId, PartNumber: 1, Body: seeded(10_000, 3) }));
    }
    const deleted = await s3.send(new DeleteBucketCommand({ Bucket: 'unfinished' }));
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    expect(await failure(s3.send(new HeadBucketCommand({ Bucket: 'unfinished' })))).toMatchObject({ status: 404 });
    await s3.send(new CreateBucketCommand({ Bucket: 'unfinished' }));
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'unfinished' }))).Uploads ?? []).toEqual([]);
  });

  it('refuses CreateMultipartUpload beyond the per-bucket cap with 400 InvalidRequest naming it', async () => {
    await s3small.send(new CreateBucketCommand({ Bucket: 'capped' }));
    await s3small.send(new CreateBucketCommand({ Bucket: 'elsewhere' }));
    for (let i = 0; i < 3; i++) await s3small.send(new CreateMultipartUploadCommand({ Bucket: 'capped', Key: `k${i}` }));
    const refused = await failure(s3small.send(new CreateMultipartUploadCommand({ Bucket: 'capped', Key: 'one-more' })));
    expect(refused).toMatchObject({ status: 400, name: 'InvalidRequest' });
    expect(refused.message).toMatch(/3 multipart uploads in progress/);
    expect(refused.message).toMatch(/abort/);
    // The cap is per bucket.
    await s3small.send(new CreateMultipartUploadCommand({ Bucket: 'elsewhere', Key: 'fine' }));
  });

  it('aborts uploads older than the expiry age in the background, with a log line and metrics', async () => {
    await s3small.send(new CreateBucketCommand({ Bucket: 'expiring' }));
    const { UploadId } = await s3small.send(new CreateMultipartUploadCommand({ Bucket: 'expiring', Key: 'stale' }));
    await s3small.send(new UploadPartCommand({ Bucket: 'expiring', Key: 'stale', UploadId, PartNumber: 1, Body: seeded(300_000, 4) }));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await s3small.send(new ListMultipartUploadsCommand({ Bucket: 'expiring' }));
      if ((r.Uploads ?? []).length === 0) break;
      if (Date.now() > deadline) throw new Error('the upload did not expire');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await failure(s3small.send(new ListPartsCommand({ Bucket: 'expiring', Key: 'stale', UploadId })))).toMatchObject({ status: 404, name: 'NoSuchUpload' });
    // The cap test's uploads expired too: the capped bucket takes new ones again.
    await s3small.send(new CreateMultipartUploadCommand({ Bucket: 'capped', Key: 'after-expiry' }));
    // The listing empties when the sweep commits its aborts; its log line and counters come
    // when the sweep returns, after it deleted the parts' chunks: wait for those too.
    const expiredLines = () =>
      small.logs.map((l) => JSON.parse(l) as { msg: string; aborted?: number; chunksDeleted?: number }).filter((l) => l.msg === 'uploads.expired');
    const logDeadline = Date.now() + 10_000;
    while (expiredLines().reduce((n, l) => n + (l.aborted ?? 0), 0) < 5) {
      if (Date.now() > logDeadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const expired = expiredLines();
    expect(expired.length).toBeGreaterThan(0);
    expect(expired.reduce((n, l) => n + (l.aborted ?? 0), 0)).toBeGreaterThanOrEqual(5);
    expect(expired.reduce((n, l) => n + (l.chunksDeleted ?? 0), 0)).toBeGreaterThanOrEqual(1);
    const metrics = small.server!.metrics.render();
    expect(Number(/^strata_uploads_expired_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(5);
    expect(Number(/^strata_upload_expiry_sweeps_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(1);
    expect(metrics).toMatch(/^strata_upload_expiry_failures_total 0$/m);
    expect(Number(/^strata_upload_chunks_deleted_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
