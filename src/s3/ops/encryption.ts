/**
 * @module Bucket default encryption: PutBucketEncryption, GetBucketEncryption,
 * DeleteBucketEncryption (document and storage: ../sse-config.ts).
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { MAX_XML_BODY_BYTES } from '../xml/index.js';
import { S3Error } from '../errors.js';
import {
  bucketDefaultEncryption,
  ENCRYPTION_CONFIG,
  encodeBucketEncryption,
  parseBucketEncryption,
  renderBucketEncryption,
} from '../sse-config.js';
import { sseS3Root } from '../sse.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

export async function handlePutBucketEncryption(r: RequestContext, e: Op<'PutBucketEncryption'>): Promise<void> {
  r.store.headBucket(e.bucket);
  const config = parseBucketEncryption(await readBody(r, MAX_XML_BODY_BYTES));
  // A default the server could not honour would turn every later write into an error.
  if (!sseS3Root(r)) {
    throw new S3Error(
      'NotImplemented',
      'Default encryption (SSE-S3) needs the server master key: configure one (--master-key-file or STRATA_MASTER_KEY).'
    );
  }
  await r.store.putBucketConfig(e.bucket, ENCRYPTION_CONFIG, encodeBucketEncryption(config));
  sendEmpty(r, 200);
}

export async function handleGetBucketEncryption(r: RequestContext, e: Op<'GetBucketEncryption'>): Promise<void> {
  const config = bucketDefaultEncryption(r, e.bucket);
  if (!config) throw new S3Error('ServerSideEncryptionConfigurationNotFoundError', undefined, { BucketName: e.bucket });
  sendXml(r, 200, renderBucketEncryption(config));
}

export async function handleDeleteBucketEncryption(r: RequestContext, e: Op<'DeleteBucketEncryption'>): Promise<void> {
  await r.store.putBucketConfig(e.bucket, ENCRYPTION_CONFIG, null);
  sendEmpty(r, 204);
}
