/**
 * Virtual-hosted-style requests (`<bucket>.<base domain>`) reach the same buckets as
 * path-style ones, with keys taken from the raw request target (`..`, `//`, `%2F` exact).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from 'undici';
import { signRequest } from '../../src/sigv4/sign.js';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';

const DOMAIN = 's3.strata.test';
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ baseDomain: DOMAIN });
});
afterAll(async () => {
  await s?.stop();
});

/** Sends a signed request to the server with `host` as the Host header. */
async function send(method: string, host: string, path: string, body?: string) {
  const headers: Record<string, string> = { host };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const signed = signRequest(
    { method, path, headers, payloadHash: 'UNSIGNED-PAYLOAD' },
    { credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, region: REGION, service: 's3' }
  );
  const target = signed.encodedQuery ? `${signed.encodedPath}?${signed.encodedQuery}` : signed.encodedPath;
  // A raw request target: a URL would normalise `..` and `//` away.
  const client = new Client(s.url);
  try {
    const res = await client.request({ path: target, method, headers: { ...headers, ...signed.headers }, ...(body !== undefined ? { body } : {}) });
    return { status: res.statusCode, text: await res.body.text() };
  } finally {
    await client.close();
  }
}

it('serves the same bucket path-style and virtual-hosted-style, keys exact', async () => {
  const port = new URL(s.url).port;
  expect((await send('PUT', `127.0.0.1:${port}`, '/vhost-bucket')).status).toBe(200);
  const vhost = `vhost-bucket.${DOMAIN}:${port}`;
  for (const key of ['plain.txt', 'a/../b', 'dir//double', 'x%2Fy', 'sp ace+plus']) {
    expect((await send('PUT', vhost, `/${key}`, `v:${key}`)).status, key).toBe(200);
    const viaPath = await send('GET', `127.0.0.1:${port}`, `/vhost-bucket/${key}`);
    expect(viaPath, key).toEqual({ status: 200, text: `v:${key}` });
  }
  const list = await send('GET', vhost, '/');
  expect(list.status).toBe(200);
  for (const key of ['plain.txt', 'a/../b', 'dir//double', 'x%2Fy', 'sp ace+plus']) expect(list.text).toContain(`<Key>${key}</Key>`);
  expect((await send('GET', `nope-bucket.${DOMAIN}:${port}`, '/')).text).toContain('<Code>NoSuchBucket</Code>');
});
