/**
 * Per-key access control with a real client (AWS SDK v3) against a real server.
 *
 * Three keys from the config file: an admin key, `alice` (ordinary, may create buckets) and
 * `bob` (ordinary, may not). Proves that every operation family is allowed or refused
 * exactly as bob's grant on a bucket says (none, read, write, owner), with `403
 * AccessDenied` for an existing bucket he may not use whatever the object key (a missing
 * and an existing key answer alike) and `404 NoSuchBucket` for a bucket that does not
 * exist; that a copy (CopyObject, UploadPartCopy) from a bucket he cannot read is refused
 * even with write on the destination; that ListBuckets lists only the buckets a key may use
 * (all for the admin); that CreateBucket of its own bucket answers the owner 200 changing
 * nothing (S3 in us-east-1, the default region) or BucketAlreadyOwnedByYou (another region),
 * and BucketAlreadyExists to anyone else (the admin too), AccessDenied to a key without the
 * capability; that owners are reported by key id and name; that grants made through the
 * admin API apply at once, and that the admin API refuses non-admin keys, presigned URLs
 * and unsigned bodies; that no secret appears in the repository's files; that a restart
 * with the wrong master key is refused and with the right one keeps every key; and that
 * /metrics on a separate listener works while the S3 port does not serve it.
 */
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteBucketCorsCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketCorsCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { adminRequest, AdminClientError } from '../../src/admin/client.js';
import { signRequest } from '../../src/sigv4/sign.js';
import { startServer } from '../../src/server/server.js';

const ALICE = { accessKeyId: 'ACALICEKEY0000000001', secretAccessKey: 'alice-secret-0123456789-abcdefghijklmnop' };
const BOB = { accessKeyId: 'ACBOBKEY000000000002', secretAccessKey: 'bob-secret-0123456789-abcdefghijklmnopqr' };
const CREDENTIALS = [
  { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY, name: 'main admin' },
  { ...ALICE, admin: false, name: 'Alice' },
  { ...BOB, admin: false, name: 'Bob', createBucket: false },
];

let s: TestServer;
const wire = new WireLog();
let admin: S3Client;
let alice: S3Client;
let bob: S3Client;
const adminApi = () => ({ endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });

beforeAll(async () => {
  s = await startTestServer({ config: { credentials: CREDENTIALS } });
  admin = createS3Client(s.url, wire);
  alice = createS3Client(s.url, wire, { credentials: ALICE });
  bob = createS3Client(s.url, wire, { credentials: BOB });
});
afterAll(async () => {
  for (const c of [admin, alice, bob]) c?.destroy();
  await s?.stop();
});

async function grant(id: string, mode: 'grant' | 'revoke', change: Record<string, unknown>): Promise<void> {
  await adminRequest(adminApi(), 'POST', ['keys', id, mode], change);
}

/** The S3 error name of a refused call, or 'ok'. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    // HEAD errors carry no body: the SDK names them by status.
    if (e.name === 'Forbidden' || e.$metadata?.httpStatusCode === 403) return 'AccessDenied';
    if (e.name === 'NotFound') return 'NotFound';
    return e.name;
  }
}

const BUCKET = 'ac-shared';

/** Every operation family bob might try on BUCKET, with the permission it needs. */
function families(c: S3Client, tag: string): [string, 'read' | 'write' | 'owner', () => Promise<unknown>][] {
  return [
    ['HeadBucket', 'read', () => c.send(new HeadBucketCommand({ Bucket: BUCKET }))],
    ['GetBucketLocation', 'read', () => c.send(new GetBucketLocationCommand({ Bucket: BUCKET }))],
    ['ListObjects', 'read', () => c.send(new ListObjectsCommand({ Bucket: BUCKET }))],
    ['ListObjectsV2', 'read', () => c.send(new ListObjectsV2Command({ Bucket: BUCKET }))],
    ['GetObject', 'read', () => c.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'existing' }))],
    ['HeadObject', 'read', () => c.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'existing' }))],
    ['GetObjectTagging', 'read', () => c.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: 'existing' }))],
    ['ListMultipartUploads', 'read', () => c.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))],
    ['PutObject', 'write', () => c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `by-bob-${tag}`, Body: 'bob' }))],
    ['PutObjectTagging', 'write', () => c.send(new PutObjectTaggingCommand({ Bucket: BUCKET, Key: 'existing', Tagging: { TagSet: [{ Key: 'k', Value: tag }] } }))],
    ['DeleteObject', 'write', () => c.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `gone-${tag}` }))],
    ['DeleteObjects', 'write', () => c.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: `gone-${tag}` }] } }))],
    ['CreateMultipartUpload', 'write', async () => {
      const u = await c.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: `mp-${tag}` }));
      await c.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: `mp-${tag}`, UploadId: u.UploadId! }));
    }],
    ['GetBucketCors', 'owner', () => c.send(new GetBucketCorsCommand({ Bucket: BUCKET }))],
    ['PutBucketCors', 'owner', () => c.send(new PutBucketCorsCommand({ Bucket: BUCKET, CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET'], AllowedOrigins: ['*'] }] } }))],
    ['DeleteBucketCors', 'owner', () => c.send(new DeleteBucketCorsCommand({ Bucket: BUCKET }))],
  ];
}

describe('operations follow the grant', () => {
  beforeAll(async () => {
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    await admin.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'existing', Body: 'shared bytes' }));
    await admin.send(new PutBucketCorsCommand({ Bucket: BUCKET, CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET'], AllowedOrigins: ['*'] }] } }));
  });

  const cases: [string, Record<string, boolean>][] = [
    ['no grant', {}],
    ['read', { read: true }],
    ['write', { write: true }],
    ['owner', { owner: true }],
    ['read+write', { read: true, write: true }],
  ];
  for (const [label, flags] of cases) {
    it(`bob with ${label}`, async () => {
      await grant(BOB.accessKeyId, 'revoke', { bucket: BUCKET, read: true, write: true, owner: true });
      if (Object.keys(flags).length) await grant(BOB.accessKeyId, 'grant', { bucket: BUCKET, ...flags });
      const seen: Record<string, string> = {};
      const want: Record<string, string> = {};
      for (const [op, need, run] of families(bob, label.replace('+', '-'))) {
        // Owner operations on a bucket with CORS set, then deleted: re-set before each read.
        if (op === 'GetBucketCors') await admin.send(new PutBucketCorsCommand({ Bucket: BUCKET, CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET'], AllowedOrigins: ['*'] }] } }));
        seen[op] = await outcome(run());
        want[op] = flags[need] ? 'ok' : 'AccessDenied';
      }
      expect(seen).toEqual(want);
    });
  }

  it('a refused key learns nothing about keys: missing and existing objects answer alike', async () => {
    await grant(BOB.accessKeyId, 'revoke', { bucket: BUCKET, read: true, write: true, owner: true });
    for (const Key of ['existing', 'never-was']) {
      const e = await failure(bob.send(new GetObjectCommand({ Bucket: BUCKET, Key })));
      expect([e.name, e.status]).toEqual(['AccessDenied', 403]);
    }
    await grant(BOB.accessKeyId, 'grant', { bucket: BUCKET, read: true });
    const e = await failure(bob.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'never-was' })));
    expect([e.name, e.status]).toEqual(['NoSuchKey', 404]);
    expect((await bytesOf((await bob.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'existing' }))).Body)).toString()).toBe('shared bytes');
  });

  it('a bucket that does not exist is NoSuchBucket for every key', async () => {
    for (const c of [admin, alice, bob]) {
      const e = await failure(c.send(new GetObjectCommand({ Bucket: 'ac-nowhere', Key: 'k' })));
      expect([e.name, e.status]).toEqual(['NoSuchBucket', 404]);
      const l = await failure(c.send(new ListObjectsV2Command({ Bucket: 'ac-nowhere' })));
      expect(l.name).toBe('NoSuchBucket');
    }
  });

  it('multipart: write runs the upload, listing its parts needs read', async () => {
    await grant(BOB.accessKeyId, 'revoke', { bucket: BUCKET, read: true });
    await grant(BOB.accessKeyId, 'grant', { bucket: BUCKET, write: true });
    const Key = 'mp-by-bob';
    const { UploadId } = await bob.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key }));
    const part = await bob.send(new UploadPartCommand({ Bucket: BUCKET, Key, UploadId, PartNumber: 1, Body: 'part one' }));
    expect(await outcome(bob.send(new ListPartsCommand({ Bucket: BUCKET, Key, UploadId })))).toBe('AccessDenied');
    expect(await outcome(alice.send(new ListPartsCommand({ Bucket: BUCKET, Key, UploadId })))).toBe('AccessDenied');
    expect((await admin.send(new ListPartsCommand({ Bucket: BUCKET, Key, UploadId }))).Parts).toHaveLength(1);
    await bob.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
    // Bob wrote it, so he owns it (S3's object ownership: the writer's private ACL gives it
    // FULL_CONTROL); what others wrote stays closed to him.
    expect(await outcome(bob.send(new GetObjectCommand({ Bucket: BUCKET, Key })))).toBe('ok');
    expect(await outcome(bob.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'existing' })))).toBe('AccessDenied');
    expect((await bytesOf((await admin.send(new GetObjectCommand({ Bucket: BUCKET, Key }))).Body)).toString()).toBe('part one');
  });

  it('only the owner flag (or ownership) deletes the bucket', async () => {
    await admin.send(new CreateBucketCommand({ Bucket: 'ac-doomed' }));
    await grant(BOB.accessKeyId, 'grant', { bucket: 'ac-doomed', read: true, write: true });
    expect(await outcome(bob.send(new DeleteBucketCommand({ Bucket: 'ac-doomed' })))).toBe('AccessDenied');
    await grant(BOB.accessKeyId, 'grant', { bucket: 'ac-doomed', owner: true });
    expect(await outcome(bob.send(new DeleteBucketCommand({ Bucket: 'ac-doomed' })))).toBe('ok');
    // Re-created by alice: bob's old grant does not follow the name.
    await alice.send(new CreateBucketCommand({ Bucket: 'ac-doomed' }));
    expect(await outcome(bob.send(new HeadBucketCommand({ Bucket: 'ac-doomed' })))).toBe('AccessDenied');
    expect(await outcome(alice.send(new DeleteBucketCommand({ Bucket: 'ac-doomed' })))).toBe('ok');
  });
});

describe('Expect: 100-continue', () => {
  /** Sends a signed PUT head with Expect: 100-continue; returns the first status line, then the final one after the body (if 100 came). */
  async function put(creds: { accessKeyId: string; secretAccessKey: string }, bucket: string): Promise<string[]> {
    const u = new URL(s.url);
    const body = 'continued body';
    const headers: Record<string, string> = { host: u.host, 'content-length': String(body.length), expect: '100-continue' };
    const signed = signRequest(
      { method: 'PUT', path: `/${bucket}/cont`, headers, payloadHash: createHash('sha256').update(body).digest('hex') },
      { credentials: creds, region: 'us-east-1', service: 's3' }
    );
    const head = [`PUT ${signed.encodedPath} HTTP/1.1`, ...Object.entries({ ...headers, ...signed.headers }).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
    const sock = connect(Number(u.port), u.hostname);
    let buf = '';
    let sent = false;
    return new Promise((resolve, reject) => {
      const done = (codes: string[]) => {
        clearTimeout(timer);
        sock.destroy();
        resolve(codes);
      };
      // A server that waits for the body before answering shows up as a timeout here.
      const timer = setTimeout(() => done([...buf.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]!).concat('timeout')), 5000);
      sock.on('error', reject);
      sock.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        const codes = [...buf.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]!);
        if (codes[0] === '100' && !sent) {
          sent = true;
          sock.write(body);
        }
        if ((codes.length === 1 && codes[0] !== '100') || codes.length >= 2) done(codes);
      });
      sock.write(`${head}\r\n\r\n`);
    });
  }

  it('is answered only once the request is authorized', async () => {
    await admin.send(new CreateBucketCommand({ Bucket: 'ac-continue' }));
    expect(await put(BOB, 'ac-continue')).toEqual(['403']);
    expect(await put(BOB, 'ac-continue-missing')).toEqual(['404']);
    expect(await put({ ...BOB, secretAccessKey: 'wrong-secret-wrong-secret-0000' }, 'ac-continue')).toEqual(['403']);
    expect(await put({ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, 'ac-continue')).toEqual(['100', '200']);
    expect((await bytesOf((await admin.send(new GetObjectCommand({ Bucket: 'ac-continue', Key: 'cont' }))).Body)).toString()).toBe('continued body');
  });
});

describe('copies read their source with the caller\'s rights', () => {
  beforeAll(async () => {
    await admin.send(new CreateBucketCommand({ Bucket: 'ac-src' }));
    await admin.send(new PutObjectCommand({ Bucket: 'ac-src', Key: 'secret.txt', Body: 'not for bob' }));
    await admin.send(new CreateBucketCommand({ Bucket: 'ac-dst' }));
    await grant(BOB.accessKeyId, 'grant', { bucket: 'ac-dst', read: true, write: true });
  });

  it('CopyObject and UploadPartCopy from an unreadable bucket are AccessDenied', async () => {
    const copy = await failure(bob.send(new CopyObjectCommand({ Bucket: 'ac-dst', Key: 'stolen', CopySource: 'ac-src/secret.txt' })));
    expect([copy.name, copy.status]).toEqual(['AccessDenied', 403]);
    const { UploadId } = await bob.send(new CreateMultipartUploadCommand({ Bucket: 'ac-dst', Key: 'stolen-mp' }));
    const part = await failure(bob.send(new UploadPartCopyCommand({ Bucket: 'ac-dst', Key: 'stolen-mp', UploadId, PartNumber: 1, CopySource: 'ac-src/secret.txt' })));
    expect([part.name, part.status]).toEqual(['AccessDenied', 403]);
    await bob.send(new AbortMultipartUploadCommand({ Bucket: 'ac-dst', Key: 'stolen-mp', UploadId }));
    expect(await outcome(bob.send(new HeadObjectCommand({ Bucket: 'ac-dst', Key: 'stolen' })))).toBe('NotFound');
    // A missing source bucket is NoSuchBucket, as for any read.
    const missing = await failure(bob.send(new CopyObjectCommand({ Bucket: 'ac-dst', Key: 'x', CopySource: 'ac-nosource/secret.txt' })));
    expect(missing.name).toBe('NoSuchBucket');
  });

  it('with read on the source the copy goes through', async () => {
    await grant(BOB.accessKeyId, 'grant', { bucket: 'ac-src', read: true });
    await bob.send(new CopyObjectCommand({ Bucket: 'ac-dst', Key: 'allowed', CopySource: 'ac-src/secret.txt' }));
    expect((await bytesOf((await bob.send(new GetObjectCommand({ Bucket: 'ac-dst', Key: 'allowed' }))).Body)).toString()).toBe('not for bob');
    await grant(BOB.accessKeyId, 'revoke', { bucket: 'ac-src', read: true });
  });
});

describe('buckets: listing, creation, ownership', () => {
  it('CreateBucket answers by owner and capability', async () => {
    await alice.send(new CreateBucketCommand({ Bucket: 'ac-alice' }));
    await alice.send(new PutObjectCommand({ Bucket: 'ac-alice', Key: 'kept', Body: 'kept' }));
    // The owner again: 200 and nothing changes, as S3 answers in us-east-1 (the default region).
    const again = await alice.send(new CreateBucketCommand({ Bucket: 'ac-alice' }));
    expect(again.$metadata.httpStatusCode).toBe(200);
    expect((await alice.send(new ListObjectsV2Command({ Bucket: 'ac-alice' }))).Contents?.map((c) => c.Key)).toEqual(['kept']);
    await alice.send(new DeleteObjectCommand({ Bucket: 'ac-alice', Key: 'kept' }));
    const byAdmin = await failure(admin.send(new CreateBucketCommand({ Bucket: 'ac-alice' })));
    expect([byAdmin.name, byAdmin.status]).toEqual(['BucketAlreadyExists', 409]);
    const intoShared = await failure(alice.send(new CreateBucketCommand({ Bucket: BUCKET })));
    expect(intoShared.name).toBe('BucketAlreadyExists');
    const noCapability = await failure(bob.send(new CreateBucketCommand({ Bucket: 'ac-bob-own' })));
    expect([noCapability.name, noCapability.status]).toEqual(['AccessDenied', 403]);
    await grant(BOB.accessKeyId, 'grant', { createBucket: true });
    await bob.send(new CreateBucketCommand({ Bucket: 'ac-bob-own' }));
    await grant(BOB.accessKeyId, 'revoke', { createBucket: true });
  });

  it('in another region the owner gets BucketAlreadyOwnedByYou, others BucketAlreadyExists', async () => {
    const eu = await startServer({ host: '127.0.0.1', port: 0, data: 'memory:', log: 'off', region: 'eu-west-1', credentials: CREDENTIALS, masterKeyFile: `${s.dataDir}.master-key` });
    const c = (creds: { accessKeyId: string; secretAccessKey: string }) => createS3Client(eu.url, wire, { credentials: creds, region: 'eu-west-1' });
    const [a, b] = [c(ALICE), c({ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY })];
    try {
      await a.send(new CreateBucketCommand({ Bucket: 'ac-eu', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } }));
      const own = await failure(a.send(new CreateBucketCommand({ Bucket: 'ac-eu', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } })));
      expect([own.name, own.status]).toEqual(['BucketAlreadyOwnedByYou', 409]);
      const other = await failure(b.send(new CreateBucketCommand({ Bucket: 'ac-eu', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } })));
      expect([other.name, other.status]).toEqual(['BucketAlreadyExists', 409]);
    } finally {
      a.destroy();
      b.destroy();
      await eu.close();
    }
  });

  it('the owner may do everything in its bucket; others nothing until granted; the admin everything', async () => {
    await alice.send(new PutObjectCommand({ Bucket: 'ac-alice', Key: 'mine', Body: 'alice data' }));
    await alice.send(new PutBucketCorsCommand({ Bucket: 'ac-alice', CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET'], AllowedOrigins: ['*'] }] } }));
    expect(await outcome(bob.send(new GetObjectCommand({ Bucket: 'ac-alice', Key: 'mine' })))).toBe('AccessDenied');
    expect(await outcome(alice.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'existing' })))).toBe('AccessDenied');
    expect((await bytesOf((await admin.send(new GetObjectCommand({ Bucket: 'ac-alice', Key: 'mine' }))).Body)).toString()).toBe('alice data');
  });

  it('ListBuckets lists what a key may use; owners carry key id and name', async () => {
    const names = async (c: S3Client) => ((await c.send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name).sort();
    const all = await names(admin);
    expect(all).toEqual(expect.arrayContaining([BUCKET, 'ac-alice', 'ac-bob-own', 'ac-src', 'ac-dst']));
    expect(await names(alice)).toEqual(['ac-alice']);
    // bob: his own bucket, and the ones he holds any grant on (ac-shared: read+write; ac-dst).
    expect(await names(bob)).toEqual(['ac-bob-own', 'ac-dst', BUCKET].sort());
    const listing = await alice.send(new ListBucketsCommand({}));
    expect(listing.Owner).toEqual({ ID: ALICE.accessKeyId, DisplayName: 'Alice' });
    const objects = await admin.send(new ListObjectsV2Command({ Bucket: 'ac-alice', FetchOwner: true }));
    expect(objects.Contents?.[0]?.Owner).toEqual({ ID: ALICE.accessKeyId, DisplayName: 'Alice' });
    // The owner id is what x-amz-expected-bucket-owner names.
    await admin.send(new ListObjectsV2Command({ Bucket: 'ac-alice', ExpectedBucketOwner: ALICE.accessKeyId }));
    const wrongOwner = await failure(admin.send(new ListObjectsV2Command({ Bucket: 'ac-alice', ExpectedBucketOwner: ACCESS_KEY })));
    expect([wrongOwner.name, wrongOwner.status]).toEqual(['AccessDenied', 403]);
  });
});

describe('the admin API', () => {
  it('creates a working key, shows its secret once, and deletes it', async () => {
    const created = (await adminRequest(adminApi(), 'POST', ['keys'], { name: 'carol' })) as { key: { id: string; admin: boolean; createBucket: boolean }; secretAccessKey: string };
    expect(created.key).toMatchObject({ admin: false, createBucket: true });
    const carol = createS3Client(s.url, wire, { credentials: { accessKeyId: created.key.id, secretAccessKey: created.secretAccessKey } });
    try {
      await carol.send(new CreateBucketCommand({ Bucket: 'ac-carol' }));
      const listed = (await adminRequest(adminApi(), 'GET', ['keys'])) as { keys: { id: string }[] };
      expect(JSON.stringify(listed)).not.toContain(created.secretAccessKey);
      expect(listed.keys.map((k) => k.id)).toContain(created.key.id);
      const one = (await adminRequest(adminApi(), 'GET', ['keys', created.key.id])) as { key: { name: string } };
      expect(one.key.name).toBe('carol');
      const del = (await adminRequest(adminApi(), 'DELETE', ['keys', created.key.id])) as { ownedBuckets: string[] };
      expect(del.ownedBuckets).toEqual(['ac-carol']);
      const after = await failure(carol.send(new ListBucketsCommand({})));
      expect([after.name, after.status]).toEqual(['InvalidAccessKeyId', 403]);
    } finally {
      carol.destroy();
    }
  });

  it('refuses non-admin keys, bad input, and the last admin', async () => {
    const asAlice = { endpoint: s.url, credentials: ALICE };
    const denied = await adminRequest(asAlice, 'GET', ['keys']).catch((e: AdminClientError) => e);
    expect([(denied as AdminClientError).status, (denied as AdminClientError).code]).toEqual([403, 'AccessDenied']);
    const bad = async (method: string, path: string[], body?: unknown) => {
      const e = (await adminRequest(adminApi(), method, path, body).catch((x: unknown) => x)) as AdminClientError;
      return [e.status, e.code];
    };
    expect(await bad('POST', ['keys'], { name: 'x', extra: 1 })).toEqual([400, 'InvalidJson']);
    expect(await bad('POST', ['keys'], { admin: 'yes' })).toEqual([400, 'InvalidJson']);
    expect(await bad('POST', ['keys'], [1, 2])).toEqual([400, 'InvalidJson']);
    expect(await bad('POST', ['keys'], { id: ALICE.accessKeyId })).toEqual([409, 'AccessKeyExists']);
    expect(await bad('POST', ['keys'], { id: 'bad id' })).toEqual([400, 'InvalidKeyInput']);
    expect(await bad('GET', ['keys', 'NOSUCHKEY'])).toEqual([404, 'NoSuchAccessKey']);
    expect(await bad('POST', ['keys', BOB.accessKeyId, 'grant'], { bucket: 'ac-nowhere', read: true })).toEqual([404, 'NoSuchBucket']);
    expect(await bad('PUT', ['keys'])).toEqual([405, 'MethodNotAllowed']);
    expect(await bad('GET', ['nothing-here'])).toEqual([404, 'NoSuchRoute']);
    expect(await bad('DELETE', ['keys', ACCESS_KEY])).toEqual([409, 'LastAdmin']);
  });

  it('refuses hostile bodies: oversized, truncated, not UTF-8, deeply nested, not an object', async () => {
    const send = async (body: Buffer) => {
      const url = new URL('/_strata/admin/v1/keys', s.url);
      const headers: Record<string, string> = { host: url.host, 'content-type': 'application/json' };
      const signed = signRequest(
        { method: 'POST', path: url.pathname, headers, payloadHash: createHash('sha256').update(body).digest('hex') },
        { credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, region: 'us-east-1', service: 's3' }
      );
      const res = await fetch(url, { method: 'POST', headers: { ...headers, ...signed.headers }, body: new Uint8Array(body) });
      return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
    };
    const before = ((await adminRequest(adminApi(), 'GET', ['keys'])) as { keys: unknown[] }).keys.length;
    expect(await send(Buffer.from(`{"name":"${'x'.repeat(70 * 1024)}"}`))).toEqual([400, 'MaxMessageLengthExceeded']);
    expect(await send(Buffer.from('{"name":"trunc'))).toEqual([400, 'InvalidJson']);
    expect(await send(Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]))).toEqual([400, 'InvalidJson']);
    expect(await send(Buffer.from(`${'['.repeat(30_000)}${']'.repeat(30_000)}`))).toEqual([400, 'InvalidJson']);
    expect(await send(Buffer.from('"just a string"'))).toEqual([400, 'InvalidJson']);
    expect(await send(Buffer.from('{"__proto__":{"admin":true}}'))).toEqual([400, 'InvalidJson']);
    expect(await send(Buffer.from('{"name":"a\\u0000b"}'))).toEqual([400, 'InvalidKeyInput']);
    expect(((await adminRequest(adminApi(), 'GET', ['keys'])) as { keys: unknown[] }).keys).toHaveLength(before);
  });

  it('refuses unsigned bodies, presigned URLs and anonymous requests', async () => {
    const url = new URL('/_strata/admin/v1/keys', s.url);
    const headers: Record<string, string> = { host: url.host, 'content-type': 'application/json' };
    const signed = signRequest(
      { method: 'POST', path: url.pathname, headers, payloadHash: 'UNSIGNED-PAYLOAD' },
      { credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, region: 'us-east-1', service: 's3' }
    );
    const unsigned = await fetch(url, { method: 'POST', headers: { ...headers, ...signed.headers }, body: JSON.stringify({ admin: true }) });
    expect(unsigned.status).toBe(400);
    expect(((await unsigned.json()) as { error: { code: string } }).error.code).toBe('UnsignedPayload');
    const presigner = createS3Client(s.url, wire);
    try {
      const presigned = await getSignedUrl(presigner, new ListObjectsV2Command({ Bucket: 'placeholder' }), { expiresIn: 60 });
      const u = new URL(presigned);
      const res = await fetch(`${s.url}/_strata/admin/v1/keys${u.search}`);
      expect(res.status).toBe(403);
    } finally {
      presigner.destroy();
    }
    const anon = await fetch(url);
    expect(anon.status).toBe(403);
    expect(((await anon.json()) as { error: { code: string } }).error.code).toBe('AccessDenied');
  });
});

describe('secrets at rest, master key, metrics', () => {
  function filesUnder(dir: string): string[] {
    return readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? filesUnder(p) : [p];
    });
  }

  it('no secret is stored in plain text in the repository', async () => {
    await s.server!.store.checkpoint(); // keys in a root as well as in commits
    const created = (await adminRequest(adminApi(), 'POST', ['keys'], {})) as { secretAccessKey: string };
    const needles = [ALICE.secretAccessKey, BOB.secretAccessKey, created.secretAccessKey].map((x) => Buffer.from(x));
    let files = 0;
    for (const f of filesUnder(s.dataDir)) {
      if (f.endsWith('strata-credentials.json')) continue;
      const bytes = readFileSync(f);
      files++;
      for (const n of needles) expect(bytes.includes(n), `${f} holds a secret`).toBe(false);
    }
    expect(files).toBeGreaterThan(3);
  });

  it('a restart with the wrong master key is refused; the right one keeps every key', async () => {
    const dir = s.dataDir;
    await s.server!.close();
    const wrongKey = `${dir}.wrong-master-key`;
    writeFileSync(wrongKey, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    const base = { host: '127.0.0.1', port: 0, data: dir, log: 'off' as const, credentials: CREDENTIALS };
    await expect(startServer({ ...base, masterKeyFile: wrongKey })).rejects.toThrow(/wrong master key/);
    rmSync(wrongKey);
    const again = await startServer({ ...base, metricsListen: { host: '127.0.0.1', port: 0 } });
    const c = createS3Client(again.url, wire, { credentials: ALICE });
    try {
      expect((await bytesOf((await c.send(new GetObjectCommand({ Bucket: 'ac-alice', Key: 'mine' }))).Body)).toString()).toBe('alice data');
      // Metrics: on the separate listener (no token configured here), not on the S3 port.
      const m = await fetch(`${again.metricsUrl}/metrics`);
      expect(m.status).toBe(200);
      expect(await m.text()).toContain('strata_requests_total');
      expect(await (await fetch(`${again.metricsUrl}/health`)).json()).toEqual({ status: 'ok' });
      expect((await fetch(`${again.metricsUrl}/other`)).status).toBe(404);
      // On the S3 port /metrics is a bucket path (none exists: 404 NoSuchBucket, as to anyone).
      const onS3 = await fetch(`${again.url}/metrics`);
      expect(onS3.status).toBe(404);
      const text = await onS3.text();
      expect(text).toContain('<Code>NoSuchBucket</Code>');
      expect(text).not.toContain('strata_');
    } finally {
      c.destroy();
      await again.close();
    }
    // Let afterAll's stop() find a closable server and remove the data directory.
    s = { ...s, stop: async () => (await import('./harness.js')).removeDataDir(dir) };
  });
});
