/**
 * Proof with a real client, part: CopyObject and ListObjects V1/V2.
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
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CopyObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { seeded } from './seeded.js';
import { checksumB64, failure } from './support/sdk-v3-client.js';
import { getBytes, newBucket, s3, s3wr, setupSdkSuite } from './support/sdk-v3-suite.js';

setupSdkSuite();

describe('CopyObject', () => {
  let src: string;
  let dst: string;
  const body = seeded(50_000, 9);
  const srcKey = 'dir/sp ace+plus ü%.bin';
  let srcEtag: string;
  const copySource = () => `${src}/${encodeURIComponent(srcKey)}`;
  beforeAll(async () => {
    src = await newBucket('copy-src');
    dst = await newBucket('copy-dst');
    srcEtag = (
      await s3.send(
        new PutObjectCommand({
          Bucket: src,
          Key: srcKey,
          Body: body,
          ContentType: 'application/x-src',
          Metadata: { origin: 'src' },
          Tagging: 't=1',
          ChecksumAlgorithm: 'SHA256',
        })
      )
    ).ETag!;
  });

  it('COPY keeps metadata, content-type and tags, across buckets, byte-exact', async () => {
    const r = await s3.send(
      new CopyObjectCommand({ Bucket: dst, Key: 'copied', CopySource: copySource() })
    );
    expect(r.CopyObjectResult?.ETag).toBe(srcEtag);
    expect(r.CopyObjectResult?.LastModified).toBeInstanceOf(Date);
    const h = await s3.send(
      new HeadObjectCommand({ Bucket: dst, Key: 'copied', ChecksumMode: 'ENABLED' })
    );
    expect(h.ContentType).toBe('application/x-src');
    expect(h.Metadata).toEqual({ origin: 'src' });
    expect(h.ETag).toBe(srcEtag);
    expect(h.ChecksumSHA256).toBe(checksumB64('SHA256', body));
    expect((await getBytes(s3, dst, 'copied')).equals(body)).toBe(true);
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: dst, Key: 'copied' }));
    expect(tags.TagSet).toEqual([{ Key: 't', Value: '1' }]);
  });

  it('REPLACE takes metadata and content-type from the request', async () => {
    await s3.send(
      new CopyObjectCommand({
        Bucket: dst,
        Key: 'replaced',
        CopySource: copySource(),
        MetadataDirective: 'REPLACE',
        ContentType: 'text/x-new',
        Metadata: { fresh: 'yes' },
      })
    );
    const h = await s3.send(new HeadObjectCommand({ Bucket: dst, Key: 'replaced' }));
    expect(h.ContentType).toBe('text/x-new');
    expect(h.Metadata).toEqual({ fresh: 'yes' });
    expect((await getBytes(s3wr, dst, 'replaced')).equals(body)).toBe(true);
    // Copying an object onto itself needs REPLACE (S3: InvalidRequest otherwise).
    const self = await failure(
      s3.send(new CopyObjectCommand({ Bucket: src, Key: srcKey, CopySource: copySource() }))
    );
    expect(self).toMatchObject({ name: 'InvalidRequest', status: 400 });
    await s3.send(
      new CopyObjectCommand({
        Bucket: src,
        Key: srcKey,
        CopySource: copySource(),
        MetadataDirective: 'REPLACE',
        ContentType: 'application/x-src',
        Metadata: { origin: 'src' },
      })
    );
  });

  it('x-amz-copy-source-if-* conditions and If-None-Match: * on the destination', async () => {
    await s3.send(
      new CopyObjectCommand({
        Bucket: dst,
        Key: 'c1',
        CopySource: copySource(),
        CopySourceIfMatch: srcEtag,
      })
    );
    const wrong = await failure(
      s3.send(
        new CopyObjectCommand({
          Bucket: dst,
          Key: 'c2',
          CopySource: copySource(),
          CopySourceIfMatch: '"ffffffffffffffffffffffffffffffff"',
        })
      )
    );
    expect(wrong).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    const inm = await failure(
      s3.send(
        new CopyObjectCommand({
          Bucket: dst,
          Key: 'c2',
          CopySource: copySource(),
          CopySourceIfNoneMatch: srcEtag,
        })
      )
    );
    expect(inm).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    const future = new Date(Date.now() + 3600_000);
    const past = new Date(Date.now() - 24 * 3600_000);
    const ims = await failure(
      s3.send(
        new CopyObjectCommand({
          Bucket: dst,
          Key: 'c2',
          CopySource: copySource(),
          CopySourceIfModifiedSince: future,
        })
      )
    );
    expect(ims).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    const ius = await failure(
      s3.send(
        new CopyObjectCommand({
          Bucket: dst,
          Key: 'c2',
          CopySource: copySource(),
          CopySourceIfUnmodifiedSince: past,
        })
      )
    );
    expect(ius).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    await s3.send(
      new CopyObjectCommand({
        Bucket: dst,
        Key: 'c2',
        CopySource: copySource(),
        CopySourceIfModifiedSince: past,
        CopySourceIfUnmodifiedSince: future,
      })
    );
    expect((await getBytes(s3, dst, 'c2')).equals(body)).toBe(true);

    const exists = await failure(
      s3.send(
        new CopyObjectCommand({
          Bucket: dst,
          Key: 'c1',
          CopySource: copySource(),
          IfNoneMatch: '*',
        })
      )
    );
    expect(exists).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    await s3.send(
      new CopyObjectCommand({ Bucket: dst, Key: 'c3', CopySource: copySource(), IfNoneMatch: '*' })
    );
  });

  it('a missing source is NoSuchKey; a missing source bucket NoSuchBucket', async () => {
    expect(
      await failure(
        s3.send(new CopyObjectCommand({ Bucket: dst, Key: 'x', CopySource: `${src}/missing` }))
      )
    ).toMatchObject({ name: 'NoSuchKey', status: 404 });
    expect(
      await failure(
        s3.send(
          new CopyObjectCommand({ Bucket: dst, Key: 'x', CopySource: 'sdk-no-such-bucket/k' })
        )
      )
    ).toMatchObject({ name: 'NoSuchBucket', status: 404 });
  });
});

describe('ListObjects V1 and V2', () => {
  let b: string;
  const keys = [
    'a.txt',
    'b/1',
    'b/2',
    'b/c/3',
    'b/c/4',
    'd e/f+g',
    'h%20i',
    'j&k<l>',
    'ü/ø',
    'ctl\u0001/x',
    'ctl\u001fy',
    'z',
  ].sort();
  beforeAll(async () => {
    b = await newBucket('list');
    for (const k of keys) await s3wr.send(new PutObjectCommand({ Bucket: b, Key: k, Body: k }));
  });

  const dec = (v: string | undefined) => (v === undefined ? v : decodeURIComponent(v));

  it('V2 pages through every key with MaxKeys 2, continuation tokens and url encoding', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({
          Bucket: b,
          MaxKeys: 2,
          EncodingType: 'url',
          ...(token && { ContinuationToken: token }),
        })
      );
      expect(page.EncodingType).toBe('url');
      expect(page.KeyCount).toBe(page.Contents?.length ?? 0);
      expect(page.MaxKeys).toBe(2);
      if (token) expect(page.ContinuationToken).toBe(token);
      for (const c of page.Contents ?? []) {
        seen.push(dec(c.Key)!);
        expect(c.ETag).toMatch(/^"[0-9a-f]{32}"$/);
        expect(c.Size).toBeGreaterThan(0);
        expect(c.Owner).toBeUndefined();
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
      if (page.IsTruncated) expect(token).toBeTruthy();
      pages++;
    } while (token);
    expect(seen).toEqual(keys);
    expect(pages).toBe(Math.ceil(keys.length / 2));
  });

  it('V2 prefix + delimiter gives CommonPrefixes; StartAfter skips; FetchOwner adds Owner', async () => {
    const top = await s3.send(
      new ListObjectsV2Command({ Bucket: b, Delimiter: '/', EncodingType: 'url' })
    );
    expect(top.CommonPrefixes?.map((p) => dec(p.Prefix))).toEqual([
      'b/',
      'ctl\u0001/',
      'd e/',
      'ü/',
    ]);
    expect(top.Contents?.map((c) => dec(c.Key))).toEqual(keys.filter((k) => !k.includes('/')));
    expect(top.Delimiter).toBe('/');

    const sub = await s3.send(
      new ListObjectsV2Command({ Bucket: b, Prefix: 'b/', Delimiter: '/' })
    );
    expect(sub.Contents?.map((c) => c.Key)).toEqual(['b/1', 'b/2']);
    expect(sub.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['b/c/']);
    expect(sub.Prefix).toBe('b/');
    expect(sub.KeyCount).toBe(3); // CommonPrefixes count toward KeyCount

    const after = await s3.send(
      new ListObjectsV2Command({ Bucket: b, StartAfter: 'b/c/3', Prefix: 'b/' })
    );
    expect(after.Contents?.map((c) => c.Key)).toEqual(['b/c/4']);
    expect(after.StartAfter).toBe('b/c/3');

    const owned = await s3.send(
      new ListObjectsV2Command({ Bucket: b, Prefix: 'b/', FetchOwner: true })
    );
    expect(owned.Contents?.every((c) => !!c.Owner?.ID)).toBe(true);

    const paged = await s3.send(
      new ListObjectsV2Command({ Bucket: b, Delimiter: '/', MaxKeys: 1, Prefix: 'b/' })
    );
    expect(paged.IsTruncated).toBe(true);
    const rest = await s3.send(
      new ListObjectsV2Command({
        Bucket: b,
        Delimiter: '/',
        MaxKeys: 10,
        Prefix: 'b/',
        ContinuationToken: paged.NextContinuationToken,
      })
    );
    expect([
      ...(paged.Contents ?? []).map((c) => c.Key),
      ...(rest.Contents ?? []).map((c) => c.Key),
      ...(rest.CommonPrefixes ?? []).map((p) => p.Prefix),
    ]).toEqual(['b/1', 'b/2', 'b/c/']);
  });

  it('a key with a character XML cannot carry makes the server URL-encode the listing (and say so)', async () => {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: b, Prefix: 'ctl' }));
    expect(page.EncodingType).toBe('url');
    expect(page.Contents?.map((c) => dec(c.Key))).toEqual(['ctl\u0001/x', 'ctl\u001fy']);
    // A safe page is not encoded: keys arrive raw.
    const safe = await s3.send(new ListObjectsV2Command({ Bucket: b, Prefix: 'j' }));
    expect(safe.EncodingType).toBeUndefined();
    expect(safe.Contents?.map((c) => c.Key)).toEqual(['j&k<l>']);
  });

  it('V1 pages with Marker / NextMarker (delimiter) or the last key (no delimiter)', async () => {
    const seen: string[] = [];
    let marker: string | undefined;
    for (;;) {
      const page = await s3.send(
        new ListObjectsCommand({
          Bucket: b,
          MaxKeys: 3,
          EncodingType: 'url',
          ...(marker !== undefined && { Marker: marker }),
        })
      );
      expect(page.EncodingType).toBe('url');
      const ks = (page.Contents ?? []).map((c) => dec(c.Key)!);
      expect(page.Contents?.every((c) => !!c.Owner?.ID)).toBe(true);
      seen.push(...ks);
      if (!page.IsTruncated) break;
      expect(page.NextMarker).toBeUndefined();
      marker = ks.at(-1);
    }
    expect(seen).toEqual(keys);

    const first = await s3.send(new ListObjectsCommand({ Bucket: b, Delimiter: '/', MaxKeys: 2 }));
    expect(first.IsTruncated).toBe(true);
    expect(first.NextMarker).toBeTruthy();
    const second = await s3.send(
      new ListObjectsCommand({
        Bucket: b,
        Delimiter: '/',
        MaxKeys: 100,
        Marker: dec(first.NextMarker),
      })
    );
    const all = [
      ...(first.Contents ?? []).map((c) => c.Key),
      ...(first.CommonPrefixes ?? []).map((p) => p.Prefix),
      ...(second.Contents ?? []).map((c) => c.Key),
      ...(second.CommonPrefixes ?? []).map((p) => p.Prefix),
    ].map((k) => dec(k!) ?? k);
    expect(all.sort()).toEqual(
      ['a.txt', 'b/', 'ctl\u0001/', 'ctl\u001fy', 'd e/', 'h%20i', 'j&k<l>', 'z', 'ü/'].sort()
    );

    const pre = await s3.send(new ListObjectsCommand({ Bucket: b, Prefix: 'd e/' }));
    expect(pre.Contents?.map((c) => c.Key)).toEqual(['d e/f+g']);
    expect(pre.Prefix).toBe('d e/');
  });

  it('lists an empty bucket and rejects a bad max-keys', async () => {
    const e = await newBucket('list-empty');
    const v2 = await s3.send(new ListObjectsV2Command({ Bucket: e }));
    expect(v2.KeyCount).toBe(0);
    expect(v2.Contents).toBeUndefined();
    expect(v2.IsTruncated).toBe(false);
    const missing = await failure(
      s3.send(new ListObjectsV2Command({ Bucket: 'sdk-no-such-bucket' }))
    );
    expect(missing).toMatchObject({ name: 'NoSuchBucket', status: 404 });
  });
});
