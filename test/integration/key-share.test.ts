/**
 * Per-access-key shares (`--key-share`, s3/key-share.ts) on the wire: a client holding a valid
 * key that opens many uploads and stalls them.
 *
 * Proves, against the real server on 127.0.0.1 with two admin keys:
 *   - requests: with `--max-connections 8 --key-share 50`, the hostile key's fifth request in
 *     flight is answered 503 SlowDown + Retry-After at once (its four stalled uploads stay
 *     open), while the other key's PUT and GET succeed; once one stalled upload goes away the
 *     hostile key is served again; /metrics counts the refusal;
 *   - the pending budget: with a budget of twice the smallest share, stalled 500 KiB uploads of
 *     the hostile key are admitted only while they hold at most its share at 50% (each holds
 *     its body's 500 KiB and its body reader's memory), and the other key's 500 KiB PUT
 *     then lands byte-exact, and so does its POST Object form upload while the hostile key's
 *     own form is refused at its share (a form counts against its signer once read); at
 *     `--key-share 100` (no share) the same attack takes the whole
 *     budget and the other key's PUT is refused with 503 SlowDown — so the share, not luck,
 *     is what keeps it served.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { errorCode, requestHead, signV4, type RawResponse } from './wire.js';
import { hold, metrics, until, type HeldRequest } from './support/bounds.js';
import { formBody, postForm, sigV4Fields } from './support/post-form.js';
import type { ServerConfig } from '../../src/server/config.js';
import { MIN_KEY_SHARE_BYTES } from '../../src/s3/key-share.js';

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
 * and stalls. Resolves to the held request and the server's answer if it refused it, or
 * undefined once the upload holds its reservation (the pending bytes grew: it waits for its
 * body), whichever comes first.
 */
async function stalledPut(creds: typeof HOSTILE, key: string, length: number): Promise<{ h: HeldRequest; answer: { status: number; body: string } | undefined }> {
  const before = (await metrics(s!.url)).strata_pending_bytes ?? 0;
  const w = signV4({ method: 'PUT', path: `/${BUCKET}/${key}`, headers: { 'content-length': String(length) }, payloadHash: 'UNSIGNED-PAYLOAD', host: new URL(s!.url).host, credentials: creds, region: REGION });
  const h = await hold(s!.port, [requestHead(w), Buffer.alloc(16, 7)]);
  held.push(h);
  let refused: RawResponse | undefined;
  void h.response.then((r) => (refused = r));
  const admitted = () => metrics(s!.url).then((m) => (m.strata_pending_bytes ?? 0) >= before + length);
  expect(await until(async () => refused !== undefined || (await admitted()), 10_000)).toBe(true);
  return { h, answer: refused ? { status: refused.status, body: Buffer.from(refused.body).toString('utf8') } : undefined };
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
    // Twice the smallest share there is (MIN_KEY_SHARE_BYTES, 12 MiB): a share of 50% is that.
    await start({ pendingBytes: 2 * MIN_KEY_SHARE_BYTES, keyShare: share, maxConnections: 256 });
    const size = 500 * KIB;
    let admitted = 0;
    let refusal: string | undefined;
    for (let i = 0; i < 80 && refusal === undefined; i++) {
      const { answer } = await stalledPut(HOSTILE, `big-${i}`, size);
      if (answer === undefined) admitted++;
      else {
        expect(answer.status).toBe(503);
        refusal = answer.body;
      }
    }
    expect(errorCode(refusal ?? '')).toBe('SlowDown');
    expect(admitted).toBeGreaterThanOrEqual(1);
    // What the stalled uploads hold: each its 500 KiB body's reservation and its body reader's.
    const hostileHolds = (await metrics(s!.url)).strata_pending_bytes!;
    const body = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
    const put = await call(OTHER, 'PUT', `/${BUCKET}/other`, body);
    if (otherServed) {
      // The hostile key stopped at its share.
      expect(admitted).toBeGreaterThan(2);
      expect(hostileHolds).toBeLessThanOrEqual(MIN_KEY_SHARE_BYTES);
      expect(refusal).toContain('--key-share');
      expect(put.status).toBe(200);
      const got = await call(OTHER, 'GET', `/${BUCKET}/other`);
      expect(Buffer.compare(got.bytes, body)).toBe(0);
      expect((await metrics(s!.url)).strata_key_share_budget_refusals_total).toBeGreaterThanOrEqual(1);
      // A POST Object form counts against its signer once read, not as anonymous: the hostile
      // key's form is refused at its share, the other key's lands.
      // 700 KiB: past a packed body, so it needs more than the little room left in the share.
      const file = new Uint8Array(700 * KIB).map((_, i) => (i * 17) & 0xff);
      const form = (creds: typeof HOSTILE, key: string) =>
        formBody({ key, ...sigV4Fields([{ bucket: BUCKET }, ['starts-with', '$key', '']], { accessKey: creds.accessKeyId, secret: creds.secretAccessKey }) }, { data: file });
      const hostileForm = await postForm(`${s!.url}/${BUCKET}`, form(HOSTILE, 'form-hostile'));
      expect(hostileForm.status).toBe(503);
      expect(hostileForm.text).toContain(`access key ${HOSTILE.accessKeyId}`);
      expect((await postForm(`${s!.url}/${BUCKET}`, form(OTHER, 'form-other'))).status).toBe(204);
      const formGot = await call(OTHER, 'GET', `/${BUCKET}/form-other`);
      expect(Buffer.compare(formGot.bytes, file)).toBe(0);
    } else {
      // No share: the hostile key took the whole budget, and the other key is refused.
      expect(hostileHolds).toBeGreaterThan(8 * 1024 * KIB);
      expect(refusal).toContain('pending budget (bytes held by requests in flight) exhausted');
      expect(put.status).toBe(503);
      expect(errorCode(put.text)).toBe('SlowDown');
      expect((await metrics(s!.url)).strata_key_share_budget_refusals_total).toBeUndefined();
    }
  });
});
