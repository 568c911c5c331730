/**
 * @module Object ownership and object ACLs as the version record stores them
 * (ObjectVersion.access, record flag 8).
 *
 * An object is owned by the access key that wrote it. Most objects are written by their
 * bucket's owner with the private ACL: for them nothing is stored, and the owner reported is
 * the bucket owner. An anonymous writer (a public-read-write bucket) owns nothing: its
 * objects belong to the bucket owner, or "anyone" would own them.
 */
import type { ObjectAccess, ObjectVersion } from '../../store/records.js';
import { isCannedAcl, type CannedAcl } from './acl.js';

/**
 * What to store for an object written by `principal` (null: anonymous) into a bucket owned
 * by `bucketOwner` with canned ACL `acl` (default private): undefined for the defaults. Pure.
 */
export function objectAccessFor(principal: string | null, bucketOwner: string | undefined, acl: CannedAcl | undefined): ObjectAccess | undefined {
  const owner = principal !== null && principal !== bucketOwner ? principal : undefined;
  const name = acl ?? 'private';
  if (owner === undefined && name === 'private') return undefined;
  return owner === undefined ? { acl: name } : { owner, acl: name };
}

/** The object's owner: the key that wrote it, or the bucket owner. */
export function objectOwner(v: Pick<ObjectVersion, 'access'>, bucketOwner: string | undefined): string | undefined {
  return v.access?.owner ?? bucketOwner;
}

/** The object's canned ACL; a name this version does not know reads as private (fail closed). */
export function objectAcl(v: Pick<ObjectVersion, 'access'>): CannedAcl {
  const name = v.access?.acl ?? 'private';
  return isCannedAcl(name) ? name : 'private';
}
