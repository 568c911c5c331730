/**
 * @module S3 bucket naming rules (general purpose buckets), from
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html:
 * 3–63 characters of lower-case letters, digits, dots and hyphens; begin and end with a
 * letter or digit; no two adjacent dots; not formatted as an IPv4 address; none of the
 * reserved prefixes (`xn--`, `sthree-`, `amzn-s3-demo-`) or suffixes (`-s3alias`, `--ol-s3`,
 * `.mrap`, `--x-s3`, `--table-s3`). Legacy us-east-1 names (upper case, `_`) are refused.
 */
import { S3Error } from '../errors.js';

const MIN_BUCKET_NAME = 3;
const MAX_BUCKET_NAME = 63;
const RESERVED_PREFIXES = ['xn--', 'sthree-', 'amzn-s3-demo-'];
const RESERVED_SUFFIXES = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'];

/** Why `name` is not a valid bucket name, or undefined when it is. Pure. */
export function bucketNameProblem(name: string): string | undefined {
  if (name.length < MIN_BUCKET_NAME || name.length > MAX_BUCKET_NAME)
    return `must be ${MIN_BUCKET_NAME} to ${MAX_BUCKET_NAME} characters long`;
  if (!/^[a-z0-9.-]+$/.test(name))
    return 'may contain only lower-case letters, digits, dots and hyphens';
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name))
    return 'must begin and end with a letter or digit';
  if (name.includes('..')) return 'must not contain two adjacent dots';
  if (/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) return 'must not be an IP address';
  if (RESERVED_PREFIXES.some((p) => name.startsWith(p))) return 'uses a reserved prefix';
  if (RESERVED_SUFFIXES.some((s) => name.endsWith(s))) return 'uses a reserved suffix';
  return undefined;
}

/** Throws S3Error `InvalidBucketName` (with BucketName) unless `name` is valid. Pure. */
export function validateBucketName(name: string): void {
  const problem = bucketNameProblem(name);
  if (problem !== undefined)
    throw new S3Error('InvalidBucketName', `The specified bucket is not valid: it ${problem}.`, {
      BucketName: name,
    });
}
