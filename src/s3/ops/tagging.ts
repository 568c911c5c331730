/**
 * @module Tagging: Get/Put/DeleteObjectTagging (tags in the object's version record) and
 * Get/Put/DeleteBucketTagging (the bucket's tag set, kept as its `tagging` configuration).
 */
import { versionIdHeader } from './versions.js';
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { MAX_XML_BODY_BYTES, parseTagging, renderTagging, type Tag } from '../xml/index.js';
import { MAX_BUCKET_TAGS } from '../limits.js';
import { S3Error } from '../errors.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

export async function handleGetObjectTagging(r: RequestContext, e: Op<'GetObjectTagging'>): Promise<void> {
  const tags = await r.store.getObjectTagging(e.bucket, e.key, e.versionId);
  const id = e.versionId ?? (await r.store.version(e.bucket, e.key)).versionId;
  sendXml(r, 200, renderTagging(Object.entries(tags).map(([key, value]) => ({ key, value }))), versionIdHeader(r, e.bucket, id, e.versionId !== undefined));
}

export async function handlePutObjectTagging(r: RequestContext, e: Op<'PutObjectTagging'>): Promise<void> {
  const { tags } = parseTagging(await readBody(r, MAX_XML_BODY_BYTES));
  const id = await r.store.putObjectTagging(e.bucket, e.key, Object.fromEntries(tags.map((t) => [t.key, t.value])), e.versionId);
  sendEmpty(r, 200, versionIdHeader(r, e.bucket, id, e.versionId !== undefined));
}

export async function handleDeleteObjectTagging(r: RequestContext, e: Op<'DeleteObjectTagging'>): Promise<void> {
  const id = await r.store.putObjectTagging(e.bucket, e.key, {}, e.versionId);
  sendEmpty(r, 204, versionIdHeader(r, e.bucket, id, e.versionId !== undefined));
}

/** The configuration name a bucket's tag set is stored under (JSON `[{key, value}]`). */
const BUCKET_TAGGING = 'tagging';

export async function handleGetBucketTagging(r: RequestContext, e: Op<'GetBucketTagging'>): Promise<void> {
  const raw = r.store.getBucketConfig(e.bucket, BUCKET_TAGGING);
  if (!raw) throw new S3Error('NoSuchTagSet', undefined, { BucketName: e.bucket });
  sendXml(r, 200, renderTagging(JSON.parse(Buffer.from(raw).toString('utf8')) as Tag[]));
}

export async function handlePutBucketTagging(r: RequestContext, e: Op<'PutBucketTagging'>): Promise<void> {
  const { tags } = parseTagging(await readBody(r, MAX_XML_BODY_BYTES), MAX_BUCKET_TAGS);
  // S3 answers 204 No Content to PutBucketTagging.
  await r.store.putBucketConfig(e.bucket, BUCKET_TAGGING, Buffer.from(JSON.stringify(tags)));
  sendEmpty(r, 204);
}

export async function handleDeleteBucketTagging(r: RequestContext, e: Op<'DeleteBucketTagging'>): Promise<void> {
  await r.store.putBucketConfig(e.bucket, BUCKET_TAGGING, null);
  sendEmpty(r, 204);
}
