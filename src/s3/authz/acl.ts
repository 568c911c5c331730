/**
 * @module Canned ACLs: which ones Strata implements, what each grants, and the
 * `x-amz-acl` / `x-amz-grant-*` request headers.
 *
 * Implemented, for buckets and objects: `private`, `public-read`, `public-read-write`,
 * `authenticated-read`, and for objects `bucket-owner-read`, `bucket-owner-full-control`
 * (on a bucket these two grant nothing beyond `private`, as in S3). `aws-exec-read` and
 * `log-delivery-write` name AWS services Strata has no counterpart for and are refused
 * (501). Explicit grants to other users (`x-amz-grant-*` headers, ACL documents that are not
 * one of the canned sets) are out of scope and refused before anything is written.
 *
 * Grantees: the resource owner (an access key id), the bucket owner, the AllUsers group
 * (everyone, anonymous included) and the AuthenticatedUsers group (any access key of this
 * server). An ACL only ever adds access: it cannot take anything away from the bucket owner
 * or from keys granted the bucket.
 */
import { S3Error } from '../errors.js';
import type { AclPermission } from './policy-actions.js';

export const CANNED_ACLS = [
  'private',
  'public-read',
  'public-read-write',
  'authenticated-read',
  'bucket-owner-read',
  'bucket-owner-full-control',
] as const;
export type CannedAcl = (typeof CANNED_ACLS)[number];

/** Canned ACLs of S3 that Strata refuses (they grant to AWS service accounts). */
const REFUSED_CANNED = new Set(['aws-exec-read', 'log-delivery-write']);

export const ALL_USERS_URI = 'http://acs.amazonaws.com/groups/global/AllUsers';
export const AUTHENTICATED_USERS_URI = 'http://acs.amazonaws.com/groups/global/AuthenticatedUsers';

export type GrantPermission = AclPermission | 'FULL_CONTROL';

/** One grant as S3 renders it. */
export type AclGrant =
  | { grantee: { type: 'CanonicalUser'; id: string }; permission: GrantPermission }
  | { grantee: { type: 'Group'; uri: string }; permission: GrantPermission };

/** The headers that grant to named users. */
export const GRANT_HEADERS = ['x-amz-grant-read', 'x-amz-grant-write', 'x-amz-grant-read-acp', 'x-amz-grant-write-acp', 'x-amz-grant-full-control'] as const;

export function isCannedAcl(v: string): v is CannedAcl {
  return (CANNED_ACLS as readonly string[]).includes(v);
}

/**
 * The canned ACL a request sets (`x-amz-acl`), or undefined when it sets none. Pure. Throws
 * S3Error `NotImplemented` for any `x-amz-grant-*` header and for the canned ACLs Strata
 * does not implement, `InvalidRequest` for canned and explicit grants together (as S3),
 * `InvalidArgument` for an unknown value.
 */
export function requestedAcl(headers: Readonly<Record<string, string | undefined>>): CannedAcl | undefined {
  const grant = GRANT_HEADERS.find((h) => headers[h] !== undefined);
  const value = headers['x-amz-acl'];
  if (grant && value !== undefined) throw new S3Error('InvalidRequest', 'Specifying both Canned ACLs and Header Grants is not allowed');
  if (grant) throw new S3Error('NotImplemented', `ACL grants to other users (${grant}) are not implemented; use a canned ACL (x-amz-acl) or a bucket policy`);
  if (value === undefined) return undefined;
  const v = value.trim();
  if (isCannedAcl(v)) return v;
  if (REFUSED_CANNED.has(v)) throw new S3Error('NotImplemented', `The canned ACL ${v} is not implemented`);
  throw new S3Error('InvalidArgument', undefined, { ArgumentName: 'x-amz-acl', ArgumentValue: value });
}

/** Whether `acl` grants anything to everyone or to every key (S3: a public ACL). */
export function isPublicAcl(acl: CannedAcl): boolean {
  return acl === 'public-read' || acl === 'public-read-write' || acl === 'authenticated-read';
}

/**
 * The grants `acl` stands for on a bucket or an object owned by `owner` in a bucket owned by
 * `bucketOwner` (the bucket-owner-* ACLs name the bucket owner; when it is the object owner
 * the grant would repeat FULL_CONTROL, so it is left out). Listed as S3 servers list them:
 * group grants, then the owner's FULL_CONTROL, then the bucket owner's. Pure.
 */
export function cannedGrants(acl: CannedAcl, kind: 'bucket' | 'object', owner: string, bucketOwner: string | undefined): AclGrant[] {
  const grants: AclGrant[] = [];
  const group = (uri: string, permission: GrantPermission) => grants.push({ grantee: { type: 'Group', uri }, permission });
  switch (acl) {
    case 'private':
      break;
    case 'public-read':
      group(ALL_USERS_URI, 'READ');
      break;
    case 'public-read-write':
      group(ALL_USERS_URI, 'READ');
      group(ALL_USERS_URI, 'WRITE');
      break;
    case 'authenticated-read':
      group(AUTHENTICATED_USERS_URI, 'READ');
      break;
    case 'bucket-owner-read':
    case 'bucket-owner-full-control':
      grants.push({ grantee: { type: 'CanonicalUser', id: owner }, permission: 'FULL_CONTROL' });
      if (kind === 'object' && bucketOwner !== undefined && bucketOwner !== owner) {
        grants.push({ grantee: { type: 'CanonicalUser', id: bucketOwner }, permission: acl === 'bucket-owner-read' ? 'READ' : 'FULL_CONTROL' });
      }
      return grants;
  }
  grants.push({ grantee: { type: 'CanonicalUser', id: owner }, permission: 'FULL_CONTROL' });
  return grants;
}

/**
 * Whether `acl` (on a resource owned by `owner`, in a bucket owned by `bucketOwner`) gives
 * `permission` to `principal` (null: anonymous). With `ignorePublic` (Block Public Access
 * IgnorePublicAcls) the AllUsers and AuthenticatedUsers grants count for nothing. Pure.
 */
export function aclAllows(
  acl: CannedAcl,
  kind: 'bucket' | 'object',
  permission: AclPermission,
  principal: string | null,
  owner: string | undefined,
  bucketOwner: string | undefined,
  ignorePublic: boolean
): boolean {
  const realOwner = owner ?? bucketOwner;
  for (const g of cannedGrants(acl, kind, realOwner ?? '', bucketOwner)) {
    if (g.permission !== 'FULL_CONTROL' && g.permission !== permission) continue;
    const who = g.grantee;
    if (who.type === 'CanonicalUser') {
      if (principal !== null && who.id !== '' && who.id === principal) return true;
    } else if (!ignorePublic) {
      if (who.uri === ALL_USERS_URI) return true;
      if (who.uri === AUTHENTICATED_USERS_URI && principal !== null) return true;
    }
  }
  return false;
}

/**
 * The canned ACL whose grants are exactly `grants` (order and repeats ignored) for a
 * resource owned by `owner` in a bucket owned by `bucketOwner`, or undefined. This is how an
 * AccessControlPolicy document (PutBucketAcl / PutObjectAcl) is accepted: only when it says
 * what a canned ACL says. Pure.
 */
export function cannedFromGrants(grants: readonly AclGrant[], kind: 'bucket' | 'object', owner: string, bucketOwner: string | undefined): CannedAcl | undefined {
  const key = (g: AclGrant) => `${g.grantee.type}|${g.grantee.type === 'Group' ? g.grantee.uri : g.grantee.id}|${g.permission}`;
  const want = new Set(grants.map(key));
  for (const acl of CANNED_ACLS) {
    if (kind === 'bucket' && (acl === 'bucket-owner-read' || acl === 'bucket-owner-full-control')) continue;
    const have = new Set(cannedGrants(acl, kind, owner, bucketOwner).map(key));
    if (have.size === want.size && [...have].every((k) => want.has(k))) return acl;
  }
  return undefined;
}
