/**
 * Encryption requests Strata refuses, each proven to write nothing: SSE-KMS (501), malformed
 * or contradictory SSE / SSE-C header sets (400, with S3's codes), x-amz-server-side-
 * encryption on operations where S3 rejects it (GET, HEAD, UploadPart, Complete, DELETE...),
 * bucket encryption documents it cannot honour, and SSE-S3 on a server without a master
 * key. "Nothing written": the object, upload or part is absent afterwards, the files under
 * the data directory are exactly as before, and the admission budget is back to zero.
 *
 * Requests are signed with our own signer so the checks behind authentication are reached.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from '../support/random.js';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { errorCode, signV4, type WireRequest } from './wire.js';
import { expectRefused, snapshot } from './support/refusals.js';
import { createApp } from '../../src/s3/app.js';
import { Store } from '../../src/store/store.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { Metrics } from '../../src/server/metrics.js';
import { Logger } from '../../src/server/log.js';
import { KeyRegistry } from '../../src/store/keys-registry.js';
import { createSealer } from '../../src/store/keys-seal.js';

const BUCKET = 'sse-refusals';
const CREDS = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };
const KEY32 = Buffer.from(randomBytes(32, 5));
const ssecHeaders = (key: Buffer = KEY32, md5: string = createHash('md5').update(key).digest('base64')) => ({
  'x-amz-server-side-encryption-customer-algorithm': 'AES256',
  'x-amz-server-side-encryption-customer-key': key.toString('base64'),
  'x-amz-server-side-encryption-customer-key-md5': md5,
});

let s: TestServer;

interface Reply {
  status: number;
  text: string;
}

async function send(url: string, r: WireRequest): Promise<Reply> {
  const res = await request(`${url}${r.target}`, { method: r.method, headers: r.headers, ...(r.body ? { body: r.body } : {}) });
  return { status: res.statusCode, text: await res.body.text() };
}

function call(o: { method: string; path: string; query?: Record<string, string>; headers?: Record<string, string>; body?: Uint8Array }, url = s.url): Promise<Reply> {
  return send(url, signV4({ host: new URL(url).host, credentials: CREDS, region: REGION, ...o }));
}

/** Runs `act`, expects S3 error `status`/`code` (no body for HEAD) and no change on disk. */
const refused = (act: () => Promise<Reply>, status: number, code: string, head = false): Promise<void> =>
  expectRefused(s, act, status, code, head).then(() => undefined);
const snapshotNow = () => snapshot(s);

beforeAll(async () => {
  s = await startTestServer();
  expect((await call({ method: 'PUT', path: `/${BUCKET}` })).status).toBe(200);
  expect((await call({ method: 'PUT', path: `/${BUCKET}/kept`, body: Buffer.from('kept') })).status).toBe(200);
});
afterAll(async () => {
  await s?.stop();
});

const BODY = randomBytes(700 * 1024, 9); // a carrier: refusals must come before any chunk is written

it('control: an accepted write does change the files under the data directory', async () => {
  const before = snapshotNow();
  expect((await call({ method: 'PUT', path: `/${BUCKET}/control`, headers: { 'x-amz-server-side-encryption': 'AES256' }, body: BODY })).status).toBe(200);
  expect(snapshotNow()).not.toEqual(before);
});

describe('PutObject refuses what it cannot honour, before any byte is stored', () => {
  const cases: [string, Record<string, string>, number, string][] = [
    ['SSE-KMS', { 'x-amz-server-side-encryption': 'aws:kms' }, 501, 'NotImplemented'],
    ['SSE-KMS with a key id', { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': 'k1' }, 501, 'NotImplemented'],
    ['DSSE-KMS', { 'x-amz-server-side-encryption': 'aws:kms:dsse' }, 501, 'NotImplemented'],
    ['an unknown algorithm', { 'x-amz-server-side-encryption': 'aes:kms' }, 400, 'InvalidArgument'],
    ['an empty algorithm', { 'x-amz-server-side-encryption': '' }, 400, 'InvalidArgument'],
    ['AES256 with a KMS key id', { 'x-amz-server-side-encryption': 'AES256', 'x-amz-server-side-encryption-aws-kms-key-id': 'k1' }, 400, 'InvalidArgument'],
    ['a KMS context alone', { 'x-amz-server-side-encryption-context': 'e30=' }, 400, 'InvalidArgument'],
    ['a bucket-key flag that is not a boolean', { 'x-amz-server-side-encryption': 'AES256', 'x-amz-server-side-encryption-bucket-key-enabled': 'yes' }, 400, 'InvalidArgument'],
    ['SSE-S3 and SSE-C together', { 'x-amz-server-side-encryption': 'AES256', ...ssecHeaders() }, 400, 'InvalidArgument'],
    ['SSE-KMS and SSE-C together', { 'x-amz-server-side-encryption': 'aws:kms', ...ssecHeaders() }, 400, 'InvalidArgument'],
    ['an SSE-C key without its algorithm', { 'x-amz-server-side-encryption-customer-key': KEY32.toString('base64') }, 400, 'InvalidArgument'],
    ['an SSE-C algorithm without a key', { 'x-amz-server-side-encryption-customer-algorithm': 'AES256' }, 400, 'InvalidArgument'],
    ['an SSE-C algorithm other than AES256', { ...ssecHeaders(), 'x-amz-server-side-encryption-customer-algorithm': 'AES128' }, 400, 'InvalidEncryptionAlgorithmError'],
    ['an SSE-C key without its MD5', (({ 'x-amz-server-side-encryption-customer-key-md5': _, ...h }) => h)(ssecHeaders()), 400, 'InvalidArgument'],
    ['an SSE-C key with a wrong MD5', ssecHeaders(KEY32, 'AAAAAAAAAAAAAAAAAAAAAA=='), 400, 'InvalidArgument'],
    ['a 16-byte SSE-C key', ssecHeaders(KEY32.subarray(0, 16)), 400, 'InvalidArgument'],
    ['a 33-byte SSE-C key', ssecHeaders(Buffer.concat([KEY32, Buffer.from([1])])), 400, 'InvalidArgument'],
    ['an SSE-C key that is not base64', { ...ssecHeaders(), 'x-amz-server-side-encryption-customer-key': '!'.repeat(44) }, 400, 'InvalidArgument'],
  ];
  for (const [what, headers, status, code] of cases) {
    it(`${what} -> ${status} ${code}, nothing stored`, async () => {
      await refused(() => call({ method: 'PUT', path: `/${BUCKET}/refused`, headers, body: BODY }), status, code);
      expect((await call({ method: 'HEAD', path: `/${BUCKET}/refused` })).status).toBe(404);
    });
  }

  it('CreateMultipartUpload and CopyObject with SSE-KMS -> 501, no upload, no copy', async () => {
    const kms = { 'x-amz-server-side-encryption': 'aws:kms' };
    await refused(() => call({ method: 'POST', path: `/${BUCKET}/mp`, query: { uploads: '' }, headers: kms }), 501, 'NotImplemented');
    const uploads = await call({ method: 'GET', path: `/${BUCKET}`, query: { uploads: '' } });
    expect(uploads.text).not.toContain('<Upload>');
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/copied`, headers: { ...kms, 'x-amz-copy-source': `/${BUCKET}/kept` } }), 501, 'NotImplemented');
    expect((await call({ method: 'HEAD', path: `/${BUCKET}/copied` })).status).toBe(404);
  });
});

describe('x-amz-server-side-encryption where S3 rejects it -> 400 InvalidArgument, nothing done', () => {
  const sse = { 'x-amz-server-side-encryption': 'AES256' };
  it('GET and HEAD of an object, and a bucket listing', async () => {
    await refused(() => call({ method: 'GET', path: `/${BUCKET}/kept`, headers: sse }), 400, 'InvalidArgument');
    await refused(() => call({ method: 'HEAD', path: `/${BUCKET}/kept`, headers: sse }), 400, 'InvalidArgument', true);
    await refused(() => call({ method: 'GET', path: `/${BUCKET}`, query: { 'list-type': '2' }, headers: sse }), 400, 'InvalidArgument');
  });

  it('DELETE: the object is still there', async () => {
    await refused(() => call({ method: 'DELETE', path: `/${BUCKET}/kept`, headers: sse }), 400, 'InvalidArgument');
    expect((await call({ method: 'GET', path: `/${BUCKET}/kept` })).text).toBe('kept');
  });

  it('UploadPart and CompleteMultipartUpload: no part stored, the upload still open', async () => {
    const created = await call({ method: 'POST', path: `/${BUCKET}/mp2`, query: { uploads: '' } });
    const uploadId = /<UploadId>([^<]+)</.exec(created.text)![1]!;
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/mp2`, query: { uploadId, partNumber: '1' }, headers: sse, body: BODY }), 400, 'InvalidArgument');
    const parts = await call({ method: 'GET', path: `/${BUCKET}/mp2`, query: { uploadId } });
    expect(parts.status).toBe(200);
    expect(parts.text).not.toContain('<Part>');
    const xml = Buffer.from('<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>');
    await refused(() => call({ method: 'POST', path: `/${BUCKET}/mp2`, query: { uploadId }, headers: sse, body: xml }), 400, 'InvalidArgument');
    expect((await call({ method: 'GET', path: `/${BUCKET}/mp2`, query: { uploadId } })).status).toBe(200);
  });
});

describe('bucket default encryption it cannot honour', () => {
  const doc = (alg: string, extra = '') =>
    Buffer.from(
      `<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>${alg}</SSEAlgorithm>${extra}</ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`
    );
  const put = (body: Uint8Array) => call({ method: 'PUT', path: `/${BUCKET}`, query: { encryption: '' }, headers: { 'content-md5': createHash('md5').update(body).digest('base64') }, body });
  for (const [what, body, status, code] of [
    ['aws:kms', doc('aws:kms', '<KMSMasterKeyID>k</KMSMasterKeyID>'), 501, 'NotImplemented'],
    ['aws:kms:dsse', doc('aws:kms:dsse'), 501, 'NotImplemented'],
    ['an unknown algorithm', doc('AES128'), 400, 'InvalidArgument'],
    ['AES256 with a KMS key id', doc('AES256', '<KMSMasterKeyID>k</KMSMasterKeyID>'), 400, 'InvalidArgument'],
    ['no rule', Buffer.from('<ServerSideEncryptionConfiguration/>'), 400, 'MalformedXML'],
    ['two rules', Buffer.from(`<ServerSideEncryptionConfiguration>${'<Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule>'.repeat(2)}</ServerSideEncryptionConfiguration>`), 400, 'MalformedXML'],
    ['no algorithm', Buffer.from('<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault/></Rule></ServerSideEncryptionConfiguration>'), 400, 'MalformedXML'],
    ['not XML', Buffer.from('AES256'), 400, 'MalformedXML'],
  ] as const) {
    it(`${what} -> ${status} ${code}; no configuration stored`, async () => {
      await refused(() => put(body), status, code);
      const got = await call({ method: 'GET', path: `/${BUCKET}`, query: { encryption: '' } });
      expect([got.status, errorCode(got.text)]).toEqual([404, 'ServerSideEncryptionConfigurationNotFoundError']);
    });
  }
});

describe('a server without a master key', () => {
  let server: Server;
  let url: string;
  let store: Store;
  beforeAll(async () => {
    store = await Store.open(await createMemoryProvider({}));
    await store.createBucket('nokey');
    // Keys are sealed in the repository; their sealing key is not the server's master key
    // (deps.masterKey stays unset: that is what this block tests).
    const keys = new KeyRegistry(store, createSealer({ key: Buffer.alloc(32, 7), id: 'keys-only', source: 'test' }));
    await keys.create({ id: ACCESS_KEY, secret: SECRET_KEY, admin: true });
    const app = createApp({ store, keys, secrets: keys, metrics: new Metrics(), log: new Logger('off') });
    server = await new Promise<Server>((resolve) => {
      const srv = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', overrideGlobalObjects: false }, () => resolve(srv as Server));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await store.close();
  });

  it('refuses SSE-S3 (PUT, default encryption) with 501 and writes nothing; SSE-C still works', async () => {
    const seq = store.repo.seq;
    const put = await call({ method: 'PUT', path: '/nokey/a', headers: { 'x-amz-server-side-encryption': 'AES256' }, body: BODY }, url);
    expect([put.status, errorCode(put.text)]).toEqual([501, 'NotImplemented']);
    const body = Buffer.from('<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>');
    const cfg = await call({ method: 'PUT', path: '/nokey', query: { encryption: '' }, headers: { 'content-md5': createHash('md5').update(body).digest('base64') }, body }, url);
    expect([cfg.status, errorCode(cfg.text)]).toEqual([501, 'NotImplemented']);
    expect(store.repo.seq, 'no commit was made').toBe(seq);
    expect((await call({ method: 'HEAD', path: '/nokey/a' }, url)).status).toBe(404);
    const c = await call({ method: 'PUT', path: '/nokey/c', headers: ssecHeaders(), body: Buffer.from('secret') }, url);
    expect(c.status).toBe(200);
    expect((await call({ method: 'GET', path: '/nokey/c', headers: ssecHeaders() }, url)).text).toBe('secret');
  });
});
