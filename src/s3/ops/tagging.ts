/** @module Object tagging: Get/Put/DeleteObjectTagging. */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { MAX_XML_BODY_BYTES, parseTagging, renderTagging } from '../xml/index.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

export async function handleGetObjectTagging(r: RequestContext, e: Op<'GetObjectTagging'>): Promise<void> {
  const tags = await r.store.getObjectTagging(e.bucket, e.key);
  sendXml(r, 200, renderTagging(Object.entries(tags).map(([key, value]) => ({ key, value }))));
}

export async function handlePutObjectTagging(r: RequestContext, e: Op<'PutObjectTagging'>): Promise<void> {
  const { tags } = parseTagging(await readBody(r, MAX_XML_BODY_BYTES));
  await r.store.putObjectTagging(e.bucket, e.key, Object.fromEntries(tags.map((t) => [t.key, t.value])));
  sendEmpty(r, 200);
}

export async function handleDeleteObjectTagging(r: RequestContext, e: Op<'DeleteObjectTagging'>): Promise<void> {
  await r.store.putObjectTagging(e.bucket, e.key, {});
  sendEmpty(r, 204);
}
