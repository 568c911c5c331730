/**
 * S3's header limits through real clients (issue 8 §1): a request whose header lines and
 * query string pass 8 KiB is answered 400 RequestHeaderSectionTooLarge (MaxSizeAllowed
 * 8192) and stores nothing; a large standard header that fits is stored and returned
 * whole; user metadata past 2 KB is 400 MetadataTooLarge; past Node's 16 KiB header block
 * the answer is Node's 431.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { startTestServer, REGION, type TestServer } from './harness.js';
import { rawExchange } from './wire.js';
import { CREDS } from './support/bounds.js';

const BUCKET = 'bounds-headers';
let s: TestServer;
let s3: S3Client;

beforeAll(async () => {
  s = await startTestServer();
  s3 = new S3Client({ endpoint: s.url, region: REGION, forcePathStyle: true, credentials: CREDS, maxAttempts: 1 });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
});

afterAll(async () => {
  s3?.destroy();
  await s?.stop();
});

describe('request header limits', () => {
  it('a PUT whose headers pass 8 KiB is 400 RequestHeaderSectionTooLarge and stores nothing', async () => {
    const put = s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'big-headers', Body: 'x', CacheControl: 'c'.repeat(5000), ContentDisposition: 'd'.repeat(3500) }));
    await expect(put).rejects.toMatchObject({ name: 'RequestHeaderSectionTooLarge', $metadata: { httpStatusCode: 400 } });
    const err = (await put.catch((e: unknown) => e)) as { MaxSizeAllowed?: string };
    expect(String(err.MaxSizeAllowed)).toBe('8192');
    await expect(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'big-headers' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
  });

  it('a large standard header that fits is stored and returned whole', async () => {
    const cacheControl = `max-age=60, ${'x'.repeat(6000)}`;
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'fits', Body: 'x', CacheControl: cacheControl }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'fits' }));
    expect(head.CacheControl).toBe(cacheControl);
  });

  it('the query string counts toward the limit', async () => {
    await expect(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'p'.repeat(8000) }))).rejects.toMatchObject({
      name: 'RequestHeaderSectionTooLarge',
      $metadata: { httpStatusCode: 400 },
    });
  });

  it('user metadata past 2 KB is 400 MetadataTooLarge', async () => {
    await expect(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'meta', Body: 'x', Metadata: { m: 'v'.repeat(2048) } }))).rejects.toMatchObject({
      name: 'MetadataTooLarge',
      $metadata: { httpStatusCode: 400 },
    });
  });

  it('the limit is checked before authentication; past 16 KiB Node answers 431', async () => {
    const res = await request(`${s.url}/${BUCKET}/k`, { method: 'PUT', headers: { 'x-pad': 'p'.repeat(9000) }, body: 'x' });
    expect(res.statusCode).toBe(400);
    expect(await res.body.text()).toContain('<Code>RequestHeaderSectionTooLarge</Code>');
    const r = await rawExchange(s.port, [`GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(17 * 1024)}\r\n\r\n`]);
    expect(r?.status).toBe(431);
  });
});
