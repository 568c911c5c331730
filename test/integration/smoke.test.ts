/** The server answers health, metrics and authenticated S3 over real HTTP (undici fetch). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

it('serves /health and /metrics anonymously and refuses anonymous S3 requests nothing allows', async () => {
  const health = await fetch(`${s.url}/health`);
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ status: 'ok' });
  expect(health.headers.get('x-amz-request-id')).toMatch(/^[0-9A-F]{16}$/);
  const anon = await fetch(`${s.url}/some-bucket/key`);
  expect(anon.status).toBe(403);
  expect(await anon.text()).toContain('<Code>AccessDenied</Code>');
  const metrics = await (await fetch(`${s.url}/metrics`)).text();
  // Anonymous requests are routed, then refused by authorization (no bucket allows them).
  expect(metrics).toContain('strata_requests_total{op="GetObject",status="403"} 1');
  expect(metrics).toContain('# TYPE strata_request_duration_seconds histogram');
  expect(metrics).toContain('strata_commit_sequence');
  const lines = s.logs.map((l) => JSON.parse(l) as { msg: string; status?: number });
  expect(lines.some((l) => l.msg === 'request' && l.status === 403)).toBe(true);
});
