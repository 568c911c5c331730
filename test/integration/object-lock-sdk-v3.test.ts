/**
 * Object Lock with a real client (AWS SDK v3) against a real server, with three keys: the
 * admin, `writer` (a write grant on the buckets: what a backup tool holds) and `keeper` (an
 * owner grant). Proves:
 * - a bucket created with Object Lock has versioning Enabled and lock enabled; a plain bucket
 *   has no lock configuration and cannot get one (InvalidBucketState) until versioned;
 * - the default retention applies to PUT, multipart and copy (never the copy source's lock);
 *   explicit headers win; a locked body or part without Content-MD5 / checksum is refused and
 *   nothing is stored; headers on a plain bucket are refused;
 * - COMPLIANCE: extended by anyone allowed, never shortened nor relaxed, bypass or not, admin
 *   included; GOVERNANCE: shortened, removed or turned COMPLIANCE only with the bypass header
 *   from a key allowed s3:BypassGovernanceRetention (admin, owner grant, or a policy Allow),
 *   and a policy Deny takes the bypass away from everyone;
 * - a locked version is never removed: DELETE ?versionId and DeleteObjects with VersionId are
 *   403 AccessDenied for COMPLIANCE (everyone, bypass or not) and legal holds; GOVERNANCE yields
 *   only to the bypass header from an allowed key; DeleteObjects fails the locked keys alone;
 *   a DELETE without versionId only adds a delete marker; the bucket cannot be deleted nor its
 *   versioning suspended;
 * - legal holds are set and cleared only by owners (a writer's key cannot lift one);
 * - GET/HEAD show the lock to readers, not to a reader a policy denies s3:GetObjectRetention.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteBucketPolicyCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { adminRequest } from '../../src/admin/client.js';

const WRITER = { accessKeyId: 'OLWRITERKEY000000001', secretAccessKey: 'writer-secret-0123456789-abcdefghijklmno' };
const KEEPER = { accessKeyId: 'OLKEEPERKEY000000002', secretAccessKey: 'keeper-secret-0123456789-abcdefghijklmno' };
const DAY = 86_400_000;

let s: TestServer;
const wire = new WireLog();
let admin: S3Client;
let writer: S3Client;
let keeper: S3Client;
/** The admin, sending no checksum unless an operation requires one. */
let bare: S3Client;

beforeAll(async () => {
  s = await startTestServer({
    config: {
      credentials: [
        { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
        { ...WRITER, admin: false },
        { ...KEEPER, admin: false },
      ],
    },
  });
  admin = createS3Client(s.url, wire);
  writer = createS3Client(s.url, wire, { credentials: WRITER });
  keeper = createS3Client(s.url, wire, { credentials: KEEPER });
  bare = createS3Client(s.url, wire, { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
});
afterAll(async () => {
  for (const c of [admin, writer, keeper, bare]) c?.destroy();
  await s?.stop();
});

let seq = 0;
/** A new lock-enabled bucket (admin-owned), with the writer and keeper granted on it. */
async function lockedBucket(tag: string): Promise<string> {
  const b = `ol-${tag}-${++seq}`;
  await admin.send(new CreateBucketCommand({ Bucket: b, ObjectLockEnabledForBucket: true }));
  const api = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
  await adminRequest(api, 'POST', ['keys', WRITER.accessKeyId, 'grant'], { bucket: b, read: true, write: true });
  await adminRequest(api, 'POST', ['keys', KEEPER.accessKeyId, 'grant'], { bucket: b, read: true, write: true, owner: true });
  return b;
}

const name = async (p: Promise<unknown>) => (await failure(p)).name;
const retention = async (b: string, k: string) => (await admin.send(new GetObjectRetentionCommand({ Bucket: b, Key: k }))).Retention;
const setRetention = (c: S3Client, b: string, k: string, Mode: 'GOVERNANCE' | 'COMPLIANCE' | undefined, until: Date | undefined, bypass = false) =>
  c.send(new PutObjectRetentionCommand({ Bucket: b, Key: k, Retention: Mode && until ? { Mode, RetainUntilDate: until } : {}, ...(bypass ? { BypassGovernanceRetention: true } : {}) }));
const keys = async (b: string) => ((await admin.send(new ListObjectsV2Command({ Bucket: b }))).Contents ?? []).map((o) => o.Key);

describe('buckets', () => {
  it('CreateBucket with Object Lock: versioning Enabled, lock enabled, no default; plain buckets have none', async () => {
    const b = await lockedBucket('create');
    expect((await admin.send(new GetBucketVersioningCommand({ Bucket: b }))).Status).toBe('Enabled');
    expect((await admin.send(new GetObjectLockConfigurationCommand({ Bucket: b }))).ObjectLockConfiguration).toEqual({ ObjectLockEnabled: 'Enabled' });
    await admin.send(new CreateBucketCommand({ Bucket: 'ol-plain' }));
    expect(await failure(admin.send(new GetObjectLockConfigurationCommand({ Bucket: 'ol-plain' })))).toMatchObject({ name: 'ObjectLockConfigurationNotFoundError', status: 404 });
    expect(await failure(admin.send(new PutObjectLockConfigurationCommand({ Bucket: 'ol-plain', ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' } })))).toMatchObject({
      name: 'InvalidBucketState',
      status: 409,
    });
    expect((await admin.send(new GetBucketVersioningCommand({ Bucket: 'ol-plain' }))).Status).toBeUndefined();
  });

  it('the default retention is set, read back, replaced and removed; the writer may read it but not set it', async () => {
    const b = await lockedBucket('default');
    const conf = { ObjectLockEnabled: 'Enabled' as const, Rule: { DefaultRetention: { Mode: 'COMPLIANCE' as const, Years: 2 } } };
    await admin.send(new PutObjectLockConfigurationCommand({ Bucket: b, ObjectLockConfiguration: conf }));
    expect((await writer.send(new GetObjectLockConfigurationCommand({ Bucket: b }))).ObjectLockConfiguration).toEqual(conf);
    expect(await name(writer.send(new PutObjectLockConfigurationCommand({ Bucket: b, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' } })))).toBe('AccessDenied');
    expect(await name(admin.send(new PutObjectLockConfigurationCommand({ Bucket: b, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 0 } } } })))).toBe('InvalidRetentionPeriod');
    await admin.send(new PutObjectLockConfigurationCommand({ Bucket: b, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' } }));
    expect((await admin.send(new GetObjectLockConfigurationCommand({ Bucket: b }))).ObjectLockConfiguration).toEqual({ ObjectLockEnabled: 'Enabled' });
  });
});

describe('new versions', () => {
  it('PUT, multipart and copy get the default retention, explicit headers win, a copy never inherits its source lock', async () => {
    const b = await lockedBucket('writes');
    await admin.send(new PutObjectLockConfigurationCommand({ Bucket: b, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 3 } } } }));
    await writer.send(new PutObjectCommand({ Bucket: b, Key: 'd', Body: 'default' }));
    const head = await admin.send(new HeadObjectCommand({ Bucket: b, Key: 'd' }));
    expect(head.ObjectLockMode).toBe('GOVERNANCE');
    const lm = head.LastModified!.getTime();
    // LastModified is whole seconds on the wire; the retention counts from the commit's ms.
    expect(head.ObjectLockRetainUntilDate!.getTime() - lm).toBeGreaterThanOrEqual(3 * DAY);
    expect(head.ObjectLockRetainUntilDate!.getTime() - lm).toBeLessThan(3 * DAY + 1000);
    expect(head.ObjectLockLegalHoldStatus).toBeUndefined();

    const until = new Date(Date.now() + 30 * DAY);
    await writer.send(new PutObjectCommand({ Bucket: b, Key: 'e', Body: 'explicit', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: until, ObjectLockLegalHoldStatus: 'ON' }));
    const e = await admin.send(new GetObjectCommand({ Bucket: b, Key: 'e' }));
    expect([e.ObjectLockMode, e.ObjectLockRetainUntilDate?.getTime(), e.ObjectLockLegalHoldStatus]).toEqual(['COMPLIANCE', until.getTime(), 'ON']);

    await writer.send(new CopyObjectCommand({ Bucket: b, Key: 'copy', CopySource: `${b}/e` }));
    const copy = await admin.send(new HeadObjectCommand({ Bucket: b, Key: 'copy' }));
    expect([copy.ObjectLockMode, copy.ObjectLockLegalHoldStatus]).toEqual(['GOVERNANCE', undefined]);

    const mp = await writer.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'mp', ObjectLockLegalHoldStatus: 'ON' }));
    const part = await writer.send(new UploadPartCommand({ Bucket: b, Key: 'mp', UploadId: mp.UploadId!, PartNumber: 1, Body: 'part' }));
    await writer.send(new CompleteMultipartUploadCommand({ Bucket: b, Key: 'mp', UploadId: mp.UploadId!, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag!, ChecksumCRC32: part.ChecksumCRC32! }] } }));
    const m = await admin.send(new HeadObjectCommand({ Bucket: b, Key: 'mp' }));
    expect([m.ObjectLockMode, m.ObjectLockLegalHoldStatus]).toEqual(['GOVERNANCE', 'ON']);
  });

  it('a locked body or part without Content-MD5 or a checksum is refused and nothing is stored; Content-MD5 is enough', async () => {
    const b = await lockedBucket('digest');
    // No default retention and no lock header: nothing to lock, no digest needed.
    await bare.send(new PutObjectCommand({ Bucket: b, Key: 'free', Body: 'free' }));
    const refused = await failure(bare.send(new PutObjectCommand({ Bucket: b, Key: 'held', Body: 'held', ObjectLockLegalHoldStatus: 'OFF' })));
    expect(refused).toMatchObject({ name: 'InvalidRequest', status: 400 });
    expect(refused.message).toContain('Content-MD5 OR x-amz-checksum-');
    await admin.send(new PutObjectLockConfigurationCommand({ Bucket: b, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } } } }));
    expect(await name(bare.send(new PutObjectCommand({ Bucket: b, Key: 'by-default', Body: 'x' })))).toBe('InvalidRequest');
    expect(await keys(b)).toEqual(['free']);
    const md5 = createHash('md5').update('x').digest('base64');
    await bare.send(new PutObjectCommand({ Bucket: b, Key: 'by-default', Body: 'x', ContentMD5: md5 }));
    expect((await retention(b, 'by-default'))?.Mode).toBe('GOVERNANCE');
    const mp = await bare.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'mp' }));
    expect(await name(bare.send(new UploadPartCommand({ Bucket: b, Key: 'mp', UploadId: mp.UploadId!, PartNumber: 1, Body: 'x' })))).toBe('InvalidRequest');
    const part = await bare.send(new UploadPartCommand({ Bucket: b, Key: 'mp', UploadId: mp.UploadId!, PartNumber: 1, Body: 'x', ContentMD5: md5 }));
    await bare.send(new CompleteMultipartUploadCommand({ Bucket: b, Key: 'mp', UploadId: mp.UploadId!, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] } }));
    expect((await retention(b, 'mp'))?.Mode).toBe('GOVERNANCE');
  });

  it('lock headers on a bucket without Object Lock: InvalidRequest, nothing stored', async () => {
    await admin.send(new CreateBucketCommand({ Bucket: 'ol-plain-writes' }));
    const until = new Date(Date.now() + DAY);
    expect(await failure(admin.send(new PutObjectCommand({ Bucket: 'ol-plain-writes', Key: 'k', Body: 'x', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until })))).toMatchObject({
      name: 'InvalidRequest',
      status: 400,
    });
    expect(await name(admin.send(new GetObjectRetentionCommand({ Bucket: 'ol-plain-writes', Key: 'k' })))).toBe('InvalidRequest');
    expect(await keys('ol-plain-writes')).toEqual([]);
  });
});

describe('retention changes', () => {
  it('COMPLIANCE: extended by a writer; never shortened, removed or relaxed, whoever asks and with bypass', async () => {
    const b = await lockedBucket('compliance');
    const until = new Date(Date.now() + DAY);
    await writer.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'x', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: until }));
    const later = new Date(until.getTime() + DAY);
    await setRetention(writer, b, 'k', 'COMPLIANCE', later);
    for (const c of [admin, keeper, writer]) {
      expect(await name(setRetention(c, b, 'k', 'COMPLIANCE', until, true)), 'shortened').toBe('AccessDenied');
      expect(await name(setRetention(c, b, 'k', 'GOVERNANCE', new Date(later.getTime() + DAY), true)), 'relaxed').toBe('AccessDenied');
      expect(await name(setRetention(c, b, 'k', undefined, undefined, true)), 'removed').toBe('AccessDenied');
    }
    expect(await retention(b, 'k')).toEqual({ Mode: 'COMPLIANCE', RetainUntilDate: later });
    expect(await name(setRetention(admin, b, 'k', 'COMPLIANCE', new Date(Date.now() - 1000)))).toBe('InvalidArgument');
  });

  it('GOVERNANCE: shortening, removal or a mode change need the bypass header from a key allowed to bypass', async () => {
    const b = await lockedBucket('governance');
    const until = new Date(Date.now() + 10 * DAY);
    await writer.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'x', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until }));
    const shorter = (n: number) => new Date(until.getTime() - n * DAY);
    // Without the header nobody bypasses, the admin included.
    expect(await name(setRetention(admin, b, 'k', 'GOVERNANCE', shorter(1)))).toBe('AccessDenied');
    expect(await name(setRetention(admin, b, 'k', 'COMPLIANCE', until))).toBe('AccessDenied');
    // A writer may not bypass even when asking; extending stays open to it.
    expect(await name(setRetention(writer, b, 'k', 'GOVERNANCE', shorter(1), true))).toBe('AccessDenied');
    await setRetention(writer, b, 'k', 'GOVERNANCE', until);
    await setRetention(keeper, b, 'k', 'GOVERNANCE', shorter(1), true);
    await setRetention(admin, b, 'k', 'GOVERNANCE', shorter(2), true);
    expect(await retention(b, 'k')).toEqual({ Mode: 'GOVERNANCE', RetainUntilDate: shorter(2) });
    // A bucket policy can give the writer the bypass...
    const policy = (effect: 'Allow' | 'Deny', who: string) =>
      JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: effect, Principal: { AWS: [who] }, Action: 's3:BypassGovernanceRetention', Resource: `arn:aws:s3:::${b}/*` }] });
    await admin.send(new PutBucketPolicyCommand({ Bucket: b, Policy: policy('Allow', WRITER.accessKeyId) }));
    await setRetention(writer, b, 'k', 'GOVERNANCE', shorter(3), true);
    // ...and take it from everyone, the admin included.
    await admin.send(new PutBucketPolicyCommand({ Bucket: b, Policy: policy('Deny', '*') }));
    expect(await name(setRetention(admin, b, 'k', undefined, undefined, true))).toBe('AccessDenied');
    await admin.send(new DeleteBucketPolicyCommand({ Bucket: b }));
    await setRetention(admin, b, 'k', 'COMPLIANCE', shorter(3), true);
    expect(await retention(b, 'k')).toEqual({ Mode: 'COMPLIANCE', RetainUntilDate: shorter(3) });
  });

  it('an empty retention removes a GOVERNANCE one with bypass; then GetObjectRetention is NoSuchObjectLockConfiguration', async () => {
    const b = await lockedBucket('remove');
    await writer.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'x', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: new Date(Date.now() + DAY) }));
    await setRetention(keeper, b, 'k', undefined, undefined, true);
    expect(await failure(admin.send(new GetObjectRetentionCommand({ Bucket: b, Key: 'k' })))).toMatchObject({ name: 'NoSuchObjectLockConfiguration', status: 404 });
    expect((await admin.send(new HeadObjectCommand({ Bucket: b, Key: 'k' }))).ObjectLockMode).toBeUndefined();
  });
});

describe('legal hold', () => {
  it('set and cleared by owners only; a writer can neither place nor lift one', async () => {
    const b = await lockedBucket('hold');
    await writer.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'x' }));
    expect(await failure(admin.send(new GetObjectLegalHoldCommand({ Bucket: b, Key: 'k' })))).toMatchObject({ name: 'NoSuchObjectLockConfiguration', status: 404 });
    expect(await name(writer.send(new PutObjectLegalHoldCommand({ Bucket: b, Key: 'k', LegalHold: { Status: 'ON' } })))).toBe('AccessDenied');
    await keeper.send(new PutObjectLegalHoldCommand({ Bucket: b, Key: 'k', LegalHold: { Status: 'ON' } }));
    expect((await writer.send(new GetObjectLegalHoldCommand({ Bucket: b, Key: 'k' }))).LegalHold).toEqual({ Status: 'ON' });
    expect(await name(writer.send(new PutObjectLegalHoldCommand({ Bucket: b, Key: 'k', LegalHold: { Status: 'OFF' } })))).toBe('AccessDenied');
    await admin.send(new PutObjectLegalHoldCommand({ Bucket: b, Key: 'k', LegalHold: { Status: 'OFF' } }));
    expect((await admin.send(new GetObjectLegalHoldCommand({ Bucket: b, Key: 'k' }))).LegalHold).toEqual({ Status: 'OFF' });
  });
});

describe('lock headers on reads', () => {
  it('shown to readers; hidden from a reader a policy denies s3:GetObjectRetention / s3:GetObjectLegalHold', async () => {
    const b = await lockedBucket('reads');
    const until = new Date(Date.now() + DAY);
    await admin.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'x', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until, ObjectLockLegalHoldStatus: 'ON' }));
    const seen = async () => {
      const h = await writer.send(new HeadObjectCommand({ Bucket: b, Key: 'k' }));
      return [h.ObjectLockMode, h.ObjectLockRetainUntilDate?.getTime(), h.ObjectLockLegalHoldStatus];
    };
    expect(await seen()).toEqual(['GOVERNANCE', until.getTime(), 'ON']);
    const deny = (action: string) =>
      JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Deny', Principal: { AWS: [WRITER.accessKeyId] }, Action: action, Resource: `arn:aws:s3:::${b}/*` }] });
    await admin.send(new PutBucketPolicyCommand({ Bucket: b, Policy: deny('s3:GetObjectRetention') }));
    expect(await seen()).toEqual([undefined, undefined, 'ON']);
    await admin.send(new PutBucketPolicyCommand({ Bucket: b, Policy: deny('s3:GetObjectLegalHold') }));
    expect(await seen()).toEqual(['GOVERNANCE', until.getTime(), undefined]);
  });
});

describe('removing versions', () => {
  const versionsOf = async (b: string, k: string) =>
    ((await admin.send(new ListObjectVersionsCommand({ Bucket: b, Prefix: k }))).Versions ?? []).filter((v) => v.Key === k).map((v) => v.VersionId);
  const removeVersion = (c: S3Client, b: string, k: string, v: string, bypass = false) =>
    c.send(new DeleteObjectCommand({ Bucket: b, Key: k, VersionId: v, ...(bypass ? { BypassGovernanceRetention: true } : {}) }));

  it('COMPLIANCE: nobody removes the version, with or without bypass; a DELETE without versionId only adds a marker', async () => {
    const b = await lockedBucket('del-compliance');
    const put = await writer.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'x', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: new Date(Date.now() + DAY) }));
    const v = put.VersionId!;
    for (const c of [admin, keeper, writer]) {
      for (const bypass of [false, true]) expect(await failure(removeVersion(c, b, 'k', v, bypass))).toMatchObject({ name: 'AccessDenied', status: 403 });
    }
    const marker = await writer.send(new DeleteObjectCommand({ Bucket: b, Key: 'k' }));
    expect(marker.DeleteMarker).toBe(true);
    expect(await versionsOf(b, 'k')).toEqual([v]);
    // The marker can go; the object is back, whole.
    await writer.send(new DeleteObjectCommand({ Bucket: b, Key: 'k', VersionId: marker.VersionId! }));
    expect((await admin.send(new HeadObjectCommand({ Bucket: b, Key: 'k' }))).VersionId).toBe(v);
    expect(await name(admin.send(new DeleteBucketCommand({ Bucket: b })))).toBe('BucketNotEmpty');
    expect(await name(admin.send(new PutBucketVersioningCommand({ Bucket: b, VersioningConfiguration: { Status: 'Suspended' } })))).toBe('InvalidBucketState');
  });

  it('GOVERNANCE: removed only with the bypass header from a key allowed to bypass', async () => {
    const b = await lockedBucket('del-governance');
    await admin.send(new PutObjectLockConfigurationCommand({ Bucket: b, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } } } }));
    const v = (await writer.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'x' }))).VersionId!;
    expect(await name(removeVersion(admin, b, 'k', v))).toBe('AccessDenied');
    expect(await name(removeVersion(writer, b, 'k', v, true))).toBe('AccessDenied');
    expect(await versionsOf(b, 'k')).toEqual([v]);
    await removeVersion(keeper, b, 'k', v, true);
    expect(await versionsOf(b, 'k')).toEqual([]);
  });

  it('legal hold: blocks every removal until cleared, bypass or not', async () => {
    const b = await lockedBucket('del-hold');
    const v = (await writer.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'x', ObjectLockLegalHoldStatus: 'ON' }))).VersionId!;
    expect(await name(removeVersion(admin, b, 'k', v, true))).toBe('AccessDenied');
    await keeper.send(new PutObjectLegalHoldCommand({ Bucket: b, Key: 'k', VersionId: v, LegalHold: { Status: 'OFF' } }));
    await removeVersion(writer, b, 'k', v);
    expect(await versionsOf(b, 'k')).toEqual([]);
  });

  it('DeleteObjects with VersionIds: locked keys fail alone with AccessDenied, the rest are removed; bypass is judged per key', async () => {
    const b = await lockedBucket('del-multi');
    const until = new Date(Date.now() + DAY);
    const gov = (await writer.send(new PutObjectCommand({ Bucket: b, Key: 'gov', Body: 'x', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until }))).VersionId!;
    const gov2 = (await writer.send(new PutObjectCommand({ Bucket: b, Key: 'keep/gov', Body: 'x', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until }))).VersionId!;
    const comp = (await writer.send(new PutObjectCommand({ Bucket: b, Key: 'comp', Body: 'x', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: until }))).VersionId!;
    const free = (await writer.send(new PutObjectCommand({ Bucket: b, Key: 'free', Body: 'x' }))).VersionId!;
    const objects = [
      { Key: 'gov', VersionId: gov },
      { Key: 'keep/gov', VersionId: gov2 },
      { Key: 'comp', VersionId: comp },
      { Key: 'free', VersionId: free },
    ];
    const first = await writer.send(new DeleteObjectsCommand({ Bucket: b, Delete: { Objects: objects }, BypassGovernanceRetention: true }));
    expect((first.Deleted ?? []).map((d) => [d.Key, d.VersionId])).toEqual([['free', free]]);
    expect((first.Errors ?? []).map((e) => [e.Key, e.VersionId, e.Code])).toEqual([
      ['gov', gov, 'AccessDenied'],
      ['keep/gov', gov2, 'AccessDenied'],
      ['comp', comp, 'AccessDenied'],
    ]);
    // The writer gets the bypass for one prefix only; a policy Deny keeps keep/ from everyone.
    await admin.send(
      new PutBucketPolicyCommand({
        Bucket: b,
        Policy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { AWS: [WRITER.accessKeyId] }, Action: 's3:BypassGovernanceRetention', Resource: `arn:aws:s3:::${b}/*` },
            { Effect: 'Deny', Principal: '*', Action: 's3:BypassGovernanceRetention', Resource: `arn:aws:s3:::${b}/keep/*` },
          ],
        }),
      })
    );
    const second = await writer.send(new DeleteObjectsCommand({ Bucket: b, Delete: { Objects: objects.slice(0, 3) }, BypassGovernanceRetention: true }));
    expect((second.Deleted ?? []).map((d) => d.Key)).toEqual(['gov']);
    expect((second.Errors ?? []).map((e) => [e.Key, e.Code])).toEqual([
      ['keep/gov', 'AccessDenied'],
      ['comp', 'AccessDenied'],
    ]);
    const left = ((await admin.send(new ListObjectVersionsCommand({ Bucket: b }))).Versions ?? []).map((v) => v.Key).sort();
    expect(left).toEqual(['comp', 'keep/gov']);
  });
});
