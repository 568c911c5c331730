/**
 * @module Bucket policy and Block Public Access operations: Get/Put/DeleteBucketPolicy,
 * GetBucketPolicyStatus, Get/Put/DeletePublicAccessBlock.
 *
 * A policy is validated completely before it is stored (policy-parse.ts: anything
 * unsupported is MalformedPolicy) and stored byte for byte: GetBucketPolicy returns exactly
 * what was put. With BlockPublicPolicy on, a public policy is refused with 403.
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendEmpty, sendXml, writeHead } from '../respond.js';
import { readBody } from '../read-body.js';
import { MAX_XML_BODY_BYTES } from '../xml/index.js';
import { S3Error, isS3Error } from '../errors.js';
import { isPublicAcl } from '../authz/acl.js';
import { MAX_POLICY_BYTES, parseBucketPolicy } from '../authz/policy-parse.js';
import { isPolicyPublic } from '../authz/policy-evaluate.js';
import { aclsDisabled, bucketSettings, POLICY_CONFIG, type BucketSettings } from '../authz/policy-settings.js';
import {
  blockedBy,
  encodePublicAccessBlock,
  parsePublicAccessBlock,
  PUBLIC_ACCESS_CONFIG,
  renderPolicyStatus,
  renderPublicAccessBlock,
} from '../authz/public-access.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

function settingsOf(r: RequestContext, bucket: string): BucketSettings {
  const s = bucketSettings(r.store, bucket);
  if (!s) throw new S3Error('NoSuchBucket', undefined, { BucketName: bucket });
  return s;
}

export async function handleGetBucketPolicy(r: RequestContext, e: Op<'GetBucketPolicy'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  if (!s.policy) throw new S3Error('NoSuchBucketPolicy', undefined, { BucketName: e.bucket });
  const body = s.policy.raw;
  writeHead(r, 200, { 'content-type': 'application/json', 'content-length': body.length });
  r.res.end(body);
  r.bytesOut += body.length;
}

export async function handlePutBucketPolicy(r: RequestContext, e: Op<'PutBucketPolicy'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  let body: Uint8Array;
  try {
    body = await readBody(r, MAX_POLICY_BYTES);
  } catch (err) {
    if (isS3Error(err, 'MaxMessageLengthExceeded')) throw new S3Error('MalformedPolicy', `Policies must be smaller than ${MAX_POLICY_BYTES} bytes (20 KB)`);
    throw err;
  }
  const policy = parseBucketPolicy(body, e.bucket);
  if (s.block.blockPublicPolicy && isPolicyPublic(policy)) throw blockedBy('BlockPublicPolicy');
  await r.store.putBucketConfig(e.bucket, POLICY_CONFIG, Uint8Array.from(body));
  sendEmpty(r, 204);
}

export async function handleDeleteBucketPolicy(r: RequestContext, e: Op<'DeleteBucketPolicy'>): Promise<void> {
  settingsOf(r, e.bucket);
  await r.store.putBucketConfig(e.bucket, POLICY_CONFIG, null);
  sendEmpty(r, 204);
}

/** Public: the policy is public, or the bucket's ACL is and public ACLs are neither ignored nor disabled. */
export async function handleGetBucketPolicyStatus(r: RequestContext, e: Op<'GetBucketPolicyStatus'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  const isPublic = !!s.policy?.isPublic || (isPublicAcl(s.acl) && !s.block.ignorePublicAcls && !aclsDisabled(s));
  sendXml(r, 200, renderPolicyStatus(isPublic));
}

export async function handleGetPublicAccessBlock(r: RequestContext, e: Op<'GetPublicAccessBlock'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  if (!s.hasBlock) throw new S3Error('NoSuchPublicAccessBlockConfiguration', undefined, { BucketName: e.bucket });
  sendXml(r, 200, renderPublicAccessBlock(s.block));
}

export async function handlePutPublicAccessBlock(r: RequestContext, e: Op<'PutPublicAccessBlock'>): Promise<void> {
  settingsOf(r, e.bucket);
  const block = parsePublicAccessBlock(await readBody(r, MAX_XML_BODY_BYTES));
  await r.store.putBucketConfig(e.bucket, PUBLIC_ACCESS_CONFIG, encodePublicAccessBlock(block));
  sendEmpty(r, 200);
}

export async function handleDeletePublicAccessBlock(r: RequestContext, e: Op<'DeletePublicAccessBlock'>): Promise<void> {
  settingsOf(r, e.bucket);
  await r.store.putBucketConfig(e.bucket, PUBLIC_ACCESS_CONFIG, null);
  sendEmpty(r, 204);
}
