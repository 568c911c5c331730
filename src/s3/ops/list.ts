/**
 * @module Listing operations: ListObjects (V1), ListObjectsV2, ListMultipartUploads.
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendXml } from '../respond.js';
import {
  renderListMultipartUploadsResult,
  renderListObjectsV1Result,
  renderListObjectsV2Result,
  type ListedObject,
} from '../xml/index.js';
import { etagOf } from '../../store/records.js';
import type { ListEntry, ListOptions, ListResult } from '../../store/list.js';
import { objectOwners } from '../authz/acl-object.js';
import type { ObjectAccess } from '../../store/records.js';
import type { OwnerInfo } from '../xml/owner.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** `owner` (undefined: owners not listed) names each object's owner (acl-object.ts). */
function listed(e: ListEntry, owner: ((access: ObjectAccess | undefined) => OwnerInfo) | undefined): ListedObject {
  const v = e.version;
  const o: ListedObject = { key: e.key, lastModified: v.lastModified, etag: etagOf(v), size: v.size };
  if (owner) o.owner = owner(v.access);
  if (v.checksums) {
    o.checksumAlgorithms = [v.checksums.primary.toUpperCase()];
    o.checksumType = v.checksums.type;
  }
  return o;
}

/** The listing of the bucket now, or as of the time the request asks for (s3/as-of.ts). */
function list(r: RequestContext, bucket: string, opts: ListOptions): Promise<ListResult> {
  return r.asOf === undefined ? r.store.listObjects(bucket, opts) : r.store.listObjectsAsOf(bucket, { ...opts, at: r.asOf, budget: r.budget });
}

export async function handleListObjects(r: RequestContext, e: Op<'ListObjects'>): Promise<void> {
  const p = e.params;
  const res = await list(r, e.bucket, {
    prefix: p.prefix,
    ...(p.delimiter ? { delimiter: p.delimiter } : {}),
    ...(p.marker ? { startAfter: p.marker } : {}),
    maxKeys: p.maxKeys,
  });
  const owner = objectOwners(r, e.bucket);
  const out: Parameters<typeof renderListObjectsV1Result>[0] = {
    bucket: e.bucket,
    prefix: p.prefix,
    marker: p.marker,
    maxKeys: p.maxKeys,
    isTruncated: res.isTruncated,
    contents: res.contents.map((c) => listed(c, owner)),
    commonPrefixes: res.commonPrefixes,
  };
  if (p.delimiter) out.delimiter = p.delimiter;
  // S3 returns NextMarker only with a delimiter; clients use the last key otherwise. A page
  // as of a time may end before its last key (store/as-of-list.ts): it always names where.
  if (res.isTruncated && (p.delimiter || r.asOf !== undefined) && res.nextMarker !== undefined) out.nextMarker = res.nextMarker;
  if (p.encodingType) out.encodingType = p.encodingType;
  sendXml(r, 200, renderListObjectsV1Result(out));
}

export async function handleListObjectsV2(r: RequestContext, e: Op<'ListObjectsV2'>): Promise<void> {
  const p = e.params;
  const res = await list(r, e.bucket, {
    prefix: p.prefix,
    ...(p.delimiter ? { delimiter: p.delimiter } : {}),
    ...(p.startAfter ? { startAfter: p.startAfter } : {}),
    ...(p.continuationToken ? { continuationToken: p.continuationToken } : {}),
    maxKeys: p.maxKeys,
  });
  const owner = p.fetchOwner ? objectOwners(r, e.bucket) : undefined;
  const out: Parameters<typeof renderListObjectsV2Result>[0] = {
    bucket: e.bucket,
    prefix: p.prefix,
    maxKeys: p.maxKeys,
    isTruncated: res.isTruncated,
    fetchOwner: p.fetchOwner,
    contents: res.contents.map((c) => listed(c, owner)),
    commonPrefixes: res.commonPrefixes,
  };
  if (p.delimiter) out.delimiter = p.delimiter;
  if (p.continuationToken !== undefined) out.continuationToken = p.continuationToken;
  if (res.nextContinuationToken) out.nextContinuationToken = res.nextContinuationToken;
  if (p.startAfter) out.startAfter = p.startAfter;
  if (p.encodingType) out.encodingType = p.encodingType;
  sendXml(r, 200, renderListObjectsV2Result(out));
}

export async function handleListMultipartUploads(r: RequestContext, e: Op<'ListMultipartUploads'>): Promise<void> {
  const p = e.params;
  const res = await r.store.listMultipartUploads(e.bucket, {
    prefix: p.prefix,
    ...(p.delimiter ? { delimiter: p.delimiter } : {}),
    ...(p.keyMarker ? { keyMarker: p.keyMarker } : {}),
    ...(p.uploadIdMarker ? { uploadIdMarker: p.uploadIdMarker } : {}),
    maxUploads: p.maxUploads,
  });
  const owner = objectOwners(r, e.bucket);
  const out: Parameters<typeof renderListMultipartUploadsResult>[0] = {
    bucket: e.bucket,
    keyMarker: p.keyMarker,
    uploadIdMarker: p.uploadIdMarker,
    maxUploads: p.maxUploads,
    isTruncated: res.isTruncated,
    uploads: res.uploads.map((u) => {
      const who = owner(u.access);
      return {
        key: u.key,
        uploadId: u.uploadId,
        initiated: new Date(u.initiated),
        initiator: who,
        owner: who,
        ...(u.checksumAlgorithm ? { checksumAlgorithm: u.checksumAlgorithm.toUpperCase() } : {}),
        ...(u.checksumType && u.checksumAlgorithm ? { checksumType: u.checksumType } : {}),
      };
    }),
    commonPrefixes: res.commonPrefixes,
    prefix: p.prefix,
  };
  if (p.delimiter) out.delimiter = p.delimiter;
  if (res.nextKeyMarker !== undefined) out.nextKeyMarker = res.nextKeyMarker;
  if (res.nextUploadIdMarker !== undefined) out.nextUploadIdMarker = res.nextUploadIdMarker;
  if (p.encodingType) out.encodingType = p.encodingType;
  sendXml(r, 200, renderListMultipartUploadsResult(out));
}
