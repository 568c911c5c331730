/**
 * @module The one mapping from storage-engine errors to S3 errors. Provider errors never get
 * here unwrapped: the store's boundary (store/boundary.ts) turns them into StoreErrors.
 */
import { StoreError, type StoreErrorCode } from '../store/errors.js';
import { S3Error, type S3ErrorCode } from './errors.js';

/** Store codes that are S3 codes under another name; the rest share the name. */
const RENAMED: Partial<Record<StoreErrorCode, S3ErrorCode>> = {
  KeyTooLong: 'KeyTooLongError',
  InvalidToken: 'InvalidArgument',
  BudgetExceeded: 'ServiceUnavailable',
  // A full history budget: 403, so SDKs do not retry (retrying cannot free room; a 503 would
  // be retried forever). The message names the budget, its size, its use and how to free room.
  HistoryBudgetFull: 'QuotaExceeded',
  // The per-bucket cap on uploads in progress: S3 has no such limit, so no code of its own.
  // InvalidRequest (400) is what S3 answers a request it will not carry out in the bucket's
  // present state, and being a 400 SDKs do not retry it: retrying cannot help until uploads
  // end (the message says how to free them); a 503 would only delay the failure.
  TooManyUploads: 'InvalidRequest',
  Unsafe: 'ServiceUnavailable',
  Closed: 'ServiceUnavailable',
  // A backend failure a retry may get past (the provider said so).
  Unavailable: 'ServiceUnavailable',
  Aborted: 'RequestTimeout',
};

/** Integrity and I/O failures: the client gets a 500 (never wrong data), the log gets why. */
const INTERNAL: ReadonlySet<StoreErrorCode> = new Set(['Corrupt', 'MissingBlob', 'BrokenChain', 'UnsupportedFormat', 'AnchorConflict', 'Io', 'KeyUnavailable']);

/** Converts any error to an S3Error; unknown ones become InternalError (message hidden). */
export function s3ErrorOf(err: unknown): S3Error {
  if (err instanceof S3Error) return err;
  if (err instanceof StoreError) {
    if (INTERNAL.has(err.code)) return new S3Error('InternalError');
    // A backend failure's message names backend details (paths, hosts): never sent.
    if (err.code === 'Unavailable') return new S3Error('ServiceUnavailable');
    if (err.code === 'BadDigest' && err.detail?.Kind === 'XAmzContentSHA256Mismatch') {
      return new S3Error('XAmzContentSHA256Mismatch', err.message);
    }
    if (err.code === 'InvalidArgument' && err.detail?.Kind === 'InvalidRetentionPeriod') return new S3Error('InvalidRetentionPeriod', err.message);
    const code = (RENAMED[err.code] ?? err.code) as S3ErrorCode;
    const detail: Record<string, string> = {};
    for (const [k, v] of Object.entries(err.detail ?? {})) if (k !== 'Kind' && k !== 'Condition') detail[k] = String(v);
    try {
      return new S3Error(code, err.code === 'InvalidToken' ? 'The continuation token provided is incorrect' : err.message, detail);
    } catch {
      return new S3Error('InternalError');
    }
  }
  return new S3Error('InternalError');
}

/** Seconds to put in Retry-After for a refused request, if any. */
export function retryAfterOf(err: unknown): number | undefined {
  if (err instanceof StoreError && err.retryAfterSeconds !== undefined) return err.retryAfterSeconds;
  if (err instanceof StoreError && (err.code === 'Unsafe' || err.code === 'Closed')) return 5;
  return undefined;
}
