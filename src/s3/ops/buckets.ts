/**
 * @module Bucket operations: ListBuckets, CreateBucket, DeleteBucket, HeadBucket,
 * GetBucketLocation, and the bucket CORS configuration.
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import {
  MAX_XML_BODY_BYTES,
  parseCorsConfiguration,
  parseCreateBucketConfiguration,
  renderCorsConfiguration,
  renderListAllMyBucketsResult,
  renderLocationConstraint,
  renderVersioningConfiguration,
  type CorsRule,
} from '../xml/index.js';
import { S3Error } from '../errors.js';
import { ownerOf } from '../owner.js';
import { keyOf, keySeesBucket } from '../authz/grants.js';
import { isStoreError } from '../../store/errors.js';
import { requestedAcl, type CannedAcl } from '../authz/acl.js';
import { bucketLockRequested } from '../object-lock-headers.js';
import { lockedBucketConfigs } from '../../store/object-lock-config.js';
import { ACL_CONFIG, encodeBucketAcl } from '../authz/policy-settings.js';
import { setBucketAcl, setOwnership } from './acl.js';
import { encodeOwnership, ownershipHeader, OWNERSHIP_CONFIG, type ObjectOwnership } from '../authz/acl-ownership.js';
import { pageBuckets } from '../bucket-page.js';
import { createBucketAsFork, FORK_SOURCE_HEADER } from './fork.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** Region reported for buckets: the strict region if configured, else us-east-1. */
const regionOf = (r: RequestContext) => r.deps.region ?? 'us-east-1';

export async function handleListBuckets(r: RequestContext, e: Op<'ListBuckets'>): Promise<void> {
  const key = keyOf(r.deps, r.auth?.accessKeyId ?? null);
  // Only the buckets this key may use (admin: all), then paged.
  const visible = r.store.listBuckets().filter((b) => key !== undefined && keySeesBucket(r.deps, key, b.name));
  const page = pageBuckets(visible, e.params, Buffer.from(r.store.repo.config.tokenSecret, 'hex'));
  sendXml(
    r,
    200,
    renderListAllMyBucketsResult({
      owner: ownerOf(r),
      buckets: page.buckets.map((b) => ({ name: b.name, creationDate: new Date(b.created), region: regionOf(r) })),
      ...(page.continuationToken ? { continuationToken: page.continuationToken } : {}),
      ...(e.params.prefix !== undefined ? { prefix: e.params.prefix } : {}),
    })
  );
}

/**
 * Applies what a re-create of one's own bucket asks for, in an order where each step is
 * valid: leaving BucketOwnerEnforced before setting an ACL; making the ACL private (the only
 * kind it may be, checked before) before enforcing.
 */
async function reapply(r: RequestContext, bucket: string, acl: CannedAcl | undefined, ownership: ObjectOwnership | undefined): Promise<void> {
  if (ownership === 'BucketOwnerEnforced') {
    if (acl !== undefined) await r.store.putBucketConfig(bucket, ACL_CONFIG, null);
    await setOwnership(r, bucket, ownership);
    return;
  }
  if (ownership !== undefined) await setOwnership(r, bucket, ownership);
  if (acl !== undefined) await setBucketAcl(r, bucket, acl);
}

export async function handleCreateBucket(r: RequestContext, e: Op<'CreateBucket'>): Promise<void> {
  // Object Lock: the bucket starts with versioning Enabled and lock enabled (no default).
  const locked = bucketLockRequested(r.headers);
  const acl = requestedAcl(r.headers);
  const ownership = ownershipHeader(r.headers);
  // ACLs disabled from the start: only ACLs that say nothing more are accepted (as S3).
  if (ownership === 'BucketOwnerEnforced' && acl !== undefined && acl !== 'private' && acl !== 'bucket-owner-full-control') {
    throw new S3Error('InvalidBucketAclWithObjectOwnership');
  }
  parseCreateBucketConfiguration(await readBody(r, MAX_XML_BODY_BYTES));
  const forkSource = r.headers[FORK_SOURCE_HEADER];
  if (forkSource !== undefined) {
    await createBucketAsFork(r, e.bucket, forkSource, { ...(acl ? { acl } : {}), ...(ownership ? { ownership } : {}), lock: locked });
    sendEmpty(r, 200, { location: `/${e.bucket}` });
    return;
  }
  // The creating key owns the bucket; it, the ACL and the Object Ownership are recorded in
  // the creating commit (bucket-owner-* mean private on a bucket).
  const stored = acl === undefined || acl.startsWith('bucket-owner-') ? null : encodeBucketAcl(acl);
  const configs: [string, Uint8Array][] = [];
  if (stored) configs.push([ACL_CONFIG, stored]);
  if (ownership) configs.push([OWNERSHIP_CONFIG, encodeOwnership(ownership)]);
  if (locked) configs.push(...lockedBucketConfigs());
  try {
    await r.store.createBucket(e.bucket, r.auth?.accessKeyId ?? undefined, configs);
  } catch (err) {
    // Re-creating a bucket you own: S3 in us-east-1 (the region Strata reports unless
    // --region names another) answers 200 and changes nothing; every other region answers
    // 409 BucketAlreadyOwnedByYou. Another owner's bucket is always BucketAlreadyExists.
    if (!(isStoreError(err, 'BucketAlreadyOwnedByYou') && regionOf(r) === 'us-east-1')) throw err;
    // ...but never a 200 that would let the client believe an unlocked bucket is locked.
    if (locked && !r.store.bucketLockConfig(e.bucket)) throw err;
    // ...except an ACL (S3 resets a re-created bucket's ACL) or an Object Ownership the
    // request names: applied, never ignored (under the bucket's Block Public Access).
    await reapply(r, e.bucket, acl, ownership);
  }
  sendEmpty(r, 200, { location: `/${e.bucket}` });
}

export async function handleDeleteBucket(r: RequestContext, e: Op<'DeleteBucket'>): Promise<void> {
  await r.store.deleteBucket(e.bucket);
  sendEmpty(r, 204);
}

export async function handleHeadBucket(r: RequestContext, e: Op<'HeadBucket'>): Promise<void> {
  r.store.headBucket(e.bucket);
  sendEmpty(r, 200, { 'x-amz-bucket-region': regionOf(r) });
}

export async function handleGetBucketLocation(r: RequestContext, e: Op<'GetBucketLocation'>): Promise<void> {
  r.store.headBucket(e.bucket);
  sendXml(r, 200, renderLocationConstraint(r.deps.region));
}

/**
 * GetBucketVersioning: Strata buckets have never had versioning enabled, which S3 reports
 * as an empty configuration (no Status element). Clients (rclone, the aws CLI) read it
 * before deciding how to delete; PutBucketVersioning stays 501.
 */
export async function handleGetBucketVersioning(r: RequestContext, e: Op<'GetBucketVersioning'>): Promise<void> {
  r.store.headBucket(e.bucket);
  sendXml(r, 200, renderVersioningConfiguration());
}

/** The bucket's CORS rules, or undefined when none are configured. */
export function corsRules(r: RequestContext, bucket: string): CorsRule[] | undefined {
  const raw = r.store.getBucketConfig(bucket, 'cors');
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as CorsRule[]) : undefined;
}

export async function handleGetBucketCors(r: RequestContext, e: Op<'GetBucketCors'>): Promise<void> {
  const rules = corsRules(r, e.bucket);
  if (!rules) throw new S3Error('NoSuchCORSConfiguration', undefined, { BucketName: e.bucket });
  sendXml(r, 200, renderCorsConfiguration(rules));
}

export async function handlePutBucketCors(r: RequestContext, e: Op<'PutBucketCors'>): Promise<void> {
  const { rules } = parseCorsConfiguration(await readBody(r, MAX_XML_BODY_BYTES));
  await r.store.putBucketConfig(e.bucket, 'cors', Buffer.from(JSON.stringify(rules)));
  sendEmpty(r, 200);
}

export async function handleDeleteBucketCors(r: RequestContext, e: Op<'DeleteBucketCors'>): Promise<void> {
  await r.store.putBucketConfig(e.bucket, 'cors', null);
  sendEmpty(r, 204);
}
