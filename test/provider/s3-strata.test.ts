/**
 * The s3 provider against a second Strata server (its own S3 API, started here on
 * 127.0.0.1): the shared contract with no quirks — Strata enforces conditional writes, so
 * the probe must say so and the conditional-put tests run — and a whole repository kept
 * in that server: a Store on the s3 provider survives a reopen and verifies clean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createS3Provider,
  DEFAULT_PART_BYTES,
  type S3Provider,
} from '../../src/provider/s3/index.js';
import { runProviderContract } from './contract.js';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from '../integration/harness.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { signRequest } from '../../src/sigv4/sign.js';

const BUCKET = 'provider-bucket';
let server: TestServer;
const opened: S3Provider[] = [];
let namespace = 0;

beforeAll(async () => {
  // A child process, so that the contract's memory bounds measure the provider alone.
  server = await startTestServer({ child: true });
  const host = new URL(server.url).host;
  const signed = signRequest(
    { method: 'PUT', path: `/${BUCKET}`, headers: { host } },
    { credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, region: 'us-east-1', service: 's3' }
  );
  const res = await fetch(`${server.url}/${BUCKET}`, { method: 'PUT', headers: { ...signed.headers } });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  for (const p of opened) await p.close().catch(() => {});
  await server?.stop();
});

async function strataProvider(prefix: string): Promise<S3Provider> {
  const p = await createS3Provider({
    endpoint: server.url,
    bucket: BUCKET,
    prefix,
    accessKeyId: ACCESS_KEY,
    secretAccessKey: SECRET_KEY,
    conditionalWrites: 'probe',
    retry: { attempts: 2, baseDelayMs: 10 },
  });
  opened.push(p);
  return p;
}

// Namespaces are 6 bytes ("ns001/"), and Strata enforces S3's 1024-byte key limit on the
// whole key: provider keys can have 1018 bytes.
runProviderContract({
  name: 's3 (Strata)',
  unsizedBufferBytes: DEFAULT_PART_BYTES,
  create: () => strataProvider(`ns${String(++namespace).padStart(3, '0')}/`),
  etagPerWrite: false,
  maxKeyBytes: 1018,
});

describe('s3 provider on a Strata server', () => {
  it('probes conditional writes and finds them enforced', async () => {
    const p = await strataProvider('probe/');
    expect(p.capabilities.conditionalWrites).toBe(true);
    expect((await p.list()).items).toEqual([]);
  });

  it('keeps a whole repository: a Store on it survives a reopen and verifies clean', async () => {
    const p = await strataProvider('repo/');
    const store = await Store.open(p);
    await store.createBucket('inner');
    const body = new Uint8Array(700 * 1024).map((_, i) => i * 7);
    async function* one(b: Uint8Array) {
      yield b;
    }
    await store.putObject('inner', 'small', one(body.subarray(0, 1000)), { size: 1000 });
    await store.putObject('inner', 'carrier', one(body), { size: body.length });
    await store.checkpoint();
    await store.putObject('inner', 'after', one(body.subarray(0, 10)), { size: 10 });
    await store.close();
    const again = await Store.open(await strataProvider('repo/'));
    const read = async (k: string) => {
      const parts: Uint8Array[] = [];
      for await (const c of (await again.getObject('inner', k)).body) parts.push(c);
      return Buffer.concat(parts);
    };
    expect(Buffer.compare(await read('carrier'), Buffer.from(body))).toBe(0);
    expect((await read('small')).length).toBe(1000);
    expect((await again.listObjects('inner')).contents.map((e) => e.key)).toEqual(['after', 'carrier', 'small']);
    const report = await verifyRepository(await strataProvider('repo/'));
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });
});
