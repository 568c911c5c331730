/**
 * @module The one table from S3 answers to ProviderError codes.
 *
 * Status first, refined by the S3 error code where S3 overloads a status
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
 */
import { ProviderError, type ProviderErrorCode } from '../provider.js';
import type { S3Response } from './client.js';

/** S3 error codes with a meaning of their own, whatever the status. */
const CODE_MAP: Readonly<Record<string, ProviderErrorCode>> = {
  NoSuchKey: 'NotFound',
  PreconditionFailed: 'PreconditionFailed',
  ConditionalRequestConflict: 'PreconditionFailed',
  InvalidRange: 'InvalidRange',
  KeyTooLongError: 'InvalidKey',
  SlowDown: 'Unavailable',
  ServiceUnavailable: 'Unavailable',
  InternalError: 'Unavailable',
  RequestTimeout: 'Unavailable',
};

/** Status fallbacks when the code is missing (HEAD has no body) or not in CODE_MAP. */
function byStatus(status: number): ProviderErrorCode {
  if (status === 404) return 'NotFound';
  if (status === 412) return 'PreconditionFailed';
  if (status === 416) return 'InvalidRange';
  if (status === 429 || status >= 500) return 'Unavailable';
  return 'Io';
}

/**
 * The ProviderError for a non-2xx answer. A missing bucket (NoSuchBucket) is 'Io',
 * not 'NotFound': it is a configuration error, not an absent blob. Access and
 * signature errors (403) are 'Io' and not retryable.
 */
export function errorFromResponse(res: S3Response, what: string): ProviderError {
  const code = res.error?.code;
  const mapped = code === 'NoSuchBucket' ? 'Io' : (code && CODE_MAP[code]) || byStatus(res.status);
  const detail = [code, res.error?.message].filter(Boolean).join(': ');
  return new ProviderError(mapped, `${what}: HTTP ${res.status}${detail ? ` ${detail}` : ''}`, res.mayLand ? { mayLand: true } : undefined);
}
