/**
 * The permission table and the authorization decision, without sockets.
 *
 * Proves properties of the table (not a copy of it): only CORS preflight is public; no
 * operation that changes state is satisfied by `read` (or less); bucket configuration and
 * deletion need `owner`; every read-only operation is satisfied by `read`. Then drives
 * authorizeEndpoint over one sample endpoint of EVERY operation against a real (memory)
 * store and key registry: an admin key may do all; the owner of a bucket may do all on it;
 * a key holding exactly one grant flag may do exactly the operations that need that flag;
 * a key without grants nothing but ListBuckets; anonymous nothing but the preflight; a
 * bucket that does not exist is NoSuchBucket (never AccessDenied) for every key; a request
 * expecting another bucket owner (x-amz-expected-bucket-owner, and its source twin on copies)
 * is refused for every key; and a copy additionally needs read on its source bucket.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../../src/provider/memory/index.js';
import { Store } from '../../../src/store/store.js';
import { KeyRegistry } from '../../../src/store/keys-registry.js';
import { createSealer } from '../../../src/store/keys-seal.js';
import { authorizeEndpoint } from '../../../src/s3/authorize.js';
import { NEEDS, type Need } from '../../../src/s3/authz/permissions.js';
import type { Endpoint, Operation } from '../../../src/s3/router/endpoint.js';
import type { RequestContext, ServerDeps } from '../../../src/s3/context.js';
import { S3Error } from '../../../src/s3/errors.js';

const OPS = Object.keys(NEEDS) as Operation[];
/** Operations that change stored state, by S3's naming (verbs). */
const MUTATES = (op: Operation) => /^(Put|Post|Delete|Create|Upload|Complete|Abort|Copy)/.test(op);

describe('the permission table', () => {
  it('makes only the CORS preflight public', () => {
    expect(OPS.filter((op) => NEEDS[op] === 'public')).toEqual(['CorsPreflight']);
  });

  it('never lets read (or less) change state', () => {
    for (const op of OPS.filter(MUTATES)) expect(['write', 'owner', 'create-bucket', 'admin'], op).toContain(NEEDS[op]);
  });

  /** Bucket configuration: CORS, encryption, ACL, policy, Block Public Access, Object Ownership. */
  const CONFIG = /Cors$|Encryption$|Lifecycle$|^(Get|Put)BucketAcl$|BucketPolicy|PublicAccessBlock$|OwnershipControls$/;

  it('reserves bucket configuration and deletion to owner', () => {
    for (const op of OPS.filter((o) => CONFIG.test(o) || o === 'DeleteBucket')) expect(NEEDS[op], op).toBe('owner');
  });

  it('reserves changing who may read an object (PutObjectAcl) to owner', () => {
    // Regression: with PutObjectAcl at `write`, a write-only key set authenticated-read on
    // objects others wrote and then read them through the ACL.
    expect(NEEDS.PutObjectAcl).toBe('owner');
  });

  it('reserves legal holds and the bucket lock configuration to owner; lets writers set retention', () => {
    // A writer's key (a backup tool's) that could clear a legal hold could then delete what
    // the hold protects; setting or extending a retention only protects more.
    expect(NEEDS.PutObjectLegalHold).toBe('owner');
    expect(NEEDS.PutObjectLockConfiguration).toBe('owner');
    expect(NEEDS.PutObjectRetention).toBe('write');
  });

  it('lets read do every object and listing read', () => {
    for (const op of OPS.filter((o) => /^(Get|Head|List)/.test(o) && !CONFIG.test(o) && o !== 'ListBuckets')) expect(NEEDS[op], op).toBe('read');
  });
});

/** One endpoint of each operation, on bucket `b` (copies read from `src`). */
function sample(op: Operation, b: string, src: string): Endpoint {
  const K = { bucket: b, key: 'k' };
  const U = { ...K, uploadId: 'u' };
  const all: { [O in Operation]: Extract<Endpoint, { op: O }> } = {
    ListBuckets: { op: 'ListBuckets', params: {} },
    CreateBucket: { op: 'CreateBucket', bucket: b },
    DeleteBucket: { op: 'DeleteBucket', bucket: b },
    HeadBucket: { op: 'HeadBucket', bucket: b },
    GetBucketLocation: { op: 'GetBucketLocation', bucket: b },
    GetBucketVersioning: { op: 'GetBucketVersioning', bucket: b },
    PutBucketVersioning: { op: 'PutBucketVersioning', bucket: b },
    ListObjectVersions: { op: 'ListObjectVersions', bucket: b, params: { prefix: '', keyMarker: '', versionIdMarker: '', maxKeys: 1000 } },
    ListObjects: { op: 'ListObjects', bucket: b, params: { prefix: '', marker: '', maxKeys: 1000 } },
    ListObjectsV2: { op: 'ListObjectsV2', bucket: b, params: { prefix: '', maxKeys: 1000, fetchOwner: false } },
    ListMultipartUploads: { op: 'ListMultipartUploads', bucket: b, params: { prefix: '', keyMarker: '', uploadIdMarker: '', maxUploads: 1000 } },
    DeleteObjects: { op: 'DeleteObjects', bucket: b },
    GetBucketCors: { op: 'GetBucketCors', bucket: b },
    PutBucketCors: { op: 'PutBucketCors', bucket: b },
    DeleteBucketCors: { op: 'DeleteBucketCors', bucket: b },
    GetBucketTagging: { op: 'GetBucketTagging', bucket: b },
    PutBucketTagging: { op: 'PutBucketTagging', bucket: b },
    DeleteBucketTagging: { op: 'DeleteBucketTagging', bucket: b },
    GetBucketLifecycle: { op: 'GetBucketLifecycle', bucket: b },
    PutBucketLifecycle: { op: 'PutBucketLifecycle', bucket: b },
    DeleteBucketLifecycle: { op: 'DeleteBucketLifecycle', bucket: b },
    GetBucketEncryption: { op: 'GetBucketEncryption', bucket: b },
    PutBucketEncryption: { op: 'PutBucketEncryption', bucket: b },
    DeleteBucketEncryption: { op: 'DeleteBucketEncryption', bucket: b },
    PutObject: { op: 'PutObject', ...K },
    GetObject: { op: 'GetObject', ...K, overrides: {} },
    HeadObject: { op: 'HeadObject', ...K, overrides: {} },
    DeleteObject: { op: 'DeleteObject', ...K },
    CopyObject: { op: 'CopyObject', ...K, source: { bucket: src, key: 's' } },
    CreateMultipartUpload: { op: 'CreateMultipartUpload', ...K },
    UploadPart: { op: 'UploadPart', ...U, partNumber: 1 },
    UploadPartCopy: { op: 'UploadPartCopy', ...U, partNumber: 1, source: { bucket: src, key: 's' } },
    CompleteMultipartUpload: { op: 'CompleteMultipartUpload', ...U },
    AbortMultipartUpload: { op: 'AbortMultipartUpload', ...U },
    ListParts: { op: 'ListParts', ...U, params: { maxParts: 1000, partNumberMarker: 0 } },
    GetObjectTagging: { op: 'GetObjectTagging', ...K },
    GetObjectAttributes: { op: 'GetObjectAttributes', ...K },
    GetObjectTorrent: { op: 'GetObjectTorrent', ...K },
    PostObject: { op: 'PostObject', bucket: b },
    PutObjectTagging: { op: 'PutObjectTagging', ...K },
    DeleteObjectTagging: { op: 'DeleteObjectTagging', ...K },
    CorsPreflight: { op: 'CorsPreflight', bucket: b },
    GetBucketAcl: { op: 'GetBucketAcl', bucket: b },
    PutBucketAcl: { op: 'PutBucketAcl', bucket: b },
    GetObjectAcl: { op: 'GetObjectAcl', ...K },
    PutObjectAcl: { op: 'PutObjectAcl', ...K },
    GetBucketPolicy: { op: 'GetBucketPolicy', bucket: b },
    PutBucketPolicy: { op: 'PutBucketPolicy', bucket: b },
    DeleteBucketPolicy: { op: 'DeleteBucketPolicy', bucket: b },
    GetBucketPolicyStatus: { op: 'GetBucketPolicyStatus', bucket: b },
    GetPublicAccessBlock: { op: 'GetPublicAccessBlock', bucket: b },
    PutPublicAccessBlock: { op: 'PutPublicAccessBlock', bucket: b },
    DeletePublicAccessBlock: { op: 'DeletePublicAccessBlock', bucket: b },
    GetBucketOwnershipControls: { op: 'GetBucketOwnershipControls', bucket: b },
    PutBucketOwnershipControls: { op: 'PutBucketOwnershipControls', bucket: b },
    DeleteBucketOwnershipControls: { op: 'DeleteBucketOwnershipControls', bucket: b },
    GetObjectLockConfiguration: { op: 'GetObjectLockConfiguration', bucket: b },
    PutObjectLockConfiguration: { op: 'PutObjectLockConfiguration', bucket: b },
    GetObjectRetention: { op: 'GetObjectRetention', ...K },
    PutObjectRetention: { op: 'PutObjectRetention', ...K, versionId: 'v' },
    GetObjectLegalHold: { op: 'GetObjectLegalHold', ...K, versionId: 'v' },
    PutObjectLegalHold: { op: 'PutObjectLegalHold', ...K },
  };
  return all[op];
}

describe('authorizeEndpoint', () => {
  let store: Store;
  let r: RequestContext;
  const B = 'pt-bucket';
  const SRC = 'pt-source';

  beforeAll(async () => {
    store = await Store.open(await createMemoryProvider({}));
    const keys = new KeyRegistry(store, createSealer({ key: Buffer.alloc(32, 9), id: 'unit', source: 'test' }));
    await keys.create({ id: 'AKADMIN', admin: true });
    await keys.create({ id: 'AKOWNER' });
    await keys.create({ id: 'AKNONE', createBucket: false });
    for (const f of ['read', 'write', 'owner'] as const) await keys.create({ id: `AKG${f.toUpperCase()}` });
    await store.createBucket(B, 'AKOWNER');
    await store.createBucket(SRC, 'AKADMIN');
    for (const f of ['read', 'write', 'owner'] as const) {
      await keys.change(`AKG${f.toUpperCase()}`, 'grant', { bucket: B, [f]: true });
      // Copies read their source: every grantee may read SRC except in the copy test below.
      await keys.change(`AKG${f.toUpperCase()}`, 'grant', { bucket: SRC, read: true });
    }
    await keys.change('AKOWNER', 'grant', { bucket: SRC, read: true });
    const deps = { store, keys, secrets: keys } as unknown as ServerDeps;
    // Buckets here have no policy and private ACLs: the key's rights decide alone.
    r = { deps, store, headers: {} } as unknown as RequestContext;
  });

  async function verdict(e: Endpoint, principal: string | null): Promise<string> {
    try {
      await authorizeEndpoint(r, e, principal);
      return 'allow';
    } catch (err) {
      expect(err).toBeInstanceOf(S3Error);
      return (err as S3Error).code;
    }
  }

  const allowedFor = (need: Need, flag: string): boolean =>
    need === 'public' || need === 'service' || need === 'create-bucket' || need === flag;

  it('admin: everything; owner: everything on its bucket', async () => {
    for (const op of OPS) {
      expect(await verdict(sample(op, B, SRC), 'AKADMIN'), op).toBe('allow');
      expect(await verdict(sample(op, B, SRC), 'AKOWNER'), op).toBe('allow');
    }
  });

  for (const flag of ['read', 'write', 'owner']) {
    it(`a ${flag} grant allows exactly the operations needing ${flag}`, async () => {
      for (const op of OPS) {
        const want = allowedFor(NEEDS[op], flag) ? 'allow' : 'AccessDenied';
        expect(await verdict(sample(op, B, SRC), `AKG${flag.toUpperCase()}`), op).toBe(want);
      }
    });
  }

  it('no grant: only ListBuckets and the preflight; no create capability: no CreateBucket', async () => {
    for (const op of OPS) {
      const want = NEEDS[op] === 'public' || NEEDS[op] === 'service' ? 'allow' : 'AccessDenied';
      expect(await verdict(sample(op, B, SRC), 'AKNONE'), op).toBe(want);
    }
  });

  it('anonymous and unknown keys: only the preflight', async () => {
    for (const principal of [null, 'AKUNKNOWN']) {
      for (const op of OPS) expect(await verdict(sample(op, B, SRC), principal), op).toBe(op === 'CorsPreflight' ? 'allow' : 'AccessDenied');
    }
  });

  it('a missing bucket is NoSuchBucket for every key, whatever its grants', async () => {
    for (const principal of ['AKADMIN', 'AKOWNER', 'AKGREAD', 'AKNONE']) {
      for (const op of OPS.filter((o) => ['read', 'write', 'owner'].includes(NEEDS[o]))) {
        expect(await verdict(sample(op, 'pt-missing', SRC), principal), `${principal} ${op}`).toBe('NoSuchBucket');
      }
    }
  });

  it('x-amz-expected-bucket-owner: only the actual owner passes, for every key', async () => {
    const withHeaders = (h: Record<string, string>) => ({ ...r, headers: h }) as unknown as RequestContext;
    const run = async (ctx: RequestContext, e: Endpoint, principal: string) => {
      try {
        await authorizeEndpoint(ctx, e, principal);
        return 'allow';
      } catch (err) {
        return (err as S3Error).code;
      }
    };
    for (const principal of ['AKADMIN', 'AKOWNER', 'AKGREAD']) {
      const get = sample('GetObject', B, SRC);
      expect(await run(withHeaders({ 'x-amz-expected-bucket-owner': 'AKOWNER' }), get, principal), principal).toBe('allow');
      expect(await run(withHeaders({ 'x-amz-expected-bucket-owner': 'AKOWNERx' }), get, principal), principal).toBe('AccessDenied');
      expect(await run(withHeaders({ 'x-amz-expected-bucket-owner': '' }), get, principal), principal).toBe('AccessDenied');
    }
    const copy = sample('CopyObject', B, SRC);
    expect(await run(withHeaders({ 'x-amz-source-expected-bucket-owner': 'AKADMIN' }), copy, 'AKOWNER')).toBe('allow');
    expect(await run(withHeaders({ 'x-amz-source-expected-bucket-owner': 'AKOWNER' }), copy, 'AKOWNER')).toBe('AccessDenied');
  });

  it('copies need read on the source bucket too', async () => {
    await store.changeKey('AKGWRITE', 'revoke', { bucket: SRC, read: true });
    for (const op of ['CopyObject', 'UploadPartCopy'] as const) {
      expect(await verdict(sample(op, B, SRC), 'AKGWRITE'), op).toBe('AccessDenied');
      expect(await verdict(sample(op, B, 'pt-missing'), 'AKGWRITE'), op).toBe('NoSuchBucket');
    }
    await store.changeKey('AKGWRITE', 'grant', { bucket: SRC, read: true });
    for (const op of ['CopyObject', 'UploadPartCopy'] as const) expect(await verdict(sample(op, B, SRC), 'AKGWRITE'), op).toBe('allow');
  });
});
