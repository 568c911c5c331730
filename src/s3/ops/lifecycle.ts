/**
 * @module Bucket lifecycle: PutBucketLifecycleConfiguration, GetBucketLifecycleConfiguration,
 * DeleteBucketLifecycle (document: ../xml/lifecycle.ts; stored form and rule arithmetic:
 * store/lifecycle-config.ts; the rules are carried out by store/lifecycle.ts), the
 * `x-amz-expiration` response header of object reads and writes, and the `x-amz-abort-*`
 * headers of CreateMultipartUpload.
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import type { ObjectVersion } from '../../store/records.js';
import { sendEmpty, sendXml } from '../respond.js';
import { readBody } from '../read-body.js';
import { MAX_XML_BODY_BYTES } from '../xml/index.js';
import { S3Error } from '../errors.js';
import { parseLifecycleConfiguration, renderLifecycleConfiguration } from '../xml/lifecycle.js';
import { afterDays, currentExpiry, decodeLifecycle, encodeLifecycle, LIFECYCLE_CONFIG, lifecycleDayMs, lifecycleIn } from '../../store/lifecycle-config.js';
import { parseUploadId } from '../../store/upload-keys.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** S3 requires an integrity header on this PUT: Content-MD5 or any x-amz-checksum-*. */
function requireDigest(r: RequestContext): void {
  const has = r.headers['content-md5'] !== undefined || Object.keys(r.headers).some((h) => h.startsWith('x-amz-checksum-') && h !== 'x-amz-checksum-mode');
  if (!has) throw new S3Error('InvalidRequest', 'Missing required header for this request: Content-MD5 or x-amz-checksum-*');
}

export async function handlePutBucketLifecycle(r: RequestContext, e: Op<'PutBucketLifecycle'>): Promise<void> {
  r.store.headBucket(e.bucket);
  const bytes = await readBody(r, MAX_XML_BODY_BYTES);
  requireDigest(r);
  const config = parseLifecycleConfiguration(bytes);
  await r.store.putBucketConfig(e.bucket, LIFECYCLE_CONFIG, encodeLifecycle(config));
  sendEmpty(r, 200);
}

export async function handleGetBucketLifecycle(r: RequestContext, e: Op<'GetBucketLifecycle'>): Promise<void> {
  const raw = r.store.getBucketConfig(e.bucket, LIFECYCLE_CONFIG);
  if (!raw) throw new S3Error('NoSuchLifecycleConfiguration', undefined, { BucketName: e.bucket });
  sendXml(r, 200, renderLifecycleConfiguration(decodeLifecycle(raw)));
}

export async function handleDeleteBucketLifecycle(r: RequestContext, e: Op<'DeleteBucketLifecycle'>): Promise<void> {
  // 204 also when there is none (S3).
  await r.store.putBucketConfig(e.bucket, LIFECYCLE_CONFIG, null);
  sendEmpty(r, 204);
}

/** A rule ID in a header value: printable ASCII; anything else (and `"`, backslash, `%`) percent-encoded. */
function headerSafe(id: string): string {
  return id.replace(/[^\x20-\x7e]|["\\%]/gu, (c) => encodeURIComponent(c));
}

/** `Fri, 23 Dec 2012 00:00:00 GMT`: the HTTP date S3 writes in expiry-date. */
function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

/**
 * The `x-amz-expiration` header for `version`, the current version of `bucket`/`key`, when
 * an enabled Expiration rule (Days or Date) of the bucket will expire it:
 * `expiry-date="<HTTP date>", rule-id="<id>"` (the earliest such rule); `{}` otherwise, and
 * for a version that is not current (reads by versionId or as of a time pass `current: false`).
 * Reads the bucket's stored configuration; throws StoreError 'Corrupt' if it cannot be read.
 */
export function expirationHeader(r: RequestContext, bucket: string, key: string, version: ObjectVersion, current = true): Record<string, string> {
  if (!current) return {};
  const configs = r.store.repo.state.buckets.get(bucket)?.configs;
  const config = configs && lifecycleIn(configs);
  if (!config) return {};
  const x = currentExpiry(config, key, version, lifecycleDayMs());
  if (!x) return {};
  return { 'x-amz-expiration': `expiry-date="${httpDate(x.at)}", rule-id="${headerSafe(x.ruleId)}"` };
}

/**
 * `x-amz-abort-date` and `x-amz-abort-rule-id` for a new multipart upload `uploadId` of
 * `key` when an enabled AbortIncompleteMultipartUpload rule of the bucket will abort it (the
 * earliest such rule); `{}` otherwise. Throws StoreError 'Corrupt' for an unreadable configuration.
 */
export function abortHeaders(r: RequestContext, bucket: string, key: string, uploadId: string): Record<string, string> {
  const configs = r.store.repo.state.buckets.get(bucket)?.configs;
  const config = configs && lifecycleIn(configs);
  if (!config) return {};
  const parsed = parseUploadId(uploadId);
  const initiated = parsed && parsed !== 'legacy' ? parsed.initiated : Date.now();
  const dayMs = lifecycleDayMs();
  let best: { at: number; id: string } | undefined;
  for (const rule of config.rules) {
    if (!rule.enabled || rule.abortIncompleteUploadDays === undefined || !key.startsWith(rule.filter.prefix)) continue;
    const at = afterDays(initiated, rule.abortIncompleteUploadDays, dayMs);
    if (!best || at < best.at) best = { at, id: rule.id };
  }
  return best ? { 'x-amz-abort-date': httpDate(best.at), 'x-amz-abort-rule-id': headerSafe(best.id) } : {};
}
