/**
 * @module The owners S3 reports: `<Owner>` of ListBuckets (the requesting key), and of
 * objects and uploads (the bucket's owner: S3's default object ownership since 2023,
 * "bucket owner enforced", makes the bucket owner own every object in it).
 *
 * ID is the access key id, DisplayName the key's name.
 */
import type { RequestContext } from './context.js';
import type { OwnerInfo } from './xml/owner.js';

/** The owner record of access key `id` (its name as DisplayName when the key exists). */
export function ownerInfo(r: RequestContext, id: string): OwnerInfo {
  return { id, displayName: r.deps.keys.key(id)?.name ?? id };
}

/** The requesting key as an owner (anonymous requests: 'strata'). */
export function ownerOf(r: RequestContext): OwnerInfo {
  const id = r.auth?.accessKeyId;
  return id === undefined || id === null ? { id: 'strata', displayName: 'strata' } : ownerInfo(r, id);
}

/** The owner of `bucket` (its creating key), or the requesting key when the bucket has none. */
export function bucketOwnerInfo(r: RequestContext, bucket: string): OwnerInfo {
  const owner = r.store.bucketOwner(bucket);
  return owner === undefined ? ownerOf(r) : ownerInfo(r, owner);
}
