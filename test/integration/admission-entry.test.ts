/**
 * Admission at request entry (src/s3/admission.ts), on the wire.
 *
 * Proves that with the history budget full, a PUT sent with `Expect: 100-continue` is refused
 * with 403 QuotaExceeded before the server asks for the body (no `100 Continue` ever comes), as
 * are CreateMultipartUpload and a PUT whose body is sent at once — each leaving every file under
 * the data directory as it was; that an unversioned DELETE of an existing key is still admitted
 * (it only makes history expirable); and that with the pending budget exhausted a PUT is refused
 * with 503 SlowDown + Retry-After, also before 100 Continue; and that /metrics counts the refusals
 * by reason.
 */
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { signRequest } from '../../src/sigv4/sign.js';
import { ACCESS_KEY, METRICS_AUTH, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { signV4, errorCode } from './wire.js';
import { snapshot } from './support/refusals.js';

const CREDS = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };
const BUCKET = 'entry';
let s: TestServer;

async function call(o: { method: string; path: string; query?: Record<string, string>; body?: Uint8Array; headers?: Record<string, string> }) {
  const r = signV4({ host: new URL(s.url).host, credentials: CREDS, region: REGION, ...o });
  const res = await request(`${s.url}${r.target}`, { method: r.method, headers: r.headers, ...(r.body ? { body: r.body } : {}) });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

/**
 * Sends a signed PUT head announcing `length` bytes with Expect: 100-continue and returns what
 * the server answers before any body byte: the status lines seen and the final reply's text.
 */
function expectContinue(key: string, length: number): Promise<{ codes: string[]; text: string }> {
  const u = new URL(s.url);
  const headers: Record<string, string> = { host: u.host, 'content-length': String(length), expect: '100-continue' };
  const signed = signRequest({ method: 'PUT', path: `/${BUCKET}/${key}`, headers, payloadHash: 'UNSIGNED-PAYLOAD' }, { credentials: CREDS, region: REGION, service: 's3' });
  const head = [`PUT ${signed.encodedPath} HTTP/1.1`, ...Object.entries({ ...headers, ...signed.headers }).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  const sock = connect(Number(u.port), u.hostname);
  let buf = '';
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ codes: [...buf.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]!), text: buf });
    };
    // Waiting for a body that never comes shows up as a timeout (no final status).
    const timer = setTimeout(done, 5000);
    sock.on('error', reject);
    sock.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      if (/HTTP\/1\.1 (?!100)\d{3}[\s\S]*\r\n\r\n[\s\S]*<\/Error>/.test(buf) || /HTTP\/1\.1 100/.test(buf)) done();
    });
    sock.write(`${head}\r\n\r\n`);
  });
}

beforeAll(async () => {
  // Commit blobs (not the default commit log): the byte-exact checks below need every small
  // write to cost the same history bytes, and with the log a body's location names its offset
  // in a growing segment (a varint: 1-3 bytes), so the fill's last refused write can cost a
  // byte or two more than the estimate made at request entry for the next one.
  s = await startTestServer({ config: { historyBudget: 4096, commitLog: 'off' } });
  expect((await call({ method: 'PUT', path: `/${BUCKET}` })).status).toBe(200);
  // Fill the history budget with small writes until one is refused.
  for (let i = 0; ; i++) {
    const r = await call({ method: 'PUT', path: `/${BUCKET}/fill-${i}`, body: new TextEncoder().encode('x') });
    if (r.status === 403) {
      expect(errorCode(r.text)).toBe('QuotaExceeded');
      break;
    }
    expect(r.status, r.text).toBe(200);
    if (i > 200) throw new Error('the history budget never filled');
  }
});
afterAll(async () => {
  await s?.stop();
});

describe('admission at request entry', () => {
  it('refuses a PUT with Expect: 100-continue before asking for its body when the history budget is full', async () => {
    const before = snapshot(s);
    const r = await expectContinue('big', 8 * 1024 * 1024);
    expect(r.codes).toEqual(['403']);
    expect(errorCode(r.text.slice(r.text.indexOf('<?xml')))).toBe('QuotaExceeded');
    expect(r.text).toMatch(/history budget is 4096 bytes/);
    expect(snapshot(s)).toEqual(before);
  });

  it('refuses CreateMultipartUpload and a 2 MiB PUT sent at once, writing nothing', async () => {
    const before = snapshot(s);
    const mp = await call({ method: 'POST', path: `/${BUCKET}/mp`, query: { uploads: '' } });
    expect(mp.status).toBe(403);
    expect(errorCode(mp.text)).toBe('QuotaExceeded');
    const body = new Uint8Array(2 * 1024 * 1024).fill(7);
    const put = await call({ method: 'PUT', path: `/${BUCKET}/carrier`, body, headers: { 'content-md5': createHash('md5').update(body).digest('base64') } });
    expect(put.status).toBe(403);
    expect(errorCode(put.text)).toBe('QuotaExceeded');
    expect(snapshot(s)).toEqual(before);
  });

  it('still admits an unversioned DELETE of an existing key (it only makes history expirable)', async () => {
    const r = await call({ method: 'DELETE', path: `/${BUCKET}/fill-0` });
    expect(r.status).toBe(204);
    expect((await call({ method: 'GET', path: `/${BUCKET}/fill-0` })).status).toBe(404);
  });

  it('refuses with 503 SlowDown + Retry-After before 100 Continue when the pending budget is exhausted', async () => {
    const budget = s.server!.store.repo.budget;
    const release = budget.reserve(budget.limit - budget.used);
    try {
      // The history budget is full too (that check comes first): lift it for this check alone.
      s.server!.store.repo.state.history.limit = Infinity;
      const r = await expectContinue('slow', 1024);
      expect(r.codes).toEqual(['503']);
      expect(errorCode(r.text.slice(r.text.indexOf('<?xml')))).toBe('SlowDown');
      expect(r.text).toMatch(/retry-after: 1/i);
    } finally {
      release();
      s.server!.store.repo.state.history.limit = 4096;
    }
  });

  it('counts refusals by reason in the metrics', async () => {
    const text = await (await request(`${s.url}/metrics`, { headers: METRICS_AUTH })).body.text();
    const count = (reason: string) => Number(new RegExp(`^strata_budget_refusals_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    // The fill's last write, the 100-continue PUT, CreateMultipartUpload and the 2 MiB PUT.
    expect(count('history')).toBe(4);
    expect(count('pending')).toBe(1);
    expect(text).toMatch(/^strata_history_budget_bytes 4096$/m);
  });
});
