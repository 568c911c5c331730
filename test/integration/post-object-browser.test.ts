/**
 * POST Object from a real HTML form in headless Chromium: the way a web app lets its users
 * upload straight to the object store. An app server (another origin) renders a page whose
 * `<form method="post" enctype="multipart/form-data">` carries hidden fields signed by the
 * app's backend (SigV4 policy, this test's signer) and a file input; Playwright picks a
 * file and clicks the submit button, and Chromium builds and sends the multipart body
 * itself.
 *
 * Proves: the upload lands under `uploads/${filename}` with a non-ASCII file name, the
 * form's Content-Type and UTF-8 metadata, byte for byte, and Chromium follows the 303 to
 * the app's success page with bucket, key and ETag; with success_action_status 201 the
 * browser shows S3's PostResponse; a file larger than the policy's content-length-range is
 * refused (the browser shows EntityTooLarge) and nothing is stored.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startTestServer, type TestServer } from './harness.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { sigV4Fields, type Condition } from './support/post-form.js';
import { launchChromium } from '../support/chromium.js';
import { seeded } from './seeded.js';

const BUCKET = 'browser-forms';
let s: TestServer;
let s3: S3Client;
let app: Server;
let appOrigin: string;
let browser: Browser;

const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The upload page: hidden signed fields, a file input and a submit button. */
function page(variant: string): string {
  const action = `${s.url}/${BUCKET}`;
  const done = `${appOrigin}/done`;
  const conditions: Condition[] = [
    { bucket: BUCKET },
    ['starts-with', '$key', 'uploads/'],
    ['starts-with', '$Content-Type', 'image/'],
    ['starts-with', '$x-amz-meta-album', ''],
  ];
  const fields: Record<string, string> = { key: 'uploads/${filename}', 'Content-Type': 'image/png', 'x-amz-meta-album': 'Vacances d’été' };
  if (variant === 'redirect') {
    conditions.push({ success_action_redirect: done }, ['content-length-range', 1, 10 * 1024 * 1024]);
    fields.success_action_redirect = done;
  } else if (variant === '201') {
    conditions.push({ success_action_status: '201' });
    fields.success_action_status = '201';
  } else {
    conditions.push(['content-length-range', 1, 1000]);
  }
  const all = { ...fields, ...sigV4Fields(conditions) };
  const inputs = Object.entries(all)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('\n');
  return `<!doctype html><meta charset="utf-8"><title>upload</title>
<form action="${action}" method="post" enctype="multipart/form-data">
${inputs}
<input type="file" name="file" id="file">
<button type="submit" id="go">Upload</button>
</form>`;
}

beforeAll(async () => {
  s = await startTestServer();
  s3 = createS3Client(s.url, new WireLog());
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  app = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://app');
    if (u.pathname === '/done') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>done</title><p id="ok">uploaded</p>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(u.searchParams.get('v') ?? 'redirect'));
  });
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()));
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => app?.close(r));
  s3?.destroy();
  await s?.stop();
});

/** Opens the page, picks `file`, submits, and waits for the browser's next page. */
async function submit(variant: string, file: { name: string; data: Buffer }) {
  const p = await browser.newPage();
  await p.goto(`${appOrigin}/?v=${variant}`);
  await p.setInputFiles('#file', { name: file.name, mimeType: 'image/png', buffer: file.data });
  await Promise.all([p.waitForNavigation({ waitUntil: 'load' }), p.click('#go')]);
  return p;
}

describe('POST Object from an HTML form in Chromium', () => {
  it('uploads the picked file and follows the redirect to the app', async () => {
    const data = seeded(1_500_000, 21); // several carrier pieces
    const p = await submit('redirect', { name: 'été.png', data });
    try {
      const landed = new URL(p.url());
      expect(landed.origin + landed.pathname).toBe(`${appOrigin}/done`);
      expect(landed.searchParams.get('bucket')).toBe(BUCKET);
      expect(landed.searchParams.get('key')).toBe('uploads/été.png');
      const etag = `"${createHash('md5').update(data).digest('hex')}"`;
      expect(landed.searchParams.get('etag')).toBe(etag);
      expect(await p.textContent('#ok')).toBe('uploaded');
    } finally {
      await p.close();
    }
    const g = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'uploads/été.png' }));
    expect((await bytesOf(g.Body)).equals(data)).toBe(true);
    expect(g.ContentType).toBe('image/png');
    expect(g.Metadata?.album).toBe(`=?UTF-8?B?${Buffer.from('Vacances d’été').toString('base64')}?=`);
  });

  it('shows S3’s PostResponse for success_action_status 201', async () => {
    const p = await submit('201', { name: 'small.png', data: Buffer.from('tiny png') });
    try {
      const text = (await p.textContent('body')) ?? (await p.content());
      expect(text).toContain('uploads/small.png');
      expect(text).toContain(BUCKET);
    } finally {
      await p.close();
    }
    const h = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'uploads/small.png' }));
    expect(h.ContentLength).toBe(8);
  });

  it('refuses a file over the policy’s content-length-range; nothing is stored', async () => {
    const p = await submit('limited', { name: 'big.png', data: seeded(5000, 22) });
    try {
      expect(await p.content()).toContain('EntityTooLarge');
    } finally {
      await p.close();
    }
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'uploads/big.png' })))).status).toBe(404);
  });
});
