/**
 * Proof with a real client, part: buckets, object bodies (default checksums and WHEN_REQUIRED), metadata and conditional PutObject, GetObject ranges/conditions/overrides/partNumber, HeadObject, deletes.
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
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketLocationCommand,
  GetBucketVersioningCommand,
  ListObjectVersionsCommand,
  CopyObjectCommand,
  PutBucketVersioningCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { REGION } from './harness.js';
import { md5hex, multipartEtag, seeded } from './seeded.js';
import { bytesOf, checksumB64, failure } from './support/sdk-v3-client.js';
import {
  getBytes,
  lastExchange,
  MIN_PART,
  newBucket,
  rawHttp,
  s,
  s3,
  s3wr,
  setupSdkSuite,
  wire,
} from './support/sdk-v3-suite.js';

setupSdkSuite();

describe('buckets', () => {
  it('creates, lists, heads, locates and deletes buckets with S3 error codes', async () => {
    const name = 'sdk-buckets-life';
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    // The owner re-creating its bucket: 200 and nothing changes, as S3 answers in us-east-1.
    const again = await s3.send(new CreateBucketCommand({ Bucket: name }));
    expect(again.$metadata.httpStatusCode).toBe(200);

    const list = await s3.send(new ListBucketsCommand({}));
    expect(list.Buckets?.map((b) => b.Name)).toContain(name);
    expect(list.Owner?.ID).toBeTruthy();
    expect(list.Buckets?.find((b) => b.Name === name)?.CreationDate).toBeInstanceOf(Date);

    const head = await s3.send(new HeadBucketCommand({ Bucket: name }));
    expect(head.$metadata.httpStatusCode).toBe(200);
    expect(head.BucketRegion).toBe(REGION);
    const loc = await s3.send(new GetBucketLocationCommand({ Bucket: name }));
    // us-east-1 is the empty LocationConstraint.
    expect(loc.LocationConstraint ?? '').toBe('');
    // Never versioned: an empty configuration, no Status.
    const ver = await s3.send(new GetBucketVersioningCommand({ Bucket: name }));
    expect(ver.$metadata.httpStatusCode).toBe(200);
    expect(ver.Status).toBeUndefined();
    expect(ver.MFADelete).toBeUndefined();
    // Versioned: upload twice, read each version, a delete marker, restore by copying the old one.
    await s3.send(new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status: 'Enabled' } }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: name }))).Status).toBe('Enabled');
    const v1 = (await s3.send(new PutObjectCommand({ Bucket: name, Key: 'x', Body: 'first' }))).VersionId!;
    const v2 = (await s3.send(new PutObjectCommand({ Bucket: name, Key: 'x', Body: 'second' }))).VersionId!;
    expect(v1).toMatch(/^[0-9a-f]{18}$/);
    expect(v2).not.toBe(v1);
    expect(new TextDecoder().decode(await getBytes(s3, name, 'x', { VersionId: v1 }))).toBe('first');
    const del = await s3.send(new DeleteObjectCommand({ Bucket: name, Key: 'x' }));
    expect(del.DeleteMarker).toBe(true);
    expect(await failure(s3.send(new HeadObjectCommand({ Bucket: name, Key: 'x' })))).toMatchObject({ status: 404 });
    expect(await failure(s3.send(new HeadObjectCommand({ Bucket: name, Key: 'x', VersionId: del.VersionId! })))).toMatchObject({ status: 405 });
    const listed = await s3.send(new ListObjectVersionsCommand({ Bucket: name }));
    expect(listed.Versions?.map((v) => [v.VersionId, v.IsLatest])).toEqual([[v2, false], [v1, false]]);
    expect(listed.DeleteMarkers?.map((m) => [m.VersionId, m.IsLatest])).toEqual([[del.VersionId, true]]);
    const restored = await s3.send(new CopyObjectCommand({ Bucket: name, Key: 'x', CopySource: `${name}/x?versionId=${v1}` }));
    expect(restored.CopySourceVersionId).toBe(v1);
    expect(new TextDecoder().decode(await getBytes(s3, name, 'x'))).toBe('first');
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: name, Key: 'x', VersionId: 'not-a-version' })))).toMatchObject({ name: 'InvalidArgument', status: 400 });
    const notEmpty = await failure(s3.send(new DeleteBucketCommand({ Bucket: name })));
    expect(notEmpty).toMatchObject({ name: 'BucketNotEmpty', status: 409 });
    const all = await s3.send(new ListObjectVersionsCommand({ Bucket: name }));
    for (const v of [...(all.Versions ?? []), ...(all.DeleteMarkers ?? [])]) {
      await s3.send(new DeleteObjectCommand({ Bucket: name, Key: v.Key!, VersionId: v.VersionId! }));
    }
    await s3.send(new DeleteBucketCommand({ Bucket: name }));

    const gone = await failure(s3.send(new HeadBucketCommand({ Bucket: name })));
    expect(gone).toMatchObject({ name: 'NotFound', status: 404 });
    const noLoc = await failure(s3.send(new GetBucketLocationCommand({ Bucket: name })));
    expect(noLoc).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    const noVer = await failure(s3.send(new GetBucketVersioningCommand({ Bucket: name })));
    expect(noVer).toMatchObject({ name: 'NoSuchBucket', status: 404 });
    const noPut = await failure(
      s3.send(new PutObjectCommand({ Bucket: name, Key: 'x', Body: 'x' }))
    );
    expect(noPut).toMatchObject({ name: 'NoSuchBucket', status: 404 });
  });

  it('deletes a bucket that holds only a multipart upload in progress, aborting it (as S3 does)', async () => {
    const b = await newBucket('mpu-left');
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'k' }));
    const deleted = await s3.send(new DeleteBucketCommand({ Bucket: b }));
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    const e = await failure(s3.send(new AbortMultipartUploadCommand({ Bucket: b, Key: 'k', UploadId })));
    expect(e).toMatchObject({ name: 'NoSuchBucket', status: 404 });
  });
});

describe('PutObject / GetObject bodies, with default checksums and with WHEN_REQUIRED', () => {
  let b: string;
  beforeAll(async () => {
    b = await newBucket('bodies');
  });

  for (const mode of ['default', 'when_required'] as const) {
    const client = () => (mode === 'default' ? s3 : s3wr);

    it(`${mode}: string, Buffer and Readable bodies round-trip byte-exact with MD5 ETags`, async () => {
      const text = 'héllo wörld — ünïcode + spaces\n';
      const buf = seeded(100_003, 7);
      const streamed = seeded(100_000, 11);
      const cases: [string, PutObjectCommand['input']['Body'], Buffer, number | undefined][] = [
        [`${mode}/string.txt`, text, Buffer.from(text), undefined],
        [`${mode}/buffer.bin`, buf, buf, undefined],
        [
          `${mode}/stream.bin`,
          Readable.from([streamed.subarray(0, 40_000), streamed.subarray(40_000)]),
          streamed,
          streamed.length,
        ],
      ];
      for (const [key, body, bytes, len] of cases) {
        const put = await client().send(
          new PutObjectCommand({
            Bucket: b,
            Key: key,
            Body: body,
            ...(len !== undefined && { ContentLength: len }),
          })
        );
        expect(put.ETag).toBe(`"${md5hex(bytes)}"`);
        const sent = lastExchange((e) => e.method === 'PUT' && e.query['x-id'] === 'PutObject');
        if (mode === 'default') {
          expect(sent.request['x-amz-sdk-checksum-algorithm']).toBe('CRC32');
          expect(put.ChecksumCRC32).toBe(checksumB64('CRC32', bytes));
        } else {
          expect(sent.request['x-amz-sdk-checksum-algorithm']).toBeUndefined();
          expect(Object.keys(sent.request).some((h) => h.startsWith('x-amz-checksum-'))).toBe(
            false
          );
        }
        // What the server stored is exactly the payload: the WHEN_REQUIRED reader does not
        // validate anything, so a framing leak would show up here as wrong bytes.
        const back = await getBytes(s3wr, b, key);
        expect(back.length).toBe(bytes.length);
        expect(back.equals(bytes)).toBe(true);
        const head = await s3.send(new HeadObjectCommand({ Bucket: b, Key: key }));
        expect(head.ContentLength).toBe(bytes.length);
        expect(head.ETag).toBe(`"${md5hex(bytes)}"`);
        // The validating reader agrees (full-object checksum returned and checked).
        const checked = await s3.send(
          new GetObjectCommand({ Bucket: b, Key: key, ChecksumMode: 'ENABLED' })
        );
        expect((await bytesOf(checked.Body)).equals(bytes)).toBe(true);
        // A plain GetObject asks for checksums only under the default configuration.
        expect((await getBytes(client(), b, key)).equals(bytes)).toBe(true);
        const get = lastExchange((e) => e.method === 'GET' && e.query['x-id'] === 'GetObject');
        expect(get.request['x-amz-checksum-mode']).toBe(mode === 'default' ? 'ENABLED' : undefined);
      }
    });
  }

  it('default: a stream body goes out as aws-chunked STREAMING-UNSIGNED-PAYLOAD-TRAILER and is stored unframed', async () => {
    const payload = seeded(300_001, 5);
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: b,
        Key: 'chunked.bin',
        Body: Readable.from([payload]),
        ContentLength: payload.length,
      })
    );
    const sent = lastExchange((e) => e.method === 'PUT' && e.path.endsWith('/chunked.bin'));
    expect(sent.request['x-amz-content-sha256']).toBe('STREAMING-UNSIGNED-PAYLOAD-TRAILER');
    expect(sent.request['content-encoding']).toBe('aws-chunked');
    expect(sent.request['x-amz-trailer']).toBe('x-amz-checksum-crc32');
    expect(sent.request['x-amz-decoded-content-length']).toBe(String(payload.length));
    expect(put.ETag).toBe(`"${md5hex(payload)}"`);
    expect(put.ChecksumCRC32).toBe(checksumB64('CRC32', payload));
    const head = await s3wr.send(new HeadObjectCommand({ Bucket: b, Key: 'chunked.bin' }));
    expect(head.ContentLength).toBe(payload.length);
    // aws-chunked is framing, never stored as the object's Content-Encoding.
    expect(head.ContentEncoding).toBeUndefined();
    expect((await getBytes(s3wr, b, 'chunked.bin')).equals(payload)).toBe(true);
    // The server really did receive framing (more bytes in than the payload).
    const logged = s.logs
      .map((l) => JSON.parse(l) as { op?: string; key?: string; in?: number })
      .filter((l) => l.op === 'PutObject' && l.key === 'chunked.bin');
    expect(logged.at(-1)!.in).toBeGreaterThan(payload.length);
  });

  it('when_required: a stream body goes out with Content-Length and UNSIGNED-PAYLOAD', async () => {
    const payload = seeded(70_000, 6);
    await s3wr.send(
      new PutObjectCommand({
        Bucket: b,
        Key: 'unsigned.bin',
        Body: Readable.from([payload]),
        ContentLength: payload.length,
      })
    );
    const sent = lastExchange((e) => e.method === 'PUT' && e.path.endsWith('/unsigned.bin'));
    expect(sent.request['x-amz-content-sha256']).toBe('UNSIGNED-PAYLOAD');
    expect(sent.request['content-encoding']).toBeUndefined();
    expect((await getBytes(s3, b, 'unsigned.bin')).equals(payload)).toBe(true);
  });

  it('stores and returns an empty object', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: b, Key: 'empty', Body: '' }));
    expect(put.ETag).toBe(`"${md5hex(Buffer.alloc(0))}"`);
    const g = await s3.send(new GetObjectCommand({ Bucket: b, Key: 'empty' }));
    expect(g.ContentLength).toBe(0);
    expect((await bytesOf(g.Body)).length).toBe(0);
  });

  it('keys with spaces, +, %, unicode, "..", "//" and a control character round-trip exactly', async () => {
    const keys = [
      "dir/a b+c!*'()~$&=,;:@[]ü%.txt",
      'x/../y',
      'x//y/./z',
      '100%',
      'ctl\u0001key',
      'emoji/😀',
      'back\\slash',
    ];
    for (const [i, key] of keys.entries()) {
      const body = `body ${i}`;
      await s3.send(new PutObjectCommand({ Bucket: b, Key: key, Body: body }));
      expect((await getBytes(s3, b, key)).toString()).toBe(body);
    }
    const all = await s3.send(new ListObjectsV2Command({ Bucket: b, EncodingType: 'url' }));
    const listed = (all.Contents ?? []).map((c) => decodeURIComponent(c.Key!));
    for (const key of keys) expect(listed).toContain(key);
  });
});

describe('object metadata, tagging header and conditional PutObject', () => {
  let b: string;
  beforeAll(async () => {
    b = await newBucket('meta');
  });

  it('stores Content-Type, system headers, x-amz-meta-* and the x-amz-tagging header', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: b,
        Key: 'm.json',
        Body: '{"a":1}',
        ContentType: 'application/json; charset=utf-8',
        CacheControl: 'max-age=60',
        ContentDisposition: 'attachment; filename="m.json"',
        ContentLanguage: 'de',
        Metadata: { color: 'blue', 'multi-word': 'a b c' },
        Tagging: 'project=strata&note=x%20y%2Bz',
      })
    );
    const h = await s3.send(new HeadObjectCommand({ Bucket: b, Key: 'm.json' }));
    expect(h.ContentType).toBe('application/json; charset=utf-8');
    expect(h.CacheControl).toBe('max-age=60');
    expect(h.ContentDisposition).toBe('attachment; filename="m.json"');
    expect(h.ContentLanguage).toBe('de');
    expect(h.Metadata).toEqual({ color: 'blue', 'multi-word': 'a b c' });
    expect(h.ContentLength).toBe(7);
    expect(h.LastModified).toBeInstanceOf(Date);
    const g = await s3.send(new GetObjectCommand({ Bucket: b, Key: 'm.json' }));
    expect(g.TagCount).toBe(2);
    await bytesOf(g.Body);
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: b, Key: 'm.json' }));
    expect(new Map(tags.TagSet?.map((t) => [t.Key, t.Value]))).toEqual(
      new Map([
        ['project', 'strata'],
        ['note', 'x y+z'],
      ])
    );
  });

  it('defaults Content-Type to binary/octet-stream when none was sent', async () => {
    // SDK v3 sends application/octet-stream for Buffers; send none with a raw presigned PUT.
    const url = await getSignedUrl(s3wr, new PutObjectCommand({ Bucket: b, Key: 'no-type' }));
    const res = await fetch(url, { method: 'PUT', body: new Uint8Array([1, 2, 3]) });
    expect(res.status).toBe(200);
    const h = await s3.send(new HeadObjectCommand({ Bucket: b, Key: 'no-type' }));
    expect(h.ContentType).toBe('binary/octet-stream');
  });

  it('If-None-Match: * creates once, then 412; If-Match with the right ETag overwrites, a wrong one is 412', async () => {
    const first = await s3.send(
      new PutObjectCommand({ Bucket: b, Key: 'cond', Body: 'v1', IfNoneMatch: '*' })
    );
    expect(first.ETag).toBe(`"${md5hex(Buffer.from('v1'))}"`);
    const dup = await failure(
      s3.send(new PutObjectCommand({ Bucket: b, Key: 'cond', Body: 'v2', IfNoneMatch: '*' }))
    );
    expect(dup).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    const wrong = await failure(
      s3.send(
        new PutObjectCommand({
          Bucket: b,
          Key: 'cond',
          Body: 'v2',
          IfMatch: '"0123456789abcdef0123456789abcdef"',
        })
      )
    );
    expect(wrong).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    expect((await getBytes(s3, b, 'cond')).toString()).toBe('v1');
    await s3.send(
      new PutObjectCommand({ Bucket: b, Key: 'cond', Body: 'v2', IfMatch: first.ETag })
    );
    expect((await getBytes(s3, b, 'cond')).toString()).toBe('v2');
    // If-Match on a key that does not exist: S3 answers 404 NoSuchKey.
    const missing = await failure(
      s3.send(
        new PutObjectCommand({ Bucket: b, Key: 'cond-missing', Body: 'x', IfMatch: first.ETag })
      )
    );
    expect(missing.status).toBe(404);
    expect(missing.name).toBe('NoSuchKey');
  });
});

describe('GetObject: ranges, conditions, overrides, partNumber; HeadObject', () => {
  let b: string;
  const body = seeded(1000, 3);
  let etag: string;
  let lastModified: Date;
  beforeAll(async () => {
    b = await newBucket('get');
    etag = (
      await s3.send(
        new PutObjectCommand({
          Bucket: b,
          Key: 'obj',
          Body: body,
          ContentType: 'application/x-test',
        })
      )
    ).ETag!;
    lastModified = (await s3.send(new HeadObjectCommand({ Bucket: b, Key: 'obj' }))).LastModified!;
  });

  const ranges: [string, number, number][] = [
    ['bytes=10-19', 10, 19],
    ['bytes=0-0', 0, 0],
    ['bytes=990-', 990, 999],
    ['bytes=-5', 995, 999],
    ['bytes=995-2000', 995, 999],
    ['bytes=0-999', 0, 999],
    ['bytes=-5000', 0, 999],
  ];
  for (const [range, first, last] of ranges) {
    it(`Range ${range} answers 206 with bytes ${first}-${last}/1000`, async () => {
      for (const client of [s3, s3wr]) {
        const g = await client.send(new GetObjectCommand({ Bucket: b, Key: 'obj', Range: range }));
        const got = await bytesOf(g.Body);
        expect(g.$metadata.httpStatusCode).toBe(206);
        expect(g.ContentRange).toBe(`bytes ${first}-${last}/1000`);
        expect(g.ContentLength).toBe(last - first + 1);
        expect(got.equals(body.subarray(first, last + 1))).toBe(true);
        expect(g.ETag).toBe(etag);
      }
    });
  }

  it('a range starting at or past the end is 416 InvalidRange with Content-Range bytes */size', async () => {
    for (const range of ['bytes=1000-', 'bytes=5000-6000']) {
      const e = await failure(
        s3.send(new GetObjectCommand({ Bucket: b, Key: 'obj', Range: range }))
      );
      expect(e).toMatchObject({ name: 'InvalidRange', status: 416 });
      expect(
        lastExchange((x) => x.method === 'GET' && x.status === 416).response['content-range']
      ).toBe('bytes */1000');
    }
  });

  it('If-Match / If-None-Match / If-Modified-Since / If-Unmodified-Since', async () => {
    const ok = await s3.send(new GetObjectCommand({ Bucket: b, Key: 'obj', IfMatch: etag }));
    expect((await bytesOf(ok.Body)).equals(body)).toBe(true);
    // Unquoted ETags compare equal too.
    const bare = await s3.send(
      new GetObjectCommand({ Bucket: b, Key: 'obj', IfMatch: etag.replace(/"/g, '') })
    );
    await bytesOf(bare.Body);
    expect(
      await failure(
        s3.send(
          new GetObjectCommand({
            Bucket: b,
            Key: 'obj',
            IfMatch: '"ffffffffffffffffffffffffffffffff"',
          })
        )
      )
    ).toMatchObject({ name: 'PreconditionFailed', status: 412 });

    const notModified = await failure(
      s3.send(new GetObjectCommand({ Bucket: b, Key: 'obj', IfNoneMatch: etag }))
    );
    expect(notModified.status).toBe(304);
    const ex304 = lastExchange((x) => x.status === 304);
    expect(ex304.response.etag).toBe(etag);
    const other = await s3.send(
      new GetObjectCommand({
        Bucket: b,
        Key: 'obj',
        IfNoneMatch: '"ffffffffffffffffffffffffffffffff"',
      })
    );
    await bytesOf(other.Body);

    const past = new Date(lastModified.getTime() - 3600_000);
    const future = new Date(Date.now() + 3600_000);
    expect(
      (
        await failure(
          s3.send(new GetObjectCommand({ Bucket: b, Key: 'obj', IfModifiedSince: future }))
        )
      ).status
    ).toBe(304);
    expect(
      (
        await failure(
          s3.send(new GetObjectCommand({ Bucket: b, Key: 'obj', IfModifiedSince: lastModified }))
        )
      ).status
    ).toBe(304);
    await bytesOf(
      (await s3.send(new GetObjectCommand({ Bucket: b, Key: 'obj', IfModifiedSince: past }))).Body
    );
    expect(
      await failure(
        s3.send(new GetObjectCommand({ Bucket: b, Key: 'obj', IfUnmodifiedSince: past }))
      )
    ).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    await bytesOf(
      (await s3.send(new GetObjectCommand({ Bucket: b, Key: 'obj', IfUnmodifiedSince: future })))
        .Body
    );
    // RFC 9110 precedence: If-Match true + If-Unmodified-Since false -> 200.
    await bytesOf(
      (
        await s3.send(
          new GetObjectCommand({ Bucket: b, Key: 'obj', IfMatch: etag, IfUnmodifiedSince: past })
        )
      ).Body
    );
    // If-None-Match false + If-Modified-Since true -> 304.
    expect(
      (
        await failure(
          s3.send(
            new GetObjectCommand({
              Bucket: b,
              Key: 'obj',
              IfNoneMatch: etag,
              IfModifiedSince: past,
            })
          )
        )
      ).status
    ).toBe(304);

    // HEAD follows the same rules.
    expect(
      (await failure(s3.send(new HeadObjectCommand({ Bucket: b, Key: 'obj', IfNoneMatch: etag }))))
        .status
    ).toBe(304);
    expect(
      (
        await failure(
          s3.send(
            new HeadObjectCommand({
              Bucket: b,
              Key: 'obj',
              IfMatch: '"ffffffffffffffffffffffffffffffff"',
            })
          )
        )
      ).status
    ).toBe(412);
  });

  it('response-* overrides replace the stored headers on GET', async () => {
    const expires = new Date('2030-01-02T03:04:05Z');
    const g = await s3.send(
      new GetObjectCommand({
        Bucket: b,
        Key: 'obj',
        ResponseContentType: 'text/x-override',
        ResponseContentDisposition: 'attachment; filename="x y.txt"',
        ResponseCacheControl: 'no-store',
        ResponseContentLanguage: 'fr',
        ResponseContentEncoding: 'identity',
        ResponseExpires: expires,
      })
    );
    expect((await bytesOf(g.Body)).equals(body)).toBe(true);
    expect(g.ContentType).toBe('text/x-override');
    expect(g.ContentDisposition).toBe('attachment; filename="x y.txt"');
    expect(g.CacheControl).toBe('no-store');
    expect(g.ContentLanguage).toBe('fr');
    expect(g.ContentEncoding).toBe('identity');
    expect(g.Expires?.getTime()).toBe(expires.getTime());
    const plain = await s3.send(new HeadObjectCommand({ Bucket: b, Key: 'obj' }));
    expect(plain.ContentType).toBe('application/x-test');
  });

  it('HeadObject of a missing key is 404 with no body; GetObject is NoSuchKey', async () => {
    const e = await failure(s3.send(new HeadObjectCommand({ Bucket: b, Key: 'nope' })));
    expect(e).toMatchObject({ name: 'NotFound', status: 404 });
    const g = await failure(s3.send(new GetObjectCommand({ Bucket: b, Key: 'nope' })));
    expect(g).toMatchObject({ name: 'NoSuchKey', status: 404 });
    // On the wire: status line and headers, then nothing.
    const url = await getSignedUrl(s3wr, new HeadObjectCommand({ Bucket: b, Key: 'nope' }));
    const raw = await rawHttp(url, 'HEAD');
    const text = raw.toString('latin1');
    expect(text.startsWith('HTTP/1.1 404')).toBe(true);
    const end = text.indexOf('\r\n\r\n');
    expect(end).toBeGreaterThan(0);
    expect(raw.length).toBe(end + 4);
    expect(text.toLowerCase()).toContain('x-amz-request-id:');
  });

  it('PartNumber reads one part of a multipart object and reports PartsCount', async () => {
    const p1 = seeded(MIN_PART, 21);
    const p2 = seeded(1234, 22);
    const key = 'mp-parts';
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: b, Key: key }));
    const e1 = await s3.send(
      new UploadPartCommand({ Bucket: b, Key: key, UploadId, PartNumber: 1, Body: p1 })
    );
    const e2 = await s3.send(
      new UploadPartCommand({ Bucket: b, Key: key, UploadId, PartNumber: 2, Body: p2 })
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: b,
        Key: key,
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: e1.ETag, ChecksumCRC32: e1.ChecksumCRC32 },
            { PartNumber: 2, ETag: e2.ETag, ChecksumCRC32: e2.ChecksumCRC32 },
          ],
        },
      })
    );
    for (const client of [s3, s3wr]) {
      const g2 = await client.send(
        new GetObjectCommand({ Bucket: b, Key: key, PartNumber: 2, ChecksumMode: 'ENABLED' })
      );
      expect((await bytesOf(g2.Body)).equals(p2)).toBe(true);
      expect(g2.PartsCount).toBe(2);
      expect(g2.ContentLength).toBe(p2.length);
      expect(g2.ContentRange).toBe(
        `bytes ${MIN_PART}-${MIN_PART + p2.length - 1}/${MIN_PART + p2.length}`
      );
      expect(g2.ETag).toBe(multipartEtag([p1, p2]));
      const h1 = await client.send(new HeadObjectCommand({ Bucket: b, Key: key, PartNumber: 1 }));
      expect(h1.ContentLength).toBe(p1.length);
      expect(h1.PartsCount).toBe(2);
    }
    const bad = await failure(
      s3.send(new GetObjectCommand({ Bucket: b, Key: key, PartNumber: 3 }))
    );
    // S3 (and the public conformance suite) answer 400 InvalidPart past the part count.
    expect(bad).toMatchObject({ name: 'InvalidPart', status: 400 });
    // A Range across the part boundary reads from both parts' bodies.
    const whole = Buffer.concat([p1, p2]);
    const first = MIN_PART - 100;
    const across = await s3.send(
      new GetObjectCommand({ Bucket: b, Key: key, Range: `bytes=${first}-${first + 299}` })
    );
    expect((await bytesOf(across.Body)).equals(whole.subarray(first, first + 300))).toBe(true);
  });
});

describe('DeleteObject / DeleteObjects', () => {
  it('listings and a DeleteResult too large for one piece arrive whole (V1, V2, versions, DeleteObjects)', async () => {
    const b = await newBucket('pieces');
    // 100 keys of 708 characters (1,008 UTF-8 bytes): each document is 70,000-100,000
    // characters, sent as three pieces of at most ~32,768 (s3DocumentChunks).
    const keys = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, '0')}-${'ü'.repeat(300)}${'x'.repeat(404)}`);
    for (let i = 0; i < keys.length; i += 20) {
      await Promise.all(keys.slice(i, i + 20).map((Key) => s3.send(new PutObjectCommand({ Bucket: b, Key, Body: Key.slice(0, 3) }))));
    }
    const v2 = await s3.send(new ListObjectsV2Command({ Bucket: b }));
    expect(v2.Contents?.map((o) => [o.Key, o.Size])).toEqual(keys.map((k) => [k, 3]));
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: b }));
    expect(v1.Contents?.map((o) => o.Key)).toEqual(keys);
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: b }));
    expect(versions.Versions?.map((v) => v.Key)).toEqual(keys);
    const del = await s3.send(new DeleteObjectsCommand({ Bucket: b, Delete: { Objects: keys.map((Key) => ({ Key })) } }));
    expect(del.Errors ?? []).toEqual([]);
    expect(del.Deleted?.map((d) => d.Key).sort()).toEqual(keys);
    expect((await s3.send(new ListObjectsV2Command({ Bucket: b }))).KeyCount).toBe(0);
  });

  it('DeleteObject is 204 and idempotent; DeleteObjects sends CRC32 (no Content-MD5) and reports each key', async () => {
    const b = await newBucket('del');
    const keys = ['a', 'b&c', 'd <e>', 'f"g', 'sp ace', 'ü'];
    for (const k of keys) await s3.send(new PutObjectCommand({ Bucket: b, Key: k, Body: k }));
    const d = await s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'a' }));
    expect(d.$metadata.httpStatusCode).toBe(204);
    const d2 = await s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'a' }));
    expect(d2.$metadata.httpStatusCode).toBe(204);

    for (const client of [s3, s3wr]) {
      const many = await client.send(
        new DeleteObjectsCommand({
          Bucket: b,
          Delete: { Objects: [...keys, 'never-existed'].map((Key) => ({ Key })) },
        })
      );
      const sent = lastExchange((e) => e.method === 'POST' && 'delete' in e.query);
      expect(sent.request['content-md5']).toBeUndefined();
      expect(sent.request['x-amz-checksum-crc32']).toBeTruthy();
      expect(many.Errors ?? []).toEqual([]);
      expect(new Set(many.Deleted?.map((x) => x.Key))).toEqual(new Set([...keys, 'never-existed']));
    }
    expect((await s3.send(new ListObjectsV2Command({ Bucket: b }))).KeyCount).toBe(0);

    await s3.send(new PutObjectCommand({ Bucket: b, Key: 'q', Body: 'q' }));
    const quiet = await s3.send(
      new DeleteObjectsCommand({ Bucket: b, Delete: { Quiet: true, Objects: [{ Key: 'q' }] } })
    );
    expect(quiet.Deleted ?? []).toEqual([]);
    expect(quiet.Errors ?? []).toEqual([]);
    expect((await s3.send(new ListObjectsV2Command({ Bucket: b }))).KeyCount).toBe(0);
  });
});
