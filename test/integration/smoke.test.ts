/**
 * The server answers health, metrics and authenticated S3 over real HTTP (undici fetch).
 *
 * /health says only that the server is up; /metrics needs the bearer token (a wrong or
 * missing one is 401 with a Bearer challenge), and anonymous S3 requests are refused.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { METRICS_AUTH, startTestServer, type TestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

it('serves /health anonymously, /metrics with the token, and refuses anonymous S3 requests nothing allows', async () => {
  const health = await fetch(`${s.url}/health`);
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: 'ok' });
  expect(health.headers.get('x-amz-request-id')).toMatch(/^[0-9A-F]{16}$/);
  // Anonymous requests are routed, then refused by authorization: ListBuckets never serves them.
  const anon = await fetch(`${s.url}/`);
  expect(anon.status).toBe(403);
  expect(await anon.text()).toContain('<Code>AccessDenied</Code>');
  // A bucket that does not exist is 404 NoSuchBucket to them as to everyone (as S3 answers).
  const missing = await fetch(`${s.url}/some-bucket/key`);
  expect(missing.status).toBe(404);
  expect(await missing.text()).toContain('<Code>NoSuchBucket</Code>');
  const metrics = await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
  expect(metrics).toContain('strata_requests_total{op="ListBuckets",status="403"} 1');
  expect(metrics).toContain('strata_requests_total{op="GetObject",status="404"} 1');
  expect(metrics).toContain('# TYPE strata_request_duration_seconds histogram');
  expect(metrics).toContain('strata_commit_sequence');
  const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token-wrong-token-0000' }, { authorization: `${METRICS_AUTH.authorization}x` }];
  for (const headers of attempts) {
    const denied = await fetch(`${s.url}/metrics`, { headers });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await denied.text()).not.toContain('strata_');
  }
  const lines = s.logs.map((l) => JSON.parse(l) as { msg: string; status?: number });
  expect(lines.some((l) => l.msg === 'request' && l.status === 403)).toBe(true);
});
