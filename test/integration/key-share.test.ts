/**
 * Per-access-key shares (`--key-share`, s3/key-share.ts) on the wire: a client holding a valid
 * key that opens many uploads and stalls them.
 *
 * Proves, against the real server on 127.0.0.1 with two admin keys:
 *   - requests: with `--max-connections 8 --key-share 50`, the hostile key's fifth request in
 *     flight is answered 503 SlowDown + Retry-After at once (its four stalled uploads stay
 *     open), while the other key's PUT and GET succeed; once one stalled upload goes away the
 *     hostile key is served again; /metrics counts the refusal;
 *   - the pending budget: with `--pending-budget 1MiB`, stalled 200 KiB uploads of the hostile
 *     key are admitted only while they hold at most its 512 KiB share at 50% (each holds its
 *     body's 200 KiB and its body reader's memory), and the other key's 200 KiB PUT
 *     then lands byte-exact; at `--key-share 100` (no share) the same attack takes the whole
 *     budget and the other key's PUT is refused with 503 SlowDown — so the share, not luck,
 *     is what keeps it served.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { errorCode, requestHead, signV4 } from './wire.js';
import { hold, metrics, until, type HeldRequest } from './support/bounds.js';
import type { ServerConfig } from '../../src/server/config.js';

const HOSTILE = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };
const OTHER = { accessKeyId: 'STRATATESTOTHERKEY02', secretAccessKey: 'strata-test-other-secret-0123456789abcd' };
const BUCKET = 'shared';
const KIB = 1024;

let s: TestServer | undefined;
const held: HeldRequest[] = [];

afterEach(async () => {
  for (const h of held.splice(0)) h.destroy();
  await s?.stop();
  s = undefined;
});

async function start(config: Partial<ServerConfig>): Promise<TestServer> {
  s = await startTestServer({ config: { credentials: [HOSTILE, OTHER], ...config } });
  const r = await call(HOSTILE, 'PUT', `/${BUCKET}`);
  expect(r.status).toBe(200);
  return s;
}

async function call(creds: typeof HOSTILE, method: string, path: string, body?: Uint8Array) {
  const w = signV4({ method, path, host: new URL(s!.url).host, credentials: creds, region: REGION, ...(body ? { body } : {}) });
  const res = await request(`${s!.url}${w.target}`, { method: w.method, headers: w.headers, ...(w.body ? { body: w.body } : {}) });
  const bytes = new Uint8Array(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, bytes, text: Buffer.from(bytes).toString('utf8') };
}

/**
 * Opens a PUT of `length` bytes signed by `creds`, sends its head and 16 bytes of its body,
 * and stalls. Resolves to the held request and, if the server answered within 1 s (a refusal
 * comes at once; an admitted upload waits for its body), that answer.
 */
async function stalledPut(creds: typeof HOSTILE, key: string, length: number): Promise<{ h: HeldRequest; answer: { status: number; body: string } | undefined }> {
  const w = signV4({ method: 'PUT', path: `/${BUCKET}/${key}`, headers: { 'content-length': String(length) }, payloadHash: 'UNSIGNED-PAYLOAD', host: new URL(s!.url).host, credentials: creds, region: REGION });
  const h = await hold(s!.port, [requestHead(w), Buffer.alloc(16, 7)]);
  held.push(h);
  const answer = await Promise.race([h.response, new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000))]);
  return { h, answer: answer ? { status: answer.status, body: Buffer.from(answer.body).toString('utf8') } : undefined };
}

describe('--key-share', () => {
  it('caps the requests one key has in flight and keeps serving the others', async () => {
    await start({ maxConnections: 8, keyShare: 50 });
    for (let i = 0; i < 4; i++) expect((await stalledPut(HOSTILE, `stall-${i}`, 64 * KIB)).answer).toBeUndefined();
    const refused = await call(HOSTILE, 'GET', `/${BUCKET}`);
    expect(refused.status).toBe(503);
    expect(errorCode(refused.text)).toBe('SlowDown');
    expect(refused.text).toContain('--key-share');
    expect(refused.headers['retry-after']).toBe('1');
    // The other key is served while the hostile key's uploads hang.
    const body = new Uint8Array(3000).map((_, i) => i * 7);
    expect((await call(OTHER, 'PUT', `/${BUCKET}/fine`, body)).status).toBe(200);
    const got = await call(OTHER, 'GET', `/${BUCKET}/fine`);
    expect(got.status).toBe(200);
    expect(Buffer.compare(got.bytes, body)).toBe(0);
    // One stalled upload gone: the hostile key gets a request through again.
    held[0]!.destroy();
    expect(await until(async () => (await call(HOSTILE, 'GET', `/${BUCKET}`)).status === 200, 5000)).toBe(true);
    const m = await metrics(s!.url);
    expect(m.strata_key_share_request_refusals_total).toBeGreaterThanOrEqual(1);
  });

  it.each([
    { share: 50, otherServed: true },
    { share: 100, otherServed: false },
  ])('at $share%, one key stalling uploads leaves the budget to the other: $otherServed', async ({ share, otherServed }) => {
    await start({ pendingBytes: 1024 * KIB, keyShare: share, maxConnections: 64 });
    const size = 200 * KIB;
    let admitted = 0;
    let refusal: string | undefined;
    for (let i = 0; i < 8 && refusal === undefined; i++) {
      const { answer } = await stalledPut(HOSTILE, `big-${i}`, size);
      if (answer === undefined) admitted++;
      else {
        expect(answer.status).toBe(503);
        refusal = answer.body;
      }
    }
    expect(errorCode(refusal ?? '')).toBe('SlowDown');
    expect(admitted).toBeGreaterThanOrEqual(1);
    // What the stalled uploads hold: each its 200 KiB body's reservation and its body reader's.
    const hostileHolds = (await metrics(s!.url)).strata_pending_bytes!;
    const body = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
    const put = await call(OTHER, 'PUT', `/${BUCKET}/other`, body);
    if (otherServed) {
      // The hostile key stopped at its share (512 KiB).
      expect(hostileHolds).toBeGreaterThan(0);
      expect(hostileHolds).toBeLessThanOrEqual(512 * KIB);
      expect(refusal).toContain('--key-share');
      expect(put.status).toBe(200);
      const got = await call(OTHER, 'GET', `/${BUCKET}/other`);
      expect(Buffer.compare(got.bytes, body)).toBe(0);
      expect((await metrics(s!.url)).strata_key_share_budget_refusals_total).toBeGreaterThanOrEqual(1);
    } else {
      // No share: the hostile key took the whole budget, and the other key is refused.
      expect(hostileHolds).toBeGreaterThan(512 * KIB);
      expect(refusal).toContain('pending budget (bytes held by requests in flight) exhausted');
      expect(put.status).toBe(503);
      expect(errorCode(put.text)).toBe('SlowDown');
      expect((await metrics(s!.url)).strata_key_share_budget_refusals_total).toBeUndefined();
    }
  });
});
