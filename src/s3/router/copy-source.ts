/**
 * @module `x-amz-copy-source` and `x-amz-copy-source-range` (CopyObject, UploadPartCopy).
 *
 * The source is `bucket/key` or `/bucket/key`, URL-encoded as a path (percent-decoded
 * here; `+` stays `+`, as in request paths), optionally followed by `?versionId=…`
 * (a literal `?` in a key arrives as `%3F`).
 */
import { isVersionId } from '../../store/version-id.js';
import { parseQueryPairs, percentDecode } from '../../sigv4/raw-target.js';
import { S3Error } from '../errors.js';
import { validateBucketName } from './bucket-name.js';
import type { ByteRange, CopySource } from './endpoint.js';
import { validateKey } from './key.js';

const HEADER = 'x-amz-copy-source';
const RANGE_HEADER = 'x-amz-copy-source-range';

function invalid(message: string, value: string, name = HEADER): S3Error {
  return new S3Error('InvalidArgument', message, { ArgumentName: name, ArgumentValue: value });
}

/**
 * Parses an `x-amz-copy-source` value. Pure. Throws S3Error: `InvalidArgument` (no key, bad
 * escapes, a malformed `versionId`), `InvalidBucketName`, `KeyTooLongError`, `NotImplemented`
 * (an access-point ARN).
 */
export function parseCopySource(raw: string): CopySource {
  const value = raw.trim();
  const q = value.indexOf('?');
  const path = (q < 0 ? value : value.slice(0, q)).replace(/^\//, '');
  if (path.startsWith('arn:'))
    throw new S3Error('NotImplemented', 'Copying from an access point ARN is not implemented');
  const slash = path.indexOf('/');
  const mustName = 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey';
  if (slash <= 0 || slash === path.length - 1) throw invalid(mustName, raw);
  let bucket: string;
  let key: string;
  let versionId: string | undefined;
  try {
    bucket = percentDecode(path.slice(0, slash));
    key = percentDecode(path.slice(slash + 1));
    if (q >= 0)
      versionId = parseQueryPairs(value.slice(q + 1)).find(([k]) => k === 'versionId')?.[1];
  } catch {
    throw invalid('Invalid copy source encoding', raw);
  }
  validateBucketName(bucket);
  validateKey(key);
  if (versionId !== undefined && !isVersionId(versionId))
    throw new S3Error('InvalidArgument', 'Invalid version id specified', { ArgumentName: 'x-amz-copy-source', ArgumentValue: raw });
  return versionId !== undefined ? { bucket, key, versionId } : { bucket, key };
}

/**
 * Parses `x-amz-copy-source-range: bytes=first-last` (both required, first ≤ last). Pure.
 * Throws `InvalidArgument`. Whether the range fits the source is the handler's check.
 */
export function parseCopySourceRange(raw: string): ByteRange {
  const m = /^bytes=([0-9]{1,15})-([0-9]{1,15})$/.exec(raw.trim());
  const first = m ? Number(m[1]) : NaN;
  const last = m ? Number(m[2]) : NaN;
  if (!(first <= last))
    throw invalid(
      'The x-amz-copy-source-range value must be of the form bytes=first-last where first ' +
        'and last are the zero-based offsets of the first and last bytes to copy',
      raw,
      RANGE_HEADER
    );
  return { first, last };
}
