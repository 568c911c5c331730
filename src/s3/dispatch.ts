/**
 * @module The one exhaustive switch from Endpoint to handler.
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import * as buckets from './ops/buckets.js';
import * as objects from './ops/objects.js';
import * as list from './ops/list.js';
import * as mp from './ops/multipart.js';
import { handleCopyObject } from './ops/copy.js';
import * as tagging from './ops/tagging.js';
import * as acl from './ops/acl.js';
import * as policy from './ops/policy.js';
import * as encryption from './ops/encryption.js';
import { handlePreflight } from './cors.js';
import { handleGetObjectAttributes } from './ops/attributes.js';
import { handleGetObjectTorrent } from './ops/torrent.js';
import { handlePostObject } from './post-object/handler.js';
import * as lock from './ops/object-lock.js';
import * as versions from './ops/versions.js';
import * as lifecycle from './ops/lifecycle.js';

export async function dispatch(r: RequestContext, e: Endpoint): Promise<void> {
  switch (e.op) {
    case 'ListBuckets':
      return buckets.handleListBuckets(r, e);
    case 'CreateBucket':
      return buckets.handleCreateBucket(r, e);
    case 'DeleteBucket':
      return buckets.handleDeleteBucket(r, e);
    case 'HeadBucket':
      return buckets.handleHeadBucket(r, e);
    case 'GetBucketLocation':
      return buckets.handleGetBucketLocation(r, e);
    case 'GetBucketVersioning':
      return versions.handleGetBucketVersioning(r, e);
    case 'PutBucketVersioning':
      return versions.handlePutBucketVersioning(r, e);
    case 'ListObjectVersions':
      return versions.handleListObjectVersions(r, e);
    case 'GetBucketCors':
      return buckets.handleGetBucketCors(r, e);
    case 'PutBucketCors':
      return buckets.handlePutBucketCors(r, e);
    case 'DeleteBucketCors':
      return buckets.handleDeleteBucketCors(r, e);
    case 'GetBucketTagging':
      return tagging.handleGetBucketTagging(r, e);
    case 'PutBucketTagging':
      return tagging.handlePutBucketTagging(r, e);
    case 'DeleteBucketTagging':
      return tagging.handleDeleteBucketTagging(r, e);
    case 'GetBucketLifecycle':
      return lifecycle.handleGetBucketLifecycle(r, e);
    case 'PutBucketLifecycle':
      return lifecycle.handlePutBucketLifecycle(r, e);
    case 'DeleteBucketLifecycle':
      return lifecycle.handleDeleteBucketLifecycle(r, e);
    case 'GetBucketEncryption':
      return encryption.handleGetBucketEncryption(r, e);
    case 'PutBucketEncryption':
      return encryption.handlePutBucketEncryption(r, e);
    case 'DeleteBucketEncryption':
      return encryption.handleDeleteBucketEncryption(r, e);
    case 'ListObjects':
      return list.handleListObjects(r, e);
    case 'ListObjectsV2':
      return list.handleListObjectsV2(r, e);
    case 'ListMultipartUploads':
      return list.handleListMultipartUploads(r, e);
    case 'PutObject':
      return objects.handlePutObject(r, e);
    case 'GetObject':
      return objects.handleGetObject(r, e);
    case 'HeadObject':
      return objects.handleHeadObject(r, e);
    case 'DeleteObject':
      return objects.handleDeleteObject(r, e);
    case 'DeleteObjects':
      return objects.handleDeleteObjects(r, e);
    case 'CopyObject':
      return handleCopyObject(r, e);
    case 'CreateMultipartUpload':
      return mp.handleCreateMultipartUpload(r, e);
    case 'UploadPart':
      return mp.handleUploadPart(r, e);
    case 'UploadPartCopy':
      return mp.handleUploadPartCopy(r, e);
    case 'CompleteMultipartUpload':
      return mp.handleCompleteMultipartUpload(r, e);
    case 'AbortMultipartUpload':
      return mp.handleAbortMultipartUpload(r, e);
    case 'ListParts':
      return mp.handleListParts(r, e);
    case 'GetObjectAttributes':
      return handleGetObjectAttributes(r, e);
    case 'GetObjectTorrent':
      return handleGetObjectTorrent(r, e);
    case 'PostObject':
      return handlePostObject(r, e);
    case 'GetObjectTagging':
      return tagging.handleGetObjectTagging(r, e);
    case 'PutObjectTagging':
      return tagging.handlePutObjectTagging(r, e);
    case 'DeleteObjectTagging':
      return tagging.handleDeleteObjectTagging(r, e);
    case 'GetBucketAcl':
      return acl.handleGetBucketAcl(r, e);
    case 'PutBucketAcl':
      return acl.handlePutBucketAcl(r, e);
    case 'GetObjectAcl':
      return acl.handleGetObjectAcl(r, e);
    case 'PutObjectAcl':
      return acl.handlePutObjectAcl(r, e);
    case 'GetBucketPolicy':
      return policy.handleGetBucketPolicy(r, e);
    case 'PutBucketPolicy':
      return policy.handlePutBucketPolicy(r, e);
    case 'DeleteBucketPolicy':
      return policy.handleDeleteBucketPolicy(r, e);
    case 'GetBucketPolicyStatus':
      return policy.handleGetBucketPolicyStatus(r, e);
    case 'GetPublicAccessBlock':
      return policy.handleGetPublicAccessBlock(r, e);
    case 'PutPublicAccessBlock':
      return policy.handlePutPublicAccessBlock(r, e);
    case 'DeletePublicAccessBlock':
      return policy.handleDeletePublicAccessBlock(r, e);
    case 'GetBucketOwnershipControls':
      return acl.handleGetBucketOwnershipControls(r, e);
    case 'PutBucketOwnershipControls':
      return acl.handlePutBucketOwnershipControls(r, e);
    case 'DeleteBucketOwnershipControls':
      return acl.handleDeleteBucketOwnershipControls(r, e);
    case 'GetObjectLockConfiguration':
      return lock.handleGetObjectLockConfiguration(r, e);
    case 'PutObjectLockConfiguration':
      return lock.handlePutObjectLockConfiguration(r, e);
    case 'GetObjectRetention':
      return lock.handleGetObjectRetention(r, e);
    case 'PutObjectRetention':
      return lock.handlePutObjectRetention(r, e);
    case 'GetObjectLegalHold':
      return lock.handleGetObjectLegalHold(r, e);
    case 'PutObjectLegalHold':
      return lock.handlePutObjectLegalHold(r, e);
    case 'CorsPreflight':
      return handlePreflight(r, e.bucket);
    default: {
      const never: never = e;
      throw new Error(`unhandled endpoint ${(never as Endpoint).op}`);
    }
  }
}
