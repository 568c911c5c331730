/**
 * @module Storage-engine errors: one class, a stable `code` per condition.
 *
 * The S3 layer maps codes to wire errors in one table (s3/errors.ts); nothing else
 * branches on messages. `retryAfterSeconds` is set for transient refusals (SlowDown).
 */

export type StoreErrorCode =
  // Client-visible conditions (the S3 layer maps these 1:1).
  | 'NoSuchBucket'
  | 'NoSuchKey'
  | 'NoSuchUpload'
  | 'NoSuchVersion'
  | 'BucketAlreadyOwnedByYou'
  | 'BucketAlreadyExists'
  | 'BucketNotEmpty'
  | 'InvalidBucketName'
  | 'KeyTooLong'
  | 'InvalidArgument'
  | 'InvalidRange'
  | 'PreconditionFailed'
  | 'NotModified'
  | 'ConditionalRequestConflict'
  | 'BadDigest'
  | 'InvalidDigest'
  | 'IncompleteBody'
  | 'EntityTooSmall'
  | 'EntityTooLarge'
  | 'InvalidPart'
  | 'InvalidPartOrder'
  | 'InvalidPartNumber'
  | 'InvalidRequest'
  | 'MalformedXML'
  | 'InvalidToken'
  | 'SlowDown'
  | 'BudgetExceeded'
  // The history budget is full (history-budget.ts): S3 403 QuotaExceeded, not retryable.
  | 'HistoryBudgetFull'
  // Encryption: a customer key that does not open the object (403), and a server key that
  // is missing or is not the one the object was written with (an operator problem: 500).
  | 'AccessDenied'
  | 'KeyUnavailable'
  | 'TooManyUploads'
  // Object Lock: a request the bucket's lock or versioning state does not allow (409).
  | 'InvalidBucketState'
  // Versions: an operation a delete marker does not support (GET by its versionId: 405).
  | 'MethodNotAllowed'
  // A request for what this server does not do yet (S3 501), e.g. a fork as of a past time.
  | 'NotImplemented'
  // Repository integrity and lifecycle.
  | 'Corrupt'
  | 'MissingBlob'
  | 'BrokenChain'
  | 'UnsupportedFormat'
  | 'AnchorConflict'
  | 'Unsafe'
  | 'Closed'
  | 'Aborted'
  // The storage backend failed: retryably (Unavailable: S3 503) or not (Io: S3 500). The
  // store's boundary (boundary.ts) wraps provider errors in these.
  | 'Unavailable'
  | 'Io';

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  /** Seconds a client should wait before retrying (SlowDown), when relevant. */
  readonly retryAfterSeconds?: number;
  /** Extra facts for the wire error (e.g. the object size for InvalidRange). */
  readonly detail?: Record<string, string | number>;
  /**
   * The operation failed, but what it wrote may yet be committed: its anchor move failed with
   * an unknown outcome and read back as not moved, and the backend may still apply it (a
   * guarded S3 write, which lands only if nothing moved the anchor since). What it wrote must
   * be left to GC, not deleted at once (carrier.ts abandonChunks).
   */
  readonly mayCommit?: true;

  constructor(
    code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown; retryAfterSeconds?: number; detail?: Record<string, string | number>; mayCommit?: boolean }
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StoreError';
    this.code = code;
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    if (options?.detail) this.detail = options.detail;
    if (options?.mayCommit) this.mayCommit = true;
  }
}

export function isStoreError(e: unknown, code?: StoreErrorCode): e is StoreError {
  return e instanceof StoreError && (code === undefined || e.code === code);
}
