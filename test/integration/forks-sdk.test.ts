/**
 * Bucket forks over HTTP with a real client (AWS SDK v3) against a real server: CreateBucket
 * with `x-strata-fork-source` (added by a build-step middleware, so the SDK signs it).
 *
 * Proves that the fork lists and reads everything the source held (packed, carrier, multipart
 * bodies), that writes and deletes on either side never show on the other, that deleting the
 * source leaves the fork complete, that the fork takes the source's settings but its policy
 * and owner (the caller owns it; the request's own ACL applies), and who may fork: the
 * source's owner, a key with a read grant on it (and the right to create buckets), an admin —
 * not a key without read, nor one without the create capability, nor a grantee while the
 * source has a policy. And the refusals: bad header values (400 InvalidArgument), an unsigned
 * header (400 InvalidRequest), a missing source (404), an existing target (409, even one's
 * own), the source itself (400), a time before the source existed or in the future (400).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketPolicyCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketAclCommand,
  GetBucketCorsCommand,
  GetBucketPolicyCommand,
  GetBucketTaggingCommand,
  GetObjectCommand,
  GetBucketVersioningCommand,
  GetObjectLockConfigurationCommand,
  PutObjectLockConfigurationCommand,
  HeadBucketCommand,
  ListObjectVersionsCommand,
  ListObjectsV2Command,
  PutBucketVersioningCommand,
  PutBucketCorsCommand,
  PutBucketPolicyCommand,
  PutBucketTaggingCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { adminRequest } from '../../src/admin/client.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';

const ALICE = { accessKeyId: 'FKALICEKEY0000000001', secretAccessKey: 'alice-secret-0123456789-abcdefghijklmnop' };
const CAROL = { accessKeyId: 'FKCAROLKEY0000000002', secretAccessKey: 'carol-secret-0123456789-abcdefghijklmno' };
const DAVE = { accessKeyId: 'FKDAVEKEY00000000003', secretAccessKey: 'dave-secret-0123456789-abcdefghijklmnop' };
const ERIN = { accessKeyId: 'FKERINKEY00000000004', secretAccessKey: 'erin-secret-0123456789-abcdefghijklmnop' };
const CREDENTIALS = [
  { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY, name: 'admin' },
  { ...ALICE, admin: false, name: 'Alice' }, // owns the source
  { ...CAROL, admin: false, name: 'Carol' }, // read grant on the source
  { ...DAVE, admin: false, name: 'Dave' }, // nothing on the source
  { ...ERIN, admin: false, name: 'Erin', createBucket: false }, // read grant, may not create buckets
];

let s: TestServer;
const wire = new WireLog();
let admin: S3Client;
let alice: S3Client;
let carol: S3Client;
let dave: S3Client;
let erin: S3Client;
const adminApi = () => ({ endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });

/** CreateBucket `bucket` with `x-strata-fork-source: value` — signed (default) or added after signing. */
function forkCreate(c: S3Client, bucket: string, value: string, opts: { unsigned?: boolean; acl?: 'public-read' | 'private' } = {}) {
  const cmd = new CreateBucketCommand({ Bucket: bucket, ...(opts.acl ? { ACL: opts.acl } : {}) });
  const addHeader =
    <T extends { request: unknown }>(next: (args: T) => Promise<unknown>) =>
    async (args: T) => {
      (args.request as { headers: Record<string, string> }).headers['x-strata-fork-source'] = value;
      return next(args);
    };
  // build: before signing (the header is signed); deserialize: after it (it is not).
  if (opts.unsigned) cmd.middlewareStack.add(addHeader as never, { step: 'deserialize', priority: 'high', name: 'forkHeaderUnsigned' });
  else cmd.middlewareStack.add(addHeader as never, { step: 'build', name: 'forkHeader' });
  return c.send(cmd);
}

async function keysOf(c: S3Client, bucket: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await c.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 5, ContinuationToken: token }));
    out.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.NextContinuationToken;
  } while (token);
  return out;
}

async function read(c: S3Client, bucket: string, key: string): Promise<Buffer> {
  return bytesOf((await c.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body);
}

const bodies = new Map<string, Uint8Array>([
  ['small/a', randomBytes(10, 1)],
  ['small/b', randomBytes(1000, 2)],
  ['carrier', randomBytes(2 * 1024 * 1024 + 3, 3)],
  ['multipart', randomBytes(11 * 1024 * 1024, 4)],
]);

beforeAll(async () => {
  s = await startTestServer({ config: { credentials: CREDENTIALS } });
  admin = createS3Client(s.url, wire);
  alice = createS3Client(s.url, wire, { credentials: ALICE });
  carol = createS3Client(s.url, wire, { credentials: CAROL });
  dave = createS3Client(s.url, wire, { credentials: DAVE });
  erin = createS3Client(s.url, wire, { credentials: ERIN });
  await alice.send(new CreateBucketCommand({ Bucket: 'origin' }));
  for (const [key, body] of bodies) {
    if (key === 'multipart') {
      await new Upload({ client: alice, params: { Bucket: 'origin', Key: key, Body: Buffer.from(body) }, partSize: 5 * 1024 * 1024 }).done();
    } else {
      await alice.send(new PutObjectCommand({ Bucket: 'origin', Key: key, Body: body }));
    }
  }
  await alice.send(new PutBucketCorsCommand({ Bucket: 'origin', CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET'], AllowedOrigins: ['https://example.com'] }] } }));
  await alice.send(new PutBucketTaggingCommand({ Bucket: 'origin', Tagging: { TagSet: [{ Key: 'team', Value: 'storage' }] } }));
  for (const key of [CAROL.accessKeyId, ERIN.accessKeyId]) await adminRequest(adminApi(), 'POST', ['keys', key, 'grant'], { bucket: 'origin', read: true });
}, 60_000);

afterAll(async () => {
  for (const c of [admin, alice, carol, dave, erin]) c?.destroy();
  await s?.stop();
});

describe('CreateBucket with x-strata-fork-source', () => {
  it('forks: the fork lists and reads every object, the caller owns it, settings but the policy come along', async () => {
    await forkCreate(alice, 'alice-fork', 'origin');
    expect((await keysOf(alice, 'alice-fork')).sort()).toEqual([...bodies.keys()].sort());
    for (const [key, body] of bodies) expectBytes(await read(alice, 'alice-fork', key), body, key);
    const acl = await alice.send(new GetBucketAclCommand({ Bucket: 'alice-fork' }));
    expect(acl.Owner?.ID).toBe(ALICE.accessKeyId);
    const cors = await alice.send(new GetBucketCorsCommand({ Bucket: 'alice-fork' }));
    expect(cors.CORSRules?.[0]?.AllowedOrigins).toEqual(['https://example.com']);
    const tags = await alice.send(new GetBucketTaggingCommand({ Bucket: 'alice-fork' }));
    expect(tags.TagSet).toEqual([{ Key: 'team', Value: 'storage' }]);
  });

  it('keeps both sides isolated: writes and deletes on one never show on the other', async () => {
    await forkCreate(alice, 'iso-fork', 'origin');
    await alice.send(new PutObjectCommand({ Bucket: 'iso-fork', Key: 'small/a', Body: 'fork overwrote' }));
    await alice.send(new PutObjectCommand({ Bucket: 'iso-fork', Key: 'fork-only', Body: 'f' }));
    await alice.send(new DeleteObjectCommand({ Bucket: 'iso-fork', Key: 'carrier' }));
    await alice.send(new PutObjectCommand({ Bucket: 'origin', Key: 'small/b', Body: 'origin overwrote' }));
    await alice.send(new PutObjectCommand({ Bucket: 'origin', Key: 'origin-only', Body: 'o' }));
    expect((await read(alice, 'iso-fork', 'small/a')).toString()).toBe('fork overwrote');
    expectBytes(await read(alice, 'origin', 'small/a'), bodies.get('small/a')!, 'origin small/a');
    expect((await read(alice, 'origin', 'small/b')).toString()).toBe('origin overwrote');
    expectBytes(await read(alice, 'iso-fork', 'small/b'), bodies.get('small/b')!, 'fork small/b');
    expectBytes(await read(alice, 'origin', 'carrier'), bodies.get('carrier')!, 'origin carrier');
    expect((await failure(read(alice, 'iso-fork', 'carrier'))).name).toBe('NoSuchKey');
    expect((await failure(read(alice, 'origin', 'fork-only'))).name).toBe('NoSuchKey');
    expect((await failure(read(alice, 'iso-fork', 'origin-only'))).name).toBe('NoSuchKey');
    expect(await keysOf(alice, 'iso-fork')).toEqual(['fork-only', 'multipart', 'small/a', 'small/b']);
    // Put origin back as the other tests expect it.
    await alice.send(new PutObjectCommand({ Bucket: 'origin', Key: 'small/b', Body: bodies.get('small/b')! }));
    await alice.send(new DeleteObjectCommand({ Bucket: 'origin', Key: 'origin-only' }));
  });

  it('leaves a fork complete after its source is emptied and deleted', async () => {
    await forkCreate(alice, 'temp-source', 'origin');
    await forkCreate(alice, 'temp-fork', 'temp-source');
    const keys = await keysOf(alice, 'temp-source');
    await alice.send(new DeleteObjectsCommand({ Bucket: 'temp-source', Delete: { Objects: keys.map((Key) => ({ Key })) } }));
    await alice.send(new DeleteBucketCommand({ Bucket: 'temp-source' }));
    expect((await failure(alice.send(new HeadBucketCommand({ Bucket: 'temp-source' })))).status).toBe(404);
    for (const [key, body] of bodies) expectBytes(await read(alice, 'temp-fork', key), body, `after the source went: ${key}`);
  });

  it('forks a versioned bucket with its history: same versions and ids, readable by id, then apart', async () => {
    await alice.send(new CreateBucketCommand({ Bucket: 'versioned-src' }));
    await alice.send(new PutBucketVersioningCommand({ Bucket: 'versioned-src', VersioningConfiguration: { Status: 'Enabled' } }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await alice.send(new PutObjectCommand({ Bucket: 'versioned-src', Key: 'doc', Body: `v${i}` }))).VersionId!);
    await alice.send(new DeleteObjectCommand({ Bucket: 'versioned-src', Key: 'doc' })); // a delete marker
    const versions = async (bucket: string) => {
      const r = await alice.send(new ListObjectVersionsCommand({ Bucket: bucket }));
      return [...(r.Versions ?? []).map((v) => `${v.Key} ${v.VersionId} ${v.IsLatest}`), ...(r.DeleteMarkers ?? []).map((m) => `marker ${m.Key} ${m.VersionId} ${m.IsLatest}`)];
    };
    const before = await versions('versioned-src');
    expect(before).toHaveLength(4);
    await forkCreate(alice, 'versioned-fork', 'versioned-src');
    expect((await alice.send(new GetBucketVersioningCommand({ Bucket: 'versioned-fork' }))).Status).toBe('Enabled');
    expect(await versions('versioned-fork')).toEqual(before);
    for (const [i, id] of ids.entries()) {
      const got = await alice.send(new GetObjectCommand({ Bucket: 'versioned-fork', Key: 'doc', VersionId: id }));
      expect((await bytesOf(got.Body)).toString()).toBe(`v${i}`);
    }
    expect((await failure(read(alice, 'versioned-fork', 'doc'))).name).toBe('NoSuchKey'); // the marker came along
    const forkV = (await alice.send(new PutObjectCommand({ Bucket: 'versioned-fork', Key: 'doc', Body: 'fork' }))).VersionId!;
    await alice.send(new DeleteObjectCommand({ Bucket: 'versioned-src', Key: 'doc', VersionId: ids[0] }));
    expect(await versions('versioned-src')).toHaveLength(3);
    expect(await versions('versioned-fork')).toHaveLength(5);
    expect((await read(alice, 'versioned-fork', 'doc')).toString()).toBe('fork');
    expect((await failure(alice.send(new GetObjectCommand({ Bucket: 'versioned-src', Key: 'doc', VersionId: forkV })))).name).toBe('NoSuchVersion');
    const old = await alice.send(new GetObjectCommand({ Bucket: 'versioned-fork', Key: 'doc', VersionId: ids[0] }));
    expect((await bytesOf(old.Body)).toString()).toBe('v0');
  });

  it('keeps Object Lock: a locked source forks locked (its default and each version\'s retention), and a fork can be asked to be locked', async () => {
    await alice.send(new CreateBucketCommand({ Bucket: 'locked-src', ObjectLockEnabledForBucket: true }));
    const rule = { DefaultRetention: { Mode: 'GOVERNANCE' as const, Days: 1 } };
    await alice.send(new PutObjectLockConfigurationCommand({ Bucket: 'locked-src', ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: rule } }));
    const v = (await alice.send(new PutObjectCommand({ Bucket: 'locked-src', Key: 'k', Body: 'kept', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: new Date(Date.now() + 86_400_000) }))).VersionId!;
    await forkCreate(alice, 'locked-fork', 'locked-src');
    const cfg = await alice.send(new GetObjectLockConfigurationCommand({ Bucket: 'locked-fork' }));
    expect(cfg.ObjectLockConfiguration).toEqual({ ObjectLockEnabled: 'Enabled', Rule: rule });
    // The version keeps its COMPLIANCE retention in the fork: not even the admin removes it there.
    for (const c of [alice, admin]) {
      const f = await failure(c.send(new DeleteObjectCommand({ Bucket: 'locked-fork', Key: 'k', VersionId: v })));
      expect([f.name, f.status]).toEqual(['AccessDenied', 403]);
    }
    expect((await read(alice, 'locked-fork', 'k')).toString()).toBe('kept');
    // Asked for on a fork of an unlocked bucket: lock and versioning enabled; on a locked one the
    // copied configuration (its default retention) is kept.
    const cmd = new CreateBucketCommand({ Bucket: 'lock-asked', ObjectLockEnabledForBucket: true });
    cmd.middlewareStack.add(
      ((next: (a: { request: { headers: Record<string, string> } }) => Promise<unknown>) => async (args: { request: { headers: Record<string, string> } }) => {
        args.request.headers['x-strata-fork-source'] = 'origin';
        return next(args);
      }) as never,
      { step: 'build', name: 'forkHeader' }
    );
    await alice.send(cmd);
    expect((await alice.send(new GetObjectLockConfigurationCommand({ Bucket: 'lock-asked' }))).ObjectLockConfiguration?.ObjectLockEnabled).toBe('Enabled');
    expect((await alice.send(new GetBucketVersioningCommand({ Bucket: 'lock-asked' }))).Status).toBe('Enabled');
    expect((await keysOf(alice, 'lock-asked')).sort()).toEqual([...bodies.keys()].sort());
  });

  it('lets a read grantee fork (the fork is hers) and applies the ACL the request names', async () => {
    await forkCreate(carol, 'carol-fork', 'origin', { acl: 'public-read' });
    const acl = await carol.send(new GetBucketAclCommand({ Bucket: 'carol-fork' }));
    expect(acl.Owner?.ID).toBe(CAROL.accessKeyId);
    expect(acl.Grants?.some((g) => g.Grantee?.URI?.endsWith('AllUsers') && g.Permission === 'READ')).toBe(true);
    await carol.send(new PutObjectCommand({ Bucket: 'carol-fork', Key: 'mine', Body: 'c' }));
    expect((await failure(carol.send(new PutObjectCommand({ Bucket: 'origin', Key: 'mine', Body: 'c' })))).name).toBe('AccessDenied');
    // Alice owns the source, not the fork.
    expect((await failure(alice.send(new GetObjectCommand({ Bucket: 'carol-fork', Key: 'mine' })))).status).toBe(403);
  });

  it('refuses keys that may not read all of the source or may not create buckets', async () => {
    const d = await failure(forkCreate(dave, 'dave-fork', 'origin'));
    expect([d.name, d.status]).toEqual(['AccessDenied', 403]);
    const e = await failure(forkCreate(erin, 'erin-fork', 'origin'));
    expect([e.name, e.status]).toEqual(['AccessDenied', 403]);
    // A source with a bucket policy: only its owner (and admins) may fork it; the policy stays behind.
    await alice.send(
      new PutBucketPolicyCommand({
        Bucket: 'origin',
        Policy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Deny', Principal: { AWS: [CAROL.accessKeyId] }, Action: 's3:GetObject', Resource: 'arn:aws:s3:::origin/carrier' }],
        }),
      })
    );
    try {
      const c = await failure(forkCreate(carol, 'carol-fork-2', 'origin'));
      expect([c.name, c.status]).toEqual(['AccessDenied', 403]);
      await forkCreate(alice, 'policy-fork', 'origin');
      expect((await failure(alice.send(new GetBucketPolicyCommand({ Bucket: 'policy-fork' })))).name).toBe('NoSuchBucketPolicy');
      await forkCreate(admin, 'admin-fork', 'origin');
      expect((await keysOf(admin, 'admin-fork')).length).toBe(bodies.size);
    } finally {
      await alice.send(new DeleteBucketPolicyCommand({ Bucket: 'origin' }));
    }
    for (const b of ['dave-fork', 'erin-fork', 'carol-fork-2']) expect((await failure(admin.send(new HeadBucketCommand({ Bucket: b })))).status).toBe(404);
  });

  it('answers bad values, a missing source, an existing target, itself and times with S3 errors', async () => {
    for (const bad of ['', '@', 'Bad_Name', 'origin@', 'origin@yesterday', 'origin@2026-03-01T12:00:00', 'origin@2026-02-30T12:00:00Z', `origin@${'9'.repeat(200)}`, 'origin, origin']) {
      const f = await failure(forkCreate(alice, 'bad-value-fork', bad));
      expect([f.name, f.status], JSON.stringify(bad)).toEqual(['InvalidArgument', 400]);
    }
    const unsigned = await failure(forkCreate(alice, 'unsigned-fork', 'origin', { unsigned: true }));
    expect([unsigned.name, unsigned.status]).toEqual(['InvalidRequest', 400]);
    expect((await failure(admin.send(new HeadBucketCommand({ Bucket: 'unsigned-fork' })))).status).toBe(404);
    const missing = await failure(forkCreate(alice, 'from-nothing', 'no-such-source'));
    expect([missing.name, missing.status]).toEqual(['NoSuchBucket', 404]);
    const own = await failure(forkCreate(alice, 'alice-fork', 'origin'));
    expect([own.name, own.status]).toEqual(['BucketAlreadyOwnedByYou', 409]);
    const theirs = await failure(forkCreate(carol, 'alice-fork', 'origin'));
    expect([theirs.name, theirs.status]).toEqual(['BucketAlreadyExists', 409]);
    const self = await failure(forkCreate(alice, 'origin', 'origin'));
    expect([self.name, self.status]).toEqual(['InvalidRequest', 400]);
    const past = await failure(forkCreate(alice, 'past-fork', 'origin@2020-01-01T00:00:00Z')); // before origin existed
    expect([past.name, past.status]).toEqual(['InvalidArgument', 400]);
    const future = await failure(forkCreate(alice, 'future-fork', 'origin@2999-01-01T00:00:00+02:00'));
    expect([future.name, future.status]).toEqual(['InvalidArgument', 400]);
    for (const b of ['bad-value-fork', 'from-nothing', 'past-fork', 'future-fork']) {
      expect((await failure(admin.send(new HeadBucketCommand({ Bucket: b })))).status, b).toBe(404);
    }
    // The source is untouched by all of it.
    expect((await keysOf(alice, 'origin')).sort()).toEqual([...bodies.keys()].sort());
  });
});
