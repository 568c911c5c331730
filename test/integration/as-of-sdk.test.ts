/**
 * Reads as of a past time over S3 with the AWS SDK v3 against a real server: the header
 * `x-strata-as-of` added by a client middleware (so the SDK signs it), the query form in a
 * presigned URL, GET/HEAD/ListObjects V1 and V2 (prefix, delimiter, paging) as of a time,
 * the response header naming the time served; and refusals: writes and other operations
 * carrying it, an unsigned header, SigV2, anonymous and ungranted keys, bad, far-future and
 * out-of-window times, a version id with a time, header and query disagreeing.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { adminRequest } from '../../src/admin/client.js';
import { signRequest } from '../../src/sigv4/sign.js';

const BOB = { accessKeyId: 'ASOFBOBKEY0000000002', secretAccessKey: 'bob-secret-0123456789-abcdefghijklmnopqr' };
const B = 'asof-bucket';

let s: TestServer;
const wire = new WireLog();
let admin: S3Client;
let bob: S3Client;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const iso = (ms: number) => new Date(ms).toISOString();

/** A client that adds `x-strata-as-of` (header, or query when `query`) before signing. */
function asOfClient(at: () => string | undefined, opts: { query?: boolean; credentials?: typeof BOB } = {}): S3Client {
  const c = createS3Client(s.url, wire, opts.credentials ? { credentials: opts.credentials } : {});
  c.middlewareStack.add(
    (next) => async (args) => {
      const value = at();
      const req = (args as unknown as { request: { headers: Record<string, string>; query: Record<string, string> } }).request;
      if (value !== undefined) {
        if (opts.query) req.query['x-strata-as-of'] = value;
        else req.headers['x-strata-as-of'] = value;
      }
      return next(args);
    },
    { step: 'build', name: 'strataAsOf' }
  );
  return c;
}

const text = async (p: Promise<{ Body?: unknown }>) => (await bytesOf((await p).Body)).toString();

/** A raw signed request (SigV4 header form) with `extra` headers NOT signed. */
async function rawGet(path: string, query: Record<string, string>, signed: Record<string, string>, unsigned: Record<string, string> = {}) {
  const host = new URL(s.url).host;
  const sig = signRequest({ method: 'GET', path, query, headers: { host, ...signed } }, { credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, region: REGION, service: 's3' });
  const url = `${s.url}${sig.encodedPath}${sig.encodedQuery ? `?${sig.encodedQuery}` : ''}`;
  const res = await fetch(url, { headers: { ...signed, ...sig.headers, ...unsigned } });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

let t1 = 0;
let t2 = 0;
let created = 0;

beforeAll(async () => {
  s = await startTestServer({
    config: {
      credentials: [
        { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
        { ...BOB, admin: false },
      ],
    },
  });
  admin = createS3Client(s.url, wire);
  bob = createS3Client(s.url, wire, { credentials: BOB });
  created = Date.now();
  await admin.send(new CreateBucketCommand({ Bucket: B }));
  await sleep(20);
  for (const k of ['a', 'b', 'dir/x', 'dir/y', 'dir/sub/z']) await admin.send(new PutObjectCommand({ Bucket: B, Key: k, Body: `${k} one` }));
  await sleep(20);
  t1 = Date.now();
  await sleep(20);
  await admin.send(new PutObjectCommand({ Bucket: B, Key: 'a', Body: 'a two' }));
  await admin.send(new DeleteObjectCommand({ Bucket: B, Key: 'b' }));
  await admin.send(new DeleteObjectCommand({ Bucket: B, Key: 'dir/y' }));
  await admin.send(new PutObjectCommand({ Bucket: B, Key: 'c', Body: 'c one' }));
  await admin.send(new PutBucketVersioningCommand({ Bucket: B, VersioningConfiguration: { Status: 'Enabled' } }));
  await admin.send(new DeleteObjectCommand({ Bucket: B, Key: 'dir/x' })); // a delete marker
  await sleep(20);
  t2 = Date.now();
  await sleep(20);
  await admin.send(new PutObjectCommand({ Bucket: B, Key: 'dir/x', Body: 'dir/x three' }));
});

afterAll(async () => {
  for (const c of [admin, bob]) c?.destroy();
  await s?.stop();
});

describe('reads as of a time, signed header (SDK middleware)', () => {
  it('GET, HEAD and listings show the bucket as it was, and name the time served', async () => {
    let at: string | undefined = iso(t1);
    const c = asOfClient(() => at);
    expect(await text(c.send(new GetObjectCommand({ Bucket: B, Key: 'a' })))).toBe('a one');
    const ex = wire.last((e) => e.method === 'GET' && e.path === `/${B}/a`);
    expect(ex.request['x-strata-as-of']).toBe(iso(t1));
    expect(ex.request.authorization).toMatch(/SignedHeaders=[^,]*x-strata-as-of/);
    expect(ex.response['x-strata-as-of']).toBe(iso(t1));
    expect(ex.response['x-amz-version-id']).toBe('null');
    expect(await text(c.send(new GetObjectCommand({ Bucket: B, Key: 'b' })))).toBe('b one');
    expect(await failure(c.send(new GetObjectCommand({ Bucket: B, Key: 'c' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
    expect((await failure(c.send(new HeadObjectCommand({ Bucket: B, Key: 'c' })))).status).toBe(404);
    expect((await c.send(new HeadObjectCommand({ Bucket: B, Key: 'dir/y' }))).ContentLength).toBe('dir/y one'.length);
    const v2 = await c.send(new ListObjectsV2Command({ Bucket: B }));
    expect(v2.Contents?.map((o) => o.Key)).toEqual(['a', 'b', 'dir/sub/z', 'dir/x', 'dir/y']);
    expect(v2.Contents?.[0]?.Size).toBe('a one'.length);
    const nested = await c.send(new ListObjectsV2Command({ Bucket: B, Prefix: 'dir/', Delimiter: '/' }));
    expect(nested.Contents?.map((o) => o.Key)).toEqual(['dir/x', 'dir/y']);
    expect(nested.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['dir/sub/']);
    // Paging, V2 tokens and V1 markers.
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await c.send(new ListObjectsV2Command({ Bucket: B, MaxKeys: 2, ...(token ? { ContinuationToken: token } : {}) }));
      keys.push(...(page.Contents ?? []).map((o) => o.Key!));
      token = page.NextContinuationToken;
    } while (token);
    expect(keys).toEqual(['a', 'b', 'dir/sub/z', 'dir/x', 'dir/y']);
    const v1 = await c.send(new ListObjectsCommand({ Bucket: B, MaxKeys: 2 }));
    expect(v1.Contents?.map((o) => o.Key)).toEqual(['a', 'b']);
    expect(v1.IsTruncated).toBe(true);
    expect(v1.NextMarker).toBe('b');
    const v1b = await c.send(new ListObjectsCommand({ Bucket: B, Marker: v1.NextMarker }));
    expect(v1b.Contents?.map((o) => o.Key)).toEqual(['dir/sub/z', 'dir/x', 'dir/y']);
    // As of t2: versioning on, dir/x behind a delete marker (404 with the marker).
    at = iso(t2);
    const gone = await c.send(new GetObjectCommand({ Bucket: B, Key: 'dir/x' })).catch((e) => e);
    expect(gone.$metadata.httpStatusCode).toBe(404);
    const miss = wire.last((e) => e.method === 'GET' && e.path === `/${B}/dir/x`);
    expect(miss.response['x-amz-delete-marker']).toBe('true');
    expect(miss.response['x-strata-as-of']).toBe(iso(t2));
    expect((await c.send(new ListObjectsV2Command({ Bucket: B }))).Contents?.map((o) => o.Key)).toEqual(['a', 'c', 'dir/sub/z']);
    expect(await text(c.send(new GetObjectCommand({ Bucket: B, Key: 'a' })))).toBe('a two');
    // Without the header: now.
    at = undefined;
    expect(await text(c.send(new GetObjectCommand({ Bucket: B, Key: 'dir/x' })))).toBe('dir/x three');
    const now = wire.last((e) => e.method === 'GET' && e.path === `/${B}/dir/x`);
    expect(now.response['x-strata-as-of']).toBeUndefined();
    c.destroy();
  });

  it('a presigned URL carries the time in its signed query', async () => {
    const c = asOfClient(() => iso(t1), { query: true });
    const url = await getSignedUrl(c, new GetObjectCommand({ Bucket: B, Key: 'a' }), { expiresIn: 300 });
    expect(new URL(url).searchParams.get('x-strata-as-of')).toBe(iso(t1));
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('a one');
    expect(res.headers.get('x-strata-as-of')).toBe(iso(t1));
    // Tampering with the signed time breaks the signature.
    const other = new URL(url);
    other.searchParams.set('x-strata-as-of', iso(t2));
    expect((await fetch(other)).status).toBe(403);
    // Presigned list as of the time.
    const list = await getSignedUrl(c, new ListObjectsV2Command({ Bucket: B, Prefix: 'dir/' }), { expiresIn: 300 });
    const lr = await fetch(list);
    expect(lr.status).toBe(200);
    const body = await lr.text();
    expect([...body.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1])).toEqual(['dir/sub/z', 'dir/x', 'dir/y']);
    // The SDK's own query form (through the client middleware) works the same.
    expect(await text(c.send(new GetObjectCommand({ Bucket: B, Key: 'b' })))).toBe('b one');
    c.destroy();
  });
});

describe('forks as of a time (CreateBucket with x-strata-fork-source: SRC@TIME)', () => {
  it('create the bucket as the source was then, versions and all', async () => {
    const fork = async (bucket: string, value: string) => {
      const cmd = new CreateBucketCommand({ Bucket: bucket });
      cmd.middlewareStack.add(
        (next) => async (args) => {
          (args.request as { headers: Record<string, string> }).headers['x-strata-fork-source'] = value;
          return next(args);
        },
        { step: 'build', name: 'forkHeader' }
      );
      return admin.send(cmd);
    };
    await fork('asof-fork-t1', `${B}@${iso(t1)}`);
    const listed = await admin.send(new ListObjectsV2Command({ Bucket: 'asof-fork-t1' }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual(['a', 'b', 'dir/sub/z', 'dir/x', 'dir/y']);
    expect(await text(admin.send(new GetObjectCommand({ Bucket: 'asof-fork-t1', Key: 'a' })))).toBe('a one');
    // At t2 the source was versioned, dir/x behind a delete marker: the fork has both.
    await fork('asof-fork-t2', `${B}@${new Date(t2).toISOString().replace('Z', '+00:00')}`);
    const versions = await admin.send(new ListObjectVersionsCommand({ Bucket: 'asof-fork-t2', Prefix: 'dir/x' }));
    expect(versions.DeleteMarkers?.map((m) => m.IsLatest)).toEqual([true]);
    expect(versions.Versions?.map((v) => v.VersionId)).toEqual(['null']);
    expect((await failure(admin.send(new GetObjectCommand({ Bucket: 'asof-fork-t2', Key: 'dir/x' })))).status).toBe(404);
    // The source goes on unchanged; times outside its window are refused.
    expect(await text(admin.send(new GetObjectCommand({ Bucket: B, Key: 'dir/x' })))).toBe('dir/x three');
    const early = await failure(fork('asof-fork-early', `${B}@${iso(created - 60_000)}`));
    expect([early.name, early.status]).toEqual(['InvalidArgument', 400]);
    expect(early.message).toMatch(/fork time .* before bucket asof-bucket was created/);
  });
});

describe('refusals', () => {
  it('writes and operations without an as-of form are refused and change nothing', async () => {
    const c = asOfClient(() => iso(t1));
    expect(await failure(c.send(new PutObjectCommand({ Bucket: B, Key: 'a', Body: 'overwrite?' })))).toMatchObject({ name: 'InvalidRequest', status: 400 });
    expect(await failure(c.send(new DeleteObjectCommand({ Bucket: B, Key: 'a' })))).toMatchObject({ name: 'InvalidRequest', status: 400 });
    expect(await failure(c.send(new GetObjectTaggingCommand({ Bucket: B, Key: 'a' })))).toMatchObject({ name: 'InvalidRequest', status: 400 });
    const q = asOfClient(() => iso(t1), { query: true });
    expect(await failure(q.send(new PutObjectCommand({ Bucket: B, Key: 'new', Body: 'x' })))).toMatchObject({ name: 'InvalidRequest', status: 400 });
    expect(await text(admin.send(new GetObjectCommand({ Bucket: B, Key: 'a' })))).toBe('a two');
    expect(await failure(admin.send(new HeadObjectCommand({ Bucket: B, Key: 'new' })))).toMatchObject({ status: 404 });
    for (const x of [c, q]) x.destroy();
  });

  it('bad, far-future, pre-creation and out-of-window times, a version id with a time, disagreeing values: 400', async () => {
    for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00', '1969-12-31T23:59:59Z', 'x'.repeat(5000)]) {
      const c = asOfClient(() => bad);
      const f = await failure(c.send(new GetObjectCommand({ Bucket: B, Key: 'a' })));
      expect(f, bad.slice(0, 40)).toMatchObject({ name: 'InvalidArgument', status: 400 });
      c.destroy();
    }
    const future = asOfClient(() => '9999-12-31T23:59:59Z');
    const ff = await failure(future.send(new GetObjectCommand({ Bucket: B, Key: 'a' })));
    expect(ff).toMatchObject({ name: 'InvalidArgument', status: 400 });
    expect(ff.message).toMatch(/in the future.*history window 30 days/);
    const before = asOfClient(() => iso(created - 60_000));
    const fb = await failure(before.send(new ListObjectsV2Command({ Bucket: B })));
    expect(fb).toMatchObject({ name: 'InvalidArgument', status: 400 });
    expect(fb.message).toMatch(/before bucket asof-bucket was created/);
    const withVersion = await rawGet(`/${B}/a`, { versionId: 'null', 'x-strata-as-of': iso(t1) }, {});
    expect(withVersion.status).toBe(400);
    expect(withVersion.body).toContain('<Code>InvalidArgument</Code>');
    const disagree = await rawGet(`/${B}/a`, { 'x-strata-as-of': iso(t1) }, { 'x-strata-as-of': iso(t2) });
    expect(disagree.status).toBe(400);
    const repeated = await fetch(`${s.url}/${B}/a?x-strata-as-of=${iso(t1)}&X-Strata-As-Of=${iso(t2)}`);
    expect(repeated.status).toBe(403); // anonymous: refused before anything else is looked at
    const agree = await rawGet(`/${B}/a`, { 'X-Strata-As-Of': iso(t1) }, { 'x-strata-as-of': iso(t1) });
    expect(agree.status).toBe(200);
    expect(agree.body).toBe('a one');
    for (const x of [future, before]) x.destroy();
  });

  it('an unsigned header, SigV2 and anonymous requests are refused; a key needs read on all of the bucket', async () => {
    const unsigned = await rawGet(`/${B}/a`, {}, {}, { 'x-strata-as-of': iso(t1) });
    expect(unsigned.status).toBe(400);
    expect(unsigned.body).toMatch(/must be signed/);
    const expires = String(Math.floor(Date.now() / 1000) + 300);
    const sig = createHmac('sha1', SECRET_KEY).update(`GET\n\n\n${expires}\n/${B}/a`).digest('base64');
    const v2 = await fetch(`${s.url}/${B}/a?AWSAccessKeyId=${ACCESS_KEY}&Expires=${expires}&Signature=${encodeURIComponent(sig)}&x-strata-as-of=${iso(t1)}`);
    expect(v2.status).toBe(400);
    expect(await v2.text()).toMatch(/Signature Version 2/);
    const anon = await fetch(`${s.url}/${B}?x-strata-as-of=${iso(t1)}`);
    expect(anon.status).toBe(403);
    // Bob: nothing, then write only (no read: refused), then read.
    const bobAsOf = asOfClient(() => iso(t1), { credentials: BOB });
    const api = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
    expect((await failure(bobAsOf.send(new GetObjectCommand({ Bucket: B, Key: 'a' })))).status).toBe(403);
    await adminRequest(api, 'POST', ['keys', BOB.accessKeyId, 'grant'], { bucket: B, write: true });
    expect((await failure(bobAsOf.send(new ListObjectsV2Command({ Bucket: B })))).status).toBe(403);
    await adminRequest(api, 'POST', ['keys', BOB.accessKeyId, 'grant'], { bucket: B, read: true });
    expect(await text(bobAsOf.send(new GetObjectCommand({ Bucket: B, Key: 'a' })))).toBe('a one');
    expect(await text(bob.send(new GetObjectCommand({ Bucket: B, Key: 'a' })))).toBe('a two');
    bobAsOf.destroy();
  });
});
