/**
 * Proof with a real client, part: object tagging, checksums on PutObject, presigned URLs, CORS, unsupported operations.
 *
 * AWS SDK v3 (`@aws-sdk/client-s3`, `lib-storage`,
 * `s3-request-presigner`) against a real Strata server on 127.0.0.1.
 *
 * Two clients throughout: `s3` with the 2025+ defaults (CRC32 on every PutObject/UploadPart,
 * `x-amz-checksum-mode: ENABLED` on GetObject, response validation on) and `s3wr` with
 * `requestChecksumCalculation/responseChecksumValidation: 'WHEN_REQUIRED'`. Both path-style.
 * A wire log (support/sdk-v3-client.ts) records what each request put on the wire and what
 * came back (headers only), so tests check the transport a client chose (aws-chunked,
 * checksums, no Content-MD5) as well as the result. Every expected digest is computed
 * independently of the server.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DeleteBucketCorsCommand,
  DeleteObjectTaggingCommand,
  GetBucketCorsCommand,
  GetBucketVersioningCommand,
  PutBucketVersioningCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketCorsCommand,
  PutBucketWebsiteCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { md5hex, seeded } from './seeded.js';
import { bytesOf, checksumB64, failure } from './support/sdk-v3-client.js';
import {
  getBytes,
  lastExchange,
  newBucket,
  s,
  s3,
  s3wr,
  setupSdkSuite,
} from './support/sdk-v3-suite.js';

setupSdkSuite();

describe('object tagging', () => {
  it('Put/Get/Delete object tagging; missing key is NoSuchKey', async () => {
    const b = await newBucket('tags');
    await s3.send(new PutObjectCommand({ Bucket: b, Key: 't', Body: 't' }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: b, Key: 't' }))).TagSet).toEqual(
      []
    );
    await s3.send(
      new PutObjectTaggingCommand({
        Bucket: b,
        Key: 't',
        Tagging: {
          TagSet: [
            { Key: 'k1', Value: 'v 1' },
            { Key: 'k2', Value: '' },
            { Key: 'ü&<>', Value: 'x' },
          ],
        },
      })
    );
    const got = await s3.send(new GetObjectTaggingCommand({ Bucket: b, Key: 't' }));
    expect(new Map(got.TagSet?.map((t) => [t.Key, t.Value]))).toEqual(
      new Map([
        ['k1', 'v 1'],
        ['k2', ''],
        ['ü&<>', 'x'],
      ])
    );
    const h = await s3.send(new GetObjectCommand({ Bucket: b, Key: 't' }));
    expect(h.TagCount).toBe(3);
    await bytesOf(h.Body);
    const del = await s3.send(new DeleteObjectTaggingCommand({ Bucket: b, Key: 't' }));
    expect(del.$metadata.httpStatusCode).toBe(204);
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: b, Key: 't' }))).TagSet).toEqual(
      []
    );
    expect(
      await failure(s3.send(new GetObjectTaggingCommand({ Bucket: b, Key: 'missing' })))
    ).toMatchObject({ name: 'NoSuchKey', status: 404 });
    // Duplicate keys are InvalidTag.
    const dup = await failure(
      s3.send(
        new PutObjectTaggingCommand({
          Bucket: b,
          Key: 't',
          Tagging: {
            TagSet: [
              { Key: 'a', Value: '1' },
              { Key: 'a', Value: '2' },
            ],
          },
        })
      )
    );
    expect(dup).toMatchObject({ name: 'InvalidTag', status: 400 });
  });
});

describe('checksums on PutObject', () => {
  let b: string;
  const body = seeded(33_333, 81);
  beforeAll(async () => {
    b = await newBucket('sums');
  });

  for (const alg of ['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'] as const) {
    it(`${alg}: echoed on PUT, returned on GET/HEAD only with ChecksumMode ENABLED, never on a range`, async () => {
      const key = `sum-${alg}`;
      const expected = checksumB64(alg, body);
      const put = await s3.send(
        new PutObjectCommand({ Bucket: b, Key: key, Body: body, ChecksumAlgorithm: alg })
      );
      const sent = lastExchange((e) => e.method === 'PUT' && e.path.endsWith(`/${key}`));
      expect(sent.request[`x-amz-checksum-${alg.toLowerCase()}`]).toBe(expected);
      expect(put[`Checksum${alg}`]).toBe(expected);

      const plain = await s3wr.send(new HeadObjectCommand({ Bucket: b, Key: key }));
      expect(plain[`Checksum${alg}`]).toBeUndefined();
      const head = await s3.send(
        new HeadObjectCommand({ Bucket: b, Key: key, ChecksumMode: 'ENABLED' })
      );
      expect(head[`Checksum${alg}`]).toBe(expected);
      expect(head.ChecksumType).toBe('FULL_OBJECT');
      const g = await s3.send(
        new GetObjectCommand({ Bucket: b, Key: key, ChecksumMode: 'ENABLED' })
      );
      expect(g[`Checksum${alg}`]).toBe(expected);
      expect((await bytesOf(g.Body)).equals(body)).toBe(true);

      const ranged = await s3.send(
        new GetObjectCommand({
          Bucket: b,
          Key: key,
          ChecksumMode: 'ENABLED',
          Range: 'bytes=100-199',
        })
      );
      expect((await bytesOf(ranged.Body)).equals(body.subarray(100, 200))).toBe(true);
      const rangedEx = lastExchange((e) => e.method === 'GET' && e.path.endsWith(`/${key}`));
      expect(Object.keys(rangedEx.response).filter((h) => h.startsWith('x-amz-checksum-'))).toEqual(
        []
      );
    });

    it(`${alg}: a wrong x-amz-checksum-${alg.toLowerCase()} header is BadDigest and stores nothing`, async () => {
      const key = `bad-${alg}`;
      const wrong = checksumB64(alg, Buffer.from('something else'));
      const e = await failure(
        s3.send(
          new PutObjectCommand({ Bucket: b, Key: key, Body: body, [`Checksum${alg}`]: wrong })
        )
      );
      expect(e).toMatchObject({ name: 'BadDigest', status: 400 });
      expect(await failure(s3.send(new HeadObjectCommand({ Bucket: b, Key: key })))).toMatchObject({
        status: 404,
      });
    });
  }

  it('a wrong Content-MD5 is BadDigest; a right one is accepted', async () => {
    const md5b64 = createHash('md5').update(body).digest('base64');
    await s3wr.send(
      new PutObjectCommand({ Bucket: b, Key: 'md5-ok', Body: body, ContentMD5: md5b64 })
    );
    const e = await failure(
      s3wr.send(
        new PutObjectCommand({
          Bucket: b,
          Key: 'md5-bad',
          Body: body,
          ContentMD5: createHash('md5').update('x').digest('base64'),
        })
      )
    );
    expect(e).toMatchObject({ name: 'BadDigest', status: 400 });
  });

  it('an object written without a client checksum still validates under ChecksumMode ENABLED', async () => {
    await s3wr.send(new PutObjectCommand({ Bucket: b, Key: 'no-client-sum', Body: body }));
    const g = await s3.send(
      new GetObjectCommand({ Bucket: b, Key: 'no-client-sum', ChecksumMode: 'ENABLED' })
    );
    expect((await bytesOf(g.Body)).equals(body)).toBe(true);
  });
});

describe('presigned URLs', () => {
  let b: string;
  const body = seeded(77_777, 91);
  beforeAll(async () => {
    b = await newBucket('presign');
    await s3.send(new PutObjectCommand({ Bucket: b, Key: 'dir/hello world+ü.bin', Body: body }));
  });

  it('presigned GET (default client: x-amz-checksum-mode in the URL) downloads byte-exact', async () => {
    for (const client of [s3, s3wr]) {
      const url = await getSignedUrl(
        client,
        new GetObjectCommand({ Bucket: b, Key: 'dir/hello world+ü.bin' }),
        { expiresIn: 300 }
      );
      expect(url).toContain('X-Amz-Signature=');
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
    }
    const withOverride = await getSignedUrl(
      s3,
      new GetObjectCommand({
        Bucket: b,
        Key: 'dir/hello world+ü.bin',
        ResponseContentDisposition: 'attachment; filename="x y.txt"',
      })
    );
    const res = await fetch(withOverride, { headers: { range: 'bytes=0-9' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="x y.txt"');
    expect(Buffer.from(await res.arrayBuffer()).equals(body.subarray(0, 10))).toBe(true);
  });

  it('presigned PUT from a WHEN_REQUIRED client uploads with fetch', async () => {
    const url = await getSignedUrl(
      s3wr,
      new PutObjectCommand({
        Bucket: b,
        Key: 'uploaded via url',
        ContentType: 'application/x-pre',
      }),
      { expiresIn: 300 }
    );
    expect(url).not.toContain('x-amz-checksum-crc32');
    const payload = seeded(12_345, 92);
    const res = await fetch(url, {
      method: 'PUT',
      body: new Uint8Array(payload),
      headers: { 'content-type': 'application/x-pre' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${md5hex(payload)}"`);
    expect((await getBytes(s3, b, 'uploaded via url')).equals(payload)).toBe(true);
  });

  it('presigned PUT from a default client embeds the CRC32 of an empty body: refused as BadDigest, like S3', async () => {
    const url = await getSignedUrl(
      s3,
      new PutObjectCommand({ Bucket: b, Key: 'default-presigned' }),
      { expiresIn: 300 }
    );
    expect(url).toContain('x-amz-checksum-crc32=AAAAAA%3D%3D');
    const res = await fetch(url, { method: 'PUT', body: 'not empty' });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('<Code>BadDigest</Code>');
  });

  it('an expired or tampered presigned URL is 403', async () => {
    const url = await getSignedUrl(
      s3wr,
      new GetObjectCommand({ Bucket: b, Key: 'dir/hello world+ü.bin' }),
      { expiresIn: 300 }
    );
    const tampered = url.replace('hello', 'jello');
    const res = await fetch(tampered);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const old = await getSignedUrl(
      s3wr,
      new GetObjectCommand({ Bucket: b, Key: 'dir/hello world+ü.bin' }),
      { expiresIn: 1, signingDate: new Date(Date.now() - 60_000) }
    );
    const expired = await fetch(old);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('<Code>AccessDenied</Code>');
  });
});

describe('CORS', () => {
  it('Put/Get/DeleteBucketCors; OPTIONS preflight answered without auth by the rules, 403 when none match', async () => {
    const b = await newBucket('cors');
    const none = await failure(s3.send(new GetBucketCorsCommand({ Bucket: b })));
    expect(none).toMatchObject({ name: 'NoSuchCORSConfiguration', status: 404 });
    const rules = [
      {
        AllowedOrigins: ['https://app.example'],
        AllowedMethods: ['GET', 'PUT'],
        AllowedHeaders: ['*'],
        ExposeHeaders: ['ETag'],
        MaxAgeSeconds: 600,
      },
      {
        AllowedOrigins: ['https://*.other.example'],
        AllowedMethods: ['GET'],
        AllowedHeaders: [] as string[],
        ExposeHeaders: [] as string[],
      },
    ];
    await s3.send(new PutBucketCorsCommand({ Bucket: b, CORSConfiguration: { CORSRules: rules } }));
    const sent = lastExchange((e) => e.method === 'PUT' && 'cors' in e.query);
    expect(sent.request['content-md5'] ?? sent.request['x-amz-checksum-crc32']).toBeTruthy();
    const got = await s3.send(new GetBucketCorsCommand({ Bucket: b }));
    expect(got.CORSRules?.[0]).toMatchObject({
      AllowedOrigins: ['https://app.example'],
      AllowedMethods: ['GET', 'PUT'],
      AllowedHeaders: ['*'],
      ExposeHeaders: ['ETag'],
      MaxAgeSeconds: 600,
    });
    expect(got.CORSRules?.[1]).toMatchObject({
      AllowedOrigins: ['https://*.other.example'],
      AllowedMethods: ['GET'],
    });

    const preflight = (origin: string, method: string, reqHeaders?: string) =>
      fetch(`${s.url}/${b}/some/key`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': method,
          ...(reqHeaders && { 'access-control-request-headers': reqHeaders }),
        },
      });
    const ok = await preflight('https://app.example', 'PUT', 'content-type, x-amz-date');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(ok.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(ok.headers.get('access-control-allow-headers')).toBe('content-type, x-amz-date');
    expect(ok.headers.get('access-control-max-age')).toBe('600');
    expect(ok.headers.get('access-control-expose-headers')).toBe('ETag');
    const wild = await preflight('https://a.other.example', 'GET');
    expect(wild.status).toBe(200);
    expect(wild.headers.get('access-control-allow-origin')).toBe('https://a.other.example');
    // No rule: wrong origin, wrong method, a header the rule does not allow.
    for (const [o, m, hs] of [
      ['https://evil.example', 'GET', undefined],
      ['https://app.example', 'DELETE', undefined],
      ['https://a.other.example', 'GET', 'x-custom'],
    ] as const) {
      const r = await preflight(o, m, hs);
      expect(r.status).toBe(403);
      expect(await r.text()).toContain('<Code>AccessForbidden</Code>');
    }
    // An actual (signed) request with an allowed Origin gets the CORS headers.
    const url = await getSignedUrl(s3wr, new ListObjectsV2Command({ Bucket: b }));
    const actual = await fetch(url, { headers: { origin: 'https://app.example' } });
    expect(actual.status).toBe(200);
    expect(actual.headers.get('access-control-allow-origin')).toBe('https://app.example');

    await s3.send(new DeleteBucketCorsCommand({ Bucket: b }));
    expect(await failure(s3.send(new GetBucketCorsCommand({ Bucket: b })))).toMatchObject({
      name: 'NoSuchCORSConfiguration',
      status: 404,
    });
    expect((await preflight('https://app.example', 'PUT')).status).toBe(403);
  });
});

describe('unsupported operations', () => {
  it('PutBucketVersioning with MFA Delete and PutBucketWebsite are 501 NotImplemented', async () => {
    const b = await newBucket('unsupported');
    expect(
      await failure(s3.send(new PutBucketVersioningCommand({ Bucket: b, MFA: 'serial 123456', VersioningConfiguration: { Status: 'Enabled', MFADelete: 'Enabled' } })))
    ).toMatchObject({ name: 'NotImplemented', status: 501 });
    // Nothing changed: the bucket still reads as never versioned.
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: b }))).Status).toBeUndefined();
    expect(
      await failure(s3.send(new PutBucketWebsiteCommand({ Bucket: b, WebsiteConfiguration: { IndexDocument: { Suffix: 'index.html' } } })))
    ).toMatchObject({ name: 'NotImplemented', status: 501 });
  });
});
