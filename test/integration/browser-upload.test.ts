/**
 * A web page in headless Chromium uploads a file straight to Strata, the way a browser app
 * does: it hashes the file (CRC32C, streamed through the Strata wasm codec bundle
 * `dist/browser/codec.js`), asks its own backend for a presigned PUT URL that signs that
 * checksum as the `x-amz-checksum-crc32c` header, and PUTs the bytes cross-origin (the page
 * is served from another port, so Chromium sends a CORS preflight first, answered by the
 * bucket's PutBucketCors rules).
 *
 * Proves: the preflight is answered; the upload succeeds and the stored CRC32C is the one
 * the page computed (and Node's); a body that does not match its signed checksum is refused
 * with BadDigest, readable by the page, and nothing is stored; the same holds when the AWS
 * SDK presigner carries the checksum in the query string instead of a header; a page from
 * an origin the rules do not list is refused at the preflight.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketCorsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { presignUrl } from '../../src/sigv4/index.js';
import { checksum } from '../../src/checksum/index.js';
import { launchChromium } from '../support/chromium.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';

const BUNDLE = fileURLToPath(new URL('../../dist/browser/codec.js', import.meta.url));
const BUCKET = 'browser-uploads';
const FILE_SIZE = 3 * 1024 * 1024 + 5;
const FILE_SEED = 77;

/**
 * The page's script: the app code. `window.upload(opts)` builds the file from a seed (the
 * same xorshift32 words as test/support/random.ts), hashes it in 256 KiB slices, presigns
 * through its backend and PUTs it; `corrupt` flips one byte after hashing (a body damaged
 * on the way).
 */
const PAGE_SCRIPT = `
import * as codec from '/codec.js';

function seeded(n, seed) {
  let x = seed >>> 0 || 0x9e3779b9;
  const words = new Uint32Array(Math.ceil(n / 4));
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    words[i] = x;
  }
  return new Uint8Array(words.buffer, 0, n);
}

const base64 = (bytes) => btoa(String.fromCharCode(...bytes));

window.upload = async ({ size, seed, key, corrupt, via }) => {
  const file = new File([seeded(size, seed)], key, { type: 'application/octet-stream' });
  const hasher = codec.createHasher('crc32c');
  for (let at = 0; at < file.size; at += 256 * 1024) {
    hasher.update(new Uint8Array(await file.slice(at, at + 256 * 1024).arrayBuffer()));
  }
  const crc = base64(hasher.digest());
  const oneShot = base64(codec.checksum('crc32c', new Uint8Array(await file.arrayBuffer())));
  const q = new URLSearchParams({ key, crc, via });
  const { url } = await (await fetch('/presign?' + q)).json();
  let body = file;
  if (corrupt) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    bytes[bytes.length >> 1] ^= 1;
    body = new Blob([bytes]);
  }
  try {
    const headers = via === 'header' ? { 'x-amz-checksum-crc32c': crc } : {};
    const res = await fetch(url, { method: 'PUT', headers, body });
    return {
      url, crc, oneShot, status: res.status, text: await res.text(),
      etag: res.headers.get('etag'), echoed: res.headers.get('x-amz-checksum-crc32c'),
    };
  } catch (err) {
    return { url, crc, oneShot, status: 0, text: String(err), etag: null, echoed: null };
  }
};
window.ready = true;
`;

interface UploadResult {
  url: string;
  crc: string;
  oneShot: string;
  status: number;
  text: string;
  etag: string | null;
  echoed: string | null;
}

let s: TestServer;
let client: S3Client;
let app: Server;
let appPort: number;
let browser: Browser;

/**
 * How the checksum travels: 'header' signs it into X-Amz-SignedHeaders (Strata's own
 * presignUrl) and the page sends the header; 'query' is what the AWS SDK presigner does
 * with ChecksumCRC32C: it hoists the value into the signed query string, and the page
 * sends no checksum header at all.
 */
type Via = 'header' | 'query';

async function presign(key: string, crc: string, via: Via): Promise<string> {
  if (via === 'query') {
    return getSignedUrl(
      client,
      new PutObjectCommand({ Bucket: BUCKET, Key: key, ChecksumCRC32C: crc }),
      { expiresIn: 300 }
    );
  }
  return presignUrl(
    {
      method: 'PUT',
      protocol: 'http:',
      host: `127.0.0.1:${s.port}`,
      path: `/${BUCKET}/${key}`,
      headers: { 'x-amz-checksum-crc32c': crc },
      expiresSeconds: 300,
    },
    {
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      region: REGION,
      service: 's3',
    }
  );
}

/** The app's backend: its page, the codec bundle, and a presigning endpoint. */
function startApp(): Promise<Server> {
  const bundle = readFileSync(BUNDLE);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://app');
    if (url.pathname === '/codec.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    } else if (url.pathname === '/presign') {
      presign(
        url.searchParams.get('key')!,
        url.searchParams.get('crc')!,
        url.searchParams.get('via') as Via
      ).then(
        (signed) =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ url: signed })),
        (err: unknown) => res.writeHead(500).end(String(err))
      );
    } else {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><title>upload</title><script type="module">${PAGE_SCRIPT}</script>`);
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function uploadFrom(
  origin: string,
  opts: { key: string; corrupt?: boolean; via?: Via }
): Promise<UploadResult> {
  const page: Page = await browser.newPage();
  try {
    await page.goto(origin);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    return await page.evaluate(
      (o) => (window as unknown as { upload(x: typeof o): Promise<UploadResult> }).upload(o),
      {
        size: FILE_SIZE,
        seed: FILE_SEED,
        key: opts.key,
        corrupt: opts.corrupt ?? false,
        via: opts.via ?? 'header',
      }
    );
  } finally {
    await page.close();
  }
}

const preflights = () =>
  s.logs
    .map((l) => JSON.parse(l) as { op?: string; status?: number; bucket?: string; code?: string })
    .filter((l) => l.op === 'CorsPreflight');

beforeAll(async () => {
  expect(existsSync(BUNDLE), 'dist/browser/codec.js is built by `npm run build:js`').toBe(true);
  s = await startTestServer();
  client = new S3Client({
    endpoint: s.url,
    region: REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    maxAttempts: 1,
  });
  app = await startApp();
  appPort = (app.address() as AddressInfo).port;
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await client.send(
    new PutBucketCorsCommand({
      Bucket: BUCKET,
      CORSConfiguration: {
        CORSRules: [
          {
            AllowedOrigins: [`http://127.0.0.1:${appPort}`],
            AllowedMethods: ['PUT'],
            AllowedHeaders: ['x-amz-checksum-crc32c', 'content-type'],
            ExposeHeaders: ['ETag', 'x-amz-checksum-crc32c'],
            MaxAgeSeconds: 60,
          },
        ],
      },
    })
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (app ? app.close(r) : r(undefined)));
  client?.destroy();
  await s?.stop();
});

describe('browser upload with a presigned URL, a wasm CRC32C and CORS', () => {
  it('uploads cross-origin after a preflight; the stored CRC32C is the page’s', async () => {
    const r = await uploadFrom(`http://127.0.0.1:${appPort}`, { key: 'photos/good.bin' });
    const bytes = randomBytes(FILE_SIZE, FILE_SEED);
    const nodeCrc = Buffer.from(checksum('crc32c', bytes)).toString('base64');
    // SigV4 query auth with the checksum as a signed header the browser must send.
    expect(new URL(r.url).searchParams.get('X-Amz-SignedHeaders')).toBe(
      'host;x-amz-checksum-crc32c'
    );
    expect(r.crc).toBe(nodeCrc);
    expect(r.oneShot).toBe(nodeCrc);
    expect(r, r.text).toMatchObject({ status: 200, echoed: nodeCrc });
    expect(r.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(preflights()).toEqual([expect.objectContaining({ bucket: BUCKET, status: 200 })]);

    const head = await client.send(
      new HeadObjectCommand({ Bucket: BUCKET, Key: 'photos/good.bin', ChecksumMode: 'ENABLED' })
    );
    expect(head.ChecksumCRC32C).toBe(nodeCrc);
    expect(head.ContentLength).toBe(FILE_SIZE);
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'photos/good.bin' }));
    expectBytes(await got.Body!.transformToByteArray(), bytes, 'stored object');
  });

  it('refuses a body that does not match its signed checksum (BadDigest) and stores nothing', async () => {
    const r = await uploadFrom(`http://127.0.0.1:${appPort}`, {
      key: 'photos/bad.bin',
      corrupt: true,
    });
    // The error response carries the CORS headers too, so the page can read why.
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain('<Code>BadDigest</Code>');
    expect(preflights().filter((p) => p.status === 200).length).toBe(2);
    await expect(
      client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'photos/bad.bin' }))
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
    const list = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(list.Contents?.map((o) => o.Key)).toEqual(['photos/good.bin']);
  });

  it('verifies a checksum the AWS SDK presigner hoisted into the query string', async () => {
    const good = await uploadFrom(`http://127.0.0.1:${appPort}`, {
      key: 'photos/sdk.bin',
      via: 'query',
    });
    const signedHeaders = new URL(good.url).searchParams;
    expect(signedHeaders.get('X-Amz-SignedHeaders')).toBe('host');
    expect(signedHeaders.get('x-amz-checksum-crc32c')).toBe(good.crc);
    expect(good, good.text).toMatchObject({ status: 200, echoed: good.crc });
    const head = await client.send(
      new HeadObjectCommand({ Bucket: BUCKET, Key: 'photos/sdk.bin', ChecksumMode: 'ENABLED' })
    );
    expect(head.ChecksumCRC32C).toBe(good.crc);

    const bad = await uploadFrom(`http://127.0.0.1:${appPort}`, {
      key: 'photos/sdk-bad.bin',
      via: 'query',
      corrupt: true,
    });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.text).toContain('<Code>BadDigest</Code>');
    expect(preflights().filter((p) => p.status === 200).length).toBe(4);
    const list = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(list.Contents?.map((o) => o.Key)).toEqual(['photos/good.bin', 'photos/sdk.bin']);
  });

  it('refuses a page from an origin the CORS rules do not list, at the preflight', async () => {
    const r = await uploadFrom(`http://localhost:${appPort}`, { key: 'photos/foreign.bin' });
    expect(r.status).toBe(0); // fetch() rejected: the browser blocked the request
    expect(r.text).toMatch(/TypeError/);
    expect(preflights().at(-1)).toMatchObject({
      bucket: BUCKET,
      status: 403,
      code: 'AccessForbidden',
    });
    await expect(
      client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'photos/foreign.bin' }))
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
  });
});
