/**
 * POST Object (browser form uploads) against a real server, with forms signed in this test
 * (node:crypto) and sent by fetch; objects read back with the AWS SDK v3.
 *
 * Proves: a SigV4 form stores the file under its `${filename}` key with the form's
 * Content-Type, UTF-8 metadata and XML tagging, and answers 201 with a PostResponse naming
 * it; a SigV2 form works too; success_action_redirect answers 303 to the URL with bucket,
 * key and quoted ETag; a file of several carrier pieces reads back byte for byte;
 * content-length-range is enforced (EntityTooLarge / EntityTooSmall, nothing stored);
 * an expired policy, a wrong signature, an unknown key, a failed condition and an
 * unaccounted field are 403 and store nothing; the request shapes S3 refuses are refused
 * with its codes (not a form 412, no file, no key, oversized fields, a body cut short);
 * fields after the file are ignored; x-amz-checksum-* fields are verified (BadDigest);
 * an anonymous form is authorized as an anonymous PutObject (refused today); and form
 * fields reach the PutObject write path exactly as headers do (same answer for the same
 * header sent either way).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, GetObjectTaggingCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { createS3Client, failure, bytesOf, WireLog } from './support/sdk-v3-client.js';
import { formBody, postForm, sigV2Fields, sigV2ForPolicy, sigV4Fields, type Condition } from './support/post-form.js';
import { rawExchange, requestHead, signV4 } from './wire.js';
import { seeded } from './seeded.js';

const BUCKET = 'post-forms';
let s: TestServer;
let s3: S3Client;
let url: string;

beforeAll(async () => {
  s = await startTestServer();
  s3 = createS3Client(s.url, new WireLog());
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  url = `${s.url}/${BUCKET}`;
});
afterAll(async () => {
  s3?.destroy();
  await s?.stop();
});

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const base: Condition[] = [{ bucket: BUCKET }, ['starts-with', '$key', 'up/']];

async function missing(key: string): Promise<void> {
  expect((await failure(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })))).status).toBe(404);
}

function codeOf(text: string): string | undefined {
  return /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
}

describe('POST Object: signed forms', () => {
  it('a SigV4 form stores the file with its key template, type, metadata and tags; 201 names it', async () => {
    const data = seeded(70_000, 1);
    const fields = {
      key: 'up/${filename}',
      'Content-Type': 'image/png',
      'x-amz-meta-caption': 'Crème brûlée ☕',
      tagging: '<Tagging><TagSet><Tag><Key>kind</Key><Value>photo</Value></Tag></TagSet></Tagging>',
      success_action_status: '201',
      ...sigV4Fields([
        ...base,
        ['starts-with', '$Content-Type', 'image/'],
        ['starts-with', '$x-amz-meta-caption', ''],
        ['starts-with', '$tagging', ''],
        { success_action_status: '201' },
        ['content-length-range', 1, 1_000_000],
      ]),
    };
    const r = await postForm(url, formBody(fields, { filename: 'cat.png', type: 'image/png', data }));
    expect(r.status, r.text).toBe(201);
    expect(r.text).toContain(`<Bucket>${BUCKET}</Bucket>`);
    expect(r.text).toContain('<Key>up/cat.png</Key>');
    expect(r.text).toContain(`<ETag>&quot;${md5(data)}&quot;</ETag>`);
    expect(r.text).toContain(`<Location>${url}/up/cat.png</Location>`);
    expect(r.headers.get('etag')).toBe(`"${md5(data)}"`);
    const g = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'up/cat.png' }));
    expect((await bytesOf(g.Body)).equals(data)).toBe(true);
    expect(g.ContentType).toBe('image/png');
    expect(g.ETag).toBe(`"${md5(data)}"`);
    // Non-ASCII metadata comes back RFC 2047-encoded, as S3 returns it.
    expect(g.Metadata?.caption).toBe(`=?UTF-8?B?${Buffer.from('Crème brûlée ☕').toString('base64')}?=`);
    const t = await s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: 'up/cat.png' }));
    expect(t.TagSet).toEqual([{ Key: 'kind', Value: 'photo' }]);
  });

  it('a SigV2 form works; the default answer is 204 with ETag and Location; the default type', async () => {
    const data = Buffer.from('v2 form body');
    // The file part's own type is not the object's (only a Content-Type field is); empty is none.
    const r = await postForm(url, formBody({ key: 'up/v2.txt', 'Content-Type': '', ...sigV2Fields([...base, ['starts-with', '$Content-Type', '']]) }, { filename: 'x', type: 'image/gif', data }));
    expect(r.status, r.text).toBe(204);
    expect(r.headers.get('etag')).toBe(`"${md5(data)}"`);
    expect(r.headers.get('location')).toBe(`${url}/up/v2.txt`);
    const g = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'up/v2.txt' }));
    expect((await bytesOf(g.Body)).equals(data)).toBe(true);
    expect(g.ContentType).toBe('binary/octet-stream');
  });

  it('success_action_redirect answers 303 with bucket, key and the quoted ETag', async () => {
    const data = Buffer.from('redirected');
    const target = 'https://app.example/done?from=form';
    const fields = { key: 'up/r 1.txt', success_action_redirect: target, ...sigV4Fields([...base, { success_action_redirect: target }]) };
    const r = await postForm(url, formBody(fields, { data }));
    expect(r.status).toBe(303);
    const loc = new URL(r.headers.get('location')!);
    expect(loc.origin + loc.pathname).toBe('https://app.example/done');
    expect(loc.searchParams.get('from')).toBe('form');
    expect(loc.searchParams.get('bucket')).toBe(BUCKET);
    expect(loc.searchParams.get('key')).toBe('up/r 1.txt');
    expect(loc.searchParams.get('etag')).toBe(`"${md5(data)}"`);
  });

  it('a file of several carrier pieces reads back byte for byte', async () => {
    const data = seeded(3 * 1024 * 1024 + 7, 2);
    const r = await postForm(url, formBody({ key: 'up/big.bin', ...sigV4Fields(base) }, { data }));
    expect(r.status, r.text).toBe(204);
    const g = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'up/big.bin' }));
    expect(g.ContentLength).toBe(data.length);
    expect((await bytesOf(g.Body)).equals(data)).toBe(true);
    expect(g.ETag).toBe(`"${md5(data)}"`);
  });

  it('content-length-range: EntityTooLarge and EntityTooSmall, nothing stored', async () => {
    const range: Condition[] = [...base, ['content-length-range', 10, 100_000]];
    const big = await postForm(url, formBody({ key: 'up/too-big', ...sigV4Fields(range) }, { data: seeded(100_001, 3) }));
    expect([big.status, codeOf(big.text)]).toEqual([400, 'EntityTooLarge']);
    const huge = await postForm(url, formBody({ key: 'up/too-big', ...sigV4Fields(range) }, { data: seeded(2 * 1024 * 1024, 3) }));
    expect([huge.status, codeOf(huge.text)]).toEqual([400, 'EntityTooLarge']);
    const small = await postForm(url, formBody({ key: 'up/too-small', ...sigV4Fields(range) }, { data: Buffer.from('123456789') }));
    expect([small.status, codeOf(small.text)]).toEqual([400, 'EntityTooSmall']);
    await missing('up/too-big');
    await missing('up/too-small');
    const exact = await postForm(url, formBody({ key: 'up/exact', ...sigV4Fields(range) }, { data: seeded(100_000, 3) }));
    expect(exact.status).toBe(204);
  });

  it('refuses forms the policy or signature does not allow (403), storing nothing', async () => {
    const data = Buffer.from('x');
    const cases: [string, Record<string, string>, string][] = [
      ['expired', { key: 'up/a', ...sigV4Fields(base, { expiresInSeconds: -10 }) }, 'AccessDenied'],
      ['key outside the prefix', { key: 'other/a', ...sigV4Fields(base) }, 'AccessDenied'],
      ['a field no condition names', { key: 'up/a', 'x-amz-meta-extra': '1', ...sigV4Fields(base) }, 'AccessDenied'],
      ['signed for another bucket', { key: 'up/a', ...sigV4Fields([{ bucket: 'elsewhere' }, ['starts-with', '$key', '']]) }, 'AccessDenied'],
      ['wrong secret', { key: 'up/a', ...sigV4Fields(base, { secret: 'not-the-secret' }) }, 'SignatureDoesNotMatch'],
      ['unknown key', { key: 'up/a', ...sigV4Fields(base, { accessKey: 'AKIDNOBODY' }) }, 'InvalidAccessKeyId'],
    ];
    for (const [what, fields, code] of cases) {
      const r = await postForm(url, formBody(fields, { data }));
      expect([r.status, codeOf(r.text)], what).toEqual([403, code]);
    }
    // A tampered policy (one byte changed after signing).
    const f = sigV4Fields(base);
    const tampered = { key: 'up/a', ...f, policy: Buffer.from(Buffer.from(f.policy!, 'base64').toString().replace('up/', 'u/')).toString('base64') };
    expect(codeOf((await postForm(url, formBody(tampered, { data }))).text)).toBe('SignatureDoesNotMatch');
    await missing('up/a');
    await missing('other/a');
  });

  it('an anonymous form is an anonymous PutObject (refused without a public bucket)', async () => {
    const r = await postForm(url, formBody({ key: 'up/anon' }, { data: Buffer.from('a') }));
    expect([r.status, codeOf(r.text)]).toEqual([403, 'AccessDenied']);
    await missing('up/anon');
  });
});

describe('POST Object: request shapes', () => {
  it('refuses what is not a usable form with S3 codes', async () => {
    const data = Buffer.from('x');
    const notForm = await fetch(url, { method: 'POST', body: 'key=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const t = await notForm.text();
    expect([notForm.status, codeOf(t)]).toEqual([412, 'PreconditionFailed']);
    expect(t).toContain('<Condition>Bucket POST must be of the enclosure-type multipart/form-data</Condition>');
    const noFile = await postForm(url, formBody({ key: 'up/a', ...sigV4Fields(base) }, undefined));
    expect([noFile.status, codeOf(noFile.text)]).toEqual([400, 'IncorrectNumberOfFilesInPostRequest']);
    const noKey = await postForm(url, formBody(sigV4Fields(base), { data }));
    expect([noKey.status, codeOf(noKey.text)]).toEqual([400, 'InvalidArgument']);
    const noSig = sigV4Fields(base);
    delete noSig['x-amz-signature'];
    const unsigned = await postForm(url, formBody({ key: 'up/a', ...noSig }, { data }));
    expect([unsigned.status, codeOf(unsigned.text)]).toEqual([400, 'InvalidArgument']);
    const badPolicy = await postForm(url, formBody({ key: 'up/a', ...sigV2ForPolicy(Buffer.from('{"conditions":[]}').toString('base64')) }, { data }));
    expect([badPolicy.status, codeOf(badPolicy.text)]).toEqual([400, 'InvalidPolicyDocument']);
    const huge = await postForm(url, formBody({ key: 'up/a', 'x-ignore-pad': 'p'.repeat(30_000), ...sigV4Fields(base) }, { data }));
    expect([huge.status, codeOf(huge.text)]).toEqual([400, 'MaxPostPreDataLengthExceeded']);
    const dup = await postForm(url, formBody({ key: 'up/a', KEY: 'up/b', ...sigV4Fields(base) }, { data }));
    expect([dup.status, codeOf(dup.text)]).toEqual([400, 'InvalidArgument']);
    await missing('up/a');
  });

  it('a body cut short inside the file is MalformedPOSTRequest and stores nothing', async () => {
    const form = formBody({ key: 'up/cut', ...sigV4Fields(base) }, { data: seeded(900_000, 4) });
    const head = requestHead({
      method: 'POST',
      target: `/${BUCKET}`,
      headers: { host: `127.0.0.1:${s.port}`, 'content-type': form.contentType, 'content-length': String(form.body.length - 5000) },
    });
    const res = await rawExchange(s.port, [head, form.body.subarray(0, form.body.length - 5000)], { close: 'keep' });
    expect(res?.status).toBe(400);
    expect(codeOf(res!.body.toString())).toBe('MalformedPOSTRequest');
    await missing('up/cut');
  });

  it('ignores fields after the file', async () => {
    const r = await postForm(url, formBody({ key: 'up/late', ...sigV4Fields(base) }, { data: Buffer.from('late') }, { 'x-amz-meta-late': 'no', key: 'up/other' }));
    expect(r.status).toBe(204);
    const h = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'up/late' }));
    expect(h.Metadata).toEqual({});
    await missing('up/other');
  });

  it('verifies x-amz-checksum-* fields (BadDigest when wrong)', async () => {
    const data = seeded(5000, 5);
    const sha = createHash('sha256').update(data).digest('base64');
    const ok = await postForm(url, formBody({ key: 'up/sum', 'x-amz-checksum-sha256': sha, ...sigV4Fields(base) }, { data }));
    expect(ok.status, ok.text).toBe(204);
    const h = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'up/sum', ChecksumMode: 'ENABLED' }));
    expect(h.ChecksumSHA256).toBe(sha);
    const bad = await postForm(url, formBody({ key: 'up/sum2', 'x-amz-checksum-sha256': createHash('sha256').update('other').digest('base64'), ...sigV4Fields(base) }, { data }));
    expect([bad.status, codeOf(bad.text)]).toEqual([400, 'BadDigest']);
    await missing('up/sum2');
  });

  it('form fields meet the PutObject write path exactly as headers do', async () => {
    // Whatever PutObject answers for these headers (stored, ignored or refused fail-closed),
    // a form carrying them as fields gets the same answer.
    const headers: Record<string, string>[] = [
      { 'Cache-Control': 'max-age=60', 'Content-Disposition': 'attachment; filename="a.txt"', Expires: 'Wed, 21 Oct 2037 07:28:00 GMT' },
      { 'x-amz-server-side-encryption': 'AES256' },
      { 'x-amz-server-side-encryption-customer-algorithm': 'AES256' },
      { 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2037-01-01T00:00:00Z' },
      { 'x-amz-storage-class': 'STANDARD' },
      { 'x-amz-website-redirect-location': '/elsewhere' },
    ];
    for (const [i, h] of headers.entries()) {
      // The SDK cannot send arbitrary headers: a raw PUT signed with our signer.
      const req = signV4({
        method: 'PUT',
        path: `/${BUCKET}/same/put-${i}`,
        headers: Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v])),
        body: Buffer.from('x'),
        host: `127.0.0.1:${s.port}`,
        credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
        region: REGION,
      });
      const putRes = await fetch(`${s.url}${req.target}`, { method: 'PUT', headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')), body: new Uint8Array(req.body!) });
      const putText = await putRes.text();
      const conds: Condition[] = [...base, ...Object.keys(h).map((k) => ['starts-with', `$${k}`, ''])];
      const post = await postForm(url, formBody({ key: `up/same-${i}`, ...h, ...sigV4Fields(conds) }, { data: Buffer.from('x') }));
      const putOutcome = putRes.status < 300 ? 'ok' : `${putRes.status} ${codeOf(putText)}`;
      const postOutcome = post.status < 300 ? 'ok' : `${post.status} ${codeOf(post.text)}`;
      expect(postOutcome, JSON.stringify(h)).toBe(putOutcome);
      if (putOutcome === 'ok') {
        const a = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `same/put-${i}` }));
        const b = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `up/same-${i}` }));
        expect([b.CacheControl, b.ContentDisposition, b.ExpiresString, b.WebsiteRedirectLocation, b.ServerSideEncryption]).toEqual([
          a.CacheControl,
          a.ContentDisposition,
          a.ExpiresString,
          a.WebsiteRedirectLocation,
          a.ServerSideEncryption,
        ]);
      }
    }
  });
});

describe('POST Object: encryption fields', () => {
  it('SSE-S3 and SSE-C fields encrypt the object as the PutObject headers do', async () => {
    const data = seeded(1_200_000, 31); // several carrier pieces, each sealed
    const s3f = await postForm(url, formBody({ key: 'up/sse-s3', 'x-amz-server-side-encryption': 'AES256', ...sigV4Fields([...base, { 'x-amz-server-side-encryption': 'AES256' }]) }, { data }));
    expect(s3f.status, s3f.text).toBe(204);
    expect(s3f.headers.get('x-amz-server-side-encryption')).toBe('AES256');
    const g = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'up/sse-s3' }));
    expect(g.ServerSideEncryption).toBe('AES256');
    expect((await bytesOf(g.Body)).equals(data)).toBe(true);

    const key = Buffer.from(seeded(32, 32));
    const keyMd5 = createHash('md5').update(key).digest('base64');
    const sseC = { 'x-amz-server-side-encryption-customer-algorithm': 'AES256', 'x-amz-server-side-encryption-customer-key': key.toString('base64'), 'x-amz-server-side-encryption-customer-key-md5': keyMd5 };
    const conds: Condition[] = [...base, ...Object.keys(sseC).map((k) => ['starts-with', `$${k}`, ''])];
    const cf = await postForm(url, formBody({ key: 'up/sse-c', ...sseC, ...sigV4Fields(conds) }, { data }));
    expect(cf.status, cf.text).toBe(204);
    expect(cf.headers.get('x-amz-server-side-encryption-customer-key-md5')).toBe(keyMd5);
    const noKey = await failure(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'up/sse-c' })));
    expect(noKey.status).toBe(400);
    const withKey = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'up/sse-c', SSECustomerAlgorithm: 'AES256', SSECustomerKey: key.toString('base64'), SSECustomerKeyMD5: keyMd5 }));
    expect((await bytesOf(withKey.Body)).equals(data)).toBe(true);
  });
});

describe('POST Object: virtual-hosted style', () => {
  it('a form posted to <bucket>.<base domain> stores into that bucket and names the object there', async () => {
    const v = await startTestServer({ baseDomain: 's3.strata.test' });
    try {
      const client = createS3Client(v.url, new WireLog());
      await client.send(new CreateBucketCommand({ Bucket: 'vforms' }));
      const form = formBody({ key: 'k/${filename}', success_action_status: '201', ...sigV4Fields([{ bucket: 'vforms' }, ['starts-with', '$key', 'k/'], { success_action_status: '201' }]) }, { filename: 'f.txt', data: Buffer.from('vhost') });
      const hostHeader = `vforms.s3.strata.test:${v.port}`;
      const head = requestHead({ method: 'POST', target: '/', headers: { host: hostHeader, 'content-type': form.contentType, 'content-length': String(form.body.length) } });
      const res = await rawExchange(v.port, [head, form.body], { close: 'keep' });
      expect(res?.status, res?.body.toString()).toBe(201);
      expect(res?.body.toString()).toContain(`<Location>http://${hostHeader}/k/f.txt</Location>`);
      expect((await bytesOf((await client.send(new GetObjectCommand({ Bucket: 'vforms', Key: 'k/f.txt' }))).Body)).toString()).toBe('vhost');
      client.destroy();
    } finally {
      await v.stop();
    }
  });
});
