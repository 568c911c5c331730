/**
 * The bucket side of authorization without sockets: authorizeEndpoint over a real (memory)
 * store and key registry, with bucket policies, ACLs, Object Ownership and Block Public
 * Access set as the handlers store them. Proves the decision order (Deny, then the key's
 * rights, then a policy Allow, then an ACL), the owner's exemption for the policy itself,
 * the 404-or-403 rule for missing keys, fail-closed conditions on values not known yet, and
 * that a POST form's fields (passed as headers) are what the checks read.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../../src/provider/memory/index.js';
import { Store } from '../../../src/store/store.js';
import { KeyRegistry } from '../../../src/store/keys-registry.js';
import { createSealer } from '../../../src/store/keys-seal.js';
import { authorizeEndpoint, refusedDeletes } from '../../../src/s3/authorize.js';
import type { Endpoint } from '../../../src/s3/router/endpoint.js';
import type { RequestContext, ServerDeps } from '../../../src/s3/context.js';
import { S3Error } from '../../../src/s3/errors.js';
import { ACL_CONFIG, POLICY_CONFIG } from '../../../src/s3/authz/policy-settings.js';
import { encodePublicAccessBlock, NO_PUBLIC_ACCESS_BLOCK, PUBLIC_ACCESS_CONFIG } from '../../../src/s3/authz/public-access.js';
import { encodeOwnership, OWNERSHIP_CONFIG } from '../../../src/s3/authz/acl-ownership.js';

const OWNER = 'AKOWNER';
const READER = 'AKREADER';
const OTHER = 'AKOTHER';
const enc = (s: string) => new TextEncoder().encode(s);

let store: Store;
let deps: ServerDeps;
let n = 0;

beforeAll(async () => {
  store = await Store.open(await createMemoryProvider({}));
  const keys = new KeyRegistry(store, createSealer({ key: Buffer.alloc(32, 7), id: 'unit', source: 'test' }));
  for (const id of [OWNER, READER, OTHER]) await keys.create({ id });
  deps = { store, keys, secrets: keys } as unknown as ServerDeps;
});

/** A fresh bucket owned by OWNER (READER holds a read grant) with `configs` set. */
async function bucket(configs: Record<string, Uint8Array> = {}, objects: Record<string, Record<string, string>> = {}): Promise<string> {
  const name = `pa-${++n}`;
  await store.createBucket(name, OWNER);
  await store.changeKey(READER, 'grant', { bucket: name, read: true });
  for (const [k, v] of Object.entries(configs)) await store.putBucketConfig(name, k, v);
  for (const [key, tags] of Object.entries(objects)) {
    await store.putObject(name, key, (async function* () {})(), { size: 0, tags });
  }
  return name;
}

const policy = (statements: object[]) => enc(JSON.stringify({ Version: '2012-10-17', Statement: statements }));

function request(headers: Record<string, string> = {}, query = ''): RequestContext {
  return {
    deps,
    store,
    headers,
    query: new Map(new URLSearchParams(query)),
    incoming: { socket: { remoteAddress: '192.0.2.7', encrypted: false } },
    auth: undefined,
  } as unknown as RequestContext;
}

async function verdict(e: Endpoint, principal: string | null, r = request(), headers?: Record<string, string>): Promise<string> {
  try {
    await authorizeEndpoint(r, e, principal, headers ? { headers } : {});
    return 'allow';
  } catch (err) {
    expect(err).toBeInstanceOf(S3Error);
    return (err as S3Error).code;
  }
}

const get = (b: string, key: string): Endpoint => ({ op: 'GetObject', bucket: b, key, overrides: {} });
const put = (b: string, key: string): Endpoint => ({ op: 'PutObject', bucket: b, key });

describe('decision order', () => {
  it('Deny beats the key grant; the grant beats nothing; a policy Allow reaches a key without grant', async () => {
    const b = await bucket(
      {
        [POLICY_CONFIG]: policy([
          { Effect: 'Deny', Principal: { AWS: READER }, Action: 's3:GetObject', Resource: `arn:aws:s3:::pa-${n + 1}/secret/*` },
          { Effect: 'Allow', Principal: { AWS: OTHER }, Action: 's3:GetObject', Resource: `arn:aws:s3:::pa-${n + 1}/shared/*` },
        ]),
      },
      { 'secret/a': {}, 'shared/a': {}, 'other/a': {} }
    );
    expect(await verdict(get(b, 'secret/a'), READER)).toBe('AccessDenied');
    expect(await verdict(get(b, 'other/a'), READER)).toBe('allow');
    expect(await verdict(get(b, 'shared/a'), OTHER)).toBe('allow');
    expect(await verdict(get(b, 'other/a'), OTHER)).toBe('AccessDenied');
    expect(await verdict(get(b, 'shared/a'), null)).toBe('AccessDenied');
  });

  it('the owner keeps the policy itself whatever it denies, but not the objects it denies', async () => {
    const deny = policy([{ Effect: 'Deny', Principal: '*', Action: '*', Resource: '*' }]);
    const b = await bucket({ [POLICY_CONFIG]: deny }, { k: {} });
    for (const op of ['GetBucketPolicy', 'PutBucketPolicy', 'DeleteBucketPolicy'] as const) expect(await verdict({ op, bucket: b }, OWNER), op).toBe('allow');
    expect(await verdict(get(b, 'k'), OWNER)).toBe('AccessDenied');
    expect(await verdict({ op: 'GetBucketPolicy', bucket: b }, READER)).toBe('AccessDenied');
    expect(await verdict({ op: 'ListObjectsV2', bucket: b, params: { prefix: '', maxKeys: 10, fetchOwner: false } }, READER)).toBe('AccessDenied');
  });

  it('a stored policy this version cannot read denies everyone but the owner', async () => {
    const b = await bucket({ [POLICY_CONFIG]: enc('{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:Frobnicate","Resource":"*"}]}') }, { k: {} });
    expect(await verdict(get(b, 'k'), READER)).toBe('AccessDenied');
    expect(await verdict(get(b, 'k'), null)).toBe('AccessDenied');
    expect(await verdict(get(b, 'k'), OWNER)).toBe('allow');
  });

  it('public-read ACLs open objects and listings to everyone, until IgnorePublicAcls or BucketOwnerEnforced', async () => {
    const list: Endpoint = { op: 'ListObjects', bucket: '', params: { prefix: '', marker: '', maxKeys: 10 } };
    const b = await bucket({ [ACL_CONFIG]: enc('public-read') }, { k: {} });
    await store.putObjectAcl(b, 'k', 'public-read');
    expect(await verdict({ ...list, bucket: b } as Endpoint, null)).toBe('allow');
    expect(await verdict(get(b, 'k'), null)).toBe('allow');
    expect(await verdict(put(b, 'new'), null)).toBe('AccessDenied');
    await store.putBucketConfig(b, PUBLIC_ACCESS_CONFIG, encodePublicAccessBlock({ ...NO_PUBLIC_ACCESS_BLOCK, ignorePublicAcls: true }));
    expect(await verdict(get(b, 'k'), null)).toBe('AccessDenied');
    await store.putBucketConfig(b, PUBLIC_ACCESS_CONFIG, null);
    await store.putBucketConfig(b, OWNERSHIP_CONFIG, encodeOwnership('BucketOwnerEnforced'));
    expect(await verdict(get(b, 'k'), null)).toBe('AccessDenied');
    expect(await verdict({ ...list, bucket: b } as Endpoint, null)).toBe('AccessDenied');
  });
});

describe('missing keys, unknown values, batches, forms', () => {
  it('GET of a missing key: 404 path (allowed through) for whom may list, 403 for the rest', async () => {
    const b = await bucket({
      [POLICY_CONFIG]: policy([
        { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::pa-${n + 1}/*` },
        { Effect: 'Allow', Principal: { AWS: OTHER }, Action: 's3:ListBucket', Resource: `arn:aws:s3:::pa-${n + 1}`, Condition: { StringLike: { 's3:prefix': 'pub/*' } } },
      ]),
    });
    expect(await verdict(get(b, 'pub/missing'), OTHER)).toBe('allow');
    expect(await verdict(get(b, 'priv/missing'), OTHER)).toBe('AccessDenied');
    expect(await verdict(get(b, 'pub/missing'), null)).toBe('AccessDenied');
    expect(await verdict(get(b, 'missing'), READER)).toBe('allow');
  });

  it('GetObjectAttributes: the 404-or-403 rule of GET, and s3:GetObject as well as s3:GetObjectAttributes', async () => {
    // Regression: a key allowed GetObjectAttributes but not ListBucket learned which keys
    // exist (404 against 403), and a Deny on s3:GetObject left sizes and checksums readable.
    const attrs = (b: string, key: string): Endpoint => ({ op: 'GetObjectAttributes', bucket: b, key });
    const b = await bucket(
      {
        [POLICY_CONFIG]: policy([
          { Effect: 'Allow', Principal: { AWS: OTHER }, Action: ['s3:GetObject', 's3:GetObjectAttributes'], Resource: `arn:aws:s3:::pa-${n + 1}/*` },
          { Effect: 'Allow', Principal: '*', Action: 's3:GetObjectAttributes', Resource: `arn:aws:s3:::pa-${n + 1}/*` },
          { Effect: 'Deny', Principal: { AWS: READER }, Action: 's3:GetObject', Resource: `arn:aws:s3:::pa-${n + 1}/denied` },
        ]),
      },
      { present: {}, denied: {} }
    );
    expect(await verdict(attrs(b, 'present'), OTHER)).toBe('allow');
    expect(await verdict(attrs(b, 'missing'), OTHER)).toBe('AccessDenied');
    expect(await verdict(attrs(b, 'present'), null)).toBe('AccessDenied');
    expect(await verdict(attrs(b, 'denied'), READER)).toBe('AccessDenied');
    expect(await verdict(attrs(b, 'present'), READER)).toBe('allow');
    expect(await verdict(attrs(b, 'missing'), READER)).toBe('allow');
  });

  it('tags a condition cannot know yet (PutObjectTagging bodies): the Deny applies, the Allow does not', async () => {
    const b = await bucket(
      {
        [POLICY_CONFIG]: policy([
          { Effect: 'Allow', Principal: { AWS: OTHER }, Action: 's3:PutObjectTagging', Resource: `arn:aws:s3:::pa-${n + 1}/*`, Condition: { StringEquals: { 's3:RequestObjectTag/class': 'public' } } },
          { Effect: 'Deny', Principal: { AWS: READER }, Action: 's3:GetObject', Resource: `arn:aws:s3:::pa-${n + 1}/*`, Condition: { StringEquals: { 's3:ExistingObjectTag/class': 'secret' } } },
        ]),
      },
      { plain: { class: 'public' }, hidden: { class: 'secret' } }
    );
    expect(await verdict({ op: 'PutObjectTagging', bucket: b, key: 'plain' }, OTHER)).toBe('AccessDenied');
    expect(await verdict(get(b, 'plain'), READER)).toBe('allow');
    expect(await verdict(get(b, 'hidden'), READER)).toBe('AccessDenied');
  });

  it('DeleteObjects: each key on its own; refused as a whole when nothing could allow any', async () => {
    const b = await bucket({ [POLICY_CONFIG]: policy([{ Effect: 'Allow', Principal: { AWS: OTHER }, Action: 's3:DeleteObject', Resource: `arn:aws:s3:::pa-${n + 1}/tmp/*` }]) });
    expect(await verdict({ op: 'DeleteObjects', bucket: b }, OTHER)).toBe('allow');
    expect([...(await refusedDeletes(request(), b, ['tmp/a', 'keep/b'], OTHER))]).toEqual(['keep/b']);
    const closed = await bucket();
    expect(await verdict({ op: 'DeleteObjects', bucket: closed }, OTHER)).toBe('AccessDenied');
    expect(await verdict({ op: 'DeleteObjects', bucket: closed }, null)).toBe('AccessDenied');
  });

  it('a POST form\'s fields, given as headers, are what the ACL, Block Public Access and conditions read', async () => {
    const b = await bucket({
      [POLICY_CONFIG]: policy([
        { Effect: 'Allow', Principal: '*', Action: ['s3:PutObject', 's3:PutObjectAcl'], Resource: `arn:aws:s3:::pa-${n + 1}/*` },
        { Effect: 'Deny', Principal: '*', Action: 's3:PutObject', Resource: `arn:aws:s3:::pa-${n + 1}/*`, Condition: { StringEquals: { 's3:x-amz-acl': 'public-read-write' } } },
      ]),
    });
    const r = request({ 'content-type': 'multipart/form-data; boundary=x' });
    expect(await verdict(put(b, 'a'), null, r, { 'x-amz-acl': 'public-read' })).toBe('allow');
    expect(await verdict(put(b, 'a'), null, r, { 'x-amz-acl': 'public-read-write' })).toBe('AccessDenied');
    await store.putBucketConfig(b, PUBLIC_ACCESS_CONFIG, encodePublicAccessBlock({ ...NO_PUBLIC_ACCESS_BLOCK, blockPublicAcls: true }));
    expect(await verdict(put(b, 'a'), null, r, { 'x-amz-acl': 'public-read' })).toBe('AccessDenied');
    expect(await verdict(put(b, 'a'), null, r, { 'x-amz-acl': 'private' })).toBe('allow');
  });

  it('x-amz-expected-bucket-owner for the bucket, x-amz-source-expected-bucket-owner for a copy source', async () => {
    const src = await bucket({}, { s: {} });
    const dst = await bucket();
    const copy: Endpoint = { op: 'CopyObject', bucket: dst, key: 'c', source: { bucket: src, key: 's' } };
    expect(await verdict(copy, OWNER, request({ 'x-amz-expected-bucket-owner': OWNER, 'x-amz-source-expected-bucket-owner': OWNER }))).toBe('allow');
    expect(await verdict(copy, OWNER, request({ 'x-amz-expected-bucket-owner': OTHER }))).toBe('AccessDenied');
    expect(await verdict(copy, OWNER, request({ 'x-amz-source-expected-bucket-owner': OTHER }))).toBe('AccessDenied');
  });
});
