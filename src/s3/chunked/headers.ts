/**
 * @module Reading the aws-chunked request headers into decoder options.
 */
import { S3Error } from '../errors.js';
import type { AwsChunkedOptions } from './decoder.js';

/**
 * Decoder options from a streaming request's headers: `x-amz-decoded-content-length`
 * (required: the object size) and `x-amz-trailer` (comma-separated trailer names).
 * `headers` has lower-case names. Pure. Throws S3Error `MissingContentLength` when the
 * decoded length is absent, `InvalidArgument` when it is not a decimal integer.
 */
export function awsChunkedOptionsFromHeaders(
  headers: Readonly<Record<string, string | undefined>>,
  payload: AwsChunkedOptions['payload']
): AwsChunkedOptions {
  const raw = headers['x-amz-decoded-content-length']?.trim();
  if (raw === undefined || raw === '')
    throw new S3Error(
      'MissingContentLength',
      'x-amz-decoded-content-length is required for aws-chunked (STREAMING-*) uploads.'
    );
  if (!/^[0-9]{1,15}$/.test(raw))
    throw new S3Error(
      'InvalidArgument',
      'x-amz-decoded-content-length must be a non-negative integer',
      {
        ArgumentName: 'x-amz-decoded-content-length',
        ArgumentValue: raw,
      }
    );
  const declaredTrailers = (headers['x-amz-trailer'] ?? '')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '');
  return { decodedLength: Number(raw), payload, declaredTrailers };
}
