/**
 * Encryption at rest through the AWS SDK v3 against a real server: SSE-S3 and SSE-C round
 * trips (packed and carrier bodies), ranged GETs across 256 KiB segment boundaries, the
 * response headers S3 sends, missing / wrong keys answered with no bytes (also after the
 * body cache saw the object), multipart SSE-C with the key on every part, CopyObject and
 * UploadPartCopy between every pair of modes, bucket default encryption, a tampered sealed
 * segment failing the GET, and finally a grep of every file under the data directory for
 * the plaintext of every encrypted object.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketEncryptionCommand,
  GetBucketEncryptionCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutBucketEncryptionCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { startTestServer, type TestServer } from './harness.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { randomBytes } from '../support/random.js';
import { decodePack } from '../../src/pack/reader.js';
import { encodePack } from '../../src/pack/writer.js';
import { getBytes } from '../../src/provider/provider.js';
import { listFiles } from './support/tree.js';

const KIB = 1024;
const MIB = 1024 * KIB;
const SEG = 256 * KIB;
const B = 'sse-sdk';
const KEY_A = Buffer.from(randomBytes(32, 71)).toString('base64');
const KEY_B = Buffer.from(randomBytes(32, 72)).toString('base64');
const ssec = (key: string) => ({ SSECustomerAlgorithm: 'AES256', SSECustomerKey: key });
const copySsec = (key: string) => ({ CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: key });
const md5b64 = (keyB64: string) => createHash('md5').update(Buffer.from(keyB64, 'base64')).digest('base64');

let s: TestServer;
let s3: S3Client;
const wire = new WireLog();
/** Plaintexts of encrypted objects that were never stored in the clear: none may appear on disk. */
const secrets = new Map<string, Uint8Array>();
let seed = 1000;
const body = (n: number, secret?: string) => {
  const b = randomBytes(n, seed++);
  if (secret) secrets.set(secret, b);
  return b;
};

beforeAll(async () => {
  s = await startTestServer();
  s3 = createS3Client(s.url, wire);
  await s3.send(new CreateBucketCommand({ Bucket: B }));
});
afterAll(async () => {
  await s?.stop();
});

async function get(key: string, extra: Record<string, string> = {}, range?: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket: B, Key: key, ...extra, ...(range ? { Range: range } : {}) }));
  return bytesOf(r.Body);
}

/** Ranges around segment boundaries (and the ends) of an n-byte object. */
function ranges(n: number): [number, number][] {
  const cuts = [0, 1, SEG - 1, SEG, SEG + 1, 2 * SEG - 1, 2 * SEG, n - 2, n - 1].filter((x) => x >= 0 && x < n);
  const out: [number, number][] = [];
  for (const a of cuts) for (const b of cuts) if (b >= a && b - a <= 3 * SEG) out.push([a, b]);
  return out;
}

describe('SSE-S3 and SSE-C objects', () => {
  it('round-trip with the S3 response headers, at every size class, and serve ranges across segment boundaries', async () => {
    for (const [mode, n] of [
      ['s3', 0],
      ['s3', 1],
      ['s3', 100 * KIB],
      ['s3', 3 * MIB + 17],
      ['c', 0],
      ['c', 13],
      ['c', 2 * SEG + 1],
      ['c', 3 * MIB + 17],
    ] as const) {
      const key = `rt/${mode}/${n}`;
      const data = body(n, n >= 64 ? key : undefined);
      const enc = mode === 's3' ? { ServerSideEncryption: 'AES256' as const } : ssec(KEY_A);
      const put = await s3.send(new PutObjectCommand({ Bucket: B, Key: key, Body: data, ...enc }));
      if (mode === 's3') {
        expect(put.ServerSideEncryption).toBe('AES256');
        expect(put.SSECustomerAlgorithm).toBeUndefined();
      } else {
        expect(put.SSECustomerAlgorithm).toBe('AES256');
        expect(put.SSECustomerKeyMD5).toBe(md5b64(KEY_A));
        expect(put.ServerSideEncryption).toBeUndefined();
      }
      const readArgs = mode === 's3' ? {} : ssec(KEY_A);
      const head = await s3.send(new HeadObjectCommand({ Bucket: B, Key: key, ...readArgs }));
      expect(head.ContentLength).toBe(n);
      if (mode === 's3') expect(head.ServerSideEncryption).toBe('AES256');
      else expect(head.SSECustomerKeyMD5).toBe(md5b64(KEY_A));
      expect((await get(key, readArgs)).equals(Buffer.from(data))).toBe(true);
      for (const [a, b] of ranges(n)) {
        const got = await get(key, readArgs, `bytes=${a}-${b}`);
        expect(got.equals(Buffer.from(data.subarray(a, b + 1))), `${key} ${a}-${b}`).toBe(true);
      }
    }
  });

  it('SSE-C: no key -> 400 InvalidRequest, another key -> 403 AccessDenied, a key for a plain object -> 400; no bytes, even once cached', async () => {
    const small = body(4000, 'keys/small');
    const big = body(SEG * 3, 'keys/big');
    await s3.send(new PutObjectCommand({ Bucket: B, Key: 'keys/small', Body: small, ...ssec(KEY_A) }));
    await s3.send(new PutObjectCommand({ Bucket: B, Key: 'keys/big', Body: big, ...ssec(KEY_A) }));
    await s3.send(new PutObjectCommand({ Bucket: B, Key: 'keys/plain', Body: body(10) }));
    for (const key of ['keys/small', 'keys/big']) {
      // Read it right first: a packed body then sits in the body cache.
      expect((await get(key, ssec(KEY_A))).length).toBe(key.endsWith('small') ? 4000 : 3 * SEG);
      const none = await failure(get(key));
      expect([none.status, none.name]).toEqual([400, 'InvalidRequest']);
      const wrong = await failure(get(key, ssec(KEY_B)));
      expect([wrong.status, wrong.name]).toEqual([403, 'AccessDenied']);
      const ranged = await failure(get(key, ssec(KEY_B), 'bytes=0-10'));
      expect(ranged.status).toBe(403);
      expect((await failure(s3.send(new HeadObjectCommand({ Bucket: B, Key: key })))).status).toBe(400);
      expect((await failure(s3.send(new HeadObjectCommand({ Bucket: B, Key: key, ...ssec(KEY_B) })))).status).toBe(403);
    }
    const plain = await failure(get('keys/plain', ssec(KEY_A)));
    expect([plain.status, plain.name]).toEqual([400, 'InvalidRequest']);
    // The error responses carried no object bytes (only an XML error document).
    const last = wire.last((e) => e.path.endsWith('/keys/plain'));
    expect(last.response['content-type']).toBe('application/xml');
  });

  it('SSE-C checksums are answered to the key holder (sealed at rest)', async () => {
    const data = body(5000, 'sum/c');
    const sha = createHash('sha256').update(data).digest('base64');
    const put = await s3.send(new PutObjectCommand({ Bucket: B, Key: 'sum/c', Body: data, ChecksumAlgorithm: 'SHA256', ...ssec(KEY_A) }));
    expect(put.ChecksumSHA256).toBe(sha);
    const head = await s3.send(new HeadObjectCommand({ Bucket: B, Key: 'sum/c', ChecksumMode: 'ENABLED', ...ssec(KEY_A) }));
    expect(head.ChecksumSHA256).toBe(sha);
    const got = await s3.send(new GetObjectCommand({ Bucket: B, Key: 'sum/c', ChecksumMode: 'ENABLED', ...ssec(KEY_A) }));
    expect(got.ChecksumSHA256).toBe(sha);
    expect((await bytesOf(got.Body)).equals(Buffer.from(data))).toBe(true);
    const raw = await s.server!.store.version(B, 'sum/c');
    expect(raw.checksums?.values).toEqual({});
  });

  it('multipart SSE-C: the upload key on every part and on Complete; parts, ranges and part numbers read back', async () => {
    const key = 'mp/c';
    const p1 = body(5 * MIB + 3, `${key}#1`);
    const p2 = body(700 * KIB, `${key}#2`);
    const create = await s3.send(new CreateMultipartUploadCommand({ Bucket: B, Key: key, ...ssec(KEY_A) }));
    expect(create.SSECustomerKeyMD5).toBe(md5b64(KEY_A));
    const UploadId = create.UploadId!;
    const part = (n: number, data: Uint8Array, extra: object) => s3.send(new UploadPartCommand({ Bucket: B, Key: key, UploadId, PartNumber: n, Body: data, ...extra }));
    expect((await failure(part(1, p1, {}))).status).toBe(400);
    expect((await failure(part(1, p1, ssec(KEY_B)))).status).toBe(400);
    const r1 = await part(1, p1, ssec(KEY_A));
    expect(r1.SSECustomerKeyMD5).toBe(md5b64(KEY_A));
    const r2 = await part(2, p2, ssec(KEY_A));
    const Parts = [
      { PartNumber: 1, ETag: r1.ETag! },
      { PartNumber: 2, ETag: r2.ETag! },
    ];
    const complete = (extra: object) => s3.send(new CompleteMultipartUploadCommand({ Bucket: B, Key: key, UploadId, MultipartUpload: { Parts }, ...extra }));
    expect((await failure(complete({}))).status).toBe(400);
    expect((await failure(complete(ssec(KEY_B)))).status).toBe(400);
    await complete(ssec(KEY_A));
    // The SDK does not model SSE-C on Complete's output; the headers are on the wire.
    const sent = wire.last((e) => e.method === 'POST' && e.status === 200 && e.path.endsWith('/mp/c'));
    expect(sent.response['x-amz-server-side-encryption-customer-key-md5']).toBe(md5b64(KEY_A));
    const whole = Buffer.concat([p1, p2]);
    expect((await get(key, ssec(KEY_A))).equals(whole)).toBe(true);
    for (const [a, b] of [
      [p1.length - 5, p1.length + 5],
      [SEG - 3, SEG + 3],
      [whole.length - 1, whole.length - 1],
      [0, 2 * MIB],
    ]) {
      expect((await get(key, ssec(KEY_A), `bytes=${a}-${b}`)).equals(whole.subarray(a!, b! + 1)), `${a}-${b}`).toBe(true);
    }
    const part2 = await s3.send(new GetObjectCommand({ Bucket: B, Key: key, PartNumber: 2, ...ssec(KEY_A) }));
    expect(part2.PartsCount).toBe(2);
    expect((await bytesOf(part2.Body)).equals(Buffer.from(p2))).toBe(true);
    expect((await failure(get(key, ssec(KEY_B)))).status).toBe(403);
  });
});

type Mode = 'plain' | 's3' | 'c';
const writeArgs = (m: Mode, key: string) => (m === 's3' ? { ServerSideEncryption: 'AES256' as const } : m === 'c' ? ssec(key) : {});
const readArgs = (m: Mode, key: string) => (m === 'c' ? ssec(key) : {});

describe('copies between modes', () => {
  const modes: Mode[] = ['plain', 's3', 'c'];
  for (const from of modes) {
    for (const to of modes) {
      it(`CopyObject ${from} -> ${to} (packed and carrier) re-encrypts as asked and reads back`, async () => {
        for (const n of [1000, 600 * KIB]) {
          const src = `copy/${from}-${to}/${n}/src`;
          const dst = `copy/${from}-${to}/${n}/dst`;
          // A copy to plaintext stores it in the clear, on purpose: not a secret then.
          const data = body(n, from === 'plain' || to === 'plain' ? undefined : src);
          await s3.send(new PutObjectCommand({ Bucket: B, Key: src, Body: data, ...writeArgs(from, KEY_A) }));
          const copy = await s3.send(
            new CopyObjectCommand({
              Bucket: B,
              Key: dst,
              CopySource: `${B}/${src}`,
              ...writeArgs(to, KEY_B),
              ...(from === 'c' ? copySsec(KEY_A) : {}),
            })
          );
          if (to === 's3') expect(copy.ServerSideEncryption).toBe('AES256');
          if (to === 'c') expect(copy.SSECustomerKeyMD5).toBe(md5b64(KEY_B));
          if (to === 'plain') expect(copy.ServerSideEncryption ?? copy.SSECustomerAlgorithm).toBeUndefined();
          expect((await get(dst, readArgs(to, KEY_B))).equals(Buffer.from(data)), `${dst}`).toBe(true);
          if (to === 'c') expect((await failure(get(dst, ssec(KEY_A)))).status).toBe(403);
          if (from === 'c') {
            // The source needs its own key: none -> 400, the destination's -> 403.
            const args = { Bucket: B, Key: `${dst}-x`, CopySource: `${B}/${src}`, ...writeArgs(to, KEY_B) };
            expect((await failure(s3.send(new CopyObjectCommand(args)))).status).toBe(400);
            expect((await failure(s3.send(new CopyObjectCommand({ ...args, ...copySsec(KEY_B) })))).status).toBe(403);
          }
        }
      });
    }
  }

  it('UploadPartCopy from an SSE-C source into SSE-S3 and SSE-C uploads', async () => {
    const src = 'upc/src';
    const data = body(6 * MIB + 11, src);
    await s3.send(new PutObjectCommand({ Bucket: B, Key: src, Body: data, ...ssec(KEY_A) }));
    for (const to of ['s3', 'c'] as const) {
      const key = `upc/dst-${to}`;
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: B, Key: key, ...writeArgs(to, KEY_B) }));
      const copyPart = (n: number, range: string, extra: object) =>
        s3.send(new UploadPartCopyCommand({ Bucket: B, Key: key, UploadId, PartNumber: n, CopySource: `${B}/${src}`, CopySourceRange: range, ...extra }));
      if (to === 'c') expect((await failure(copyPart(1, `bytes=0-${5 * MIB - 1}`, copySsec(KEY_A)))).status).toBe(400);
      expect((await failure(copyPart(1, `bytes=0-${5 * MIB - 1}`, readArgs(to, KEY_B)))).status).toBe(400);
      const c1 = await copyPart(1, `bytes=0-${5 * MIB - 1}`, { ...copySsec(KEY_A), ...readArgs(to, KEY_B) });
      const c2 = await copyPart(2, `bytes=${5 * MIB}-${data.length - 1}`, { ...copySsec(KEY_A), ...readArgs(to, KEY_B) });
      if (to === 's3') expect(c1.ServerSideEncryption).toBe('AES256');
      else expect(c1.SSECustomerKeyMD5).toBe(md5b64(KEY_B));
      await s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: B,
          Key: key,
          UploadId,
          MultipartUpload: {
            Parts: [
              { PartNumber: 1, ETag: c1.CopyPartResult!.ETag! },
              { PartNumber: 2, ETag: c2.CopyPartResult!.ETag! },
            ],
          },
          ...readArgs(to, KEY_B),
        })
      );
      expect((await get(key, readArgs(to, KEY_B))).equals(Buffer.from(data)), key).toBe(true);
    }
  });
});

describe('bucket default encryption', () => {
  it('Put/Get/DeleteBucketEncryption; writes without SSE headers are SSE-S3; aws:kms is refused', async () => {
    const bucket = 'sse-default';
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const missing = await failure(s3.send(new GetBucketEncryptionCommand({ Bucket: bucket })));
    expect([missing.status, missing.name]).toEqual([404, 'ServerSideEncryptionConfigurationNotFoundError']);
    const kms = await failure(
      s3.send(
        new PutBucketEncryptionCommand({
          Bucket: bucket,
          ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'k' } }] },
        })
      )
    );
    expect([kms.status, kms.name]).toEqual([501, 'NotImplemented']);
    expect((await failure(s3.send(new GetBucketEncryptionCommand({ Bucket: bucket })))).status).toBe(404);
    await s3.send(
      new PutBucketEncryptionCommand({
        Bucket: bucket,
        ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' }, BucketKeyEnabled: true }] },
      })
    );
    const cfg = await s3.send(new GetBucketEncryptionCommand({ Bucket: bucket }));
    expect(cfg.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm).toBe('AES256');
    expect(cfg.ServerSideEncryptionConfiguration?.Rules?.[0]?.BucketKeyEnabled).toBe(true);
    const data = body(900 * KIB, 'default/put');
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a', Body: data }));
    expect(put.ServerSideEncryption).toBe('AES256');
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'a' }));
    expect(got.ServerSideEncryption).toBe('AES256');
    expect((await bytesOf(got.Body)).equals(Buffer.from(data))).toBe(true);
    // Explicit SSE-C beats the default.
    const c = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'c', Body: body(10), ...ssec(KEY_A) }));
    expect(c.SSECustomerAlgorithm).toBe('AES256');
    expect(c.ServerSideEncryption).toBeUndefined();
    const mp = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'm' }));
    expect(mp.ServerSideEncryption).toBe('AES256');
    // A copy into the bucket follows its default.
    await s3.send(new PutObjectCommand({ Bucket: B, Key: 'default/src', Body: body(10) }));
    const copy = await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copied', CopySource: `${B}/default/src` }));
    expect(copy.ServerSideEncryption).toBe('AES256');
    await s3.send(new DeleteBucketEncryptionCommand({ Bucket: bucket }));
    expect((await failure(s3.send(new GetBucketEncryptionCommand({ Bucket: bucket })))).status).toBe(404);
    const after = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'b', Body: body(10) }));
    expect(after.ServerSideEncryption).toBeUndefined();
  });
});

describe('at rest', () => {
  it('a tampered sealed segment (pack re-framed with valid CRCs) fails the GET: an error, never other bytes', async () => {
    const key = 'tamper/x';
    const data = body(4 * SEG + 5, key);
    await s3.send(new PutObjectCommand({ Bucket: B, Key: key, Body: data, ServerSideEncryption: 'AES256' }));
    const store = s.server!.store;
    const v = await store.version(B, key);
    if (v.location.kind !== 'chunks') throw new Error('expected a carrier');
    const blob = v.location.chunks[0]!.blob;
    const provider = store.repo.provider;
    const original = await getBytes(provider, blob);
    const pack = decodePack(original);
    const put = async (bodies: Uint8Array[]) => {
      const p = encodePack(bodies, { id: pack.id });
      await provider.put(blob, (async function* () {
        yield* p.chunks;
      })(), { contentLength: p.size });
    };
    try {
      for (const seg of [0, 2]) {
        const bodies = pack.entries.map((e) => Buffer.from(e.body));
        bodies[seg]![17]! ^= 0x40;
        await put(bodies);
        const ranged = await failure(get(key, {}, `bytes=${seg * SEG}-${seg * SEG + 99}`));
        expect([ranged.status, ranged.name]).toEqual([500, 'InternalError']);
        // Whole object: an error status (segment 0) or a body cut short (later segments).
        await expect(get(key)).rejects.toThrow();
      }
    } finally {
      await put(pack.entries.map((e) => e.body));
    }
    expect((await get(key)).equals(Buffer.from(data))).toBe(true);
  });

  it('no file under the data directory holds the plaintext of any encrypted object or copy', async () => {
    // Packed and carrier PUTs, multipart parts, copies and part copies, default encryption.
    for (const kind of [/^rt\/s3\/102400$/, /^rt\/c\/3145745$/, /^mp\/c#\d$/, /^copy\/c-c\/614400\/src$/, /^copy\/s3-c\/1000\/src$/, /^upc\//, /^default\//]) {
      expect([...secrets.keys()].some((k) => kind.test(k)), String(kind)).toBe(true);
    }
    // Control: the same search finds a plaintext object's bytes (packed and carrier).
    const controls = [body(3000), body(700 * KIB)];
    for (const [i, c] of controls.entries()) await s3.send(new PutObjectCommand({ Bucket: B, Key: `control/${i}`, Body: c }));
    const files = listFiles(s.dataDir);
    const contents = files.map((f) => ({ f, bytes: readFileSync(join(s.dataDir, f)) }));
    expect(contents.reduce((n, c) => n + c.bytes.length, 0)).toBeGreaterThan(30 * MIB);
    for (const c of controls) {
      for (const off of [0, c.length - 32]) expect(contents.some(({ bytes }) => bytes.includes(Buffer.from(c.subarray(off, off + 32))))).toBe(true);
    }
    for (const [name, plain] of secrets) {
      // 32-byte windows at the start, the end, and every segment boundary of the plaintext.
      const probes: number[] = [0, plain.length - 32];
      for (let off = SEG; off + 32 <= plain.length; off += SEG) probes.push(off);
      for (const off of probes.filter((o) => o >= 0)) {
        const needle = Buffer.from(plain.subarray(off, off + 32));
        for (const { f, bytes } of contents) expect(bytes.includes(needle), `${name}@${off} in ${f}`).toBe(false);
      }
    }
  });
});
