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
import { pageBuckets } from '../bucket-page.js';

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

export async function handleCreateBucket(r: RequestContext, e: Op<'CreateBucket'>): Promise<void> {
  parseCreateBucketConfiguration(await readBody(r, MAX_XML_BODY_BYTES));
  // The creating key owns the bucket (recorded in the creating commit).
  try {
    await r.store.createBucket(e.bucket, r.auth!.accessKeyId);
  } catch (err) {
    // Re-creating a bucket you own: S3 in us-east-1 (the region Strata reports unless
    // --region names another) answers 200 and changes nothing; every other region answers
    // 409 BucketAlreadyOwnedByYou. Another owner's bucket is always BucketAlreadyExists.
    if (!(isStoreError(err, 'BucketAlreadyOwnedByYou') && regionOf(r) === 'us-east-1')) throw err;
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
