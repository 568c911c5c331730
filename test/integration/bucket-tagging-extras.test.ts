/**
 * Smaller S3 behaviours through the AWS SDK v3 against a real server: bucket tagging
 * (Get/Put/DeleteBucketTagging, S3's tag rules, 404 NoSuchTagSet), GetObjectTorrent (404 for
 * a missing object, a BitTorrent metainfo file for an existing one, none for SSE-C), GetObjectAttributes of an SSE-C object (only
 * with its key), and the Access-Control-Allow-Methods header on an actual CORS request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateBucketCommand,
  DeleteBucketTaggingCommand,
  GetBucketTaggingCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  GetObjectTorrentCommand,
  PutBucketCorsCommand,
  PutBucketTaggingCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { startTestServer, type TestServer } from './harness.js';
import { createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { randomBytes } from '../support/random.js';
import { createHash } from 'node:crypto';
import { bencode, pieceHashes, TORRENT_PIECE_BYTES } from '../../src/s3/ops/torrent.js';

const B = 'extras';
let s: TestServer;
let s3: S3Client;

beforeAll(async () => {
  s = await startTestServer();
  s3 = createS3Client(s.url, new WireLog());
  await s3.send(new CreateBucketCommand({ Bucket: B }));
});
afterAll(async () => {
  s3?.destroy();
  await s?.stop();
});

describe('bucket tagging', () => {
  it('is absent until set, then round-trips, then is deleted', async () => {
    expect(await failure(s3.send(new GetBucketTaggingCommand({ Bucket: B })))).toMatchObject({ name: 'NoSuchTagSet', status: 404 });
    const TagSet = [
      { Key: 'team', Value: 'storage' },
      { Key: 'cost centre', Value: '' },
      { Key: 'ünï', Value: 'cödé <&>' },
    ];
    await s3.send(new PutBucketTaggingCommand({ Bucket: B, Tagging: { TagSet } }));
    const got = await s3.send(new GetBucketTaggingCommand({ Bucket: B }));
    expect(got.TagSet).toEqual(TagSet);
    await s3.send(new DeleteBucketTaggingCommand({ Bucket: B }));
    expect(await failure(s3.send(new GetBucketTaggingCommand({ Bucket: B })))).toMatchObject({ name: 'NoSuchTagSet' });
  });

  it('enforces S3 tag rules (50 tags, unique keys, no aws: prefix) and changes nothing when refused', async () => {
    await s3.send(new PutBucketTaggingCommand({ Bucket: B, Tagging: { TagSet: [{ Key: 'keep', Value: '1' }] } }));
    const many = Array.from({ length: 51 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }));
    expect(await failure(s3.send(new PutBucketTaggingCommand({ Bucket: B, Tagging: { TagSet: many } })))).toMatchObject({ name: 'InvalidTag', status: 400 });
    const dup = [
      { Key: 'a', Value: '1' },
      { Key: 'a', Value: '2' },
    ];
    expect(await failure(s3.send(new PutBucketTaggingCommand({ Bucket: B, Tagging: { TagSet: dup } })))).toMatchObject({ name: 'InvalidTag' });
    expect(await failure(s3.send(new PutBucketTaggingCommand({ Bucket: B, Tagging: { TagSet: [{ Key: 'aws:x', Value: '1' }] } })))).toMatchObject({ name: 'InvalidTag' });
    // Exactly 50 is allowed.
    const fifty = many.slice(0, 50);
    await s3.send(new PutBucketTaggingCommand({ Bucket: B, Tagging: { TagSet: fifty } }));
    expect((await s3.send(new GetBucketTaggingCommand({ Bucket: B }))).TagSet).toHaveLength(50);
    await s3.send(new PutBucketTaggingCommand({ Bucket: B, Tagging: { TagSet: [{ Key: 'keep', Value: '1' }] } }));
    expect((await s3.send(new GetBucketTaggingCommand({ Bucket: B }))).TagSet).toEqual([{ Key: 'keep', Value: '1' }]);
  });

  it('answers NoSuchBucket for a bucket that does not exist', async () => {
    expect(await failure(s3.send(new GetBucketTaggingCommand({ Bucket: 'no-such-bucket-tags' })))).toMatchObject({ name: 'NoSuchBucket', status: 404 });
  });
});

describe('GetObjectTorrent', () => {
  it('is 404 NoSuchKey for a missing object', async () => {
    expect(await failure(s3.send(new GetObjectTorrentCommand({ Bucket: B, Key: 'missing' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
  });

  it('describes an existing object: its length, 256 KiB pieces hashed with SHA-1, a web seed', async () => {
    const data = randomBytes(3 * 256 * 1024 + 1234, 11);
    await s3.send(new PutObjectCommand({ Bucket: B, Key: 'dir/film.mpg', Body: data }));
    const got = await s3.send(new GetObjectTorrentCommand({ Bucket: B, Key: 'dir/film.mpg' }));
    const bytes = Buffer.from(await got.Body!.transformToByteArray());
    const expected = bencode({
      info: { length: data.length, name: 'film.mpg', 'piece length': TORRENT_PIECE_BYTES, pieces: await pieceHashes([data]) },
      'url-list': [`${s.url}/${B}/dir/film.mpg`],
      'created by': 'Strata',
    });
    expect(bytes.equals(expected)).toBe(true);
    // Four pieces (three full, one of 1234 bytes), each the SHA-1 of its slice.
    const pieces = Buffer.concat([0, 1, 2, 3].map((i) => createHash('sha1').update(data.subarray(i * 262144, (i + 1) * 262144)).digest()));
    expect(bytes.includes(Buffer.concat([Buffer.from(`6:pieces${pieces.length}:`), pieces]))).toBe(true);
  });

  it('refuses an SSE-C object even with its key', async () => {
    const key = Buffer.from(randomBytes(32, 12)).toString('base64');
    const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: key };
    await s3.send(new PutObjectCommand({ Bucket: B, Key: 'sealed', Body: 'x', ...ssec }));
    expect(await failure(s3.send(new GetObjectTorrentCommand({ Bucket: B, Key: 'sealed' })))).toMatchObject({ status: 400 });
  });
});

describe('bencode', () => {
  it('encodes BEP 3 values with dictionary keys in byte order', () => {
    expect(bencode({ b: 'x', a: 1, list: [-3, 'é', new Uint8Array([0, 255])] }).toString('latin1')).toBe('d1:ai1e1:b1:x4:listli-3e2:\xc3\xa92:\x00\xffee');
    expect(() => bencode(1.5)).toThrow(RangeError);
  });
});

describe('GetObjectAttributes of an SSE-C object', () => {
  it('needs the customer key, and answers with it', async () => {
    const key = Buffer.from(randomBytes(32, 7)).toString('base64');
    const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: key };
    await s3.send(new PutObjectCommand({ Bucket: B, Key: 'secret', Body: randomBytes(1000, 8), ChecksumAlgorithm: 'CRC32', ...ssec }));
    const attrs = ['ETag', 'Checksum', 'ObjectSize'] as const;
    expect(await failure(s3.send(new GetObjectAttributesCommand({ Bucket: B, Key: 'secret', ObjectAttributes: [...attrs] })))).toMatchObject({
      name: 'InvalidRequest',
      status: 400,
    });
    const other = Buffer.from(randomBytes(32, 9)).toString('base64');
    expect(
      (await failure(s3.send(new GetObjectAttributesCommand({ Bucket: B, Key: 'secret', ObjectAttributes: [...attrs], SSECustomerAlgorithm: 'AES256', SSECustomerKey: other })))).status
    ).toBe(403);
    const got = await s3.send(new GetObjectAttributesCommand({ Bucket: B, Key: 'secret', ObjectAttributes: [...attrs], ...ssec }));
    expect(got.ObjectSize).toBe(1000);
    expect(got.Checksum?.ChecksumCRC32).toMatch(/^[A-Za-z0-9+/]{6}==$/);
  });
});

describe('CORS on an actual request', () => {
  it('names the matching rule’s methods as well as the origin', async () => {
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: B,
        CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET', 'HEAD'], AllowedOrigins: ['https://*.example'] }] },
      })
    );
    await s3.send(new PutObjectCommand({ Bucket: B, Key: 'cors-obj', Body: 'hello' }));
    const wire = new WireLog();
    const c = createS3Client(s.url, wire);
    c.middlewareStack.add((next) => (args) => {
      (args as unknown as { request: { headers: Record<string, string> } }).request.headers.origin = 'https://app.example';
      return next(args);
    }, { step: 'build', name: 'origin' });
    await c.send(new GetObjectCommand({ Bucket: B, Key: 'cors-obj' }));
    const ex = wire.exchanges.find((x) => x.path.endsWith('/cors-obj'))!;
    expect(ex.response['access-control-allow-origin']).toBe('https://app.example');
    expect(ex.response['access-control-allow-methods']).toBe('GET, HEAD');
    c.destroy();
  });
});
