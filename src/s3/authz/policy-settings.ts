/**
 * @module The access settings a bucket carries — owner, canned ACL, policy, Block Public
 * Access — read from its configuration blobs, with the compiled policy cached.
 *
 * Stored forms (bucket configurations, committed like every other change, so every server
 * sharing the repository sees the same settings):
 * - `acl`: the canned ACL name, UTF-8 (absent: private);
 * - `policy`: the policy document exactly as the client sent it (GetBucketPolicy returns
 *   those bytes); compiled once per stored value (a WeakMap keyed by the value's bytes);
 * - `public-access-block`: public-access.ts;
 * - `ownership`: the Object Ownership setting (acl-ownership.ts);
 * - the owner: the access key that created the bucket (store/keys.ts).
 *
 * Fail closed: an ACL name this version does not know reads as private; a stored policy this
 * version cannot compile denies everything to everyone but the owner and admins (who can
 * still replace or delete it), rather than being skipped.
 */
import type { Store } from '../../store/store.js';
import { isS3Error } from '../errors.js';
import { isStoreError } from '../../store/errors.js';
import { isCannedAcl, type CannedAcl } from './acl.js';
import { parseBucketPolicy, type BucketPolicy } from './policy-parse.js';
import { isPolicyPublic } from './policy-evaluate.js';
import { decodeOwnership, OWNERSHIP_CONFIG, type ObjectOwnership } from './acl-ownership.js';
import { decodePublicAccessBlock, NO_PUBLIC_ACCESS_BLOCK, PUBLIC_ACCESS_CONFIG, type PublicAccessBlock } from './public-access.js';

export const ACL_CONFIG = 'acl';
export const POLICY_CONFIG = 'policy';

/** A stored policy: compiled, or `broken` when this version cannot compile it. */
export type LoadedPolicy = { raw: Uint8Array; policy: BucketPolicy; isPublic: boolean } | { raw: Uint8Array; broken: true; isPublic: true };

export interface BucketSettings {
  owner: string | undefined;
  acl: CannedAcl;
  policy: LoadedPolicy | undefined;
  block: PublicAccessBlock;
  /** Whether a PublicAccessBlock configuration exists at all (Get answers 404 otherwise). */
  hasBlock: boolean;
  /** Object Ownership controls, when set (none: objects belong to their writers). */
  ownership?: ObjectOwnership;
}

const compiled = new WeakMap<Uint8Array, LoadedPolicy>();
const utf8 = new TextDecoder();

function loadPolicy(raw: Uint8Array, bucket: string): LoadedPolicy {
  let p = compiled.get(raw);
  if (!p) {
    try {
      const policy = parseBucketPolicy(raw, bucket);
      p = { raw, policy, isPublic: isPolicyPublic(policy) };
    } catch (err) {
      if (!isS3Error(err)) throw err;
      p = { raw, broken: true, isPublic: true };
    }
    compiled.set(raw, p);
  }
  return p;
}

/** The configuration blob `name` of `bucket`; undefined when unset; null when no bucket. */
function config(store: Store, bucket: string, name: string): Uint8Array | undefined | null {
  try {
    return store.getBucketConfig(bucket, name);
  } catch (err) {
    if (isStoreError(err, 'NoSuchBucket')) return null;
    throw err;
  }
}

/** The access settings of `bucket`, or undefined when it does not exist. Reads memory only. */
export function bucketSettings(store: Store, bucket: string): BucketSettings | undefined {
  const aclRaw = config(store, bucket, ACL_CONFIG);
  if (aclRaw === null) return undefined;
  const aclName = aclRaw ? utf8.decode(aclRaw) : 'private';
  const policyRaw = config(store, bucket, POLICY_CONFIG);
  const blockRaw = config(store, bucket, PUBLIC_ACCESS_CONFIG);
  const ownershipRaw = config(store, bucket, OWNERSHIP_CONFIG);
  const settings: BucketSettings = {
    owner: store.bucketOwner(bucket),
    acl: isCannedAcl(aclName) ? aclName : 'private',
    policy: policyRaw ? loadPolicy(policyRaw, bucket) : undefined,
    block: blockRaw ? decodePublicAccessBlock(blockRaw) : NO_PUBLIC_ACCESS_BLOCK,
    hasBlock: !!blockRaw,
  };
  if (ownershipRaw) settings.ownership = decodeOwnership(ownershipRaw);
  return settings;
}

/** Whether ACLs are disabled on the bucket (BucketOwnerEnforced): they then grant nothing. */
export const aclsDisabled = (s: Pick<BucketSettings, 'ownership'>): boolean => s.ownership === 'BucketOwnerEnforced';

/** The stored form of a canned ACL (`private` is stored as nothing). */
export function encodeBucketAcl(acl: CannedAcl): Uint8Array | null {
  return acl === 'private' ? null : new TextEncoder().encode(acl);
}
