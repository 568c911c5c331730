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
import { requestedAcl } from '../authz/acl.js';
import { CREATE_BUCKET_HEADERS_NOT_IMPLEMENTED, refuseHeaders } from '../router/subresources.js';
import { ACL_CONFIG, encodeBucketAcl } from '../authz/policy-settings.js';
import { setBucketAcl } from './acl.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** Region reported for buckets: the strict region if configured, else us-east-1. */
const regionOf = (r: RequestContext) => r.deps.region ?? 'us-east-1';

export async function handleListBuckets(r: RequestContext, e: Op<'ListBuckets'>): Promise<void> {
  const key = keyOf(r.deps, r.auth?.accessKeyId ?? null);
  // Only the buckets this key may use (admin: all).
  let buckets = r.store.listBuckets().filter((b) => key !== undefined && keySeesBucket(r.deps, key, b.name));
  if (e.params.prefix) buckets = buckets.filter((b) => b.name.startsWith(e.params.prefix!));
  sendXml(
    r,
    200,
    renderListAllMyBucketsResult({
      owner: ownerOf(r),
      buckets: buckets.map((b) => ({ name: b.name, creationDate: new Date(b.created), region: regionOf(r) })),
      ...(e.params.prefix ? { prefix: e.params.prefix } : {}),
    })
  );
}

export async function handleCreateBucket(r: RequestContext, e: Op<'CreateBucket'>): Promise<void> {
  refuseHeaders(CREATE_BUCKET_HEADERS_NOT_IMPLEMENTED, r.headers);
  const acl = requestedAcl(r.headers);
  parseCreateBucketConfiguration(await readBody(r, MAX_XML_BODY_BYTES));
  // The creating key owns the bucket; it and the ACL are recorded in the creating commit
  // (bucket-owner-* mean private on a bucket).
  const stored = acl === undefined || acl.startsWith('bucket-owner-') ? null : encodeBucketAcl(acl);
  try {
    await r.store.createBucket(e.bucket, r.auth?.accessKeyId ?? undefined, stored ? [[ACL_CONFIG, stored]] : []);
  } catch (err) {
    // Re-creating a bucket you own: S3 in us-east-1 (the region Strata reports unless
    // --region names another) answers 200 and changes nothing; every other region answers
    // 409 BucketAlreadyOwnedByYou. Another owner's bucket is always BucketAlreadyExists.
    if (!(isStoreError(err, 'BucketAlreadyOwnedByYou') && regionOf(r) === 'us-east-1')) throw err;
    // ...except an ACL the request names: applied (S3 resets a re-created bucket's ACL),
    // never ignored, under the bucket's Block Public Access.
    if (acl !== undefined) await setBucketAcl(r, e.bucket, acl);
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
