/**
 * Stalled clients are cut and release what they held; connections are capped (issue 8 §1).
 * Servers run in child processes with small limits so the suite stays fast: a 1 s window
 * of at least 4 KiB for request bodies, 1 s for a header block, and (second server) a cap
 * of 3 connections.
 *
 * Asserted: PUT bodies, aws-chunked bodies and XML bodies that arrive slower than the
 * minimum rate are answered 400 RequestTimeout (S3 XML) and closed, their pending budget
 * released and nothing they sent visible, while another client keeps writing; an
 * incomplete header block is answered 400 RequestTimeout; an upload at a slow but
 * sufficient rate runs for several windows and succeeds (no total request deadline); past
 * the connection cap a client gets 503 SlowDown with Retry-After, and a slot frees when a
 * connection closes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, ListBucketsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startTestServer, REGION, type TestServer } from './harness.js';
import { errorCode, requestHead, signV4 } from './wire.js';
import { CREDS, MiB, hold, metrics, signedChunkedPut, signedRequest, until, type HeldRequest } from './support/bounds.js';
import { randomBytes } from '../support/random.js';

const BUCKET = 'bounds-deadlines';
const WINDOW_S = 1;
const MIN_BYTES = 4096;

let s: TestServer;
let s3: S3Client;

beforeAll(async () => {
  s = await startTestServer({
    child: true,
    env: { STRATA_BODY_TIMEOUT: `${WINDOW_S}s`, STRATA_BODY_MIN_BYTES: String(MIN_BYTES), STRATA_HEADER_TIMEOUT: '1s' },
  });
  s3 = new S3Client({ endpoint: s.url, region: REGION, forcePathStyle: true, credentials: CREDS, maxAttempts: 1 });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
}, 60_000);

afterAll(async () => {
  s3?.destroy();
  await s?.stop();
});

const pending = async () => (await metrics(s.url)).strata_pending_bytes ?? NaN;

/** Sends `bytes` every `everyMs` until the connection closes; returns the stopper. */
function trickle(h: HeldRequest, bytes: number, everyMs: number): () => void {
  const timer = setInterval(() => {
    if (h.socket.destroyed) clearInterval(timer);
    else void h.write(Buffer.alloc(bytes, 't'));
  }, everyMs);
  return () => clearInterval(timer);
}

/** A signed PUT head (UNSIGNED-PAYLOAD) announcing `length` body bytes. */
function putHead(key: string, length: number): string {
  return requestHead(
    signV4({
      method: 'PUT',
      path: `/${BUCKET}/${key}`,
      headers: { 'content-length': String(length) },
      payloadHash: 'UNSIGNED-PAYLOAD',
      host: `127.0.0.1:${s.port}`,
      credentials: CREDS,
      region: REGION,
    })
  );
}

async function expectTimedOut(h: HeldRequest, startedAt: number): Promise<void> {
  const r = await h.response;
  expect(r?.status).toBe(400);
  expect(errorCode(r!.body)).toBe('RequestTimeout');
  await h.closed;
  // A window without enough bytes, a check interval, and slack for a loaded machine.
  expect(Date.now() - startedAt).toBeLessThan(WINDOW_S * 1000 + 4000);
}

describe('stalled requests are cut and release what they held', () => {
  it('8 PUT bodies below the minimum rate: 400 RequestTimeout, budget released, others keep writing', async () => {
    const before = await metrics(s.url);
    const keys = Array.from({ length: 8 }, (_, i) => `slow/${i}`);
    const t0 = Date.now();
    const held = await Promise.all(keys.map((k) => hold(s.port, [putHead(k, MiB), Buffer.alloc(1024, 's')])));
    const stops = held.map((h) => trickle(h, 200, 250)); // 800 B/s, below 4 KiB per 1 s
    expect(await until(async () => (await pending()) > 0, 5000)).toBe(true);
    // Another client writes while the slow ones hold.
    for (let i = 0; i < 3; i++) {
      const body = Buffer.from(randomBytes(200 * 1024, i));
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `fast/${i}`, Body: body }));
      const got = await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `fast/${i}` }))).Body!.transformToByteArray();
      expect(Buffer.from(got).equals(body)).toBe(true);
    }
    for (const h of held) await expectTimedOut(h, t0);
    stops.forEach((stop) => stop());
    expect(await until(async () => (await pending()) === 0, 5000)).toBe(true);
    const after = await metrics(s.url);
    expect(after.strata_body_timeouts_total! - (before.strata_body_timeouts_total ?? 0)).toBe(8);
    for (const key of keys) {
      await expect(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
    }
  }, 60_000);

  it('a stalled aws-chunked upload in 1-byte HTTP chunks and a stalled XML body are cut too', async () => {
    const t0 = Date.now();
    const p = signedChunkedPut({ port: s.port, bucket: BUCKET, key: 'stalled-chunked', data: Buffer.from(randomBytes(64 * 1024, 5)), framing: 'bytes' });
    const chunked = await hold(s.port, [p.head, p.body.subarray(0, p.lastDataByte)]);
    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'stalled-xml' }));
    const r = signedRequest(s.port, 'POST', `/${BUCKET}/stalled-xml`, { uploadId: up.UploadId! }, Buffer.alloc(8 * MiB, 'x'));
    const xml = await hold(s.port, [r.head, '<CompleteMultipartUpload>']);
    await expectTimedOut(chunked, t0);
    await expectTimedOut(xml, t0);
    expect(await until(async () => (await pending()) === 0, 5000)).toBe(true);
    await expect(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'stalled-chunked' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
  }, 30_000);

  it('an incomplete header block is answered 400 RequestTimeout and closed', async () => {
    const before = (await metrics(s.url)).strata_header_timeouts_total ?? 0;
    const t0 = Date.now();
    const h = await hold(s.port, [`PUT /${BUCKET}/k HTTP/1.1\r\nHost: 127.0.0.1\r\nx-amz-date: 2`]);
    const r = await h.response;
    await h.closed;
    expect(r?.status).toBe(400);
    expect(errorCode(r!.body)).toBe('RequestTimeout');
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await metrics(s.url)).strata_header_timeouts_total).toBe(before + 1);
  }, 15_000);

  it('an upload at a slow but sufficient rate runs for several windows and succeeds', async () => {
    const data = Buffer.from(randomBytes(64 * 1024, 6));
    const h = await hold(s.port, [putHead('steady', data.length)]);
    const t0 = Date.now();
    for (let off = 0; off < data.length; off += 4096) {
      await h.write(data.subarray(off, off + 4096));
      await new Promise((r) => setTimeout(r, 200)); // ~20 KiB/s: 4 s, four windows
    }
    const r = await h.response;
    expect(r?.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThan(3 * WINDOW_S * 1000);
    h.destroy();
    const got = await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'steady' }))).Body!.transformToByteArray();
    expect(Buffer.from(got).equals(data)).toBe(true);
  }, 30_000);
});

describe('the connection cap', () => {
  let capped: TestServer;
  beforeAll(async () => {
    capped = await startTestServer({ child: true, env: { STRATA_MAX_CONNECTIONS: '3' } });
  }, 60_000);
  afterAll(async () => capped?.stop());

  it('past 3 open connections a client gets 503 SlowDown with Retry-After; a slot frees when one closes', async () => {
    const get = `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const open = [await hold(capped.port, [get]), await hold(capped.port, [get]), await hold(capped.port, [get])];
    for (const h of open) expect((await h.response)?.status).toBe(200); // kept alive, still open
    const client = new S3Client({ endpoint: capped.url, region: REGION, forcePathStyle: true, credentials: CREDS, maxAttempts: 1 });
    try {
      await expect(client.send(new ListBucketsCommand({}))).rejects.toMatchObject({ name: 'SlowDown', $metadata: { httpStatusCode: 503 } });
      const raw = await hold(capped.port, [get]);
      const r = await raw.response;
      expect(r?.status).toBe(503);
      expect(errorCode(r!.body)).toBe('SlowDown');
      expect(r?.headers['retry-after']).toBe('1');
      await raw.closed;
      open[0]!.destroy();
      await open[0]!.closed;
      expect(await until(async () => {
        try {
          await client.send(new ListBucketsCommand({}));
          return true;
        } catch {
          return false;
        }
      }, 5000)).toBe(true);
    } finally {
      client.destroy();
      for (const h of open) h.destroy();
    }
  }, 30_000);
});
