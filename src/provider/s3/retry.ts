/**
 * @module When and how long the s3 provider retries.
 *
 * Retried: 5xx, 429, S3 `SlowDown` / `RequestTimeout`, and transport failures
 * (resets, timeouts, refused connections). Delays grow exponentially with "equal
 * jitter" — half the step fixed, half random — so a throttled server always gets
 * some relief while clients still spread out; a `Retry-After` header is honoured up
 * to the cap. What may be retried at all (idempotence, replayable bodies, ambiguous
 * outcomes of conditional writes) is decided by the caller of `shouldRetry`.
 */

export interface RetryPolicy {
  /** Total attempts, the first included. */
  attempts: number;
  /** Step of the first retry, in ms; each later step doubles. */
  baseDelayMs: number;
  /** Largest single delay, in ms. */
  maxDelayMs: number;
}

/** Five attempts spanning roughly 0.05 + 0.1 + 0.2 + 0.4 s minimum, ~1.5 s at most: rides out a brief blip. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 5_000 };

/** Transport errors after which the request certainly never reached the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'UND_ERR_CONNECT_TIMEOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

/** Transport errors worth retrying (the request may or may not have been applied). */
const TRANSIENT_CODES = new Set([
  ...NOT_SENT_CODES,
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** S3 error codes that mean "try again later" whatever the status. */
const RETRYABLE_S3_CODES = new Set([
  'SlowDown',
  'RequestTimeout',
  'InternalError',
  'ServiceUnavailable',
  'Throttling',
  'ThrottlingException',
]);

/** S3 answers that promise the request was not applied (throttling before any work). */
const NOT_APPLIED_S3_CODES = new Set(['SlowDown', 'Throttling', 'ThrottlingException']);

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code ?? e?.cause?.code;
}

/** True for a transport error worth retrying. */
export function isTransientError(err: unknown): boolean {
  const code = codeOf(err);
  return code !== undefined && TRANSIENT_CODES.has(code);
}

/** True if the transport error proves the request was never sent. */
export function isNotSentError(err: unknown): boolean {
  const code = codeOf(err);
  return code !== undefined && NOT_SENT_CODES.has(code);
}

/** True for an HTTP answer worth retrying. */
export function isRetryableStatus(status: number, s3Code: string | undefined): boolean {
  return (
    status >= 500 || status === 429 || (s3Code !== undefined && RETRYABLE_S3_CODES.has(s3Code))
  );
}

/** True if the answer proves the request was not applied (so even a conditional write may retry). */
export function isNotAppliedStatus(status: number, s3Code: string | undefined): boolean {
  return status === 429 || (s3Code !== undefined && NOT_APPLIED_S3_CODES.has(s3Code));
}

/**
 * Delay before retry number `retry` (1 for the first retry), in ms: half of
 * min(max, base·2^(retry-1)) plus a random share of the other half, raised to a
 * `Retry-After` (seconds or HTTP date) when given, never above `maxDelayMs`.
 */
export function backoffDelay(
  policy: RetryPolicy,
  retry: number,
  retryAfter?: string,
  random = Math.random
): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  let delay = step / 2 + random() * (step / 2);
  if (retryAfter) {
    const seconds = Number(retryAfter);
    const hinted = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(retryAfter) - Date.now();
    if (Number.isFinite(hinted)) delay = Math.max(delay, Math.min(hinted, policy.maxDelayMs));
  }
  return Math.round(delay);
}
