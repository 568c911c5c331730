/**
 * @module Object ownership and object ACLs as the version record stores them
 * (ObjectVersion.access, record flag 8).
 *
 * An object is owned by the access key that wrote it (the bucket's Object Ownership may say
 * otherwise, acl-ownership.ts). Most objects are written by their bucket's owner with the
 * private ACL: for them nothing is stored, and the owner reported is the bucket owner. An
 * anonymous writer (a public-read-write bucket) owns nothing: its objects belong to the
 * bucket owner, or "anyone" would own them.
 */
import type { ObjectAccess, ObjectVersion } from '../../store/records.js';
import type { RequestContext } from '../context.js';
import { bucketOwnerInfo, ownerInfo } from '../owner.js';
import type { OwnerInfo } from '../xml/owner.js';
import { bucketSettings } from './policy-settings.js';
import { isCannedAcl, type CannedAcl } from './acl.js';
import type { ObjectOwnership } from './acl-ownership.js';

/**
 * What to store for an object written by `principal` (null: anonymous) into a bucket owned
 * by `bucketOwner` with canned ACL `acl` (default private), under the bucket's Object
 * Ownership: undefined for the defaults. Pure.
 */
export function objectAccessFor(
  principal: string | null,
  bucketOwner: string | undefined,
  acl: CannedAcl | undefined,
  ownership?: ObjectOwnership
): ObjectAccess | undefined {
  if (ownership === 'BucketOwnerEnforced') return undefined;
  const toBucketOwner = ownership === 'BucketOwnerPreferred' && acl === 'bucket-owner-full-control';
  const owner = principal !== null && principal !== bucketOwner && !toBucketOwner ? principal : undefined;
  const name = acl ?? 'private';
  if (owner === undefined && name === 'private') return undefined;
  return owner === undefined ? { acl: name } : { owner, acl: name };
}

/** The object's owner: the key that wrote it, or the bucket owner (always, with ACLs disabled). */
export function objectOwner(v: Pick<ObjectVersion, 'access'>, bucketOwner: string | undefined, ownership?: ObjectOwnership): string | undefined {
  return ownership === 'BucketOwnerEnforced' ? bucketOwner : v.access?.owner ?? bucketOwner;
}

/**
 * The object's canned ACL; private with ACLs disabled, and for a name this version does not
 * know (fail closed).
 */
export function objectAcl(v: Pick<ObjectVersion, 'access'>, ownership?: ObjectOwnership): CannedAcl {
  const name = ownership === 'BucketOwnerEnforced' ? 'private' : v.access?.acl ?? 'private';
  return isCannedAcl(name) ? name : 'private';
}

/**
 * The owner S3 reports for objects or uploads of `bucket` whose access fields are `access`:
 * returns a function, so a listing reads the bucket's settings once. Reads memory only.
 */
export function objectOwners(r: RequestContext, bucket: string): (access: ObjectAccess | undefined) => OwnerInfo {
  const settings = bucketSettings(r.store, bucket);
  const bucketOwner = bucketOwnerInfo(r, bucket);
  return (access) => {
    const id = access === undefined ? undefined : objectOwner({ access }, settings?.owner, settings?.ownership);
    return id === undefined || id === bucketOwner.id ? bucketOwner : ownerInfo(r, id);
  };
}
