/**
 * The built server (`dist/src/cli/main.js serve`) runs under Bun (the `bun` devDependency's
 * binary) and serves the AWS SDK v3 from Node byte-exact: PUT (buffer, string and streamed
 * aws-chunked bodies with CRC32 checksums), GET with checksum validation and ranges, HEAD,
 * ListObjectsV2, a 3-part multipart upload, DeleteObjects/DeleteObject and DeleteBucket.
 * The data directory Bun wrote is then opened by an in-process Node server and read back.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import {
  ACCESS_KEY,
  CLI,
  REGION,
  ROOT,
  SECRET_KEY,
  startTestServer,
  type TestServer,
} from './harness.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';

const MiB = 1024 * 1024;
const BUCKET = 'bun-bucket';
const BUN = join(ROOT, 'node_modules/.bin/bun');
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest();

/** Three parts: two of the 5 MiB minimum and an odd-sized tail. */
const PARTS = [randomBytes(5 * MiB, 31), randomBytes(5 * MiB, 32), randomBytes(MiB + 7, 33)];
const WHOLE = Buffer.concat(PARTS);
const SMALL = randomBytes(1 * MiB + 3, 34);
const STREAMED = randomBytes(300_001, 35);

let dataDir: string;
let s: TestServer | undefined;
let client: S3Client;

function clientFor(url: string): S3Client {
  return new S3Client({
    endpoint: url,
    region: REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    maxAttempts: 1,
  });
}

async function getBytes(c: S3Client, key: string, range?: string): Promise<Uint8Array> {
  const r = await c.send(
    new GetObjectCommand({
      Bucket: BUCKET,
      Key: key,
      ChecksumMode: 'ENABLED',
      ...(range && { Range: range }),
    })
  );
  return r.Body!.transformToByteArray();
}

beforeAll(async () => {
  expect(
    existsSync(BUN),
    `${BUN} missing: run npm ci (the bun devDependency and its postinstall)`
  ).toBe(true);
  expect(existsSync(CLI), 'dist/ missing: npm run build:js').toBe(true);
  dataDir = mkdtempSync(join(tmpdir(), 'strata-bun-'));
  s = await startTestServer({ child: true, runtime: BUN, dataDir });
  client = clientFor(s.url);
});

afterAll(async () => {
  client?.destroy();
  await s?.stop();
  if (dataDir) {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.master-key`, { force: true });
  }
});

describe('Strata served by Bun, driven by the AWS SDK v3 from Node', () => {
  it('really runs under Bun', () => {
    const exe = readlinkSync(`/proc/${s!.child!.pid}/exe`);
    expect(exe).toMatch(/bun/);
  });

  it('PUT and GET round-trip buffer, string and streamed bodies byte-exact', async () => {
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const put = await client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'dir/small.bin', Body: SMALL })
    );
    expect(put.ETag).toBe(`"${md5(SMALL).toString('hex')}"`);
    expect(put.ChecksumCRC32).toMatch(/^[A-Za-z0-9+/]{6}==$/);
    await client.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'dir/text ü+.txt',
        Body: 'hello from node to bun\n',
        ContentType: 'text/plain',
      })
    );
    // A stream with a length goes out as aws-chunked with a trailing CRC32.
    await client.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'keep/streamed.bin',
        Body: Readable.from([STREAMED.subarray(0, 100_000), STREAMED.subarray(100_000)]),
        ContentLength: STREAMED.length,
      })
    );

    expectBytes(await getBytes(client, 'dir/small.bin'), SMALL, 'small');
    expect(Buffer.from(await getBytes(client, 'dir/text ü+.txt')).toString()).toBe(
      'hello from node to bun\n'
    );
    expectBytes(await getBytes(client, 'keep/streamed.bin'), STREAMED, 'streamed');
    const head = await client.send(
      new HeadObjectCommand({ Bucket: BUCKET, Key: 'dir/text ü+.txt' })
    );
    expect(head.ContentLength).toBe(23);
    expect(head.ContentType).toBe('text/plain');
  });

  it('completes a 3-part multipart upload and serves it whole and by range', async () => {
    const key = 'keep/multipart.bin';
    const { UploadId } = await client.send(
      new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key })
    );
    const etags: string[] = [];
    for (const [i, body] of PARTS.entries()) {
      const r = await client.send(
        new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: i + 1, Body: body })
      );
      expect(r.ETag).toBe(`"${md5(body).toString('hex')}"`);
      etags.push(r.ETag!);
    }
    const done = await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      })
    );
    expect(done.ETag).toBe(`"${md5(Buffer.concat(PARTS.map(md5))).toString('hex')}-3"`);
    expectBytes(await getBytes(client, key), WHOLE, 'multipart');
    // Across the boundary between parts 1 and 2.
    const from = 5 * MiB - 1000;
    expectBytes(
      await getBytes(client, key, `bytes=${from}-${from + 2999}`),
      WHOLE.subarray(from, from + 3000),
      'range'
    );
  });

  it('lists with prefix and delimiter, deletes, and lists again', async () => {
    const all = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(all.Contents?.map((o) => [o.Key, o.Size])).toEqual([
      ['dir/small.bin', SMALL.length],
      ['dir/text ü+.txt', 23],
      ['keep/multipart.bin', WHOLE.length],
      ['keep/streamed.bin', STREAMED.length],
    ]);
    const top = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Delimiter: '/' }));
    expect(top.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['dir/', 'keep/']);
    expect(top.KeyCount).toBe(2);

    const del = await client.send(
      new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: 'dir/small.bin' }] } })
    );
    expect(del.Deleted?.map((d) => d.Key)).toEqual(['dir/small.bin']);
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'dir/text ü+.txt' }));
    const left = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'dir/' }));
    expect(left.KeyCount).toBe(0);
    await expect(
      client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'dir/small.bin' }))
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
    // The request log is the Bun process's stdout.
    expect(
      s!.logs.some(
        (l) => l.includes('"op":"CompleteMultipartUpload"') && l.includes('"status":200')
      )
    ).toBe(true);
    expect(s!.logs.filter((l) => /"status":5\d\d/.test(l))).toEqual([]);
  });

  it('sends listing and DeleteResult documents that go out in several pieces whole', async () => {
    // 100 keys of 709 characters (1,009 UTF-8 bytes): the listing is ~90,000 characters and
    // the DeleteResult ~75,000, three pieces each (s3DocumentChunks closes one at 32,768).
    const keys = Array.from({ length: 100 }, (_, i) => `long/${String(i).padStart(3, '0')}-${'ü'.repeat(300)}${'x'.repeat(400)}`);
    for (const Key of keys) await client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: Key.slice(0, 9) }));
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'long/' }));
    expect(listed.Contents?.map((o) => [o.Key, o.Size])).toEqual(keys.map((k) => [k, 9]));
    const del = await client.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys.map((Key) => ({ Key })) } }));
    expect(del.Deleted?.map((d) => d.Key).sort()).toEqual(keys);
    expect((await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'long/' }))).KeyCount).toBe(0);
  });

  it('leaves a data directory that Node reads back byte-exact, then deletes the bucket', async () => {
    client.destroy();
    await s!.stop();
    s = await startTestServer({ dataDir });
    client = clientFor(s.url);
    expectBytes(await getBytes(client, 'keep/multipart.bin'), WHOLE, 'multipart under node');
    expectBytes(await getBytes(client, 'keep/streamed.bin'), STREAMED, 'streamed under node');
    await client.send(
      new DeleteObjectsCommand({
        Bucket: BUCKET,
        Delete: { Objects: [{ Key: 'keep/multipart.bin' }, { Key: 'keep/streamed.bin' }] },
      })
    );
    await client.send(new DeleteBucketCommand({ Bucket: BUCKET }));
  });
});
