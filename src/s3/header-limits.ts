/**
 * @module S3's limit on the size of a request's headers, checked before authentication:
 * S3 answers `400 RequestHeaderSectionTooLarge` when the header lines and the query string
 * together pass {@link MAX_REQUEST_HEADER_BYTES}. Whatever a request stores from its headers
 * (Cache-Control, Content-Disposition, x-amz-meta-*, ...) is therefore bounded by it too.
 */
import { MAX_REQUEST_HEADER_BYTES } from './limits.js';
import { S3Error } from './errors.js';

/** Bytes of one header line on the wire: `name: value` CRLF (value in its raw latin1 form). */
const lineBytes = (name: string, value: string) => name.length + value.length + 4;

/**
 * Size of the header section as S3 measures it: each header line plus the query string.
 * `rawHeaders` is Node's flat [name, value, ...] list (values as received, one byte per
 * character); `rawTarget` the request-target. Pure.
 */
export function headerSectionBytes(rawHeaders: readonly string[], rawTarget: string): number {
  let n = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) n += lineBytes(rawHeaders[i]!, rawHeaders[i + 1]!);
  const q = rawTarget.indexOf('?');
  return q < 0 ? n : n + rawTarget.length - q - 1;
}

/**
 * Throws S3Error `RequestHeaderSectionTooLarge` (400, MaxSizeAllowed) when the request's
 * headers and query string pass {@link MAX_REQUEST_HEADER_BYTES}. Pure.
 */
export function checkHeaderSection(rawHeaders: readonly string[], rawTarget: string): void {
  if (headerSectionBytes(rawHeaders, rawTarget) > MAX_REQUEST_HEADER_BYTES) {
    throw new S3Error('RequestHeaderSectionTooLarge', undefined, { MaxSizeAllowed: MAX_REQUEST_HEADER_BYTES });
  }
}
