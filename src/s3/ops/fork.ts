/**
 * @module CreateBucket with `x-strata-fork-source: SRC` (or `SRC@<RFC 3339 time>`): the new
 * bucket starts as an O(1) fork of SRC (store/fork.ts says what it takes: every object and
 * every setting but the owner and the bucket policy; no upload in progress).
 *
 * What the request must satisfy, in this order:
 *   1. the header is covered by a SigV4 signature (SignedHeaders), as every header that
 *      changes what a request does should be: a proxy cannot add it to a plain CreateBucket;
 *      SigV2 cannot sign it (400 InvalidRequest);
 *   2. its value is `SRC` or `SRC@TIME`: a valid bucket name, an RFC 3339 time with an offset
 *      (400 InvalidArgument otherwise);
 *   3. the key may create buckets (authorize.ts, as any CreateBucket) and may READ ALL of SRC
 *      by itself: admin, SRC's owner, or a `read` grant on SRC. A policy Allow or an ACL is
 *      not enough — they may open only part of a bucket, and a fork hands over all of it — and
 *      while SRC has a bucket policy only its owner and admins may fork it (its Deny
 *      statements may fence off parts a fork cannot honour). SRC missing: 404 NoSuchBucket;
 *      refused: 403 AccessDenied. A ListObjectsV2 of SRC must pass authorization too.
 *   4. the new bucket does not exist (409 BucketAlreadyOwnedByYou, even in us-east-1: a fork
 *      asks for content, so a no-op 200 would lie; BucketAlreadyExists when another key owns
 *      it), and is not SRC (400 InvalidRequest);
 *   5. a time: inside SRC's history window — not before SRC existed, not older than its
 *      window, not in the future (400 InvalidArgument); the fork is SRC as it was then
 *      (store/fork-at-time.ts: O(versions up to then), not O(1)).
 * The caller owns the fork, as with any CreateBucket; the ACL, Object Ownership and Object Lock
 * the request names apply over the copied settings (a locked source's fork is locked anyway).
 */
import type { RequestContext } from '../context.js';
import { S3Error } from '../errors.js';
import { authorizeEndpoint } from '../authorize.js';
import { keyAllows, keyOf, bucketOwner } from '../authz/grants.js';
import { ACL_CONFIG, bucketSettings, encodeBucketAcl, POLICY_CONFIG } from '../authz/policy-settings.js';
import { aclNotSupported, encodeOwnership, OWNERSHIP_CONFIG, type ObjectOwnership } from '../authz/acl-ownership.js';
import { isPublicAcl, type CannedAcl } from '../authz/acl.js';
import { blockedBy } from '../authz/public-access.js';
import { lockedBucketConfigs, OBJECT_LOCK_CONFIG } from '../../store/object-lock-config.js';
import { checkBucketName } from '../../store/validate.js';
import { parseForkTime } from '../../store/fork-at.js';
import { isStoreError } from '../../store/errors.js';
import type { ForkResult } from '../../store/fork.js';

/** The request header naming a CreateBucket's fork source. */
export const FORK_SOURCE_HEADER = 'x-strata-fork-source';

/** Longest header value looked at: a bucket name (63) + '@' + a 40-character time, with room. */
const MAX_FORK_SOURCE_CHARS = 128;

export interface ForkSource {
  bucket: string;
  /** ms since the epoch, for `SRC@TIME`. */
  at?: number;
}

const badValue = (value: string, why: string) =>
  new S3Error('InvalidArgument', `${FORK_SOURCE_HEADER} must be SOURCE-BUCKET or SOURCE-BUCKET@<RFC 3339 time>: ${why}`, {
    ArgumentName: FORK_SOURCE_HEADER,
    ArgumentValue: value.slice(0, MAX_FORK_SOURCE_CHARS),
  });

/**
 * Parses an `x-strata-fork-source` value. Pure. Throws S3Error 'InvalidArgument' for an
 * empty, oversized or malformed value (bad bucket name, bad or missing time after '@').
 * Bucket names never hold '@', so the first '@' starts the time.
 */
export function parseForkSource(value: string): ForkSource {
  if (value.length === 0) throw badValue(value, 'it is empty');
  if (value.length > MAX_FORK_SOURCE_CHARS) throw badValue(value, 'it is too long');
  const at = value.indexOf('@');
  const bucket = at < 0 ? value : value.slice(0, at);
  try {
    checkBucketName(bucket);
  } catch {
    throw badValue(value, `${JSON.stringify(bucket.slice(0, 64))} is not a bucket name`);
  }
  if (at < 0) return { bucket };
  try {
    return { bucket, at: parseForkTime(value.slice(at + 1)) };
  } catch (err) {
    if (isStoreError(err, 'InvalidArgument')) throw badValue(value, err.message);
    throw err;
  }
}

/** Throws S3Error 'InvalidRequest' unless the request's SigV4 signature covers the fork header. */
function requireSigned(r: RequestContext): void {
  const auth = r.auth;
  if (auth?.accessKeyId && auth.signatureVersion === 4 && auth.signedHeaders?.includes(FORK_SOURCE_HEADER)) return;
  throw new S3Error('InvalidRequest', `${FORK_SOURCE_HEADER} must be signed: sign the request with SigV4 and list the header in SignedHeaders`);
}

/**
 * Resolves when the requesting key may fork `source` (rule 3 of the module note). Throws
 * S3Error 'NoSuchBucket' or 'AccessDenied'. Reads the keys and SRC's settings; changes nothing.
 */
export async function authorizeForkSource(r: RequestContext, source: string): Promise<void> {
  const principal = r.auth?.accessKeyId ?? null;
  if (!r.store.repo.state.buckets.has(source)) throw new S3Error('NoSuchBucket', undefined, { BucketName: source });
  const key = keyOf(r.deps, principal);
  if (!key || !keyAllows(r.deps, key, 'read', source)) throw new S3Error('AccessDenied', `Forking ${source} needs read on all of it: its owner, an admin key, or a read grant`);
  const ownerOrAdmin = key.admin || bucketOwner(r.deps, source) === key.id;
  if (!ownerOrAdmin && r.store.getBucketConfig(source, POLICY_CONFIG)) {
    throw new S3Error('AccessDenied', `${source} has a bucket policy: only its owner or an admin key may fork it`);
  }
  await authorizeEndpoint(
    r,
    { op: 'ListObjectsV2', bucket: source, params: { prefix: '', maxKeys: 1000, fetchOwner: false } },
    principal,
    // x-amz-expected-bucket-owner would be about the bucket created; the source's is named as a copy's.
    { headers: { ...r.headers, 'x-amz-expected-bucket-owner': r.headers['x-amz-source-expected-bucket-owner'] } }
  );
}

/** What the CreateBucket request asks for itself (its headers), applied over the copied settings. */
export interface RequestedSettings {
  acl?: CannedAcl;
  ownership?: ObjectOwnership;
  /** x-amz-bucket-object-lock-enabled: true. */
  lock?: boolean;
}

/**
 * The settings a fork of `source` gets from the request itself, checked against what it
 * copies as PutBucketAcl would be: an ACL under a copied BucketOwnerEnforced is refused
 * (AccessControlListNotSupported), a public one under a copied BlockPublicAcls too (403).
 * Enforcing bucket ownership drops a copied ACL (ACLs no longer apply), and an ACL that is
 * private on a bucket (bucket-owner-*) removes the copied one. Object Lock asked for is
 * enabled (with versioning) unless the source has it: then its configuration, default
 * retention included, is what the fork copied.
 */
function requestedConfigs(r: RequestContext, source: string, req: RequestedSettings): [string, Uint8Array | null][] {
  const s = bucketSettings(r.store, source);
  const out: [string, Uint8Array | null][] = [];
  if (req.acl !== undefined) {
    const ownership = req.ownership ?? s?.ownership;
    const privateAcl = req.acl === 'private' || req.acl.startsWith('bucket-owner-');
    if (ownership === 'BucketOwnerEnforced' && !privateAcl) throw aclNotSupported();
    if (s?.block.blockPublicAcls && isPublicAcl(req.acl)) throw blockedBy('BlockPublicAcls');
    out.push([ACL_CONFIG, privateAcl ? null : encodeBucketAcl(req.acl)]);
  }
  if (req.ownership !== undefined) {
    out.push([OWNERSHIP_CONFIG, encodeOwnership(req.ownership)]);
    if (req.ownership === 'BucketOwnerEnforced') out.push([ACL_CONFIG, null]);
  }
  if (req.lock && !r.store.getBucketConfig(source, OBJECT_LOCK_CONFIG)) out.push(...lockedBucketConfigs());
  return out;
}

/**
 * The fork branch of CreateBucket: `value` is the request's `x-strata-fork-source`, `req` the
 * ACL and Object Ownership its headers ask for. Resolves once the fork is committed. Throws the
 * S3Errors of the module note and the store's (store/fork.ts).
 */
export async function createBucketAsFork(r: RequestContext, bucket: string, value: string, req: RequestedSettings): Promise<ForkResult> {
  requireSigned(r);
  const source = parseForkSource(value);
  await authorizeForkSource(r, source.bucket);
  const owner = r.auth?.accessKeyId ?? undefined;
  return r.store.forkBucket(source.bucket, bucket, {
    ...(owner !== undefined ? { owner } : {}),
    ...(source.at !== undefined ? { at: source.at } : {}),
    configs: requestedConfigs(r, source.bucket, req),
  });
}
