/**
 * @module What an access key may do by itself — admin capability, bucket ownership and
 * per-bucket grants — independently of ACLs and bucket policies (which authorize.ts
 * combines with this).
 *
 * Reads the committed state only (the key registry and the buckets' owners); changes
 * nothing.
 */
import type { ServerDeps } from '../context.js';
import { grantFor, type KeyRecord } from '../../store/keys-record.js';
import type { BucketNeed } from './permissions.js';

/** The committed key record of `principal`, or undefined (anonymous, or unknown key). */
export function keyOf(deps: ServerDeps, principal: string | null): KeyRecord | undefined {
  return principal === null ? undefined : deps.keys.key(principal);
}

/** Whether `principal` is an admin key. */
export function isAdminKey(deps: ServerDeps, principal: string | null): boolean {
  return keyOf(deps, principal)?.admin === true;
}

/** The access key id owning `bucket`, or undefined (no such bucket, or owned by nobody). */
export function bucketOwner(deps: ServerDeps, bucket: string): string | undefined {
  return deps.store.bucketOwner(bucket);
}

/**
 * Whether `key` holds `need` on the existing bucket `bucket` by itself: it is admin, it
 * owns the bucket, or it has a grant on this very bucket (same id) with that flag. False
 * for a bucket that does not exist.
 */
export function keyAllows(deps: ServerDeps, key: KeyRecord, need: BucketNeed, bucket: string): boolean {
  const state = deps.store.repo.state.buckets.get(bucket);
  if (!state) return false;
  if (key.admin) return true;
  if (bucketOwner(deps, bucket) === key.id) return true;
  return grantFor(key, bucket, state.id)?.[need] === true;
}

/** Whether `key` may see `bucket` in ListBuckets: admin, owner, or any grant on it. */
export function keySeesBucket(deps: ServerDeps, key: KeyRecord, bucket: string): boolean {
  return keyAllows(deps, key, 'read', bucket) || keyAllows(deps, key, 'write', bucket) || keyAllows(deps, key, 'owner', bucket);
}
