/**
 * @module Authorization: may this principal perform this endpoint's operation?
 *
 * The one place every S3 request is authorized, after authentication (app.ts) and routing.
 * The permission an operation needs comes from the table in authz/permissions.ts; whether a
 * key holds it, from authz/grants.ts (admin, bucket owner, per-bucket grants).
 *
 * What a refusal reveals matches S3: a bucket that does not exist is `404 NoSuchBucket` for
 * every authenticated caller (S3 answers so; bucket names are one global namespace, which
 * CreateBucket reveals anyway), an existing bucket the key may not use is `403 AccessDenied`
 * whatever the object key — so nothing about the objects of a bucket a key cannot read
 * leaks, not even whether a key exists. Copy sources (CopyObject, UploadPartCopy) are
 * authorized again as a GetObject of the source, so a key cannot copy out of a bucket it
 * cannot read. A request naming the bucket owner it expects (`x-amz-expected-bucket-owner`,
 * `x-amz-source-expected-bucket-owner`) is refused unless that key owns the bucket. Handlers
 * that authorize another resource (a POST Object form's signer) call
 * {@link authorizeEndpoint} with the endpoint that describes it.
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import { S3Error } from './errors.js';
import { isBucketNeed, NEEDS } from './authz/permissions.js';
import { keyAllows, keyOf } from './authz/grants.js';

/** Who is asking: an access key id, or null for an anonymous request. */
export type Principal = string | null;

/**
 * Resolves when `principal` may perform `e`; throws S3Error `AccessDenied` otherwise, or
 * `NoSuchBucket` when the bucket the operation needs does not exist. Reads server state
 * only (keys, bucket owners); changes nothing.
 */
export async function authorizeEndpoint(r: RequestContext, e: Endpoint, principal: Principal): Promise<void> {
  const need = NEEDS[e.op];
  if (need === 'public') return;
  const key = keyOf(r.deps, principal);
  if (!key) throw new S3Error('AccessDenied');
  switch (need) {
    case 'service':
      return;
    case 'create-bucket':
      if (key.admin || key.createBucket) return;
      throw new S3Error('AccessDenied');
    case 'admin':
      if (key.admin) return;
      throw new S3Error('AccessDenied');
  }
  if (!isBucketNeed(need) || !('bucket' in e) || e.bucket === undefined) throw new S3Error('AccessDenied');
  if (!r.store.repo.state.buckets.has(e.bucket)) throw new S3Error('NoSuchBucket', undefined, { BucketName: e.bucket });
  checkExpectedOwner(r, e.bucket, r.headers['x-amz-expected-bucket-owner']);
  if (!keyAllows(r.deps, key, need, e.bucket)) throw new S3Error('AccessDenied');
  if (e.op === 'CopyObject' || e.op === 'UploadPartCopy') {
    await authorizeEndpoint(r, { op: 'GetObject', bucket: e.source.bucket, key: e.source.key, overrides: {} }, principal);
    checkExpectedOwner(r, e.source.bucket, r.headers['x-amz-source-expected-bucket-owner']);
  }
}

/**
 * `x-amz-expected-bucket-owner` (and `x-amz-source-expected-bucket-owner` for a copy's
 * source): when the client names the owner it expects, a bucket owned by anyone else — or
 * by nobody — is refused with 403 AccessDenied, as S3 does. The owner's id is its access key id.
 */
function checkExpectedOwner(r: RequestContext, bucket: string, expected: string | undefined): void {
  if (expected === undefined) return;
  if (r.store.bucketOwner(bucket) !== expected) throw new S3Error('AccessDenied');
}
