/**
 * @module S3 versioning: Put/GetBucketVersioning, ListObjectVersions, and the
 * `x-amz-version-id` header every object operation answers in a versioned bucket.
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { MAX_XML_BODY_BYTES } from '../xml/index.js';
import { parseVersioningConfiguration, renderListVersionsResult, renderVersioningStatus, type ListedVersion } from '../xml/versions.js';
import { etagOf, type ObjectVersion } from '../../store/records.js';
import { objectOwners } from '../authz/acl-object.js';

type Op<K extends Endpoint['op']> = Extract<Endpoint, { op: K }>;

/**
 * The `x-amz-version-id` header for a response about `versionId` of an object in `bucket`:
 * sent when the bucket's versioning was ever enabled, or the request named a version (S3
 * sends none for buckets that never had versioning).
 */
export function versionIdHeader(r: RequestContext, bucket: string, versionId: string | undefined, named = false): Record<string, string> {
  if (versionId === undefined) return {};
  if (!named && r.store.getVersioning(bucket) === undefined) return {};
  return { 'x-amz-version-id': versionId };
}

/**
 * The `x-amz-version-id` of a write's answer (PUT, COPY, Complete): the new version's id;
 * none for a null write (never versioned or Suspended), as S3 answers.
 */
export function writtenVersionHeader(versionId: string): Record<string, string> {
  return versionId === 'null' ? {} : { 'x-amz-version-id': versionId };
}

/** `x-amz-copy-source-version-id`: the source version copied, when its bucket is versioned or the source named one. */
export function copySourceVersionHeader(r: RequestContext, source: { bucket: string; versionId?: string }, copied: string): Record<string, string> {
  return versionIdHeader(r, source.bucket, copied, source.versionId !== undefined)['x-amz-version-id'] !== undefined
    ? { 'x-amz-copy-source-version-id': copied }
    : {};
}

export async function handleGetBucketVersioning(r: RequestContext, e: Op<'GetBucketVersioning'>): Promise<void> {
  sendXml(r, 200, renderVersioningStatus(r.store.getVersioning(e.bucket)));
}

/** PutBucketVersioning: Enabled or Suspended (MFA Delete is refused with 501). */
export async function handlePutBucketVersioning(r: RequestContext, e: Op<'PutBucketVersioning'>): Promise<void> {
  r.store.headBucket(e.bucket);
  const req = parseVersioningConfiguration(await readBody(r, MAX_XML_BODY_BYTES));
  await r.store.putVersioning(e.bucket, req.status);
  sendEmpty(r, 200);
}

export async function handleListObjectVersions(r: RequestContext, e: Op<'ListObjectVersions'>): Promise<void> {
  const p = e.params;
  const res = await r.store.listVersions(e.bucket, {
    prefix: p.prefix,
    ...(p.delimiter ? { delimiter: p.delimiter } : {}),
    ...(p.keyMarker ? { keyMarker: p.keyMarker } : {}),
    ...(p.versionIdMarker ? { versionIdMarker: p.versionIdMarker } : {}),
    maxKeys: p.maxKeys,
    budget: r.budget,
  });
  const owner = objectOwners(r, e.bucket);
  const listed = (key: string, versionId: string, isLatest: boolean, v: ObjectVersion): ListedVersion => {
    const out: ListedVersion = { key, versionId, isLatest, lastModified: v.lastModified, deleteMarker: v.deleteMarker };
    if (owner) out.owner = owner(v.access);
    if (!v.deleteMarker) {
      out.etag = etagOf(v);
      out.size = v.size;
      if (v.checksums) {
        out.checksumAlgorithms = [v.checksums.primary.toUpperCase()];
        out.checksumType = v.checksums.type;
      }
    }
    return out;
  };
  sendXml(
    r,
    200,
    renderListVersionsResult({
      bucket: e.bucket,
      prefix: p.prefix,
      keyMarker: p.keyMarker,
      versionIdMarker: p.versionIdMarker,
      maxKeys: p.maxKeys,
      ...(p.delimiter ? { delimiter: p.delimiter } : {}),
      isTruncated: res.isTruncated,
      ...(res.nextKeyMarker !== undefined ? { nextKeyMarker: res.nextKeyMarker } : {}),
      ...(res.nextVersionIdMarker !== undefined ? { nextVersionIdMarker: res.nextVersionIdMarker } : {}),
      versions: res.versions.map((v) => listed(v.key, v.versionId, v.isLatest, v.version)),
      commonPrefixes: res.commonPrefixes,
      ...(p.encodingType ? { encodingType: p.encodingType } : {}),
    })
  );
}
