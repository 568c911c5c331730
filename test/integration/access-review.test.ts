/**
 * Access-control regressions found by review, each reproduced against a real server with
 * real clients (AWS SDK v3, raw fetch for what no SDK sends):
 *
 * - a key granted only `write` set `authenticated-read` on objects other keys wrote
 *   (PutObjectAcl needed write) and then read them through that ACL;
 * - a bucket policy's s3:prefix condition read the LAST `prefix` of a repeated query
 *   parameter while the listing used the FIRST, so `?prefix=secret/&prefix=public/` listed
 *   what the policy allows nobody to list;
 * - a SigV2 presigned URL left sub-resources out of its signature when their names were
 *   escaped (`?%61cl`) or newer than S3's SigV2 list (`?publicAccessBlock`), so a URL
 *   presigned for PutObject set the object's ACL and one for ListObjects read the bucket's
 *   access configuration;
 * - anonymous GETs could override the response headers (`response-content-type=text/html`)
 *   of public objects, which S3 serves to signed requests only;
 * - a deleted key (here: the generated admin key) came back, admin, at the next restart
 *   because the start-up bootstrap re-created it from the credentials file;
 * - POST Object fields kept surrounding whitespace (` public-read` passed a policy denying
 *   s3:x-amz-acl public-read, yet stored public-read) and control characters (a CR/LF in
 *   Content-Disposition was stored, and every GET of the object then failed);
 * - user metadata sent as an RFC 2047 word decoding to CR/LF was returned raw, so every GET
 *   and HEAD of the object failed with 500.
 *
 * Each refused request is also checked for having changed nothing.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateBucketCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  PutBucketPolicyCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ACCESS_KEY, SECRET_KEY, removeDataDir, startTestServer, type TestServer } from './harness.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { adminRequest } from '../../src/admin/client.js';
import { startServer } from '../../src/server/server.js';

const BOB = { accessKeyId: 'ARBOBKEY000000000002', secretAccessKey: 'bob-secret-0123456789-abcdefghijklmnopqr' };
const CAROL = { accessKeyId: 'ARCAROLKEY0000000003', secretAccessKey: 'carol-secret-0123456789-abcdefghijklmno' };

let s: TestServer;
const wire = new WireLog();
let admin: S3Client;
let bob: S3Client;
let carol: S3Client;
const adminApi = () => ({ endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });
const grant = (id: string, change: Record<string, unknown>) => adminRequest(adminApi(), 'POST', ['keys', id, 'grant'], change);

beforeAll(async () => {
  s = await startTestServer({
    config: {
      credentials: [
        { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
        { ...BOB, admin: false },
        { ...CAROL, admin: false },
      ],
    },
  });
  admin = createS3Client(s.url, wire);
  bob = createS3Client(s.url, wire, { credentials: BOB });
  carol = createS3Client(s.url, wire, { credentials: CAROL });
});
afterAll(async () => {
  for (const c of [admin, bob, carol]) c?.destroy();
  await s?.stop();
});

const text = async (p: Promise<{ Body?: unknown }>) => (await bytesOf((await p).Body)).toString();
const aclOf = async (Bucket: string, Key: string) =>
  (await admin.send(new GetObjectAclCommand({ Bucket, Key }))).Grants?.map((g) => `${g.Grantee?.URI ?? g.Grantee?.ID}:${g.Permission}`).sort();

describe('PutObjectAcl is access configuration, not a write', () => {
  const B = 'ar-acl';
  beforeAll(async () => {
    await admin.send(new CreateBucketCommand({ Bucket: B }));
    await admin.send(new PutObjectCommand({ Bucket: B, Key: 'secret', Body: 'admin wrote this' }));
    await grant(BOB.accessKeyId, { bucket: B, write: true });
    await grant(CAROL.accessKeyId, { bucket: B, owner: true });
  });

  it('a write-only key cannot open an object it did not write, to itself or to anyone', async () => {
    const before = await aclOf(B, 'secret');
    for (const ACL of ['authenticated-read', 'public-read'] as const) {
      const e = await failure(bob.send(new PutObjectAclCommand({ Bucket: B, Key: 'secret', ACL })));
      expect([e.name, e.status]).toEqual(['AccessDenied', 403]);
    }
    expect(await aclOf(B, 'secret')).toEqual(before);
    expect((await failure(bob.send(new GetObjectCommand({ Bucket: B, Key: 'secret' })))).name).toBe('AccessDenied');
    expect((await fetch(`${s.url}/${B}/secret`)).status).toBe(403);
  });

  it('the writer of an object, the owner grant and the admin still set its ACL', async () => {
    await bob.send(new PutObjectCommand({ Bucket: B, Key: 'by-bob', Body: 'bob wrote this' }));
    await bob.send(new PutObjectAclCommand({ Bucket: B, Key: 'by-bob', ACL: 'public-read' }));
    expect(await (await fetch(`${s.url}/${B}/by-bob`)).text()).toBe('bob wrote this');
    await carol.send(new PutObjectAclCommand({ Bucket: B, Key: 'secret', ACL: 'authenticated-read' }));
    expect(await text(bob.send(new GetObjectCommand({ Bucket: B, Key: 'secret' })))).toBe('admin wrote this');
    await admin.send(new PutObjectAclCommand({ Bucket: B, Key: 'secret', ACL: 'private' }));
    expect((await failure(bob.send(new GetObjectCommand({ Bucket: B, Key: 'secret' })))).name).toBe('AccessDenied');
  });
});

describe('policy conditions see the query parameter the operation uses', () => {
  const B = 'ar-prefix';
  beforeAll(async () => {
    await admin.send(new CreateBucketCommand({ Bucket: B }));
    for (const Key of ['public/a', 'secret/b']) await admin.send(new PutObjectCommand({ Bucket: B, Key, Body: Key }));
    const statement = { Effect: 'Allow', Principal: '*', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${B}`, Condition: { StringLike: { 's3:prefix': 'public/*' } } };
    await admin.send(new PutBucketPolicyCommand({ Bucket: B, Policy: JSON.stringify({ Version: '2012-10-17', Statement: [statement] }) }));
  });

  const keysOf = (xml: string) => [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);

  it('a repeated prefix is judged by the value the listing uses', async () => {
    const allowed = await fetch(`${s.url}/${B}?prefix=public/`);
    expect(keysOf(await allowed.text())).toEqual(['public/a']);
    for (const q of ['prefix=secret/', 'prefix=secret/&prefix=public/', 'list-type=2&prefix=secret/&prefix=public/', 'prefix=&prefix=public/']) {
      const res = await fetch(`${s.url}/${B}?${q}`);
      expect(res.status, q).toBe(403);
      expect(keysOf(await res.text()), q).toEqual([]);
    }
    const first = await fetch(`${s.url}/${B}?prefix=public/&prefix=secret/`);
    expect(keysOf(await first.text())).toEqual(['public/a']);
  });
});

describe('SigV2 presigned URLs do only what they were signed for', () => {
  const B = 'ar-sigv2';
  const expires = () => String(Math.floor(Date.now() / 1000) + 600);
  /** A SigV2 query signature of the documented string to sign (no Content-MD5, no Content-Type, no x-amz-* headers). */
  const presignV2 = (method: string, resource: string, exp: string) => {
    const sig = createHmac('sha1', SECRET_KEY).update(`${method}\n\n\n${exp}\n${resource}`).digest('base64');
    return `AWSAccessKeyId=${ACCESS_KEY}&Expires=${exp}&Signature=${encodeURIComponent(sig)}`;
  };
  const publicRead = `<AccessControlPolicy><Owner><ID>${ACCESS_KEY}</ID></Owner><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>${ACCESS_KEY}</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>`;

  beforeAll(async () => {
    await admin.send(new CreateBucketCommand({ Bucket: B }));
    await admin.send(new PutObjectCommand({ Bucket: B, Key: 'k', Body: 'private bytes' }));
  });

  it('a URL presigned for PutObject cannot set the ACL, whatever the spelling of ?acl', async () => {
    const exp = expires();
    const auth = presignV2('PUT', `/${B}/k`, exp);
    const before = await aclOf(B, 'k');
    for (const sub of ['acl', '%61cl', '%61%63%6C=', 'acl=']) {
      const res = await fetch(`${s.url}/${B}/k?${sub}&${auth}`, { method: 'PUT', body: new TextEncoder().encode(publicRead) });
      expect([res.status, (await res.text()).match(/<Code>(\w+)<\/Code>/)?.[1]], sub).toEqual([403, 'SignatureDoesNotMatch']);
    }
    expect(await aclOf(B, 'k')).toEqual(before);
    expect((await fetch(`${s.url}/${B}/k`)).status).toBe(403);
    // What it was signed for still works.
    const put = await fetch(`${s.url}/${B}/k?${auth}`, { method: 'PUT', body: new TextEncoder().encode('replaced by the URL') });
    expect(put.status).toBe(200);
    expect(await text(admin.send(new GetObjectCommand({ Bucket: B, Key: 'k' })))).toBe('replaced by the URL');
  });

  it('a URL presigned for ListObjects reads no access configuration', async () => {
    const exp = expires();
    const auth = presignV2('GET', `/${B}`, exp);
    expect((await fetch(`${s.url}/${B}?${auth}`)).status).toBe(200);
    for (const sub of ['publicAccessBlock', 'policyStatus', 'ownershipControls', 'encryption', '%70olicy', '%61cl']) {
      const res = await fetch(`${s.url}/${B}?${sub}&${auth}`);
      expect([res.status, (await res.text()).match(/<Code>(\w+)<\/Code>/)?.[1]], sub).toEqual([403, 'SignatureDoesNotMatch']);
    }
    // Signed for it, the sub-resource is served.
    const status = await fetch(`${s.url}/${B}?policyStatus&${presignV2('GET', `/${B}?policyStatus`, exp)}`);
    expect(status.status).toBe(200);
    expect(await status.text()).toContain('<IsPublic>false</IsPublic>');
  });
});

describe('response header overrides need a signed request', () => {
  const B = 'ar-overrides';
  beforeAll(async () => {
    await admin.send(new CreateBucketCommand({ Bucket: B }));
    await admin.send(new PutObjectCommand({ Bucket: B, Key: 'page', Body: '<script>1</script>', ContentType: 'text/plain', ACL: 'public-read' }));
    await admin.send(new PutObjectCommand({ Bucket: B, Key: 'closed', Body: 'closed' }));
  });

  it('anonymous: 400 InvalidRequest with an override, the stored headers without', async () => {
    for (const method of ['GET', 'HEAD']) {
      for (const q of ['response-content-type=text/html', 'response-content-disposition=inline', 'response-cache-control=no-cache']) {
        const res = await fetch(`${s.url}/${B}/page?${q}`, { method });
        expect(res.status, `${method} ${q}`).toBe(400);
        if (method === 'GET') expect(await res.text()).toContain('<Code>InvalidRequest</Code>');
      }
    }
    const plain = await fetch(`${s.url}/${B}/page`);
    expect([plain.status, plain.headers.get('content-type')]).toEqual([200, 'text/plain']);
    // Where access is refused anyway, the refusal comes first.
    expect((await fetch(`${s.url}/${B}/closed?response-content-type=text/html`)).status).toBe(403);
  });

  it('signed requests (presigned URLs included) keep them', async () => {
    const url = await getSignedUrl(admin, new GetObjectCommand({ Bucket: B, Key: 'page', ResponseContentType: 'text/html' }), { expiresIn: 60 });
    const res = await fetch(url);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/html']);
    const sdk = await admin.send(new GetObjectCommand({ Bucket: B, Key: 'page', ResponseContentDisposition: 'attachment' }));
    expect(sdk.ContentDisposition).toBe('attachment');
  });
});

describe('POST Object fields are read as the headers they stand for', () => {
  const B = 'ar-post';
  /** A multipart/form-data body: `fields` in order, then the file. */
  const form = (fields: [string, string][], file: string) => {
    const boundary = '----strata-review';
    let body = '';
    for (const [k, v] of fields) body += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
    body += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\nContent-Type: text/plain\r\n\r\n${file}\r\n--${boundary}--\r\n`;
    return { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body };
  };
  const codeOf = async (res: Response) => [res.status, (await res.text()).match(/<Code>(\w+)<\/Code>/)?.[1]];

  beforeAll(async () => {
    await admin.send(new CreateBucketCommand({ Bucket: B }));
    const statements = [
      { Effect: 'Allow', Principal: '*', Action: ['s3:PutObject', 's3:PutObjectAcl'], Resource: `arn:aws:s3:::${B}/*` },
      { Effect: 'Deny', Principal: '*', Action: 's3:PutObject', Resource: `arn:aws:s3:::${B}/*`, Condition: { StringEquals: { 's3:x-amz-acl': 'public-read' } } },
    ];
    await admin.send(new PutBucketPolicyCommand({ Bucket: B, Policy: JSON.stringify({ Version: '2012-10-17', Statement: statements }) }));
  });

  it('a Deny on s3:x-amz-acl holds whatever whitespace surrounds the acl field', async () => {
    for (const acl of ['public-read', ' public-read', 'public-read ', '\tpublic-read\t']) {
      const res = await fetch(`${s.url}/${B}`, form([['key', 'opened'], ['acl', acl]], 'should not be stored'));
      expect(await codeOf(res), JSON.stringify(acl)).toEqual([403, 'AccessDenied']);
    }
    expect((await failure(admin.send(new GetObjectCommand({ Bucket: B, Key: 'opened' })))).name).toBe('NoSuchKey');
    const ok = await fetch(`${s.url}/${B}`, form([['key', 'closed'], ['acl', ' private ']], 'stored'));
    expect(ok.status).toBe(204);
    expect(await aclOf(B, 'closed')).toEqual([`${ACCESS_KEY}:FULL_CONTROL`]);
  });

  it('a control character in a field that becomes a header is refused before anything is stored', async () => {
    for (const [name, value] of [
      ['Content-Disposition', 'attachment\r\nx-injected: 1'],
      ['x-amz-meta-note', 'two\nlines'],
    ]) {
      const res = await fetch(`${s.url}/${B}`, form([['key', 'broken'], [name!, value!]], 'should not be stored'));
      expect(await codeOf(res), name).toEqual([400, 'InvalidArgument']);
    }
    expect((await failure(admin.send(new GetObjectCommand({ Bucket: B, Key: 'broken' })))).name).toBe('NoSuchKey');
  });
});

describe('metadata a writer stores never breaks reads of the object', () => {
  it('an encoded word decoding to CR/LF comes back encoded, GET and HEAD answer 200', async () => {
    const B = 'ar-meta';
    await admin.send(new CreateBucketCommand({ Bucket: B }));
    await grant(BOB.accessKeyId, { bucket: B, write: true });
    // A write-only key poisons an object it may overwrite; readers must still read it.
    await bob.send(new PutObjectCommand({ Bucket: B, Key: 'k', Body: 'readable', Metadata: { note: '=?UTF-8?B?YQ0KYg==?=' } }));
    const got = await admin.send(new GetObjectCommand({ Bucket: B, Key: 'k' }));
    expect(got.Metadata).toEqual({ note: '=?UTF-8?B?YQ0KYg==?=' });
    expect(await bytesOf(got.Body)).toEqual(Buffer.from('readable'));
    expect((await admin.send(new HeadObjectCommand({ Bucket: B, Key: 'k' }))).Metadata).toEqual({ note: '=?UTF-8?B?YQ0KYg==?=' });
  });
});

describe('a deleted key stays deleted', () => {
  it('across a restart, even when the credentials file still names it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-ar-'));
    let srv = await startServer({ host: '127.0.0.1', port: 0, data: dir, log: 'off' });
    try {
      const generated = JSON.parse(readFileSync(join(dir, 'strata-credentials.json'), 'utf8')) as { accessKeyId: string; secretAccessKey: string };
      const created = (await adminRequest({ endpoint: srv.url, credentials: generated }, 'POST', ['keys'], { admin: true })) as { key: { id: string }; secretAccessKey: string };
      const successor = { accessKeyId: created.key.id, secretAccessKey: created.secretAccessKey };
      await adminRequest({ endpoint: srv.url, credentials: successor }, 'DELETE', ['keys', generated.accessKeyId]);
      const outcome = async (url: string) => {
        const c = createS3Client(url, wire, { credentials: generated });
        try {
          return await c.send(new ListBucketsCommand({})).then(() => 'ok', (e: Error) => e.name);
        } finally {
          c.destroy();
        }
      };
      expect(await outcome(srv.url)).toBe('InvalidAccessKeyId');
      await srv.close();
      srv = await startServer({ host: '127.0.0.1', port: 0, data: dir, log: 'off' });
      expect(await outcome(srv.url)).toBe('InvalidAccessKeyId');
      const e = await adminRequest({ endpoint: srv.url, credentials: generated }, 'GET', ['keys']).catch((x: { status: number; code: string }) => x);
      expect([(e as { status: number }).status, (e as { code: string }).code]).toEqual([403, 'InvalidAccessKeyId']);
      const keys = (await adminRequest({ endpoint: srv.url, credentials: successor }, 'GET', ['keys'])) as { keys: { id: string }[] };
      expect(keys.keys.map((k) => k.id)).toEqual([successor.accessKeyId]);
    } finally {
      await srv.close();
      removeDataDir(dir);
    }
  });
});
