/**
 * @module Authorization: may this principal perform this endpoint's operation?
 *
 * The one place every S3 request is authorized, after authentication (app.ts) and routing.
 * Two sources decide together:
 * - what the requesting key holds by itself: the permission an operation needs comes from
 *   the table in authz/permissions.ts; whether a key holds it, from authz/grants.ts (admin,
 *   bucket owner, per-bucket grants);
 * - what the bucket says: its policy, its ACLs and its Block Public Access settings
 *   (authz/policy-authorize.ts). An explicit Deny in the policy wins over everything (the
 *   owner and admins may still read, replace and delete the policy); otherwise the key's own
 *   rights, a policy Allow or an ACL allow. Anonymous requests get only what a policy or an
 *   ACL gives everyone.
 *
 * What a refusal reveals matches S3: a bucket that does not exist is `404 NoSuchBucket` for
 * every caller, anonymous ones included (S3 answers so; bucket names are one global
 * namespace, which CreateBucket reveals anyway); an existing bucket the key may not use is
 * `403 AccessDenied` whatever the object key, and a GET/HEAD of a missing key is 404 only to
 * whom may list the bucket. Copy sources (CopyObject, UploadPartCopy) are authorized again
 * as a GetObject of the source, so a key cannot copy out of a bucket it cannot read. A
 * request naming the bucket owner it expects (`x-amz-expected-bucket-owner`, and
 * `x-amz-source-expected-bucket-owner` for a copy's source) is refused unless that key owns
 * the bucket. Handlers that authorize another resource (a POST Object form's signer, each
 * key of a DeleteObjects) call {@link authorizeEndpoint} with the endpoint that describes it.
 * Anonymous GET/HEAD Object may not use the `response-*` overrides (S3: signed requests only).
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import { isS3Error, S3Error } from './errors.js';
import { isBucketNeed, NEEDS } from './authz/permissions.js';
import { bucketOwner, keyAllows, keyOf } from './authz/grants.js';
import { authorizeBucketAccess } from './authz/policy-authorize.js';

/** Who is asking: an access key id, or null for an anonymous request. */
export type Principal = string | null;

/**
 * Resolves when `principal` may perform `e`; throws S3Error `AccessDenied` otherwise, or
 * `NoSuchBucket` when the bucket the operation needs does not exist, or `InvalidRequest`
 * for an anonymous GET/HEAD Object with `response-*` overrides. Reads
 * server state only (keys, bucket owners and settings, and the stored object when a policy
 * condition or an object ACL needs it); changes nothing.
 */
export async function authorizeEndpoint(r: RequestContext, e: Endpoint, principal: Principal, opts: AuthorizeOptions = {}): Promise<void> {
  await authorize(r, e, principal, 'x-amz-expected-bucket-owner', opts.headers ?? r.headers);
  refuseAnonymousOverrides(e, principal);
}

/**
 * S3 serves the `response-*` overrides (Content-Type, Content-Disposition...) only to signed
 * requests: anyone could otherwise link to a public object served as, say, text/html from
 * this server's origin. Checked once access is granted, so a refused client learns nothing
 * more. Throws S3Error `InvalidRequest`.
 */
function refuseAnonymousOverrides(e: Endpoint, principal: Principal): void {
  if (principal !== null || (e.op !== 'GetObject' && e.op !== 'HeadObject')) return;
  if (Object.keys(e.overrides).length > 0) throw new S3Error('InvalidRequest', 'Request specific response headers cannot be used for anonymous GET requests.');
}

export interface AuthorizeOptions {
  /**
   * The x-amz-* values the operation carries when they are not the request's headers (a POST
   * Object form's fields, as headers): its ACL, tags, expected owner, policy condition keys.
   */
  headers?: Readonly<Record<string, string | undefined>>;
}

/**
 * {@link authorizeEndpoint}, where `expectedOwner` names the header that states who must own
 * the bucket (`x-amz-expected-bucket-owner`; for a copy's source
 * `x-amz-source-expected-bucket-owner`): a bucket owned by anyone else is 403, as in S3.
 */
async function authorize(
  r: RequestContext,
  e: Endpoint,
  principal: Principal,
  expectedOwner: string,
  headers: Readonly<Record<string, string | undefined>>
): Promise<void> {
  const need = NEEDS[e.op];
  if (need === 'public') return;
  const key = keyOf(r.deps, principal);
  // A signature verified for a key deleted since: nothing is left to act as.
  if (principal !== null && !key) throw new S3Error('AccessDenied');
  switch (need) {
    case 'service':
      if (key) return;
      throw new S3Error('AccessDenied');
    case 'create-bucket':
      if (key && (key.admin || key.createBucket)) return;
      throw new S3Error('AccessDenied');
    case 'admin':
      if (key?.admin) return;
      throw new S3Error('AccessDenied');
  }
  if (!isBucketNeed(need) || !('bucket' in e) || e.bucket === undefined) throw new S3Error('AccessDenied');
  if (!r.store.repo.state.buckets.has(e.bucket)) throw new S3Error('NoSuchBucket', undefined, { BucketName: e.bucket });
  checkExpectedOwner(r, e.bucket, headers[expectedOwner]);
  const rights = {
    granted: !!key && keyAllows(r.deps, key, need, e.bucket),
    ownerOrAdmin: !!key && (key.admin || bucketOwner(r.deps, e.bucket) === key.id),
  };
  await authorizeBucketAccess(r, e as Extract<Endpoint, { bucket: string }>, principal, rights, headers);
  if (e.op === 'CopyObject' || e.op === 'UploadPartCopy') {
    const source: Endpoint = { op: 'GetObject', bucket: e.source.bucket, key: e.source.key, overrides: {} };
    await authorize(r, source, principal, 'x-amz-source-expected-bucket-owner', headers);
  }
}

/**
 * The keys of a DeleteObjects request that `principal` may NOT delete (each authorized as a
 * DeleteObject of its own). Changes nothing; rethrows anything but AccessDenied.
 */
export async function refusedDeletes(r: RequestContext, bucket: string, keys: readonly string[], principal: Principal): Promise<Set<string>> {
  const refused = new Set<string>();
  for (const key of keys) {
    try {
      await authorizeEndpoint(r, { op: 'DeleteObject', bucket, key }, principal);
    } catch (err) {
      if (!isS3Error(err, 'AccessDenied')) throw err;
      refused.add(key);
    }
  }
  return refused;
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
