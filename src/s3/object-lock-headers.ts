/**
 * @module Object Lock in request and response headers.
 *
 * Writes (PutObject, POST Object, CopyObject, CreateMultipartUpload) may ask for the new
 * version's lock:
 *   x-amz-object-lock-mode               GOVERNANCE | COMPLIANCE   } both or neither
 *   x-amz-object-lock-retain-until-date  ISO 8601, in the future   }
 *   x-amz-object-lock-legal-hold         ON | OFF
 * Accepted only on buckets with Object Lock enabled (elsewhere 400 InvalidRequest, as S3);
 * without a retention of its own the version gets the bucket's default retention. A PUT of
 * a body that gets any lock must carry Content-MD5 or an x-amz-checksum-* (S3 requires it,
 * so the stored bytes are the ones the client meant to lock). GET and HEAD answer the
 * version's lock in the same headers, to whom may read its retention / legal hold.
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import { S3Error, isS3Error } from './errors.js';
import { authorizeEndpoint } from './authorize.js';
import { isStoreError } from '../store/errors.js';
import { MAX_RETAIN_UNTIL_MS, type ObjectLock } from '../store/object-lock.js';
import type { BucketLockConfig, LockRequest } from '../store/object-lock-config.js';
import { CHECKSUM_NAMES } from '../store/records.js';
import { lockModeOf, parseIsoTime } from './xml/object-lock.js';

type Headers = Readonly<Record<string, string | undefined>>;

export const LOCK_MODE_HEADER = 'x-amz-object-lock-mode';
export const RETAIN_UNTIL_HEADER = 'x-amz-object-lock-retain-until-date';
export const LEGAL_HOLD_HEADER = 'x-amz-object-lock-legal-hold';
const LOCK_HEADERS = [LOCK_MODE_HEADER, RETAIN_UNTIL_HEADER, LEGAL_HOLD_HEADER] as const;

const invalidArgument = (message: string, name: string, value: string) =>
  new S3Error('InvalidArgument', message, { ArgumentName: name, ArgumentValue: value.slice(0, 64) });

/** The Object Lock configuration of `bucket`, or undefined (lock not enabled, or no such bucket: the store answers that). */
export function lockConfigOf(r: RequestContext, bucket: string): BucketLockConfig | undefined {
  try {
    return r.store.bucketLockConfig(bucket);
  } catch (err) {
    if (isStoreError(err, 'NoSuchBucket')) return undefined;
    throw err;
  }
}

/**
 * The lock a write into `bucket` asks for in `h` (the request's headers or a POST form's
 * fields), with the bucket's default retention when it names no retention of its own;
 * undefined when the new version gets no lock. `now` is the request's time (ms). Throws
 * S3Error InvalidRequest (lock headers on a bucket without Object Lock), InvalidArgument
 * (a mode or legal hold S3 does not know, a date that is not ISO 8601 or not in the future,
 * a mode without a date or a date without a mode). Reads the bucket's configuration only.
 */
export function lockRequestFromHeaders(r: RequestContext, bucket: string, h: Headers, now = Date.now()): LockRequest | undefined {
  const config = lockConfigOf(r, bucket);
  const asked = LOCK_HEADERS.some((n) => h[n] !== undefined);
  if (!config) {
    if (asked) throw new S3Error('InvalidRequest', 'Bucket is missing Object Lock Configuration');
    return undefined;
  }
  const req: LockRequest = {};
  const modeText = h[LOCK_MODE_HEADER];
  const dateText = h[RETAIN_UNTIL_HEADER];
  if ((modeText === undefined) !== (dateText === undefined)) {
    throw invalidArgument(`${RETAIN_UNTIL_HEADER} and ${LOCK_MODE_HEADER} must both be supplied`, modeText === undefined ? LOCK_MODE_HEADER : RETAIN_UNTIL_HEADER, '');
  }
  if (modeText !== undefined && dateText !== undefined) {
    const mode = lockModeOf(modeText);
    if (!mode) throw invalidArgument('Unknown wormMode directive.', LOCK_MODE_HEADER, modeText);
    const retainUntil = parseIsoTime(dateText);
    if (retainUntil === undefined || retainUntil > MAX_RETAIN_UNTIL_MS) {
      throw invalidArgument('The retain until date must be provided in ISO 8601 format', RETAIN_UNTIL_HEADER, dateText);
    }
    if (retainUntil <= now) throw invalidArgument('The retain until date must be in the future!', RETAIN_UNTIL_HEADER, dateText);
    req.retention = { mode, retainUntil };
  } else if (config.rule) {
    req.defaultRule = config.rule;
  }
  const hold = h[LEGAL_HOLD_HEADER];
  if (hold !== undefined) {
    const v = hold.trim();
    if (v !== 'ON' && v !== 'OFF') throw invalidArgument("Legal Hold must be either of 'ON' or 'OFF'", LEGAL_HOLD_HEADER, hold);
    req.legalHold = v === 'ON';
  }
  return req.retention || req.defaultRule || req.legalHold !== undefined ? req : undefined;
}

/** Whether `h` proves the body's integrity: Content-MD5, an x-amz-checksum-<alg> value or trailer. Pure. */
export function hasIntegrityHeader(h: Headers): boolean {
  if (h['content-md5'] !== undefined) return true;
  if (CHECKSUM_NAMES.some((n) => h[`x-amz-checksum-${n}`] !== undefined)) return true;
  return (h['x-amz-trailer'] ?? '').toLowerCase().includes('x-amz-checksum-');
}

/**
 * Throws S3Error InvalidRequest when a body that will be locked (`lock` defined) arrives
 * without Content-MD5 or an x-amz-checksum-* (`what`: 'Put Object' or 'Put Part'). Pure.
 */
export function requireLockIntegrity(h: Headers, lock: LockRequest | undefined, what: 'Put Object' | 'Put Part'): void {
  if (lock && !hasIntegrityHeader(h)) {
    throw new S3Error('InvalidRequest', `Content-MD5 OR x-amz-checksum- HTTP header is required for ${what} requests with Object Lock parameters`);
  }
}

/** The response headers describing `lock` (retention: mode and date; legal hold: ON/OFF). Pure. */
export function lockHeaders(lock: ObjectLock | undefined, parts: { retention: boolean; legalHold: boolean }): Record<string, string> {
  const out: Record<string, string> = {};
  if (parts.retention && lock?.mode && lock.retainUntil !== undefined) {
    out[LOCK_MODE_HEADER] = lock.mode;
    out[RETAIN_UNTIL_HEADER] = new Date(lock.retainUntil).toISOString();
  }
  if (parts.legalHold && lock?.legalHold !== undefined) out[LEGAL_HOLD_HEADER] = lock.legalHold ? 'ON' : 'OFF';
  return out;
}

/** Whether `principal` may perform `e` (a read of a retention or legal hold); never throws for AccessDenied. */
async function mayRead(r: RequestContext, e: Endpoint, principal: string | null): Promise<boolean> {
  try {
    await authorizeEndpoint(r, e, principal);
    return true;
  } catch (err) {
    if (isS3Error(err, 'AccessDenied')) return false;
    throw err;
  }
}

/**
 * The Object Lock headers of a GET/HEAD answer for version `lock` of bucket/key: the
 * retention to whom may GetObjectRetention, the legal hold to whom may GetObjectLegalHold
 * (as S3). Nothing, and no authorization work, for a version without a lock.
 */
export async function lockResponseHeaders(r: RequestContext, bucket: string, key: string, lock: ObjectLock | undefined): Promise<Record<string, string>> {
  if (!lock) return {};
  const principal = r.auth?.accessKeyId ?? null;
  const retention = lock.mode !== undefined && (await mayRead(r, { op: 'GetObjectRetention', bucket, key }, principal));
  const legalHold = lock.legalHold !== undefined && (await mayRead(r, { op: 'GetObjectLegalHold', bucket, key }, principal));
  return lockHeaders(lock, { retention, legalHold });
}

/** The CreateBucket header asking for a bucket with Object Lock. */
export const BUCKET_LOCK_HEADER = 'x-amz-bucket-object-lock-enabled';

/**
 * Whether a CreateBucket asks for Object Lock (`x-amz-bucket-object-lock-enabled: true`,
 * any case). Throws S3Error InvalidArgument for a value other than true or false. Pure.
 */
export function bucketLockRequested(h: Headers): boolean {
  const raw = h[BUCKET_LOCK_HEADER];
  if (raw === undefined) return false;
  const v = raw.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw invalidArgument(`${BUCKET_LOCK_HEADER} must be true or false`, BUCKET_LOCK_HEADER, raw);
}
