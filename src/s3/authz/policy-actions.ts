/**
 * @module The S3 actions of the policy language: every action name a bucket policy may
 * mention, and for each Strata operation the action it performs, on which resource, and
 * which ACL permission (if any) can grant it.
 *
 * Names follow the AWS service authorization reference ("Actions defined by Amazon S3"),
 * limited to the actions that concern a bucket or the objects in it (plus ListAllMyBuckets,
 * which S3 accepts in bucket policies). An action a policy names that is not in this list is
 * refused, so a typo in a Deny cannot silently deny nothing.
 *
 * ACL permissions (S3 user guide, "Mapping of ACL permissions and access policy
 * permissions"): bucket READ lists the bucket and its uploads; bucket WRITE creates,
 * overwrites and deletes objects; READ_ACP / WRITE_ACP read and replace the ACL itself;
 * object READ reads the object. Everything else (tagging, bucket configuration) is granted
 * by ownership, key grants or a policy only, never by an ACL.
 */
import type { Endpoint, Operation } from '../router/endpoint.js';

/** What an ACL grant can give (FULL_CONTROL is all four). */
export type AclPermission = 'READ' | 'WRITE' | 'READ_ACP' | 'WRITE_ACP';

/** S3 actions a bucket policy may name (exact spelling; compared case-insensitively). */
export const S3_ACTIONS: readonly string[] = [
  'AbortMultipartUpload',
  'BypassGovernanceRetention',
  'CreateBucket',
  'DeleteBucket',
  'DeleteBucketOwnershipControls',
  'DeleteBucketPolicy',
  'DeleteBucketWebsite',
  'DeleteObject',
  'DeleteObjectTagging',
  'DeleteObjectVersion',
  'DeleteObjectVersionTagging',
  'GetAccelerateConfiguration',
  'GetAnalyticsConfiguration',
  'GetBucketAcl',
  'GetBucketCORS',
  'GetBucketLocation',
  'GetBucketLogging',
  'GetBucketNotification',
  'GetBucketObjectLockConfiguration',
  'GetBucketOwnershipControls',
  'GetBucketPolicy',
  'GetBucketPolicyStatus',
  'GetBucketPublicAccessBlock',
  'GetBucketRequestPayment',
  'GetBucketTagging',
  'GetBucketVersioning',
  'GetBucketWebsite',
  'GetEncryptionConfiguration',
  'GetIntelligentTieringConfiguration',
  'GetInventoryConfiguration',
  'GetLifecycleConfiguration',
  'GetMetricsConfiguration',
  'GetObject',
  'GetObjectAcl',
  'GetObjectAttributes',
  'GetObjectLegalHold',
  'GetObjectRetention',
  'GetObjectTagging',
  'GetObjectTorrent',
  'GetObjectVersion',
  'GetObjectVersionAcl',
  'GetObjectVersionAttributes',
  'GetObjectVersionForReplication',
  'GetObjectVersionTagging',
  'GetObjectVersionTorrent',
  'GetReplicationConfiguration',
  'ListAllMyBuckets',
  'ListBucket',
  'ListBucketMultipartUploads',
  'ListBucketVersions',
  'ListMultipartUploadParts',
  'PutAccelerateConfiguration',
  'PutAnalyticsConfiguration',
  'PutBucketAcl',
  'PutBucketCORS',
  'PutBucketLogging',
  'PutBucketNotification',
  'PutBucketObjectLockConfiguration',
  'PutBucketOwnershipControls',
  'PutBucketPolicy',
  'PutBucketPublicAccessBlock',
  'PutBucketRequestPayment',
  'PutBucketTagging',
  'PutBucketVersioning',
  'PutBucketWebsite',
  'PutEncryptionConfiguration',
  'PutIntelligentTieringConfiguration',
  'PutInventoryConfiguration',
  'PutLifecycleConfiguration',
  'PutMetricsConfiguration',
  'PutObject',
  'PutObjectAcl',
  'PutObjectLegalHold',
  'PutObjectRetention',
  'PutObjectTagging',
  'PutObjectVersionAcl',
  'PutObjectVersionTagging',
  'PutReplicationConfiguration',
  'ReplicateDelete',
  'ReplicateObject',
  'ReplicateTags',
  'RestoreObject',
].map((a) => `s3:${a}`);

/**
 * How one operation is authorized:
 * - `none`: never authorized (CORS preflight carries no credentials);
 * - `service`: no bucket resource exists yet or at all (ListBuckets, CreateBucket): only keys
 *   may act, policies and ACLs do not apply;
 * - `bucket` / `object`: `action` on the bucket ARN or on `bucket/key`, grantable by `acl`.
 * - `perKey`: the operation is a batch of `action` on objects named in its body
 *   (DeleteObjects); each object is authorized by the handler.
 */
export type AccessRule =
  | { scope: 'none' }
  | { scope: 'service'; action: string }
  | { scope: 'bucket' | 'object'; action: string; acl?: { on: 'bucket' | 'object'; permission: AclPermission } }
  | { scope: 'perKey'; action: string };

const bucket = (action: string, permission?: AclPermission): AccessRule =>
  permission ? { scope: 'bucket', action: `s3:${action}`, acl: { on: 'bucket', permission } } : { scope: 'bucket', action: `s3:${action}` };
/** An object action an ACL grants through the BUCKET's ACL (writes: bucket WRITE). */
const objectViaBucket = (action: string, permission: AclPermission): AccessRule => ({
  scope: 'object',
  action: `s3:${action}`,
  acl: { on: 'bucket', permission },
});
const object = (action: string, permission?: AclPermission): AccessRule =>
  permission ? { scope: 'object', action: `s3:${action}`, acl: { on: 'object', permission } } : { scope: 'object', action: `s3:${action}` };

/** The rule of every operation; a new operation does not compile until it has one. */
export const ACCESS_RULES: { readonly [op in Operation]: AccessRule } = {
  CorsPreflight: { scope: 'none' },
  ListBuckets: { scope: 'service', action: 's3:ListAllMyBuckets' },
  CreateBucket: { scope: 'service', action: 's3:CreateBucket' },
  DeleteBucket: bucket('DeleteBucket'),
  HeadBucket: bucket('ListBucket', 'READ'),
  GetBucketLocation: bucket('GetBucketLocation'),
  GetBucketVersioning: bucket('GetBucketVersioning'),
  PutBucketVersioning: bucket('PutBucketVersioning'),
  ListObjectVersions: bucket('ListBucketVersions', 'READ'),
  ListObjects: bucket('ListBucket', 'READ'),
  ListObjectsV2: bucket('ListBucket', 'READ'),
  ListMultipartUploads: bucket('ListBucketMultipartUploads', 'READ'),
  DeleteObjects: { scope: 'perKey', action: 's3:DeleteObject' },
  GetBucketCors: bucket('GetBucketCORS'),
  PutBucketCors: bucket('PutBucketCORS'),
  DeleteBucketCors: bucket('PutBucketCORS'),
  GetBucketTagging: bucket('GetBucketTagging'),
  PutBucketTagging: bucket('PutBucketTagging'),
  DeleteBucketTagging: bucket('PutBucketTagging'),
  GetBucketLifecycle: bucket('GetLifecycleConfiguration'),
  PutBucketLifecycle: bucket('PutLifecycleConfiguration'),
  DeleteBucketLifecycle: bucket('PutLifecycleConfiguration'),
  GetBucketEncryption: bucket('GetEncryptionConfiguration'),
  PutBucketEncryption: bucket('PutEncryptionConfiguration'),
  DeleteBucketEncryption: bucket('PutEncryptionConfiguration'),
  GetBucketAcl: bucket('GetBucketAcl', 'READ_ACP'),
  PutBucketAcl: bucket('PutBucketAcl', 'WRITE_ACP'),
  GetBucketPolicy: bucket('GetBucketPolicy'),
  PutBucketPolicy: bucket('PutBucketPolicy'),
  DeleteBucketPolicy: bucket('DeleteBucketPolicy'),
  GetBucketPolicyStatus: bucket('GetBucketPolicyStatus'),
  GetPublicAccessBlock: bucket('GetBucketPublicAccessBlock'),
  PutPublicAccessBlock: bucket('PutBucketPublicAccessBlock'),
  DeletePublicAccessBlock: bucket('PutBucketPublicAccessBlock'),
  GetBucketOwnershipControls: bucket('GetBucketOwnershipControls'),
  PutBucketOwnershipControls: bucket('PutBucketOwnershipControls'),
  DeleteBucketOwnershipControls: bucket('PutBucketOwnershipControls'),
  PutObject: objectViaBucket('PutObject', 'WRITE'),
  GetObject: object('GetObject', 'READ'),
  HeadObject: object('GetObject', 'READ'),
  DeleteObject: objectViaBucket('DeleteObject', 'WRITE'),
  CopyObject: objectViaBucket('PutObject', 'WRITE'),
  CreateMultipartUpload: objectViaBucket('PutObject', 'WRITE'),
  UploadPart: objectViaBucket('PutObject', 'WRITE'),
  UploadPartCopy: objectViaBucket('PutObject', 'WRITE'),
  CompleteMultipartUpload: objectViaBucket('PutObject', 'WRITE'),
  AbortMultipartUpload: objectViaBucket('AbortMultipartUpload', 'WRITE'),
  ListParts: objectViaBucket('ListMultipartUploadParts', 'WRITE'),
  GetObjectTagging: object('GetObjectTagging'),
  PutObjectTagging: object('PutObjectTagging'),
  DeleteObjectTagging: object('DeleteObjectTagging'),
  GetObjectAcl: object('GetObjectAcl', 'READ_ACP'),
  GetObjectAttributes: object('GetObjectAttributes', 'READ'),
  GetObjectTorrent: object('GetObjectTorrent', 'READ'),
  // Authorized by its handler as a PutObject of the form's key, with the form's fields; as
  // an endpoint of its own (should anything ask) a write into the bucket.
  PostObject: bucket('PutObject', 'WRITE'),
  PutObjectAcl: object('PutObjectAcl', 'WRITE_ACP'),
  GetObjectLockConfiguration: bucket('GetBucketObjectLockConfiguration'),
  PutObjectLockConfiguration: bucket('PutBucketObjectLockConfiguration'),
  GetObjectRetention: object('GetObjectRetention'),
  PutObjectRetention: object('PutObjectRetention'),
  GetObjectLegalHold: object('GetObjectLegalHold'),
  PutObjectLegalHold: object('PutObjectLegalHold'),
};

/** The action S3 names for an operation on a specific version (`?versionId=`). */
const VERSION_ACTIONS: Partial<Record<Operation, string>> = {
  GetObject: 's3:GetObjectVersion',
  HeadObject: 's3:GetObjectVersion',
  DeleteObject: 's3:DeleteObjectVersion',
  GetObjectTagging: 's3:GetObjectVersionTagging',
  PutObjectTagging: 's3:PutObjectVersionTagging',
  DeleteObjectTagging: 's3:DeleteObjectVersionTagging',
  GetObjectAcl: 's3:GetObjectVersionAcl',
  PutObjectAcl: 's3:PutObjectVersionAcl',
  GetObjectAttributes: 's3:GetObjectVersionAttributes',
};

/** Operations that write an object and may carry `x-amz-acl` / `x-amz-tagging` for it. */
const OBJECT_WRITES: ReadonlySet<Operation> = new Set(['PutObject', 'CopyObject', 'CreateMultipartUpload']);

/**
 * The further actions a request needs beyond its operation's own: a write for what its
 * headers ask (S3: setting an ACL with the object needs s3:PutObjectAcl, setting tags
 * needs s3:PutObjectTagging, a retention s3:PutObjectRetention, a legal hold
 * s3:PutObjectLegalHold); GetObjectAttributes also s3:GetObject (S3 needs both, so a
 * policy denying GetObject also hides the object's size and checksums). Pure.
 */
export function extraActions(e: Endpoint, headers: Readonly<Record<string, string | undefined>>): string[] {
  // An operation on a named version also needs its version action (s3:GetObjectVersion, ...).
  const versioned = 'versionId' in e && e.versionId !== undefined ? VERSION_ACTIONS[e.op] : undefined;
  if (versioned) return e.op === 'GetObjectAttributes' ? ['s3:GetObject', versioned] : [versioned];
  if (e.op === 'GetObjectAttributes') return ['s3:GetObject'];
  if (!OBJECT_WRITES.has(e.op)) return [];
  const out: string[] = [];
  if (headers['x-amz-acl'] !== undefined || Object.keys(headers).some((h) => h.startsWith('x-amz-grant-'))) out.push('s3:PutObjectAcl');
  const tagging = headers['x-amz-tagging'] !== undefined;
  const replacesTags = e.op !== 'CopyObject' || (headers['x-amz-tagging-directive'] ?? '').trim().toUpperCase() === 'REPLACE';
  if (tagging && replacesTags) out.push('s3:PutObjectTagging');
  if (headers['x-amz-object-lock-mode'] !== undefined || headers['x-amz-object-lock-retain-until-date'] !== undefined) out.push('s3:PutObjectRetention');
  if (headers['x-amz-object-lock-legal-hold'] !== undefined) out.push('s3:PutObjectLegalHold');
  return out;
}

/** Actions that the bucket owner (and admins) may always perform, whatever a policy denies. */
export const OWNER_ALWAYS: ReadonlySet<string> = new Set(['s3:GetBucketPolicy', 's3:PutBucketPolicy', 's3:DeleteBucketPolicy']);
