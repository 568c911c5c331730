/**
 * Requests asking for something that guards their data are carried out as asked or refused
 * before anything is written — never answered 200 while the ask was ignored. Each case here
 * was accepted and ignored before (a regression test for each):
 *
 * - AWS sub-resources Strata does not implement were taken for the plain operation:
 *   `PUT /b/k?encryption` (UpdateObjectEncryption) overwrote the object with the XML,
 *   `DELETE /b/k?annotation` deleted it; `PUT /b?metadataInventoryTable` answered 200.
 * - `x-amz-write-offset-bytes` (an append) replaced the object with the appended bytes;
 *   `x-amz-storage-class: GLACIER` (or garbage) was stored as STANDARD.
 * - Preconditions on operations that do not evaluate them (x-amz-if-match-size on a DELETE,
 *   If-None-Match on UploadPart, If-Unmodified-Since on a PUT, `<Size>` in DeleteObjects,
 *   ...) were dropped: the write happened unconditionally.
 * - Checksum claims nothing compared: x-amz-checksum-* on CopyObject / UploadPartCopy /
 *   CreateMultipartUpload, a whole-object claim on Complete in an algorithm the upload did
 *   not compute, a part checksum in an algorithm the part was not hashed with;
 *   x-amz-mp-object-size on Complete; x-amz-checksum-algorithm on CopyObject.
 * - A retried Complete skipped the SSE-C key and the claims.
 * - x-amz-* headers a presigned URL carries in its query (SDK presigners put them there)
 *   were ignored: Object Lock, storage class, metadata, tags, even the copy source (a
 *   presigned CopyObject stored an empty object).
 *
 * "Nothing written": every file under the data directory is unchanged and the admission
 * budget is back to zero.
 */
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { CopyObjectCommand, GetObjectCommand, PutObjectCommand, S3Client, UploadPartCopyCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { randomBytes } from '../support/random.js';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { errorCode, md5Base64, signV4, type WireRequest } from './wire.js';
import { expectRefused, snapshot } from './support/refusals.js';

const BUCKET = 'fail-closed-headers';
const CREDS = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };
const KEY32 = Buffer.from(randomBytes(32, 41));
const ssec = (key: Buffer = KEY32, prefix = 'x-amz-server-side-encryption-customer-') => ({
  [`${prefix}algorithm`]: 'AES256',
  [`${prefix}key`]: key.toString('base64'),
  [`${prefix}key-md5`]: createHash('md5').update(key).digest('base64'),
});
const b64 = (alg: string, data: Uint8Array) => createHash(alg).update(data).digest('base64');

let s: TestServer;
let sdk: S3Client;

interface Reply {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

async function send(r: WireRequest, url = s.url): Promise<Reply> {
  const res = await request(`${url}${r.target}`, { method: r.method, headers: r.headers, ...(r.body ? { body: r.body } : {}) });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

function call(o: { method: string; path: string; query?: Record<string, string>; headers?: Record<string, string>; body?: Uint8Array }): Promise<Reply> {
  return send(signV4({ host: new URL(s.url).host, credentials: CREDS, region: REGION, ...o }));
}

/** Runs `act`, expects S3 error `status`/`code` (no body for HEAD) and no change on disk. */
const refused = (act: () => Promise<Reply>, status: number, code: string, head = false): Promise<Reply> =>
  expectRefused(s, act, status, code, head);
const snapshotNow = () => snapshot(s);

async function bodyOf(key: string, headers: Record<string, string> = {}): Promise<Buffer> {
  const signed = signV4({ method: 'GET', path: `/${BUCKET}/${key}`, headers, host: new URL(s.url).host, credentials: CREDS, region: REGION });
  const r = await request(`${s.url}${signed.target}`, { headers: signed.headers });
  expect(r.statusCode).toBe(200);
  return Buffer.from(await r.body.arrayBuffer());
}

const ORIGINAL = Buffer.from('the original object, which nothing below may change');

async function upload(key: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await call({ method: 'POST', path: `/${BUCKET}/${key}`, query: { uploads: '' }, headers });
  expect(r.status, r.text).toBe(200);
  return /<UploadId>([^<]+)<\/UploadId>/.exec(r.text)![1]!;
}

async function partsOf(key: string, uploadId: string, headers: Record<string, string> = {}): Promise<number> {
  const r = await call({ method: 'GET', path: `/${BUCKET}/${key}`, query: { uploadId }, headers });
  expect(r.status, r.text).toBe(200);
  return (r.text.match(/<Part>/g) ?? []).length;
}

function completeXml(parts: { n: number; etag: string; extra?: string }[]): Buffer {
  return Buffer.from(`<CompleteMultipartUpload>${parts.map((p) => `<Part><PartNumber>${p.n}</PartNumber><ETag>${p.etag}</ETag>${p.extra ?? ''}</Part>`).join('')}</CompleteMultipartUpload>`);
}

beforeAll(async () => {
  s = await startTestServer();
  sdk = new S3Client({
    endpoint: s.url,
    region: REGION,
    forcePathStyle: true,
    credentials: CREDS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  expect((await call({ method: 'PUT', path: `/${BUCKET}` })).status).toBe(200);
  expect((await call({ method: 'PUT', path: `/${BUCKET}/kept`, body: ORIGINAL })).status).toBe(200);
});
afterAll(async () => {
  sdk?.destroy();
  await s?.stop();
});

it('control: an accepted write changes the files under the data directory', async () => {
  const before = snapshotNow();
  expect((await call({ method: 'PUT', path: `/${BUCKET}/control`, headers: { 'x-amz-storage-class': 'STANDARD' }, body: Buffer.from('x') })).status).toBe(200);
  expect(snapshotNow()).not.toEqual(before);
});

describe('AWS sub-resources Strata does not implement are 501, never the plain operation', () => {
  it('object: PUT ?encryption / ?annotation do not overwrite, DELETE ?annotation does not delete', async () => {
    const xml = Buffer.from('<ObjectEncryption><SSEKMS><KMSKeyArn>arn:k</KMSKeyArn></SSEKMS></ObjectEncryption>');
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/kept`, query: { encryption: '' }, body: xml }), 501, 'NotImplemented');
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/kept`, query: { annotation: '' }, body: xml }), 501, 'NotImplemented');
    await refused(() => call({ method: 'DELETE', path: `/${BUCKET}/kept`, query: { annotation: '' } }), 501, 'NotImplemented');
    await refused(() => call({ method: 'GET', path: `/${BUCKET}/kept`, query: { annotation: '' } }), 501, 'NotImplemented');
    expect((await bodyOf('kept')).equals(ORIGINAL)).toBe(true);
  });

  it('bucket: abac and the metadata table configurations (PUT, GET, POST)', async () => {
    for (const sub of ['abac', 'metadataInventoryTable', 'metadataJournalTable', 'metadataAnnotationTable']) {
      await refused(() => call({ method: 'PUT', path: `/${BUCKET}`, query: { [sub]: '' }, body: Buffer.from('<X/>') }), 501, 'NotImplemented');
    }
    await refused(() => call({ method: 'GET', path: `/${BUCKET}`, query: { abac: '' } }), 501, 'NotImplemented');
    // A POST with a sub-resource is not a browser form upload.
    await refused(() => call({ method: 'POST', path: `/${BUCKET}`, query: { metadataTable: '' }, body: Buffer.from('<X/>') }), 501, 'NotImplemented');
  });
});

describe('object write headers that cannot be honoured', () => {
  it('x-amz-write-offset-bytes (an append) is 501 and the object keeps its bytes', async () => {
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/kept`, headers: { 'x-amz-write-offset-bytes': String(ORIGINAL.length) }, body: Buffer.from('+tail') }), 501, 'NotImplemented');
    expect((await bodyOf('kept')).equals(ORIGINAL)).toBe(true);
  });

  it('a storage class other than STANDARD: 501 for an S3 class, 400 InvalidStorageClass for garbage, on PUT, copy and multipart', async () => {
    for (const [cls, status, code] of [
      ['GLACIER', 501, 'NotImplemented'],
      ['REDUCED_REDUNDANCY', 501, 'NotImplemented'],
      ['DEEP_ARCHIVE', 501, 'NotImplemented'],
      ['standard', 400, 'InvalidStorageClass'],
      ['BOGUS', 400, 'InvalidStorageClass'],
    ] as const) {
      const h = { 'x-amz-storage-class': cls };
      await refused(() => call({ method: 'PUT', path: `/${BUCKET}/cold`, headers: h, body: Buffer.from('cold') }), status, code);
      await refused(() => call({ method: 'PUT', path: `/${BUCKET}/cold`, headers: { ...h, 'x-amz-copy-source': `/${BUCKET}/kept` } }), status, code);
      await refused(() => call({ method: 'POST', path: `/${BUCKET}/cold`, query: { uploads: '' }, headers: h }), status, code);
    }
    expect((await call({ method: 'HEAD', path: `/${BUCKET}/cold` })).status).toBe(404);
    expect((await call({ method: 'GET', path: `/${BUCKET}`, query: { uploads: '' } })).text).not.toContain('<Key>cold</Key>');
    expect((await call({ method: 'PUT', path: `/${BUCKET}/warm`, headers: { 'x-amz-storage-class': 'STANDARD' }, body: Buffer.from('w') })).status).toBe(200);
  });
});

describe('preconditions an operation does not evaluate are 501, the write not done', () => {
  it('DeleteObject: x-amz-if-match-size, x-amz-if-match-last-modified-time, If-None-Match, If-Unmodified-Since', async () => {
    for (const h of <Record<string, string>[]>[
      { 'x-amz-if-match-size': '1' },
      { 'x-amz-if-match-last-modified-time': new Date(0).toUTCString() },
      { 'if-none-match': '*' },
      { 'if-unmodified-since': new Date(0).toUTCString() },
    ]) {
      await refused(() => call({ method: 'DELETE', path: `/${BUCKET}/kept`, headers: h }), 501, 'NotImplemented');
    }
    expect((await bodyOf('kept')).equals(ORIGINAL)).toBe(true);
  });

  it('PutObject If-Unmodified-Since / If-Modified-Since, CopyObject If-Modified-Since, tagging If-Match', async () => {
    const past = new Date(0).toUTCString();
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/kept`, headers: { 'if-unmodified-since': past }, body: Buffer.from('lost update') }), 501, 'NotImplemented');
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/kept`, headers: { 'if-modified-since': past }, body: Buffer.from('lost update') }), 501, 'NotImplemented');
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/copy`, headers: { 'if-modified-since': past, 'x-amz-copy-source': `/${BUCKET}/kept` } }), 501, 'NotImplemented');
    const tags = Buffer.from('<Tagging><TagSet><Tag><Key>a</Key><Value>b</Value></Tag></TagSet></Tagging>');
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/kept`, query: { tagging: '' }, headers: { 'if-match': '"nope"', 'content-md5': md5Base64(tags) }, body: tags }), 501, 'NotImplemented');
    expect((await bodyOf('kept')).equals(ORIGINAL)).toBe(true);
    expect((await call({ method: 'GET', path: `/${BUCKET}/kept`, query: { tagging: '' } })).text).toContain('<TagSet/>');
    expect((await call({ method: 'HEAD', path: `/${BUCKET}/copy` })).status).toBe(404);
  });

  it('UploadPart If-None-Match and AbortMultipartUpload x-amz-if-match-initiated-time: no part, upload kept', async () => {
    const id = await upload('mp-cond');
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/mp-cond`, query: { partNumber: '1', uploadId: id }, headers: { 'if-none-match': '*' }, body: Buffer.from('part') }), 501, 'NotImplemented');
    await refused(() => call({ method: 'DELETE', path: `/${BUCKET}/mp-cond`, query: { uploadId: id }, headers: { 'x-amz-if-match-initiated-time': new Date(0).toUTCString() } }), 501, 'NotImplemented');
    expect(await partsOf('mp-cond', id)).toBe(0);
  });

  it('DeleteObjects with <Size> or <LastModifiedTime>: 501, nothing deleted', async () => {
    for (const cond of ['<Size>1</Size>', '<LastModifiedTime>1970-01-01T00:00:00Z</LastModifiedTime>']) {
      const xml = Buffer.from(`<Delete><Object><Key>control</Key></Object><Object><Key>kept</Key>${cond}</Object></Delete>`);
      await refused(() => call({ method: 'POST', path: `/${BUCKET}`, query: { delete: '' }, headers: { 'content-md5': md5Base64(xml) }, body: xml }), 501, 'NotImplemented');
    }
    expect((await call({ method: 'HEAD', path: `/${BUCKET}/control` })).status).toBe(200);
    expect((await bodyOf('kept')).equals(ORIGINAL)).toBe(true);
  });

  it('controls: the conditions that are honoured still work, and reads ignore what they do not use', async () => {
    const put = await call({ method: 'PUT', path: `/${BUCKET}/kept`, headers: { 'if-none-match': '*' }, body: Buffer.from('no') });
    expect([put.status, errorCode(put.text)]).toEqual([412, 'PreconditionFailed']);
    const del = await call({ method: 'DELETE', path: `/${BUCKET}/kept`, headers: { 'if-match': '"0000"' } });
    expect(del.status).toBe(412);
    const list = await call({ method: 'GET', path: `/${BUCKET}`, query: { 'list-type': '2' }, headers: { 'if-modified-since': new Date().toUTCString() } });
    expect(list.status).toBe(200);
  });
});

describe('checksum claims nothing would compare are refused', () => {
  it('x-amz-checksum-* on CopyObject, UploadPartCopy and CreateMultipartUpload: 501, nothing written', async () => {
    const claim = { 'x-amz-checksum-sha256': b64('sha256', ORIGINAL) };
    await refused(() => call({ method: 'PUT', path: `/${BUCKET}/copy`, headers: { ...claim, 'x-amz-copy-source': `/${BUCKET}/kept` } }), 501, 'NotImplemented');
    await refused(() => call({ method: 'POST', path: `/${BUCKET}/mp-claim`, query: { uploads: '' }, headers: { 'x-amz-checksum-crc32': 'AAAAAA==' } }), 501, 'NotImplemented');
    const id = await upload('mp-copy');
    await refused(
      () => call({ method: 'PUT', path: `/${BUCKET}/mp-copy`, query: { partNumber: '1', uploadId: id }, headers: { ...claim, 'x-amz-copy-source': `/${BUCKET}/kept` } }),
      501,
      'NotImplemented'
    );
    expect(await partsOf('mp-copy', id)).toBe(0);
    expect((await call({ method: 'HEAD', path: `/${BUCKET}/copy` })).status).toBe(404);
  });

  it('Complete: a whole-object claim in an algorithm not computed, a part checksum in one not recorded, a wrong x-amz-mp-object-size', async () => {
    const body = Buffer.from(randomBytes(1000, 42));
    const id = await upload('mp-complete', { 'x-amz-checksum-algorithm': 'CRC32' });
    const part = await call({ method: 'PUT', path: `/${BUCKET}/mp-complete`, query: { partNumber: '1', uploadId: id }, body });
    const etag = String(part.headers.etag);
    const xml = completeXml([{ n: 1, etag }]);
    const complete = (headers: Record<string, string>, doc = xml) => () => call({ method: 'POST', path: `/${BUCKET}/mp-complete`, query: { uploadId: id }, headers, body: doc });
    await refused(complete({ 'x-amz-checksum-sha256': b64('sha256', body) }), 400, 'InvalidRequest');
    await refused(complete({}, completeXml([{ n: 1, etag, extra: `<ChecksumSHA1>${b64('sha1', body)}</ChecksumSHA1>` }])), 400, 'InvalidPart');
    await refused(complete({ 'x-amz-mp-object-size': String(body.length + 1) }), 400, 'InvalidRequest');
    await refused(complete({ 'x-amz-mp-object-size': '-1' }), 400, 'InvalidArgument');
    expect((await call({ method: 'HEAD', path: `/${BUCKET}/mp-complete` })).status).toBe(404);
    expect(await partsOf('mp-complete', id)).toBe(1);
    // The same request with the right size completes, and a retry is checked as the first was.
    const ok = await complete({ 'x-amz-mp-object-size': String(body.length) })();
    expect(ok.status, ok.text).toBe(200);
    expect((await complete({ 'x-amz-mp-object-size': String(body.length) })()).status).toBe(200);
    await refused(complete({ 'x-amz-mp-object-size': String(body.length - 1) }), 400, 'InvalidRequest');
    await refused(complete({ 'x-amz-checksum-crc64nvme': 'AAAAAAAAAAA=' }), 400, 'BadDigest');
    expect((await bodyOf('mp-complete')).equals(body)).toBe(true);
  });

  it('UploadPart checksummed with another algorithm than the upload\'s: 400, no part (its Complete failed with a 500)', async () => {
    const body = Buffer.from(randomBytes(1000, 46));
    const id = await upload('mp-alg', { 'x-amz-checksum-algorithm': 'CRC32' });
    const part = (headers: Record<string, string>) => () => call({ method: 'PUT', path: `/${BUCKET}/mp-alg`, query: { partNumber: '1', uploadId: id }, headers, body });
    await refused(part({ 'x-amz-sdk-checksum-algorithm': 'SHA256', 'x-amz-checksum-sha256': b64('sha256', body) }), 400, 'InvalidRequest');
    await refused(part({ 'x-amz-checksum-crc64nvme': 'AAAAAAAAAAA=' }), 400, 'InvalidRequest');
    expect(await partsOf('mp-alg', id)).toBe(0);
    const ok = await part({ 'x-amz-sdk-checksum-algorithm': 'CRC32' })();
    expect(ok.status, ok.text).toBe(200);
    const done = await call({ method: 'POST', path: `/${BUCKET}/mp-alg`, query: { uploadId: id }, body: completeXml([{ n: 1, etag: String(ok.headers.etag) }]) });
    expect(done.status, done.text).toBe(200);
  });

  it('a retried SSE-C Complete needs the upload key, like the first', async () => {
    const body = Buffer.from(randomBytes(300, 43));
    const id = await upload('mp-ssec', ssec());
    const part = await call({ method: 'PUT', path: `/${BUCKET}/mp-ssec`, query: { partNumber: '1', uploadId: id }, headers: ssec(), body });
    const xml = completeXml([{ n: 1, etag: String(part.headers.etag) }]);
    const complete = (headers: Record<string, string>) => () => call({ method: 'POST', path: `/${BUCKET}/mp-ssec`, query: { uploadId: id }, headers, body: xml });
    const first = await complete(ssec())();
    expect(first.status, first.text).toBe(200);
    await refused(complete({}), 400, 'InvalidRequest');
    await refused(complete(ssec(Buffer.from(randomBytes(32, 44)))), 400, 'InvalidRequest');
    const again = await complete(ssec())();
    expect(again.status).toBe(200);
    expect(/<ETag>(.*)<\/ETag>/.exec(again.text)![1]).toBe(/<ETag>(.*)<\/ETag>/.exec(first.text)![1]);
  });
});

describe('CopyObject x-amz-checksum-algorithm', () => {
  it('a copy asking for an algorithm the source lacks is hashed with it (plain, SSE-C, multipart sources)', async () => {
    const body = Buffer.from(randomBytes(700 * 1024, 45));
    expect((await call({ method: 'PUT', path: `/${BUCKET}/src-plain`, body })).status).toBe(200);
    expect((await call({ method: 'PUT', path: `/${BUCKET}/src-ssec`, headers: ssec(), body })).status).toBe(200);
    const id = await upload('src-mp', { 'x-amz-checksum-algorithm': 'SHA1' });
    const p = await call({ method: 'PUT', path: `/${BUCKET}/src-mp`, query: { partNumber: '1', uploadId: id }, body });
    expect((await call({ method: 'POST', path: `/${BUCKET}/src-mp`, query: { uploadId: id }, body: completeXml([{ n: 1, etag: String(p.headers.etag) }]) })).status).toBe(200);
    const want = b64('sha256', body);
    for (const [src, extra] of [
      ['src-plain', {}],
      ['src-ssec', { ...ssec(KEY32, 'x-amz-copy-source-server-side-encryption-customer-') }],
      ['src-mp', {}],
    ] as const) {
      const r = await call({ method: 'PUT', path: `/${BUCKET}/sha-${src}`, headers: { 'x-amz-copy-source': `/${BUCKET}/${src}`, 'x-amz-checksum-algorithm': 'SHA256', ...extra } });
      expect(r.status, r.text).toBe(200);
      expect(r.text, src).toContain(`<ChecksumSHA256>${want}</ChecksumSHA256>`);
      const head = await call({ method: 'HEAD', path: `/${BUCKET}/sha-${src}`, headers: { 'x-amz-checksum-mode': 'ENABLED' } });
      expect(head.headers['x-amz-checksum-sha256'], src).toBe(want);
      expect((await bodyOf(`sha-${src}`)).equals(body)).toBe(true);
    }
    // The algorithm the source already carries: the body is shared, the checksum kept.
    const same = await call({ method: 'PUT', path: `/${BUCKET}/crc-again`, headers: { 'x-amz-copy-source': `/${BUCKET}/sha-src-plain`, 'x-amz-checksum-algorithm': 'SHA256' } });
    expect(same.text).toContain(`<ChecksumSHA256>${want}</ChecksumSHA256>`);
  });
});

describe('SSE-C: nothing is answered without the key', () => {
  it('a conditional HEAD/GET of an SSE-C object without the key is 400, never a 304 carrying its validators', async () => {
    const put = await call({ method: 'PUT', path: `/${BUCKET}/secret`, headers: ssec(), body: Buffer.from('secret') });
    const etag = String(put.headers.etag);
    const conds: Record<string, string>[] = [{ 'if-none-match': '*' }, { 'if-none-match': etag }, { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() }];
    for (const cond of conds) {
      const head = await call({ method: 'HEAD', path: `/${BUCKET}/secret`, headers: cond });
      expect([head.status, head.headers.etag, head.headers['last-modified']]).toEqual([400, undefined, undefined]);
      const get = await call({ method: 'GET', path: `/${BUCKET}/secret`, headers: cond });
      expect([get.status, errorCode(get.text)]).toEqual([400, 'InvalidRequest']);
    }
    const withKey = await call({ method: 'HEAD', path: `/${BUCKET}/secret`, headers: { ...ssec(), 'if-none-match': etag } });
    expect([withKey.status, withKey.headers.etag]).toEqual([304, etag]);
  });
});

describe('x-amz-* headers carried in a presigned URL query are honoured or refused, never dropped', () => {
  type Presignable = PutObjectCommand | GetObjectCommand | CopyObjectCommand | UploadPartCopyCommand;
  const presign = (command: Presignable, hoistable?: Set<string>) =>
    getSignedUrl(sdk, command as unknown as Parameters<typeof getSignedUrl>[1], { expiresIn: 300, ...(hoistable ? { hoistableHeaders: hoistable } : {}) });
  const put = async (url: string, body: Uint8Array): Promise<Reply> => {
    const res = await request(url, { method: 'PUT', body });
    return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
  };

  it('Object Lock and a non-STANDARD storage class in the query: refused, nothing stored', async () => {
    const lock = await presign(new PutObjectCommand({ Bucket: BUCKET, Key: 'locked', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: new Date(Date.now() + 86_400_000) }));
    expect(lock).toContain('x-amz-object-lock-mode=COMPLIANCE');
    // BUCKET has no Object Lock: refused as S3 does (the headers are read from the query).
    await refused(() => put(lock, Buffer.from('locked?')), 400, 'InvalidRequest');
    const glacier = await presign(new PutObjectCommand({ Bucket: BUCKET, Key: 'locked', StorageClass: 'GLACIER' }));
    await refused(() => put(glacier, Buffer.from('cold?')), 501, 'NotImplemented');
    expect((await call({ method: 'HEAD', path: `/${BUCKET}/locked` })).status).toBe(404);
  });

  it('metadata, tags and SSE-S3 in the query are stored as asked', async () => {
    const url = await presign(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'meta', Metadata: { note: 'from the url' }, Tagging: 'a=1&b=2', ServerSideEncryption: 'AES256' }),
      new Set(['x-amz-server-side-encryption'])
    );
    expect(url).toContain('x-amz-server-side-encryption=AES256');
    const r = await put(url, Buffer.from('meta'));
    expect(r.status, r.text).toBe(200);
    expect(r.headers['x-amz-server-side-encryption']).toBe('AES256');
    const head = await call({ method: 'HEAD', path: `/${BUCKET}/meta` });
    expect([head.headers['x-amz-meta-note'], head.headers['x-amz-tagging-count'], head.headers['x-amz-server-side-encryption']]).toEqual(['from the url', '2', 'AES256']);
  });

  it('a presigned CopyObject copies the source (it was a PutObject of an empty body)', async () => {
    const url = await presign(new CopyObjectCommand({ Bucket: BUCKET, Key: 'copied-by-url', CopySource: `${BUCKET}/kept` }));
    expect(url).toContain('x-amz-copy-source=');
    const r = await put(url, new Uint8Array(0));
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('<CopyObjectResult');
    expect((await bodyOf('copied-by-url')).equals(ORIGINAL)).toBe(true);
    const part = await presign(new UploadPartCopyCommand({ Bucket: BUCKET, Key: 'mp-url', UploadId: await upload('mp-url'), PartNumber: 1, CopySource: `${BUCKET}/kept` }));
    const pr = await put(part, new Uint8Array(0));
    expect(pr.status, pr.text).toBe(200);
    expect(pr.text).toContain('<CopyPartResult');
  });

  it('a query value contradicting the header of the same name, and x-amz-* in a SigV2 URL (unsigned there): 400', async () => {
    const url = new URL(await presign(new PutObjectCommand({ Bucket: BUCKET, Key: 'twice', Metadata: { note: 'query' } }), undefined));
    const signedHeader = signV4({ method: 'PUT', path: `/${BUCKET}/twice`, query: { 'x-amz-meta-note': 'query' }, headers: { 'x-amz-meta-note': 'header' }, body: Buffer.from('x'), host: new URL(s.url).host, credentials: CREDS, region: REGION });
    await refused(() => send(signedHeader), 400, 'InvalidRequest');
    expect(url.searchParams.get('x-amz-meta-note')).toBe('query');
    const expires = Math.floor(Date.now() / 1000) + 300;
    const sig = createHmac('sha1', SECRET_KEY).update(`PUT\n\n\n${expires}\n/${BUCKET}/v2`).digest('base64');
    const target = `/${BUCKET}/v2?AWSAccessKeyId=${ACCESS_KEY}&Expires=${expires}&Signature=${encodeURIComponent(sig)}&x-amz-acl=public-read`;
    await refused(() => send({ method: 'PUT', target, headers: {}, body: Buffer.from('v2') }), 400, 'InvalidRequest');
    expect((await call({ method: 'HEAD', path: `/${BUCKET}/v2` })).status).toBe(404);
  });

  it('control: a presigned GET still works', async () => {
    const res = await request(await presign(new GetObjectCommand({ Bucket: BUCKET, Key: 'kept' })));
    expect(res.statusCode).toBe(200);
    expect(Buffer.from(await res.body.arrayBuffer()).equals(ORIGINAL)).toBe(true);
  });
});
