/**
 * aws-chunked data streams to the store before its chunk signature is checked (so memory
 * does not grow with the chunk), yet unverified bytes never become visible: a large signed
 * upload whose last chunk is forged, after 16 MiB of valid chunks already reached the
 * store's chunk blobs, is answered 403 SignatureDoesNotMatch, the key stays absent, no
 * chunk blob is left behind, and the pending budget is released. A control upload of the
 * same shape succeeds and reads back byte-exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startTestServer, REGION, type TestServer } from './harness.js';
import { errorCode, framesOf, signedChunked, signV4 } from './wire.js';
import { CREDS, MiB } from './support/bounds.js';
import { randomBytes } from '../support/random.js';

const BUCKET = 'bounds-stream';
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
  const w = signV4({ method: 'PUT', path: `/${BUCKET}`, host: `127.0.0.1:${s.port}`, credentials: CREDS, region: REGION });
  expect((await request(`${s.url}${w.target}`, { method: 'PUT', headers: w.headers })).statusCode).toBe(200);
});

afterAll(async () => s?.stop());

async function chunkBlobs(): Promise<string[]> {
  const out: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await s.server!.store.repo.provider.list({ prefix: 'chunks/', ...(startAfter ? { startAfter } : {}) });
    out.push(...page.items.map((i) => i.key));
    if (!page.next) return out;
    startAfter = page.next;
  }
}

async function signedPut(key: string, data: Uint8Array, forgeLast: boolean): Promise<{ status: number; text: string }> {
  const w = signV4({
    method: 'PUT',
    path: `/${BUCKET}/${key}`,
    headers: { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': String(data.length) },
    payloadHash: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
    host: `127.0.0.1:${s.port}`,
    credentials: CREDS,
    region: REGION,
  });
  const frames = framesOf(data, MiB);
  if (forgeLast) frames[frames.length - 1]!.signature = 'a'.repeat(64);
  const body = signedChunked(w.chain, w.signature, frames);
  const res = await request(`${s.url}${w.target}`, { method: 'PUT', headers: { ...w.headers, 'content-length': String(body.length) }, body });
  return { status: res.statusCode, text: await res.body.text() };
}

describe('aws-chunked streaming never makes unverified bytes visible', () => {
  it('a forged last chunk after 16 MiB already streamed: 403, absent, no chunk blob left, budget released', async () => {
    const data = Buffer.from(randomBytes(17 * MiB, 31));
    const before = await chunkBlobs();
    const r = await signedPut('forged', data, true);
    expect(r.status).toBe(403);
    expect(errorCode(r.text)).toBe('SignatureDoesNotMatch');
    const head = signV4({ method: 'HEAD', path: `/${BUCKET}/forged`, host: `127.0.0.1:${s.port}`, credentials: CREDS, region: REGION });
    expect((await request(`${s.url}${head.target}`, { method: 'HEAD', headers: head.headers })).statusCode).toBe(404);
    expect(await chunkBlobs()).toEqual(before);
    expect(s.server!.store.repo.budget.used).toBe(0);
  }, 60_000);

  it('the same upload with a valid chain is stored and reads back byte-exact (control)', async () => {
    const data = Buffer.from(randomBytes(17 * MiB, 32));
    const r = await signedPut('valid', data, false);
    expect(r.status, r.text).toBe(200);
    const get = signV4({ method: 'GET', path: `/${BUCKET}/valid`, host: `127.0.0.1:${s.port}`, credentials: CREDS, region: REGION });
    const res = await request(`${s.url}${get.target}`, { headers: get.headers });
    expect(Buffer.from(await res.body.arrayBuffer()).equals(data)).toBe(true);
    expect((await chunkBlobs()).length).toBeGreaterThan(0);
    expect(s.server!.store.repo.budget.used).toBe(0);
  }, 60_000);
});
