/**
 * @module Object Lock operations: Put/GetObjectLockConfiguration (the bucket's lock and
 * default retention), Put/GetObjectRetention and Put/GetObjectLegalHold (one version's).
 * Documents: ../xml/object-lock.ts; rules: store/object-lock.ts; who may bypass governance:
 * ../authz/bypass-governance.ts.
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { S3Error } from '../errors.js';
import {
  MAX_XML_BODY_BYTES,
  parseLegalHold,
  parseObjectLockConfiguration,
  parseRetention,
  renderLegalHold,
  renderObjectLockConfiguration,
  renderRetention,
} from '../xml/index.js';
import { mayBypassGovernance } from '../authz/bypass-governance.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

const noLockOnObject = () => new S3Error('NoSuchObjectLockConfiguration');

export async function handleGetObjectLockConfiguration(r: RequestContext, e: Op<'GetObjectLockConfiguration'>): Promise<void> {
  const config = r.store.bucketLockConfig(e.bucket);
  if (!config) throw new S3Error('ObjectLockConfigurationNotFoundError', undefined, { BucketName: e.bucket });
  sendXml(r, 200, renderObjectLockConfiguration(config));
}

/**
 * Sets the bucket's Object Lock configuration: enables lock on a bucket whose versioning is
 * Enabled (409 InvalidBucketState otherwise), and sets or removes its default retention.
 */
export async function handlePutObjectLockConfiguration(r: RequestContext, e: Op<'PutObjectLockConfiguration'>): Promise<void> {
  r.store.headBucket(e.bucket);
  const config = parseObjectLockConfiguration(await readBody(r, MAX_XML_BODY_BYTES));
  await r.store.putBucketLockConfig(e.bucket, config);
  sendEmpty(r, 200);
}

export async function handleGetObjectRetention(r: RequestContext, e: Op<'GetObjectRetention'>): Promise<void> {
  const v = await r.store.lockedVersion(e.bucket, e.key, e.versionId);
  const lock = v.lock;
  if (!lock?.mode || lock.retainUntil === undefined) throw noLockOnObject();
  sendXml(r, 200, renderRetention({ mode: lock.mode, retainUntil: lock.retainUntil }));
}

/**
 * Sets or (with an empty `<Retention/>`) removes one version's retention. Shortening,
 * removing or changing the mode of an active GOVERNANCE retention needs
 * `x-amz-bypass-governance-retention: true` from a key allowed to bypass; an active
 * COMPLIANCE retention only ever moves later (403 AccessDenied otherwise).
 */
export async function handlePutObjectRetention(r: RequestContext, e: Op<'PutObjectRetention'>): Promise<void> {
  r.store.headBucket(e.bucket);
  const retention = parseRetention(await readBody(r, MAX_XML_BODY_BYTES));
  const bypassGovernance = mayBypassGovernance(r, e, e.bucket, e.key, r.auth?.accessKeyId ?? null);
  await r.store.putObjectRetention(e.bucket, e.key, e.versionId, retention, { bypassGovernance });
  sendEmpty(r, 200);
}

export async function handleGetObjectLegalHold(r: RequestContext, e: Op<'GetObjectLegalHold'>): Promise<void> {
  const v = await r.store.lockedVersion(e.bucket, e.key, e.versionId);
  if (v.lock?.legalHold === undefined) throw noLockOnObject();
  sendXml(r, 200, renderLegalHold(v.lock.legalHold));
}

export async function handlePutObjectLegalHold(r: RequestContext, e: Op<'PutObjectLegalHold'>): Promise<void> {
  r.store.headBucket(e.bucket);
  const on = parseLegalHold(await readBody(r, MAX_XML_BODY_BYTES));
  await r.store.putObjectLegalHold(e.bucket, e.key, e.versionId, on);
  sendEmpty(r, 200);
}
