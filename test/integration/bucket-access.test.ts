/**
 * Proof with real clients: anonymous access, canned ACLs, bucket policies and Block Public
 * Access against a real Strata server on 127.0.0.1 with two access keys: `main` (admin, it
 * creates and owns every bucket here) and `alt` (an ordinary key with no grant unless a test
 * gives it one).
 *
 * Clients: the AWS SDK v3 for signed requests (main and alt keys), undici `fetch` and curl
 * for anonymous ones. Every refusal that must leave nothing written is followed by a look
 * at what is stored (object absent, bucket absent, no upload in progress).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteBucketOwnershipControlsCommand,
  GetBucketOwnershipControlsCommand,
  ListPartsCommand,
  PutBucketOwnershipControlsCommand,
  CompleteMultipartUploadCommand,
  DeleteBucketPolicyCommand,
  DeleteObjectsCommand,
  DeletePublicAccessBlockCommand,
  GetBucketAclCommand,
  GetBucketPolicyCommand,
  GetBucketPolicyStatusCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  GetPublicAccessBlockCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutBucketAclCommand,
  PutBucketPolicyCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutPublicAccessBlockCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { removeDataDir } from './harness.js';
import { run } from './support/run-cli.js';
import { bytesOf, createS3Client, failure, WireLog } from './support/sdk-v3-client.js';
import { formBody, postForm } from './support/post-form.js';

const MAIN = { accessKeyId: 'ACMAINACCESSKEY00001', secretAccessKey: 'access-control-main-secret-0000000000001' };
const ALT = { accessKeyId: 'ACALTACCESSKEY000002', secretAccessKey: 'access-control-alt-secret-00000000000002' };

let server: RunningServer;
let dataDir: string;
let main: S3Client;
let alt: S3Client;
const wire = new WireLog();
let counter = 0;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strata-acl-'));
  server = await startServer({ host: '127.0.0.1', port: 0, data: dataDir, log: 'off', credentials: [MAIN, { ...ALT, admin: false }] });
  main = createS3Client(server.url, wire, { credentials: MAIN });
  alt = createS3Client(server.url, wire, { credentials: ALT });
});

afterAll(async () => {
  await server?.close();
  if (dataDir) removeDataDir(dataDir);
});

async function newBucket(prefix: string, acl?: 'public-read' | 'public-read-write' | 'authenticated-read'): Promise<string> {
  const name = `${prefix}-${++counter}`;
  await main.send(new CreateBucketCommand({ Bucket: name, ...(acl ? { ACL: acl } : {}) }));
  return name;
}

/** An anonymous request with undici's fetch. */
const anon = (method: string, path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, { method, ...init });

async function exists(bucket: string, key: string): Promise<boolean> {
  try {
    await main.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw err;
  }
}

async function bucketExists(bucket: string): Promise<boolean> {
  try {
    await main.send(new HeadBucketCommand({ Bucket: bucket }));
    return true;
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw err;
  }
}

const policyOf = (statements: object[]) => JSON.stringify({ Version: '2012-10-17', Statement: statements });

describe('anonymous access through canned ACLs', () => {
  it('fetch and curl GET a public-read object; a private one is 403 for both', async () => {
    const b = await newBucket('anon');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'public.txt', Body: 'hello world', ACL: 'public-read', ContentType: 'text/plain' }));
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'private.txt', Body: 'secret' }));
    const ok = await anon('GET', `/${b}/public.txt`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('hello world');
    expect(ok.headers.get('content-type')).toBe('text/plain');
    const head = await anon('HEAD', `/${b}/public.txt`);
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('11');
    const denied = await anon('GET', `/${b}/private.txt`);
    expect(denied.status).toBe(403);
    expect(await denied.text()).toContain('<Code>AccessDenied</Code>');

    const curlOk = await run('curl', ['-s', '-w', '\n%{http_code}', `${server.url}/${b}/public.txt`], { env: process.env });
    expect(curlOk.stdout).toBe('hello world\n200');
    const curlDenied = await run('curl', ['-s', '-w', '\n%{http_code}', `${server.url}/${b}/private.txt`], { env: process.env });
    expect(curlDenied.stdout).toMatch(/<Code>AccessDenied<\/Code>[\s\S]*\n403$/);
    // Listing needs the bucket's ACL: private bucket -> 403.
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(403);
    // A missing key in a bucket anonymous users cannot list: 403, not 404 (no existence oracle).
    expect((await anon('GET', `/${b}/missing`)).status).toBe(403);
    // Nothing else is anonymous: writes, ACL and policy reads, the service.
    expect((await anon('PUT', `/${b}/public.txt`, { body: 'overwrite' })).status).toBe(403);
    expect((await anon('GET', `/${b}/public.txt?acl`)).status).toBe(403);
    expect((await anon('GET', `/${b}?policy`)).status).toBe(403);
    expect((await anon('GET', '/')).status).toBe(403);
    expect((await anon('PUT', '/anon-made-bucket')).status).toBe(403);
    expect(await bucketExists('anon-made-bucket')).toBe(false);
    expect(await bytesOf((await main.send(new GetObjectCommand({ Bucket: b, Key: 'public.txt' }))).Body)).toEqual(Buffer.from('hello world'));
  });

  it('public-read bucket: anonymous listing works, a missing key is 404; objects stay private unless their ACL says otherwise', async () => {
    const b = await newBucket('anonlist', 'public-read');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'a', Body: 'a' }));
    const list = await anon('GET', `/${b}?list-type=2`);
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('<Key>a</Key>');
    expect((await anon('GET', `/${b}/a`)).status).toBe(403);
    const missing = await anon('GET', `/${b}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('<Code>NoSuchKey</Code>');
    const acl = await main.send(new GetBucketAclCommand({ Bucket: b }));
    expect(acl.Owner?.ID).toBe(MAIN.accessKeyId);
    expect(acl.Grants).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Permission: 'FULL_CONTROL', Grantee: expect.objectContaining({ Type: 'CanonicalUser', ID: MAIN.accessKeyId }) }),
        { Permission: 'READ', Grantee: { Type: 'Group', URI: 'http://acs.amazonaws.com/groups/global/AllUsers' } },
      ])
    );
    expect(acl.Grants).toHaveLength(2);
    expect((await main.send(new GetBucketPolicyStatusCommand({ Bucket: b }))).PolicyStatus?.IsPublic).toBe(true);
  });

  it('public-read-write bucket: anonymous writes land, owned by the bucket owner and private', async () => {
    const b = await newBucket('anonrw', 'public-read-write');
    const put = await anon('PUT', `/${b}/drop.bin`, { body: 'dropped' });
    expect(put.status).toBe(200);
    expect(await bytesOf((await main.send(new GetObjectCommand({ Bucket: b, Key: 'drop.bin' }))).Body)).toEqual(Buffer.from('dropped'));
    expect((await anon('GET', `/${b}/drop.bin`)).status).toBe(403);
    const acl = await main.send(new GetObjectAclCommand({ Bucket: b, Key: 'drop.bin' }));
    expect(acl.Owner?.ID).toBe(MAIN.accessKeyId);
    expect(acl.Grants).toHaveLength(1);
    expect((await anon('DELETE', `/${b}/drop.bin`)).status).toBe(204);
    expect(await exists(b, 'drop.bin')).toBe(false);
  });

  it('x-amz-acl on CopyObject and CreateMultipartUpload; PutObjectAcl and PutBucketAcl by header or by the document Get returned', async () => {
    const b = await newBucket('aclwrites');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'src', Body: 'copy me' }));
    await main.send(new CopyObjectCommand({ Bucket: b, Key: 'copy-public', CopySource: `${b}/src`, ACL: 'public-read' }));
    await main.send(new CopyObjectCommand({ Bucket: b, Key: 'copy-private', CopySource: `${b}/src` }));
    expect(await (await anon('GET', `/${b}/copy-public`)).text()).toBe('copy me');
    expect((await anon('GET', `/${b}/copy-private`)).status).toBe(403);

    const up = await main.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'mp', ACL: 'public-read' }));
    const part = await main.send(new UploadPartCommand({ Bucket: b, Key: 'mp', UploadId: up.UploadId, PartNumber: 1, Body: 'multipart body' }));
    await main.send(new CompleteMultipartUploadCommand({ Bucket: b, Key: 'mp', UploadId: up.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
    expect(await (await anon('GET', `/${b}/mp`)).text()).toBe('multipart body');

    // PutObjectAcl: make src public, then private again with the document GetObjectAcl returns.
    const before = await main.send(new GetObjectAclCommand({ Bucket: b, Key: 'src' }));
    await main.send(new PutObjectAclCommand({ Bucket: b, Key: 'src', ACL: 'public-read' }));
    expect((await anon('GET', `/${b}/src`)).status).toBe(200);
    await main.send(new PutObjectAclCommand({ Bucket: b, Key: 'src', AccessControlPolicy: { Owner: before.Owner, Grants: before.Grants } }));
    expect((await anon('GET', `/${b}/src`)).status).toBe(403);

    // PutBucketAcl with a document adding AllUsers READ = public-read.
    const bacl = await main.send(new GetBucketAclCommand({ Bucket: b }));
    await main.send(
      new PutBucketAclCommand({
        Bucket: b,
        AccessControlPolicy: { Owner: bacl.Owner, Grants: [...(bacl.Grants ?? []), { Grantee: { Type: 'Group', URI: 'http://acs.amazonaws.com/groups/global/AllUsers' }, Permission: 'READ' }] },
      })
    );
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(200);
    // A grant to another user is refused, and the ACL is unchanged.
    const e = await failure(
      main.send(new PutBucketAclCommand({ Bucket: b, AccessControlPolicy: { Owner: bacl.Owner, Grants: [...(bacl.Grants ?? []), { Grantee: { Type: 'CanonicalUser', ID: ALT.accessKeyId }, Permission: 'READ' }] } }))
    );
    expect(e).toMatchObject({ name: 'NotImplemented', status: 501 });
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(200);
  });
});

describe('bucket owner checks and missing buckets', () => {
  it('x-amz-expected-bucket-owner and x-amz-source-expected-bucket-owner: another owner is 403, nothing written', async () => {
    const b = await newBucket('expect', 'public-read-write');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'src', Body: 's', ExpectedBucketOwner: MAIN.accessKeyId }));
    expect(await failure(main.send(new PutObjectCommand({ Bucket: b, Key: 'nope', Body: 'x', ExpectedBucketOwner: ALT.accessKeyId })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await exists(b, 'nope')).toBe(false);
    expect(await failure(main.send(new ListObjectsV2Command({ Bucket: b, ExpectedBucketOwner: 'someone-else' })))).toMatchObject({ status: 403 });
    expect((await anon('GET', `/${b}?list-type=2`, { headers: { 'x-amz-expected-bucket-owner': 'someone-else' } })).status).toBe(403);
    expect((await anon('GET', `/${b}?list-type=2`, { headers: { 'x-amz-expected-bucket-owner': MAIN.accessKeyId } })).status).toBe(200);
    const copy = (owner: string) => main.send(new CopyObjectCommand({ Bucket: b, Key: 'copied', CopySource: `${b}/src`, ExpectedSourceBucketOwner: owner, ExpectedBucketOwner: MAIN.accessKeyId }));
    expect(await failure(copy(ALT.accessKeyId))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await exists(b, 'copied')).toBe(false);
    await copy(MAIN.accessKeyId);
    expect(await exists(b, 'copied')).toBe(true);
  });

  it('a bucket that does not exist (any more) is 404 NoSuchBucket to anonymous requests too, as S3 answers', async () => {
    const b = await newBucket('gone', 'public-read');
    await main.send(new DeleteBucketCommand({ Bucket: b }));
    for (const [method, path] of [['GET', `/${b}/foo`], ['DELETE', `/${b}/foo`], ['GET', `/${b}?list-type=2`]] as const) {
      const res = await anon(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.text()).toContain('<Code>NoSuchBucket</Code>');
    }
  });
});

describe('Object Ownership', () => {
  const openPolicy = (b: string) => policyOf([{ Effect: 'Allow', Principal: '*', Action: ['s3:PutObject', 's3:GetObject*', 's3:PutObjectAcl', 's3:ListBucketMultipartUploads', 's3:ListMultipartUploadParts'], Resource: [`arn:aws:s3:::${b}`, `arn:aws:s3:::${b}/*`] }]);
  const ownerOfObject = async (b: string, k: string) => (await main.send(new GetObjectAclCommand({ Bucket: b, Key: k }))).Owner?.ID;

  it('BucketOwnerEnforced: ACLs disabled (400 to set one, ignored for access), every object the bucket owner\'s', async () => {
    const b = await newBucket('enforced');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'was-public', Body: 'p', ACL: 'public-read' }));
    expect(await failure(main.send(new GetBucketOwnershipControlsCommand({ Bucket: b })))).toMatchObject({ name: 'OwnershipControlsNotFoundError', status: 404 });
    await main.send(new PutBucketOwnershipControlsCommand({ Bucket: b, OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } }));
    expect((await main.send(new GetBucketOwnershipControlsCommand({ Bucket: b }))).OwnershipControls?.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerEnforced' }]);
    // The old public-read ACL grants nothing any more.
    expect((await anon('GET', `/${b}/was-public`)).status).toBe(403);
    await main.send(new PutBucketPolicyCommand({ Bucket: b, Policy: openPolicy(b) }));
    await alt.send(new PutObjectCommand({ Bucket: b, Key: 'from-alt', Body: 'a' }));
    await alt.send(new PutObjectCommand({ Bucket: b, Key: 'from-alt-bocf', Body: 'a', ACL: 'bucket-owner-full-control' }));
    expect(await ownerOfObject(b, 'from-alt')).toBe(MAIN.accessKeyId);
    expect(await ownerOfObject(b, 'from-alt-bocf')).toBe(MAIN.accessKeyId);
    for (const acl of ['private', 'public-read'] as const) {
      expect(await failure(alt.send(new PutObjectCommand({ Bucket: b, Key: `acl-${acl}`, Body: 'x', ACL: acl })))).toMatchObject({ name: 'AccessControlListNotSupported', status: 400 });
      expect(await exists(b, `acl-${acl}`)).toBe(false);
    }
    expect(await failure(main.send(new PutBucketAclCommand({ Bucket: b, ACL: 'private' })))).toMatchObject({ name: 'AccessControlListNotSupported', status: 400 });
    expect(await failure(main.send(new PutObjectAclCommand({ Bucket: b, Key: 'from-alt', ACL: 'private' })))).toMatchObject({ name: 'AccessControlListNotSupported' });
    const up = await alt.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'mp' }));
    expect((await alt.send(new ListPartsCommand({ Bucket: b, Key: 'mp', UploadId: up.UploadId }))).Owner?.ID).toBe(MAIN.accessKeyId);
    // Deleting the controls brings back the writer's ownership model and the old ACLs.
    await main.send(new DeleteBucketOwnershipControlsCommand({ Bucket: b }));
    expect((await anon('GET', `/${b}/was-public`)).status).toBe(200);
  });

  it('BucketOwnerPreferred: bucket-owner-full-control hands the object to the bucket owner; ObjectWriter keeps it the writer\'s', async () => {
    for (const [rule, bocfOwner] of [['BucketOwnerPreferred', MAIN.accessKeyId], ['ObjectWriter', ALT.accessKeyId]] as const) {
      const b = await newBucket('preferred');
      await main.send(new PutBucketOwnershipControlsCommand({ Bucket: b, OwnershipControls: { Rules: [{ ObjectOwnership: rule }] } }));
      await main.send(new PutBucketPolicyCommand({ Bucket: b, Policy: openPolicy(b) }));
      await alt.send(new PutObjectCommand({ Bucket: b, Key: 'plain', Body: 'a' }));
      await alt.send(new PutObjectCommand({ Bucket: b, Key: 'bocf', Body: 'a', ACL: 'bucket-owner-full-control' }));
      await alt.send(new CopyObjectCommand({ Bucket: b, Key: 'copy-bocf', CopySource: `${b}/plain`, ACL: 'bucket-owner-full-control' }));
      expect(await ownerOfObject(b, 'plain'), rule).toBe(ALT.accessKeyId);
      expect(await ownerOfObject(b, 'bocf'), rule).toBe(bocfOwner);
      expect(await ownerOfObject(b, 'copy-bocf'), rule).toBe(bocfOwner);
      const up = await alt.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'mp', ACL: 'bucket-owner-full-control' }));
      expect((await alt.send(new ListPartsCommand({ Bucket: b, Key: 'mp', UploadId: up.UploadId }))).Owner?.ID, rule).toBe(bocfOwner);
      const listed = await main.send(new ListMultipartUploadsCommand({ Bucket: b }));
      expect(listed.Uploads?.[0]?.Owner?.ID, rule).toBe(bocfOwner);
    }
  });

  it('BucketOwnerEnforced needs a private bucket ACL (400 InvalidBucketAclWithObjectOwnership), also at creation', async () => {
    const b = await newBucket('needs-private', 'public-read');
    expect(await failure(main.send(new PutBucketOwnershipControlsCommand({ Bucket: b, OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } })))).toMatchObject({
      name: 'InvalidBucketAclWithObjectOwnership',
      status: 400,
    });
    expect(await failure(main.send(new GetBucketOwnershipControlsCommand({ Bucket: b })))).toMatchObject({ status: 404 });
    expect(await failure(main.send(new CreateBucketCommand({ Bucket: 'enforced-public', ACL: 'public-read', ObjectOwnership: 'BucketOwnerEnforced' })))).toMatchObject({ name: 'InvalidBucketAclWithObjectOwnership' });
    expect(await bucketExists('enforced-public')).toBe(false);
    await main.send(new CreateBucketCommand({ Bucket: 'enforced-new', ObjectOwnership: 'BucketOwnerEnforced' }));
    expect((await main.send(new GetBucketOwnershipControlsCommand({ Bucket: 'enforced-new' }))).OwnershipControls?.Rules?.[0]?.ObjectOwnership).toBe('BucketOwnerEnforced');
  });
});

describe('re-creating a bucket you own (200 in us-east-1)', () => {
  it('applies the ACL the request names instead of ignoring it, under Block Public Access', async () => {
    const b = await newBucket('recreate');
    await main.send(new CreateBucketCommand({ Bucket: b, ACL: 'public-read' }));
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(200);
    // No ACL named: nothing changes.
    await main.send(new CreateBucketCommand({ Bucket: b }));
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(200);
    await main.send(new CreateBucketCommand({ Bucket: b, ACL: 'private' }));
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(403);
    await main.send(new PutPublicAccessBlockCommand({ Bucket: b, PublicAccessBlockConfiguration: { BlockPublicAcls: true } }));
    expect(await failure(main.send(new CreateBucketCommand({ Bucket: b, ACL: 'public-read' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(403);
    // Another key's bucket is never re-created, ACL or not.
    await main.send(new DeletePublicAccessBlockCommand({ Bucket: b }));
    const e = await failure(alt.send(new CreateBucketCommand({ Bucket: b, ACL: 'public-read' })));
    expect(['BucketAlreadyExists', 'AccessDenied']).toContain(e.name);
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(403);
  });
});

describe('bucket policies', () => {
  it('Principal "*" grants everyone read of a prefix; anonymous writes stay refused; Get returns the exact bytes', async () => {
    const b = await newBucket('pol');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'public/x', Body: 'x' }));
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'private/y', Body: 'y' }));
    const text = `{\n  "Version": "2012-10-17",\n  "Statement": [{"Sid":"read","Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":"arn:aws:s3:::${b}/public/*"}]\n}`;
    await main.send(new PutBucketPolicyCommand({ Bucket: b, Policy: text }));
    expect((await main.send(new GetBucketPolicyCommand({ Bucket: b }))).Policy).toBe(text);
    expect(await (await anon('GET', `/${b}/public/x`)).text()).toBe('x');
    expect((await anon('GET', `/${b}/private/y`)).status).toBe(403);
    expect((await anon('PUT', `/${b}/public/new`, { body: 'n' })).status).toBe(403);
    expect(await exists(b, 'public/new')).toBe(false);
    expect((await main.send(new GetBucketPolicyStatusCommand({ Bucket: b }))).PolicyStatus?.IsPublic).toBe(true);
    await main.send(new DeleteBucketPolicyCommand({ Bucket: b }));
    expect(await failure(main.send(new GetBucketPolicyCommand({ Bucket: b })))).toMatchObject({ name: 'NoSuchBucketPolicy', status: 404 });
    expect((await anon('GET', `/${b}/public/x`)).status).toBe(403);
  });

  it('conditions decide: aws:SourceIp, aws:Referer, s3:prefix for anonymous listing', async () => {
    const b = await newBucket('cond');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'k' }));
    await main.send(
      new PutBucketPolicyCommand({
        Bucket: b,
        Policy: policyOf([
          { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${b}/*`, Condition: { IpAddress: { 'aws:SourceIp': '127.0.0.0/8' }, StringLike: { 'aws:Referer': 'https://app.example/*' } } },
          { Effect: 'Allow', Principal: '*', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${b}`, Condition: { StringEquals: { 's3:prefix': 'public/' } } },
        ]),
      })
    );
    expect((await anon('GET', `/${b}/k`, { headers: { referer: 'https://app.example/page' } })).status).toBe(200);
    expect((await anon('GET', `/${b}/k`, { headers: { referer: 'https://evil.example/' } })).status).toBe(403);
    expect((await anon('GET', `/${b}/k`)).status).toBe(403);
    expect((await anon('GET', `/${b}?list-type=2&prefix=public/`)).status).toBe(200);
    expect((await anon('GET', `/${b}?list-type=2`)).status).toBe(403);
    // The listing statement is open to everyone (no network condition): a public policy.
    expect((await main.send(new GetBucketPolicyStatusCommand({ Bucket: b }))).PolicyStatus?.IsPublic).toBe(true);
  });

  it('a policy grants another key what its own grants do not: read a prefix, write an inbox', async () => {
    const b = await newBucket('share');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'shared/x', Body: 'x' }));
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'secret/y', Body: 'y' }));
    expect(await failure(alt.send(new GetObjectCommand({ Bucket: b, Key: 'shared/x' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    await main.send(
      new PutBucketPolicyCommand({
        Bucket: b,
        Policy: policyOf([
          { Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${ALT.accessKeyId}:root` }, Action: 's3:GetObject', Resource: `arn:aws:s3:::${b}/shared/*` },
          { Effect: 'Allow', Principal: { AWS: [ALT.accessKeyId] }, Action: 's3:PutObject', Resource: `arn:aws:s3:::${b}/inbox/*` },
        ]),
      })
    );
    expect(await bytesOf((await alt.send(new GetObjectCommand({ Bucket: b, Key: 'shared/x' }))).Body)).toEqual(Buffer.from('x'));
    expect(await failure(alt.send(new GetObjectCommand({ Bucket: b, Key: 'secret/y' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    // No s3:ListBucket: listing is refused, and a missing key is 403 (not 404).
    expect(await failure(alt.send(new ListObjectsV2Command({ Bucket: b })))).toMatchObject({ name: 'AccessDenied' });
    expect(await failure(alt.send(new GetObjectCommand({ Bucket: b, Key: 'shared/missing' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await failure(alt.send(new PutObjectCommand({ Bucket: b, Key: 'shared/overwrite', Body: 'z' })))).toMatchObject({ name: 'AccessDenied' });
    expect(await exists(b, 'shared/overwrite')).toBe(false);
    await alt.send(new PutObjectCommand({ Bucket: b, Key: 'inbox/report', Body: 'from alt' }));
    // The writer owns what it wrote: it reads it back, and the ACL names it.
    expect(await bytesOf((await alt.send(new GetObjectCommand({ Bucket: b, Key: 'inbox/report' }))).Body)).toEqual(Buffer.from('from alt'));
    const acl = await main.send(new GetObjectAclCommand({ Bucket: b, Key: 'inbox/report' }));
    expect(acl.Owner?.ID).toBe(ALT.accessKeyId);
    // ...and cannot make it public through the policy's PutObject alone (that needs s3:PutObjectAcl).
    expect(await failure(alt.send(new PutObjectCommand({ Bucket: b, Key: 'inbox/public', Body: 'p', ACL: 'public-read' })))).toMatchObject({ name: 'AccessDenied' });
    expect(await exists(b, 'inbox/public')).toBe(false);
  });

  it('an explicit Deny beats a key grant; the owner can still manage the policy', async () => {
    const b = await newBucket('deny');
    await server.store.changeKey(ALT.accessKeyId, 'grant', { bucket: b, read: true });
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'keep/a', Body: 'a' }));
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'tmp/b', Body: 'b' }));
    await main.send(
      new PutBucketPolicyCommand({
        Bucket: b,
        Policy: policyOf([
          { Effect: 'Deny', Principal: { AWS: [ALT.accessKeyId] }, Action: 's3:GetObject', Resource: `arn:aws:s3:::${b}/*` },
          { Effect: 'Deny', Principal: '*', Action: ['s3:DeleteObject', 's3:*Policy'], Resource: [`arn:aws:s3:::${b}/keep/*`, `arn:aws:s3:::${b}`] },
        ]),
      })
    );
    expect(await failure(alt.send(new GetObjectCommand({ Bucket: b, Key: 'keep/a' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await bytesOf((await main.send(new GetObjectCommand({ Bucket: b, Key: 'keep/a' }))).Body)).toEqual(Buffer.from('a'));
    // DeleteObjects authorizes each key: keep/a is refused, tmp/b deleted.
    const del = await main.send(new DeleteObjectsCommand({ Bucket: b, Delete: { Objects: [{ Key: 'keep/a' }, { Key: 'tmp/b' }] } }));
    expect(del.Deleted?.map((d) => d.Key)).toEqual(['tmp/b']);
    expect(del.Errors).toEqual([expect.objectContaining({ Key: 'keep/a', Code: 'AccessDenied' })]);
    expect(await exists(b, 'keep/a')).toBe(true);
    expect(await exists(b, 'tmp/b')).toBe(false);
    // Deny on s3:*Policy does not lock the owner (nor an admin) out of its own policy.
    expect((await main.send(new GetBucketPolicyCommand({ Bucket: b }))).Policy).toContain('Deny');
    await main.send(new DeleteBucketPolicyCommand({ Bucket: b }));
    expect(await bytesOf((await alt.send(new GetObjectCommand({ Bucket: b, Key: 'keep/a' }))).Body)).toEqual(Buffer.from('a'));
  });

  it('malformed, oversized and unsupported policies are 400 MalformedPolicy and change nothing', async () => {
    const b = await newBucket('badpol');
    const good = policyOf([{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${b}/*` }]);
    await main.send(new PutBucketPolicyCommand({ Bucket: b, Policy: good }));
    const bad = [
      '{',
      policyOf([]),
      policyOf([{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::someone-else/*' }]),
      policyOf([{ Effect: 'Allow', NotPrincipal: { AWS: 'x' }, Action: 's3:GetObject', Resource: `arn:aws:s3:::${b}/*` }]),
      policyOf([{ Effect: 'Deny', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${b}/*`, Condition: { StringEquals: { 'aws:SourceVpce': 'vpce-1' } } }]),
      good.slice(0, -1) + ' '.repeat(20 * 1024) + '}',
    ];
    for (const p of bad) expect(await failure(main.send(new PutBucketPolicyCommand({ Bucket: b, Policy: p })))).toMatchObject({ name: 'MalformedPolicy', status: 400 });
    expect((await main.send(new GetBucketPolicyCommand({ Bucket: b }))).Policy).toBe(good);
  });
});

describe('Block Public Access', () => {
  it('BlockPublicAcls refuses public ACLs (object absent afterwards); IgnorePublicAcls makes existing ones count for nothing', async () => {
    const b = await newBucket('bpa-acl');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'was-public', Body: 'p', ACL: 'public-read' }));
    expect(await failure(main.send(new GetPublicAccessBlockCommand({ Bucket: b })))).toMatchObject({ name: 'NoSuchPublicAccessBlockConfiguration', status: 404 });
    await main.send(new PutPublicAccessBlockCommand({ Bucket: b, PublicAccessBlockConfiguration: { BlockPublicAcls: true } }));
    expect((await main.send(new GetPublicAccessBlockCommand({ Bucket: b }))).PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      IgnorePublicAcls: false,
      BlockPublicPolicy: false,
      RestrictPublicBuckets: false,
    });
    expect(await failure(main.send(new PutObjectCommand({ Bucket: b, Key: 'new-public', Body: 'x', ACL: 'public-read' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await exists(b, 'new-public')).toBe(false);
    expect(await failure(main.send(new PutBucketAclCommand({ Bucket: b, ACL: 'public-read' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await failure(main.send(new PutObjectAclCommand({ Bucket: b, Key: 'was-public', ACL: 'authenticated-read' })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'fine', Body: 'x', ACL: 'private' }));
    // Existing ACLs still apply until IgnorePublicAcls.
    expect((await anon('GET', `/${b}/was-public`)).status).toBe(200);
    await main.send(new PutPublicAccessBlockCommand({ Bucket: b, PublicAccessBlockConfiguration: { IgnorePublicAcls: true } }));
    expect((await anon('GET', `/${b}/was-public`)).status).toBe(403);
    expect((await main.send(new GetBucketPolicyStatusCommand({ Bucket: b }))).PolicyStatus?.IsPublic).toBe(false);
    await main.send(new DeletePublicAccessBlockCommand({ Bucket: b }));
    expect((await anon('GET', `/${b}/was-public`)).status).toBe(200);
  });

  it('BlockPublicPolicy refuses a public policy but not one naming keys; RestrictPublicBuckets silences a public one', async () => {
    const b = await newBucket('bpa-pol');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'k', Body: 'k' }));
    const pub = policyOf([{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${b}/*` }]);
    await main.send(new PutPublicAccessBlockCommand({ Bucket: b, PublicAccessBlockConfiguration: { BlockPublicPolicy: true } }));
    expect(await failure(main.send(new PutBucketPolicyCommand({ Bucket: b, Policy: pub })))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(await failure(main.send(new GetBucketPolicyCommand({ Bucket: b })))).toMatchObject({ name: 'NoSuchBucketPolicy' });
    await main.send(new PutBucketPolicyCommand({ Bucket: b, Policy: policyOf([{ Effect: 'Allow', Principal: { AWS: ALT.accessKeyId }, Action: 's3:GetObject', Resource: `arn:aws:s3:::${b}/*` }]) }));
    await main.send(new DeletePublicAccessBlockCommand({ Bucket: b }));
    await main.send(new PutBucketPolicyCommand({ Bucket: b, Policy: pub }));
    expect((await anon('GET', `/${b}/k`)).status).toBe(200);
    await main.send(new PutPublicAccessBlockCommand({ Bucket: b, PublicAccessBlockConfiguration: { RestrictPublicBuckets: true } }));
    expect((await anon('GET', `/${b}/k`)).status).toBe(403);
    expect(await bytesOf((await main.send(new GetObjectCommand({ Bucket: b, Key: 'k' }))).Body)).toEqual(Buffer.from('k'));
  });
});

describe('POST Object (browser forms) under ACLs, policies and Block Public Access', () => {
  it('an anonymous form writes into a public-read-write bucket; its acl field is the object\'s ACL, under BlockPublicAcls and policy conditions', async () => {
    const b = await newBucket('postacl', 'public-read-write');
    const post = (fields: Record<string, string>) => postForm(`${server.url}/${b}`, formBody(fields, { data: Buffer.from(`form ${fields.key}`) }));
    expect((await post({ key: 'open', acl: 'public-read' })).status).toBe(204);
    expect(await (await anon('GET', `/${b}/open`)).text()).toBe('form open');
    expect((await post({ key: 'closed' })).status).toBe(204);
    expect((await anon('GET', `/${b}/closed`)).status).toBe(403);
    // A policy condition on s3:x-amz-acl reads the form's acl field.
    await main.send(
      new PutBucketPolicyCommand({
        Bucket: b,
        Policy: policyOf([{ Effect: 'Deny', Principal: '*', Action: 's3:PutObject', Resource: `arn:aws:s3:::${b}/*`, Condition: { StringEquals: { 's3:x-amz-acl': 'public-read-write' } } }]),
      })
    );
    const denied = await post({ key: 'rw', acl: 'public-read-write' });
    expect(denied.status, denied.text).toBe(403);
    expect(await exists(b, 'rw')).toBe(false);
    // BlockPublicAcls refuses a public acl field, and nothing is written.
    await main.send(new PutPublicAccessBlockCommand({ Bucket: b, PublicAccessBlockConfiguration: { BlockPublicAcls: true } }));
    const blocked = await post({ key: 'blocked', acl: 'public-read' });
    expect(blocked.status, blocked.text).toBe(403);
    expect(await exists(b, 'blocked')).toBe(false);
    expect((await post({ key: 'still-fine', acl: 'private' })).status).toBe(204);
    // Grants to other users in a form are refused like the headers.
    const granted = await post({ key: 'granted', 'x-amz-grant-read': 'id=x' });
    expect(granted.status).toBe(501);
    expect(await exists(b, 'granted')).toBe(false);
  });
});

describe('requests asking for what is not implemented are refused before anything is written', () => {
  const raw = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', method, ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), ...(body !== undefined ? ['--data-binary', body] : []), `${server.url}${path}`], {
      env: process.env,
    });

  it('grant headers on PutObject, CopyObject, CreateMultipartUpload and CreateBucket: 501, nothing stored', async () => {
    const b = await newBucket('grants');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'src', Body: 's' }));
    const grant = { GrantRead: `id=${ALT.accessKeyId}` };
    expect(await failure(main.send(new PutObjectCommand({ Bucket: b, Key: 'g1', Body: 'x', ...grant })))).toMatchObject({ name: 'NotImplemented', status: 501 });
    expect(await failure(main.send(new CopyObjectCommand({ Bucket: b, Key: 'g2', CopySource: `${b}/src`, GrantFullControl: `id=${ALT.accessKeyId}` })))).toMatchObject({ status: 501 });
    expect(await failure(main.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'g3', ...grant })))).toMatchObject({ status: 501 });
    expect(await failure(main.send(new CreateBucketCommand({ Bucket: 'granted-bucket', ...grant })))).toMatchObject({ status: 501 });
    expect(await failure(main.send(new PutObjectCommand({ Bucket: b, Key: 'g4', Body: 'x', ACL: 'aws-exec-read' })))).toMatchObject({ status: 501 });
    for (const k of ['g1', 'g2', 'g4']) expect(await exists(b, k), k).toBe(false);
    expect((await main.send(new ListMultipartUploadsCommand({ Bucket: b }))).Uploads ?? []).toEqual([]);
    expect(await bucketExists('granted-bucket')).toBe(false);
  });

  it('Object Lock headers on a bucket without Object Lock (PutObject, CopyObject, CreateMultipartUpload): 400 InvalidRequest, nothing stored; CreateBucket with Object Lock creates one', async () => {
    const b = await newBucket('lock');
    await main.send(new PutObjectCommand({ Bucket: b, Key: 'src', Body: 's' }));
    const until = new Date(Date.now() + 86_400_000);
    const refused = { name: 'InvalidRequest', status: 400 };
    expect(await failure(main.send(new PutObjectCommand({ Bucket: b, Key: 'l1', Body: 'x', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: until })))).toMatchObject(refused);
    expect(await failure(main.send(new PutObjectCommand({ Bucket: b, Key: 'l2', Body: 'x', ObjectLockLegalHoldStatus: 'ON' })))).toMatchObject(refused);
    expect(await failure(main.send(new CopyObjectCommand({ Bucket: b, Key: 'l3', CopySource: `${b}/src`, ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until })))).toMatchObject(refused);
    expect(await failure(main.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'l4', ObjectLockLegalHoldStatus: 'ON' })))).toMatchObject(refused);
    for (const k of ['l1', 'l2', 'l3']) expect(await exists(b, k), k).toBe(false);
    expect((await main.send(new ListMultipartUploadsCommand({ Bucket: b }))).Uploads ?? []).toEqual([]);
    await main.send(new CreateBucketCommand({ Bucket: 'locked-bucket', ObjectLockEnabledForBucket: true }));
    expect(await bucketExists('locked-bucket')).toBe(true);
    // "false" asks for nothing.
    await main.send(new CreateBucketCommand({ Bucket: 'unlocked-bucket', ObjectLockEnabledForBucket: false }));
    expect(await bucketExists('unlocked-bucket')).toBe(true);
  });

  it('the same refusals for anonymous writers into a public-read-write bucket, and with curl', async () => {
    const b = await newBucket('rawrefuse', 'public-read-write');
    expect((await raw('PUT', `/${b}/c1`, { 'x-amz-grant-read': 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' }, 'x')).stdout).toBe('501');
    expect((await raw('PUT', `/${b}/c2`, { 'x-amz-object-lock-mode': 'GOVERNANCE' }, 'x')).stdout).toBe('400');
    expect((await raw('PUT', `/${b}/c3`, { 'x-amz-acl': 'public-read', 'x-amz-grant-read': 'id=x' }, 'x')).stdout).toBe('400');
    for (const k of ['c1', 'c2', 'c3']) expect(await exists(b, k), k).toBe(false);
    expect((await raw('PUT', '/curl-locked', { 'x-amz-bucket-object-lock-enabled': 'true' })).stdout).toBe('403');
    expect(await bucketExists('curl-locked')).toBe(false);
    // A signed-streaming body cannot be anonymous.
    expect((await raw('PUT', `/${b}/c4`, { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' }, 'x')).stdout).toBe('403');
    expect(await exists(b, 'c4')).toBe(false);
    expect((await main.send(new ListObjectsV2Command({ Bucket: b }))).KeyCount).toBe(0);
  });
});
