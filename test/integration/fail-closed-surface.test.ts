/**
 * The S3 surface with the AWS SDK v3 and raw requests (signed with our signer, sent with
 * undici or over a bare socket): what real clients send and what no client will.
 *
 * Proves: GetObjectAttributes lists a multipart object's parts with their checksums, paged
 * by MaxParts / PartNumberMarker, and refuses a missing or unknown attribute and a bad
 * x-amz-max-parts with S3's codes; GET ?partNumber past the parts is 400 InvalidPart;
 * UploadPartCopy with a range outside the source is InvalidRange; If-None-Match with an
 * ETag guards PutObject and CompleteMultipartUpload; DeleteObjects honours <VersionId>
 * (another version deletes nothing: NoSuchVersion; `null` is the live object) and <ETag>
 * (PreconditionFailed on mismatch, nothing deleted); plain chunked PUTs of several MiB in
 * odd pieces are stored exactly while UploadPart still needs a length; `aws-chunked` is
 * removed from Content-Encoding and the rest kept as sent; RFC 2047 metadata is decoded
 * and returned encoded; error documents name the resource (before routing too); SigV2 URLs
 * valid for years are refused for GET, PUT and DELETE.
 */
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { request } from 'undici';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { rawExchange, requestHead, signedChunked, signV4, type SignOptions, type WireRequest } from './wire.js';
import { seeded } from './seeded.js';
import { STREAMING_SIGNED } from '../../src/s3/auth/index.js';

const BUCKET = 'surface';
const MiB = 1024 * 1024;
const CREDS = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };
let s: TestServer;
let s3: S3Client;
let host: string;

beforeAll(async () => {
  s = await startTestServer();
  host = `127.0.0.1:${s.port}`;
  s3 = createS3Client(s.url, new WireLog());
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
});
afterAll(async () => {
  s3?.destroy();
  await s?.stop();
});

interface Reply {
  status: number;
  headers: Record<string, string>;
  text: string;
}

async function send(r: WireRequest): Promise<Reply> {
  const res = await request(`${s.url}${r.target}`, { method: r.method, headers: r.headers, ...(r.body ? { body: r.body } : {}) });
  const text = await res.body.text();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(',') : String(v);
  return { status: res.statusCode, headers, text };
}
type Sign = Omit<SignOptions, 'host' | 'credentials' | 'region'>;
const call = (o: Sign) => send(signV4({ host, credentials: CREDS, region: REGION, ...o }));
const codeOf = (t: string) => /<Code>([^<]*)<\/Code>/.exec(t)?.[1];
const resourceOf = (t: string) => /<Resource>([^<]*)<\/Resource>/.exec(t)?.[1];

async function multipart(key: string, parts: Buffer[], alg?: 'SHA256' | 'CRC32'): Promise<{ etag: string; partSums: string[] }> {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key, ...(alg && { ChecksumAlgorithm: alg }) }));
  const done: { PartNumber: number; ETag: string; ChecksumSHA256?: string; ChecksumCRC32?: string }[] = [];
  const partSums: string[] = [];
  for (const [i, body] of parts.entries()) {
    const r = await s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: i + 1, Body: body, ...(alg && { ChecksumAlgorithm: alg }) }));
    const sum = alg === 'SHA256' ? r.ChecksumSHA256 : r.ChecksumCRC32;
    if (sum) partSums.push(sum);
    done.push({ PartNumber: i + 1, ETag: r.ETag!, ...(alg === 'SHA256' && { ChecksumSHA256: sum! }), ...(alg === 'CRC32' && { ChecksumCRC32: sum! }) });
  }
  const c = await s3.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId, MultipartUpload: { Parts: done } }));
  return { etag: c.ETag!, partSums };
}

describe('GetObjectAttributes', () => {
  it('lists the parts of a multipart object with their checksums, page by page', async () => {
    const parts = [seeded(5 * MiB, 1), seeded(5 * MiB, 2), seeded(5 * MiB, 3), seeded(1000, 4)];
    const { etag, partSums } = await multipart('mp-attrs', parts, 'SHA256');
    const all = await s3.send(new GetObjectAttributesCommand({ Bucket: BUCKET, Key: 'mp-attrs', ObjectAttributes: ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'] }));
    expect(all.ETag).toBe(etag.replace(/"/g, ''));
    expect(all.ObjectSize).toBe(15 * MiB + 1000);
    expect(all.StorageClass).toBe('STANDARD');
    expect(all.Checksum?.ChecksumType).toBe('COMPOSITE');
    expect(all.Checksum?.ChecksumSHA256).toMatch(/-4$/);
    expect(all.ObjectParts?.TotalPartsCount).toBe(4);
    expect(all.ObjectParts?.IsTruncated).toBe(false);
    expect(all.ObjectParts?.Parts?.map((p) => [p.PartNumber, p.Size, p.ChecksumSHA256])).toEqual(parts.map((p, i) => [i + 1, p.length, partSums[i]]));
    expect(partSums[3]).toBe(createHash('sha256').update(parts[3]!).digest('base64'));
    const page = await s3.send(new GetObjectAttributesCommand({ Bucket: BUCKET, Key: 'mp-attrs', ObjectAttributes: ['ObjectParts'], MaxParts: 2, PartNumberMarker: '1' }));
    expect(page.ObjectParts).toMatchObject({ TotalPartsCount: 4, MaxParts: 2, PartNumberMarker: '1', NextPartNumberMarker: '3', IsTruncated: true });
    expect(page.ObjectParts?.Parts?.map((p) => p.PartNumber)).toEqual([2, 3]);
    expect(page.ETag).toBeUndefined();
    const last = await s3.send(new GetObjectAttributesCommand({ Bucket: BUCKET, Key: 'mp-attrs', ObjectAttributes: ['ObjectParts'], MaxParts: 2, PartNumberMarker: '3' }));
    expect(last.ObjectParts?.Parts?.map((p) => p.PartNumber)).toEqual([4]);
    expect(last.ObjectParts?.IsTruncated).toBe(false);
  });

  it('refuses a missing or unknown attribute, a bad max-parts, and a missing key with S3 codes', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'one', Body: 'one' }));
    const missingHeader = await call({ method: 'GET', path: `/${BUCKET}/one`, query: { attributes: '' } });
    expect([missingHeader.status, codeOf(missingHeader.text)]).toEqual([400, 'InvalidRequest']);
    const unknown = await call({ method: 'GET', path: `/${BUCKET}/one`, query: { attributes: '' }, headers: { 'x-amz-object-attributes': 'ETag,Owner' } });
    expect([unknown.status, codeOf(unknown.text)]).toEqual([400, 'InvalidArgument']);
    const badMax = await call({ method: 'GET', path: `/${BUCKET}/one`, query: { attributes: '' }, headers: { 'x-amz-object-attributes': 'ObjectParts', 'x-amz-max-parts': '-1' } });
    expect([badMax.status, codeOf(badMax.text)]).toEqual([400, 'InvalidArgument']);
    const gone = await failure(s3.send(new GetObjectAttributesCommand({ Bucket: BUCKET, Key: 'nope', ObjectAttributes: ['ETag'] })));
    expect([gone.name, gone.status]).toEqual(['NoSuchKey', 404]);
    const put = await call({ method: 'PUT', path: `/${BUCKET}/one`, query: { attributes: '' }, body: Buffer.from('x') });
    expect([put.status, codeOf(put.text)]).toEqual([501, 'NotImplemented']);
  });
});

describe('error codes S3 uses', () => {
  it('GET/HEAD ?partNumber past the parts is 400 InvalidPart', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'single', Body: 'body' }));
    const g = await failure(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'single', PartNumber: 2 })));
    expect([g.name, g.status]).toEqual(['InvalidPart', 400]);
    expect((await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'single', PartNumber: 1 }))).ContentLength).toBe(4);
    const h = await failure(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'single', PartNumber: 3 })));
    expect(h.status).toBe(400);
  });

  it('UploadPartCopy with a range outside the source is InvalidRange', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'src5', Body: '12345' }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'dst' }));
    for (const range of ['bytes=0-21', 'bytes=5-6']) {
      const e = await failure(s3.send(new UploadPartCopyCommand({ Bucket: BUCKET, Key: 'dst', UploadId, PartNumber: 1, CopySource: `${BUCKET}/src5`, CopySourceRange: range })));
      expect(e.name, range).toBe('InvalidRange');
    }
    const ok = await s3.send(new UploadPartCopyCommand({ Bucket: BUCKET, Key: 'dst', UploadId, PartNumber: 1, CopySource: `${BUCKET}/src5`, CopySourceRange: 'bytes=1-3' }));
    expect(ok.CopyPartResult?.ETag).toBe(`"${createHash('md5').update('234').digest('hex')}"`);
  });

  it('If-None-Match with an ETag guards PutObject and CompleteMultipartUpload', async () => {
    const first = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'guarded', Body: 'v1' }));
    const again = await failure(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'guarded', Body: 'v2', IfNoneMatch: first.ETag })));
    expect([again.name, again.status]).toEqual(['PreconditionFailed', 412]);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'guarded', Body: 'v2', IfNoneMatch: '"00000000000000000000000000000000"' }));
    const cur = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'guarded' }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'guarded' }));
    const p = await s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'guarded', UploadId, PartNumber: 1, Body: 'part' }));
    const c = await failure(s3.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: 'guarded', UploadId, IfNoneMatch: cur.ETag, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p.ETag! }] } })));
    expect([c.name, c.status]).toEqual(['PreconditionFailed', 412]);
    expect((await bytesOf((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'guarded' }))).Body)).toString()).toBe('v2');
  });
});

describe('listing echoes', () => {
  it('V1 echoes Prefix as sent under encoding-type=url (keys, markers encoded); V2 echoes an empty token', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'sp ace/k', Body: 'x' }));
    const v1 = await call({ method: 'GET', path: `/${BUCKET}`, query: { prefix: 'sp ace/', 'encoding-type': 'url', marker: 'a b' } });
    expect(v1.text).toContain('<Prefix>sp ace/</Prefix>');
    expect(v1.text).toContain('<Marker>a%20b</Marker>');
    expect(v1.text).toContain('<Key>sp%20ace/k</Key>');
    const v2 = await call({ method: 'GET', path: `/${BUCKET}`, query: { 'list-type': '2', prefix: 'sp ace/', 'continuation-token': '' } });
    expect(v2.status).toBe(200);
    expect(v2.text).toContain('<ContinuationToken></ContinuationToken>');
    expect(v2.text).toContain('<Key>sp ace/k</Key>');
  });
});

describe('DeleteObjects honours VersionId and ETag', () => {
  it('deletes only what the entry names', async () => {
    const keys = ['d-ver', 'd-bad-ver', 'd-null', 'd-etag-bad', 'd-etag-ok'];
    const etags: Record<string, string> = {};
    for (const k of keys) etags[k] = (await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: k, Body: k }))).ETag!;
    const r = await s3.send(
      new DeleteObjectsCommand({
        Bucket: BUCKET,
        Delete: {
          Objects: [
            { Key: 'd-ver', VersionId: '0000000fffff000000' },
            { Key: 'd-bad-ver', VersionId: '3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY' },
            { Key: 'd-null', VersionId: 'null' },
            { Key: 'd-etag-bad', ETag: '"0123456789abcdef0123456789abcdef"' },
            { Key: 'd-etag-ok', ETag: etags['d-etag-ok'] },
            { Key: 'd-missing', ETag: etags['d-ver'] },
          ],
        },
      })
    );
    expect((r.Deleted ?? []).map((d) => [d.Key, d.VersionId]).sort()).toEqual([
      ['d-etag-ok', undefined],
      ['d-null', 'null'],
      // A well-formed id no version has: nothing to delete, answered as deleted (as DELETE ?versionId).
      ['d-ver', '0000000fffff000000'],
    ]);
    expect((r.Errors ?? []).map((e) => [e.Key, e.Code, e.VersionId]).sort()).toEqual([
      ['d-bad-ver', 'InvalidArgument', '3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY'],
      ['d-etag-bad', 'PreconditionFailed', undefined],
      ['d-missing', 'NoSuchKey', undefined],
    ]);
    for (const k of ['d-ver', 'd-bad-ver', 'd-etag-bad']) expect((await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: k }))).ETag).toBe(etags[k]);
    for (const k of ['d-null', 'd-etag-ok']) expect((await failure(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: k })))).status).toBe(404);
  });
});

describe('bodies without a length, and content encodings', () => {
  it('a plain chunked PUT of several MiB in odd pieces is stored exactly', async () => {
    const data = seeded(2 * MiB + 12345, 9);
    const req = signV4({ method: 'PUT', path: `/${BUCKET}/te-big`, host, credentials: CREDS, region: REGION, payloadHash: 'UNSIGNED-PAYLOAD', headers: { 'transfer-encoding': 'chunked' } });
    const frames: (string | Uint8Array)[] = [requestHead(req)];
    for (let at = 0, n = 1; at < data.length; at += n, n = (n * 7 + 3) % 90_000 || 1) {
      const piece = data.subarray(at, at + n);
      frames.push(`${piece.length.toString(16)}\r\n`, piece, '\r\n');
    }
    frames.push('0\r\n\r\n');
    const res = await rawExchange(s.port, frames, { close: 'keep' });
    expect(res?.status, res?.body.toString()).toBe(200);
    expect(res?.headers.etag).toBe(`"${createHash('md5').update(data).digest('hex')}"`);
    const g = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'te-big' }));
    expect((await bytesOf(g.Body)).equals(data)).toBe(true);
    // UploadPart still needs a length.
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'te-part' }));
    const part = signV4({ method: 'PUT', path: `/${BUCKET}/te-part`, query: { partNumber: '1', uploadId: UploadId! }, host, credentials: CREDS, region: REGION, payloadHash: 'UNSIGNED-PAYLOAD', headers: { 'transfer-encoding': 'chunked' } });
    const pr = await rawExchange(s.port, [requestHead(part), '3\r\nabc\r\n0\r\n\r\n'], { close: 'keep' });
    expect(pr?.status).toBe(411);
  });

  it('a chunked PUT asking for SSE-S3 is stored encrypted, piece by piece', async () => {
    const data = seeded(MiB + 777, 10);
    const req = signV4({ method: 'PUT', path: `/${BUCKET}/te-sse`, host, credentials: CREDS, region: REGION, payloadHash: 'UNSIGNED-PAYLOAD', headers: { 'transfer-encoding': 'chunked', 'x-amz-server-side-encryption': 'AES256' } });
    const frames: (string | Uint8Array)[] = [requestHead(req)];
    for (let at = 0; at < data.length; at += 65_000) {
      const piece = data.subarray(at, at + 65_000);
      frames.push(`${piece.length.toString(16)}\r\n`, piece, '\r\n');
    }
    frames.push('0\r\n\r\n');
    const res = await rawExchange(s.port, frames, { close: 'keep' });
    expect(res?.status, res?.body.toString()).toBe(200);
    expect(res?.headers['x-amz-server-side-encryption']).toBe('AES256');
    const g = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'te-sse', Range: 'bytes=524000-525000' }));
    expect(g.ServerSideEncryption).toBe('AES256');
    expect((await bytesOf(g.Body)).equals(data.subarray(524000, 525001))).toBe(true);
  });

  it('aws-chunked is dropped from Content-Encoding, the rest kept as sent', async () => {
    const cases: [string, string | undefined][] = [
      ['aws-chunked, gzip', 'gzip'],
      ['gzip, aws-chunked', 'gzip'],
      ['deflate, aws-chunked, gzip', 'deflate, gzip'],
      ['deflate, gzip', 'deflate, gzip'],
      ['aws-chunked', undefined],
      ['aws-chunked, aws-chunked', undefined],
    ];
    const data = Buffer.from('compressed-looking bytes');
    for (const [i, [sent, stored]] of cases.entries()) {
      const req = signV4({
        method: 'PUT',
        path: `/${BUCKET}/enc-${i}`,
        host,
        credentials: CREDS,
        region: REGION,
        payloadHash: STREAMING_SIGNED,
        headers: { 'content-encoding': sent, 'x-amz-decoded-content-length': String(data.length) },
      });
      const body = signedChunked(req.chain, req.signature, [{ data }]);
      const r = await send({ ...req, headers: { ...req.headers, 'content-length': String(body.length) }, body });
      expect(r.status, r.text).toBe(200);
      const h = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `enc-${i}` }));
      expect(h.ContentEncoding, sent).toBe(stored);
    }
  });

  it('RFC 2047 metadata is stored decoded and returned encoded; ASCII is untouched', async () => {
    const word = `=?UTF-8?B?${Buffer.from('naïve café').toString('base64')}?=`;
    const r = await call({ method: 'PUT', path: `/${BUCKET}/meta`, headers: { 'x-amz-meta-a': word, 'x-amz-meta-b': '=?utf-8?q?caf=C3=A9_au_lait?=', 'x-amz-meta-c': 'plain' }, body: Buffer.from('m') });
    expect(r.status, r.text).toBe(200);
    const h = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'meta' }));
    expect(h.Metadata).toEqual({ a: word, b: `=?UTF-8?B?${Buffer.from('café au lait').toString('base64')}?=`, c: 'plain' });
  });
});

/** Sends only the request head and returns the first bytes the server answers with. */
function firstReply(head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port: s.port }, () => sock.write(head));
    const timer = setTimeout(() => {
      sock.destroy();
      resolve('');
    }, 5000);
    sock.once('data', (d: Buffer) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(d.toString('latin1'));
    });
    sock.once('error', reject);
  });
}

describe('Expect: 100-continue', () => {
  it('is answered only after authentication: a refused client never sends its body', async () => {
    const anon = await firstReply(`PUT /${BUCKET}/cont HTTP/1.1\r\nhost: ${host}\r\ncontent-length: 5\r\nexpect: 100-continue\r\n\r\n`);
    expect(anon).toMatch(/^HTTP\/1\.1 403 /);
    const bad = signV4({ method: 'PUT', path: `/${BUCKET}/cont`, host, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: 'wrong' }, region: REGION, payloadHash: 'UNSIGNED-PAYLOAD', headers: { 'content-length': '5', expect: '100-continue' } });
    expect(await firstReply(requestHead(bad))).toMatch(/^HTTP\/1\.1 403 /);
    const good = signV4({ method: 'PUT', path: `/${BUCKET}/cont`, host, credentials: CREDS, region: REGION, payloadHash: 'UNSIGNED-PAYLOAD', headers: { 'content-length': '5', expect: '100-continue' } });
    expect(await firstReply(requestHead(good))).toMatch(/^HTTP\/1\.1 100 Continue/);
  });
});

describe('<Resource> and SigV2 expiry', () => {
  it('error documents name the request’s resource, also before routing', async () => {
    const noKey = await call({ method: 'GET', path: `/${BUCKET}/dir/no such key` });
    expect([codeOf(noKey.text), resourceOf(noKey.text)]).toEqual(['NoSuchKey', `/${BUCKET}/dir/no such key`]);
    const noBucket = await call({ method: 'GET', path: '/no-such-bucket-here' });
    expect([codeOf(noBucket.text), resourceOf(noBucket.text)]).toEqual(['NoSuchBucket', '/no-such-bucket-here']);
    const badSig = signV4({ method: 'GET', path: `/${BUCKET}/a b`, host, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: 'wrong' }, region: REGION });
    const denied = await send(badSig);
    expect([codeOf(denied.text), resourceOf(denied.text)]).toEqual(['SignatureDoesNotMatch', `/${BUCKET}/a b`]);
    const anon = await send({ method: 'GET', target: '/', headers: {} });
    expect([codeOf(anon.text), resourceOf(anon.text)]).toEqual(['AccessDenied', '/']);
    const anonBucket = await send({ method: 'GET', target: `/${BUCKET}/`, headers: {} });
    expect(resourceOf(anonBucket.text)).toBe(`/${BUCKET}`);
  });

  it('SigV2 URLs valid for years are refused for GET, PUT and DELETE', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'v2', Body: 'v2' }));
    const url = (method: string, expires: number) => {
      const sig = createHmac('sha1', SECRET_KEY).update(`${method}\n\n\n${expires}\n/${BUCKET}/v2`).digest('base64');
      return `/${BUCKET}/v2?AWSAccessKeyId=${ACCESS_KEY}&Expires=${expires}&Signature=${encodeURIComponent(sig)}`;
    };
    const year3000 = 32503680000;
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await send({ method, target: url(method, year3000), headers: {}, ...(method === 'PUT' && { body: Buffer.from('overwritten') }) });
      expect([r.status, codeOf(r.text)], method).toEqual([403, 'AccessDenied']);
    }
    expect((await send({ method: 'GET', target: url('GET', Math.floor(Date.now() / 1000) + 3600), headers: {} })).status).toBe(200);
    expect((await bytesOf((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'v2' }))).Body)).toString()).toBe('v2');
  });
});
