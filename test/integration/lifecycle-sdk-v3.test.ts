/**
 * S3 lifecycle with a real client (AWS SDK v3) against a real server whose lifecycle day is
 * 1 s (STRATA_LIFECYCLE_DAY_MS, the documented debug setting) and whose worker runs every
 * 200 ms. Proves: configurations are put, read back and deleted as S3 does (errors with S3's
 * codes, transitions refused with 501, Content-MD5 or a checksum required); x-amz-expiration
 * on PUT, HEAD, GET and CopyObject names the rule and its date; the worker, on its own,
 * expires current objects (unversioned: gone; versioned: a delete marker), removes noncurrent
 * versions and lone delete markers and aborts old uploads; a version under legal hold is
 * never removed; a fork does not take its source's rules and keeps its objects; metrics count
 * what was done; the admin endpoint runs a pass on demand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketLifecycleCommand,
  DeleteObjectCommand,
  GetBucketLifecycleConfigurationCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectVersionsCommand,
  ListObjectsV2Command,
  PutBucketLifecycleConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
  type LifecycleRule,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { FinalizeHandler, FinalizeHandlerArguments, FinalizeRequestMiddleware } from '@smithy/types';
import { ACCESS_KEY, METRICS_AUTH, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { adminRequest } from '../../src/admin/client.js';

const DAY_MS = 1000;
let s: TestServer;
const wire = new WireLog();
let c: S3Client;
let bare: S3Client;
const admin = () => ({ endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });

beforeAll(async () => {
  // Read by the store at each evaluation (this file runs in its own process: pool 'forks').
  process.env.STRATA_LIFECYCLE_DAY_MS = String(DAY_MS);
  s = await startTestServer({ config: { lifecycleInterval: 200 } });
  c = createS3Client(s.url, wire);
  bare = createS3Client(s.url, wire, { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
});
afterAll(async () => {
  await s?.stop();
  delete process.env.STRATA_LIFECYCLE_DAY_MS;
});

const putRules = (bucket: string, rules: LifecycleRule[]) => c.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules } }));
const put = (bucket: string, key: string, body = 'data') => c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
const keys = async (bucket: string) => ((await c.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key!);

/** Polls `fn` until it returns true (every 100 ms, up to `ms`). */
async function eventually(fn: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  if (!m) throw new Error(`no metric ${name}`);
  return Number(m[1]);
}

describe('configuration', () => {
  it('put, get back as written, delete; NoSuchLifecycleConfiguration when none', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-config' }));
    expect((await failure(c.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'lc-config' })))).name).toBe('NoSuchLifecycleConfiguration');
    const rules: LifecycleRule[] = [
      { ID: 'logs', Filter: { Prefix: 'logs/' }, Status: 'Enabled', Expiration: { Days: 30 } },
      { ID: 'tagged', Filter: { And: { Prefix: 'tmp/', Tags: [{ Key: 'k', Value: 'v' }], ObjectSizeGreaterThan: 10 } }, Status: 'Disabled', Expiration: { Days: 3 } },
      { ID: 'old', Filter: {}, Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 7, NewerNoncurrentVersions: 2 } },
      { ID: 'mp', Filter: { Prefix: '' }, Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 } },
      { ID: 'dm', Filter: { Prefix: 'x/' }, Status: 'Enabled', Expiration: { ExpiredObjectDeleteMarker: true } },
    ];
    await putRules('lc-config', rules);
    const got = await c.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'lc-config' }));
    expect(got.Rules).toEqual(rules);
    await c.send(new DeleteBucketLifecycleCommand({ Bucket: 'lc-config' }));
    expect((await failure(c.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'lc-config' })))).status).toBe(404);
    // Deleting again is still 204.
    await c.send(new DeleteBucketLifecycleCommand({ Bucket: 'lc-config' }));
  });

  it('refuses what S3 refuses, with its codes, and stores nothing', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-bad' }));
    const refuse = async (rules: LifecycleRule[]) => failure(putRules('lc-bad', rules));
    expect(await refuse([{ ID: 'a', Filter: {}, Status: 'Enabled', Expiration: { Days: 0 } }])).toMatchObject({ status: 400, name: 'InvalidArgument' });
    expect(
      await refuse([
        { ID: 'a', Filter: { Prefix: 'a' }, Status: 'Enabled', Expiration: { Days: 1 } },
        { ID: 'a', Filter: { Prefix: 'b' }, Status: 'Enabled', Expiration: { Days: 1 } },
      ])
    ).toMatchObject({ status: 400, name: 'InvalidArgument' });
    expect(await refuse([{ ID: 'a'.repeat(256), Filter: {}, Status: 'Enabled', Expiration: { Days: 1 } }])).toMatchObject({ status: 400, name: 'InvalidArgument' });
    expect(await refuse([{ ID: 'a', Filter: {}, Status: 'Enabled', Expiration: { Date: new Date('2030-01-01T12:00:00Z') } }])).toMatchObject({ status: 400, name: 'InvalidArgument' });
    expect(await refuse([{ ID: 'a', Filter: {}, Status: 'Enabled' }])).toMatchObject({ status: 400, name: 'InvalidRequest' });
    expect(await refuse([{ ID: 'a', Filter: {}, Status: 'Enabled', Transitions: [{ Days: 30, StorageClass: 'GLACIER' }] }])).toMatchObject({ status: 501, name: 'NotImplemented' });
    expect((await failure(c.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'lc-bad' })))).status).toBe(404);
  });

  it('a PUT without Content-MD5 or a checksum is refused (signed, the integrity headers removed before signing)', async () => {
    const cmd = new PutBucketLifecycleConfigurationCommand({
      Bucket: 'lc-bad',
      LifecycleConfiguration: { Rules: [{ ID: 'ok', Filter: {}, Status: 'Enabled', Expiration: { Days: 100 } }] },
    });
    cmd.middlewareStack.addRelativeTo(
      ((next: FinalizeHandler<object, object>) => async (args: FinalizeHandlerArguments<object>) => {
        const h = (args.request as { headers: Record<string, string> }).headers;
        for (const name of Object.keys(h)) if (name.toLowerCase() === 'content-md5' || name.toLowerCase().startsWith('x-amz-checksum-')) delete h[name];
        return next(args);
      }) as FinalizeRequestMiddleware<object, object> as never,
      { relation: 'before', toMiddleware: 'awsAuthMiddleware', name: 'dropIntegrityHeaders' }
    );
    expect(await failure(bare.send(cmd))).toMatchObject({ status: 400, name: 'InvalidRequest' });
    expect((await failure(c.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'lc-bad' })))).status).toBe(404);
    // With them (the SDK's default), the same configuration is accepted.
    await putRules('lc-bad', [{ ID: 'ok', Filter: {}, Status: 'Enabled', Expiration: { Days: 100 } }]);
    const sent = wire.last((e) => e.method === 'PUT' && 'lifecycle' in e.query);
    expect(Object.keys(sent.request).some((h) => h === 'content-md5' || h.startsWith('x-amz-checksum-'))).toBe(true);
  });
});

describe('x-amz-expiration', () => {
  it('on PUT, HEAD, GET and CopyObject of objects a rule expires; not on others', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-header' }));
    await putRules('lc-header', [
      { ID: 'far', Filter: { Prefix: 'e/' }, Status: 'Enabled', Expiration: { Days: 100_000 } },
      { ID: 'farther', Filter: {}, Status: 'Enabled', Expiration: { Days: 200_000 } },
    ]);
    const p = await put('lc-header', 'e/one');
    expect(p.Expiration).toMatch(/^expiry-date="[^"]+ GMT", rule-id="far"$/);
    const head = await c.send(new HeadObjectCommand({ Bucket: 'lc-header', Key: 'e/one' }));
    const at = Date.parse(/expiry-date="([^"]+)"/.exec(head.Expiration!)![1]!);
    const modified = head.LastModified!.getTime();
    // Days of the debug length from the creation time, rounded up to the next day boundary.
    expect(at).toBeGreaterThanOrEqual(modified + 100_000 * DAY_MS);
    expect(at).toBeLessThanOrEqual(modified + 100_000 * DAY_MS + 2 * DAY_MS);
    expect((await c.send(new GetObjectCommand({ Bucket: 'lc-header', Key: 'e/one' }))).Expiration).toBe(head.Expiration);
    const copy = await c.send(new CopyObjectCommand({ Bucket: 'lc-header', Key: 'other', CopySource: 'lc-header/e/one' }));
    expect(copy.Expiration).toMatch(/rule-id="farther"/);
    // CompleteMultipartUpload too.
    const up = await c.send(new CreateMultipartUploadCommand({ Bucket: 'lc-header', Key: 'e/multi' }));
    const part = await c.send(new UploadPartCommand({ Bucket: 'lc-header', Key: 'e/multi', UploadId: up.UploadId, PartNumber: 1, Body: 'part' }));
    const done = await c.send(
      new CompleteMultipartUploadCommand({ Bucket: 'lc-header', Key: 'e/multi', UploadId: up.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } })
    );
    expect(done.Expiration).toMatch(/rule-id="far"$/);
    // An ID that is not printable ASCII is percent-encoded in the header.
    await putRules('lc-header', [{ ID: 'règle "1"', Filter: {}, Status: 'Enabled', Expiration: { Days: 5 } }]);
    expect((await c.send(new HeadObjectCommand({ Bucket: 'lc-header', Key: 'e/one' }))).Expiration).toMatch(/rule-id="r%C3%A8gle %221%22"$/);
    await c.send(new DeleteBucketLifecycleCommand({ Bucket: 'lc-header' }));
    expect((await c.send(new HeadObjectCommand({ Bucket: 'lc-header', Key: 'e/one' }))).Expiration).toBeUndefined();
  });
});

describe('the worker', () => {
  it('expires current objects (unversioned: gone), only under the rule', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-plain' }));
    for (const k of ['exp/a', 'exp/b', 'keep/a']) await put('lc-plain', k);
    await putRules('lc-plain', [{ ID: 'r', Filter: { Prefix: 'exp/' }, Status: 'Enabled', Expiration: { Days: 1 } }]);
    await eventually(async () => (await keys('lc-plain')).length === 1);
    expect(await keys('lc-plain')).toEqual(['keep/a']);
    const v = await c.send(new ListObjectVersionsCommand({ Bucket: 'lc-plain' }));
    expect(v.DeleteMarkers ?? []).toEqual([]);
    expect(await metric('strata_lifecycle_objects_expired_total')).toBeGreaterThanOrEqual(2);
  });

  it('versioned: a delete marker, then noncurrent versions and the lone marker go', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-versioned' }));
    await c.send(new PutBucketVersioningCommand({ Bucket: 'lc-versioned', VersioningConfiguration: { Status: 'Enabled' } }));
    await put('lc-versioned', 'k', 'one');
    await put('lc-versioned', 'k', 'two');
    await putRules('lc-versioned', [
      { ID: 'cur', Filter: {}, Status: 'Enabled', Expiration: { Days: 2 } },
      { ID: 'nc', Filter: {}, Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 1 } },
    ]);
    await eventually(async () => {
      const v = await c.send(new ListObjectVersionsCommand({ Bucket: 'lc-versioned' }));
      return (v.DeleteMarkers ?? []).length === 1 && (v.DeleteMarkers ?? [])[0]!.IsLatest === true;
    });
    expect(await keys('lc-versioned')).toEqual([]);
    // The marker makes 'two' noncurrent; a day later it goes too, and then the marker is
    // alone — a rule with ExpiredObjectDeleteMarker removes it.
    await putRules('lc-versioned', [
      { ID: 'nc', Filter: {}, Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 1 } },
      { ID: 'dm', Filter: {}, Status: 'Enabled', Expiration: { ExpiredObjectDeleteMarker: true } },
    ]);
    await eventually(async () => {
      const v = await c.send(new ListObjectVersionsCommand({ Bucket: 'lc-versioned' }));
      return (v.Versions ?? []).length === 0 && (v.DeleteMarkers ?? []).length === 0;
    });
    expect(await metric('strata_lifecycle_markers_removed_total')).toBeGreaterThanOrEqual(1);
    expect(await metric('strata_lifecycle_versions_removed_total')).toBeGreaterThanOrEqual(2);
  });

  it('a version under legal hold is kept; others go', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-locked', ObjectLockEnabledForBucket: true }));
    await c.send(new PutObjectCommand({ Bucket: 'lc-locked', Key: 'held', Body: 'old', ObjectLockLegalHoldStatus: 'ON' }));
    await put('lc-locked', 'held', 'new');
    await put('lc-locked', 'free', 'old');
    await put('lc-locked', 'free', 'new');
    await putRules('lc-locked', [{ ID: 'nc', Filter: {}, Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 1 } }]);
    await eventually(async () => (await c.send(new ListObjectVersionsCommand({ Bucket: 'lc-locked', Prefix: 'free' }))).Versions!.length === 1);
    await eventually(async () => (await metric('strata_lifecycle_skipped_locked_total')) >= 1);
    const held = await c.send(new ListObjectVersionsCommand({ Bucket: 'lc-locked', Prefix: 'held' }));
    expect(held.Versions!.length).toBe(2);
  });

  it('aborts incomplete multipart uploads under the rule', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-uploads' }));
    // Long enough for CreateMultipartUpload to show when the upload would be aborted.
    await putRules('lc-uploads', [{ ID: 'mp-later', Filter: { Prefix: 'tmp/' }, Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 100_000 } }]);
    const created = await c.send(new CreateMultipartUploadCommand({ Bucket: 'lc-uploads', Key: 'tmp/x' }));
    expect(created.AbortRuleId).toBe('mp-later');
    expect(created.AbortDate!.getTime()).toBeGreaterThan(Date.now() + 99_000 * DAY_MS);
    expect((await c.send(new CreateMultipartUploadCommand({ Bucket: 'lc-uploads', Key: 'keep/x' }))).AbortRuleId).toBeUndefined();
    await putRules('lc-uploads', [{ ID: 'mp', Filter: { Prefix: 'tmp/' }, Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }]);
    await eventually(async () => ((await c.send(new ListMultipartUploadsCommand({ Bucket: 'lc-uploads' }))).Uploads ?? []).length === 1);
    expect((await c.send(new ListMultipartUploadsCommand({ Bucket: 'lc-uploads' }))).Uploads![0]!.Key).toBe('keep/x');
  });

  it('a fork keeps its objects while its source expires them, and has no rules of its own', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-src' }));
    await put('lc-src', 'a');
    await put('lc-src', 'b');
    await putRules('lc-src', [{ ID: 'all', Filter: {}, Status: 'Enabled', Expiration: { Days: 100_000 } }]);
    await adminRequest(admin(), 'POST', ['buckets', 'lc-fork', 'fork'], { source: 'lc-src' });
    expect((await failure(c.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'lc-fork' })))).name).toBe('NoSuchLifecycleConfiguration');
    await putRules('lc-src', [{ ID: 'all', Filter: {}, Status: 'Enabled', Expiration: { Days: 1 } }]);
    await eventually(async () => (await keys('lc-src')).length === 0);
    expect(await keys('lc-fork')).toEqual(['a', 'b']);
    expect((await c.send(new HeadObjectCommand({ Bucket: 'lc-fork', Key: 'a' }))).Expiration).toBeUndefined();
  });

  it('the admin endpoint runs a pass now and reports it', async () => {
    await c.send(new CreateBucketCommand({ Bucket: 'lc-admin' }));
    await putRules('lc-admin', [{ ID: 'x', Filter: {}, Status: 'Enabled', Expiration: { Date: new Date('2020-01-01T00:00:00Z') } }]);
    await c.send(new DeleteObjectCommand({ Bucket: 'lc-admin', Key: 'nothing' }));
    const r = (await adminRequest(admin(), 'POST', ['lifecycle', 'run'], { bucket: 'lc-admin' })) as { buckets: number };
    expect(r.buckets).toBe(1);
    await expect(adminRequest(admin(), 'POST', ['lifecycle', 'run'], { bucket: 'no-such-bucket-here' })).rejects.toMatchObject({ status: 404 });
  });
});
