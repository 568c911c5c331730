/**
 * @module The permission each S3 operation needs, in one exhaustive table.
 *
 *   public         no authentication needed (CORS preflight)
 *   service        any authenticated key (ListBuckets, whose answer is filtered per key)
 *   create-bucket  a key allowed to create buckets (or an admin key)
 *   read           the bucket's `read` flag: list and read objects, bucket metadata clients
 *                  read before working (location, versioning state)
 *   write          the bucket's `write` flag: create, overwrite and delete objects, uploads
 *   owner          the bucket's `owner` flag: the bucket itself (configuration, deletion)
 *                  and who may access its objects (PutObjectAcl)
 *   admin          admin keys only
 *
 * The bucket's owner (the key that created it) and admin keys hold every bucket
 * permission. A copy's source (CopyObject, UploadPartCopy) is authorized separately, as a
 * read of its own bucket (authorize.ts). The table is typed by Operation, so a new
 * Endpoint cannot compile without an entry here.
 */
import type { Operation } from '../router/endpoint.js';

export type Need = 'public' | 'service' | 'create-bucket' | 'read' | 'write' | 'owner' | 'admin';

/** The permissions a grant flag can satisfy (the per-bucket ones). */
export type BucketNeed = Extract<Need, 'read' | 'write' | 'owner'>;

export const NEEDS: { readonly [Op in Operation]: Need } = {
  CorsPreflight: 'public',
  ListBuckets: 'service',
  CreateBucket: 'create-bucket',
  DeleteBucket: 'owner',
  HeadBucket: 'read',
  GetBucketLocation: 'read',
  GetBucketVersioning: 'read',
  // Versioning decides whether overwrites and deletes keep what they replace: configuration.
  PutBucketVersioning: 'owner',
  ListObjectVersions: 'read',
  GetBucketCors: 'owner',
  PutBucketCors: 'owner',
  DeleteBucketCors: 'owner',
  GetBucketTagging: 'read',
  PutBucketTagging: 'owner',
  DeleteBucketTagging: 'owner',
  GetBucketLifecycle: 'owner',
  PutBucketLifecycle: 'owner',
  DeleteBucketLifecycle: 'owner',
  GetBucketEncryption: 'owner',
  PutBucketEncryption: 'owner',
  DeleteBucketEncryption: 'owner',
  ListObjects: 'read',
  ListObjectsV2: 'read',
  ListMultipartUploads: 'read',
  ListParts: 'read',
  GetObject: 'read',
  HeadObject: 'read',
  GetObjectTagging: 'read',
  GetObjectAttributes: 'read',
  GetObjectTorrent: 'read',
  PutObject: 'write',
  // A form upload: app.ts lets it through to its handler, which authorizes the form's signer
  // as a PutObject of the form's key; the entry says what it is, should anything ask.
  PostObject: 'write',
  DeleteObject: 'write',
  DeleteObjects: 'write',
  CopyObject: 'write',
  CreateMultipartUpload: 'write',
  UploadPart: 'write',
  UploadPartCopy: 'write',
  CompleteMultipartUpload: 'write',
  AbortMultipartUpload: 'write',
  PutObjectTagging: 'write',
  DeleteObjectTagging: 'write',
  GetObjectAcl: 'read',
  // Who may read an object is access configuration, not a write: a key holding only write
  // could otherwise make any object (e.g. authenticated-read) readable to itself. The
  // object's writer still may, through its own FULL_CONTROL grant (authz/acl.ts).
  PutObjectAcl: 'owner',
  // Access configuration of the bucket itself.
  GetBucketAcl: 'owner',
  PutBucketAcl: 'owner',
  GetBucketPolicy: 'owner',
  PutBucketPolicy: 'owner',
  DeleteBucketPolicy: 'owner',
  GetBucketPolicyStatus: 'owner',
  GetPublicAccessBlock: 'owner',
  PutPublicAccessBlock: 'owner',
  DeletePublicAccessBlock: 'owner',
  GetBucketOwnershipControls: 'owner',
  PutBucketOwnershipControls: 'owner',
  DeleteBucketOwnershipControls: 'owner',
  // Object Lock. Whether a bucket locks its objects is metadata clients (backup tools) read
  // before working; setting it is bucket configuration.
  GetObjectLockConfiguration: 'read',
  PutObjectLockConfiguration: 'owner',
  GetObjectRetention: 'read',
  GetObjectLegalHold: 'read',
  // A writer may set or extend a retention (shortening or removing a GOVERNANCE one also
  // needs the bypass, which takes 'owner': authz/bypass-governance.ts). A legal hold is
  // placed and cleared by the owner only: a writer's key (a backup tool's, say) that could
  // clear holds could then delete what they protect.
  PutObjectRetention: 'write',
  PutObjectLegalHold: 'owner',
};

/** Whether `need` is satisfied per bucket (by the owner, a grant, or an admin key). */
export function isBucketNeed(need: Need): need is BucketNeed {
  return need === 'read' || need === 'write' || need === 'owner';
}
