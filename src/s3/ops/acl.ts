/**
 * @module ACL operations: Get/PutBucketAcl, Get/PutObjectAcl and the bucket's Object
 * Ownership controls (Get/Put/DeleteBucketOwnershipControls).
 *
 * Only canned ACLs exist in Strata. PUT takes either an `x-amz-acl` header or an
 * AccessControlPolicy document that says exactly what one canned ACL says (what a client
 * gets from GET and sends back); grants to other users, by header or document, are answered
 * 501 NotImplemented before anything changes. Block Public Access BlockPublicAcls refuses a
 * public ACL with 403.
 */
import { versionIdHeader } from './versions.js';
import type { ObjectVersion } from '../../store/records.js';
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { MAX_XML_BODY_BYTES } from '../xml/index.js';
import { parseAccessControlPolicy, renderAccessControlPolicy, type RenderedGrant } from '../xml/acl.js';
import { S3Error } from '../errors.js';
import { ownerInfo, ownerOf } from '../owner.js';
import { cannedFromGrants, cannedGrants, isPublicAcl, requestedAcl, type CannedAcl } from '../authz/acl.js';
import { objectAcl, objectOwner } from '../authz/acl-object.js';
import { ACL_CONFIG, aclsDisabled, bucketSettings, encodeBucketAcl, type BucketSettings } from '../authz/policy-settings.js';
import {
  aclNotSupported,
  encodeOwnership,
  OWNERSHIP_CONFIG,
  parseOwnershipControls,
  renderOwnershipControls,
  type ObjectOwnership,
} from '../authz/acl-ownership.js';
import { blockedBy } from '../authz/public-access.js';
import type { OwnerInfo } from '../xml/owner.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

const noSuchBucket = (bucket: string) => new S3Error('NoSuchBucket', undefined, { BucketName: bucket });

function settingsOf(r: RequestContext, bucket: string): BucketSettings {
  const s = bucketSettings(r.store, bucket);
  if (!s) throw noSuchBucket(bucket);
  return s;
}

/** The canonical user S3 reports for key `id` (a bucket without an owner: the requester). */
function ownerInfoOf(r: RequestContext, id: string | undefined): OwnerInfo {
  return id === undefined ? ownerOf(r) : ownerInfo(r, id);
}

function rendered(r: RequestContext, grants: ReturnType<typeof cannedGrants>): RenderedGrant[] {
  return grants.map((g) => (g.grantee.type === 'CanonicalUser' ? { ...g, displayName: ownerInfoOf(r, g.grantee.id).displayName ?? g.grantee.id } : g));
}

/**
 * The canned ACL a PUT ?acl request asks for, from its header or its document, for a
 * resource owned by `owner` in a bucket owned by `bucketOwner`. Throws S3Error
 * `NotImplemented` (grants to other users), `MalformedACLError`, `InvalidRequest` (header
 * and document together), `MissingSecurityHeader` (neither), `InvalidArgument` (the document
 * names another owner, or a grantee that is no access key), `UnresolvableGrantByEmailAddress`.
 */
async function aclOfRequest(r: RequestContext, kind: 'bucket' | 'object', owner: string, bucketOwner: string | undefined): Promise<CannedAcl> {
  const fromHeader = requestedAcl(r.headers);
  const body = await readBody(r, MAX_XML_BODY_BYTES);
  if (fromHeader !== undefined) {
    if (body.length > 0) throw new S3Error('InvalidRequest', 'Specifying both a canned ACL header and an ACL document is not allowed');
    return fromHeader;
  }
  if (body.length === 0) throw new S3Error('MissingSecurityHeader', 'Your request was missing a required header: x-amz-acl (or an AccessControlPolicy body)');
  const doc = parseAccessControlPolicy(body);
  if (doc.ownerId !== undefined && doc.ownerId !== owner) {
    throw new S3Error('InvalidArgument', 'The Owner of an ACL cannot be changed', { ArgumentName: 'Owner', ArgumentValue: doc.ownerId });
  }
  // Keys have no e-mail addresses: such a grantee names nobody Strata knows (as S3 says of
  // an unknown address).
  if (doc.unsupported.length > 0) throw new S3Error('UnresolvableGrantByEmailAddress', undefined, { EmailAddress: doc.unsupported[0]!.replace(/^emailAddress=/, '') });
  for (const g of doc.grants) {
    const id = g.grantee.type === 'CanonicalUser' ? g.grantee.id : undefined;
    // S3 refuses a grantee that is no account; here every canonical user is an access key.
    if (id !== undefined && id !== owner && id !== bucketOwner && !r.deps.keys.key(id)) {
      throw new S3Error('InvalidArgument', 'Invalid id', { ArgumentName: 'CanonicalUser/ID', ArgumentValue: id });
    }
  }
  const canned = cannedFromGrants(doc.grants, kind, owner, bucketOwner);
  if (!canned) throw new S3Error('NotImplemented', 'ACL grants to other users are not implemented: only the grants of a canned ACL (owner FULL_CONTROL, AllUsers or AuthenticatedUsers READ/WRITE) can be set');
  return canned;
}

export async function handleGetBucketAcl(r: RequestContext, e: Op<'GetBucketAcl'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  const owner = ownerInfoOf(r, s.owner);
  const acl = aclsDisabled(s) ? 'private' : s.acl;
  sendXml(r, 200, renderAccessControlPolicy(owner, rendered(r, cannedGrants(acl, 'bucket', owner.id, owner.id))));
}

/**
 * Sets the canned ACL of existing `bucket` (the bucket-owner-* ACLs concern objects: on a
 * bucket they are private, as in S3). Throws S3Error `AccessDenied` when the bucket's
 * BlockPublicAcls refuses a public ACL, NoSuchBucket.
 */
export async function setBucketAcl(r: RequestContext, bucket: string, acl: CannedAcl): Promise<void> {
  const s = settingsOf(r, bucket);
  if (aclsDisabled(s)) throw aclNotSupported();
  if (s.block.blockPublicAcls && isPublicAcl(acl)) throw blockedBy('BlockPublicAcls');
  const stored = acl === 'bucket-owner-read' || acl === 'bucket-owner-full-control' ? 'private' : acl;
  await r.store.putBucketConfig(bucket, ACL_CONFIG, encodeBucketAcl(stored));
}

export async function handlePutBucketAcl(r: RequestContext, e: Op<'PutBucketAcl'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  if (aclsDisabled(s)) throw aclNotSupported();
  const owner = ownerInfoOf(r, s.owner).id;
  await setBucketAcl(r, e.bucket, await aclOfRequest(r, 'bucket', owner, owner));
  sendEmpty(r, 200);
}

export async function handleGetObjectAcl(r: RequestContext, e: Op<'GetObjectAcl'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  const v = await aclVersion(r, e);
  const owner = ownerInfoOf(r, objectOwner(v, s.owner, s.ownership));
  const bucketOwner = s.owner ?? owner.id;
  sendXml(
    r,
    200,
    renderAccessControlPolicy(owner, rendered(r, cannedGrants(objectAcl(v, s.ownership), 'object', owner.id, bucketOwner))),
    versionIdHeader(r, e.bucket, v.versionId, e.versionId !== undefined)
  );
}

export async function handlePutObjectAcl(r: RequestContext, e: Op<'PutObjectAcl'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  if (aclsDisabled(s)) throw aclNotSupported();
  const v = await aclVersion(r, e);
  const owner = ownerInfoOf(r, objectOwner(v, s.owner)).id;
  const acl = await aclOfRequest(r, 'object', owner, s.owner ?? owner);
  if (s.block.blockPublicAcls && isPublicAcl(acl)) throw blockedBy('BlockPublicAcls');
  const id = await r.store.putObjectAcl(e.bucket, e.key, acl, e.versionId);
  sendEmpty(r, 200, versionIdHeader(r, e.bucket, id, e.versionId !== undefined));
}

/** The version an object ACL request is about: the live one or `versionId` (a delete marker: 405). */
async function aclVersion(r: RequestContext, e: { bucket: string; key: string; versionId?: string }): Promise<ObjectVersion> {
  if (e.versionId === undefined) return r.store.version(e.bucket, e.key);
  const { version } = await r.store.getVersion(e.bucket, e.key, e.versionId);
  if (version.deleteMarker) throw new S3Error('MethodNotAllowed', undefined, { Method: r.method, ResourceType: 'DeleteMarker' });
  return version;
}

export async function handleGetBucketOwnershipControls(r: RequestContext, e: Op<'GetBucketOwnershipControls'>): Promise<void> {
  const s = settingsOf(r, e.bucket);
  if (!s.ownership) throw new S3Error('OwnershipControlsNotFoundError', undefined, { BucketName: e.bucket });
  sendXml(r, 200, renderOwnershipControls(s.ownership));
}

/**
 * Sets the Object Ownership of existing `bucket`. BucketOwnerEnforced needs a private bucket
 * ACL first. Throws S3Error `InvalidBucketAclWithObjectOwnership`, NoSuchBucket.
 */
export async function setOwnership(r: RequestContext, bucket: string, ownership: ObjectOwnership): Promise<void> {
  const s = settingsOf(r, bucket);
  if (ownership === 'BucketOwnerEnforced' && s.acl !== 'private') throw new S3Error('InvalidBucketAclWithObjectOwnership');
  await r.store.putBucketConfig(bucket, OWNERSHIP_CONFIG, encodeOwnership(ownership));
}

export async function handlePutBucketOwnershipControls(r: RequestContext, e: Op<'PutBucketOwnershipControls'>): Promise<void> {
  settingsOf(r, e.bucket);
  await setOwnership(r, e.bucket, parseOwnershipControls(await readBody(r, MAX_XML_BODY_BYTES)));
  sendEmpty(r, 200);
}

export async function handleDeleteBucketOwnershipControls(r: RequestContext, e: Op<'DeleteBucketOwnershipControls'>): Promise<void> {
  settingsOf(r, e.bucket);
  await r.store.putBucketConfig(e.bucket, OWNERSHIP_CONFIG, null);
  sendEmpty(r, 204);
}
