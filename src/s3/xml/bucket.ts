/**
 * @module Bucket documents: the CreateBucketConfiguration request body and the
 * GetBucketLocation result.
 */
import { s3Root, xmlDocument, type Xml } from './build.js';
import { escapeXmlText } from './escape.js';
import { leafText, parseRoot } from './read.js';

export interface CreateBucketConfiguration {
  /** The requested region; undefined when the body is empty or the element absent/empty. */
  locationConstraint?: string;
}

/**
 * Parses a CreateBucket body. An empty (or whitespace-only) body is allowed and means no
 * configuration (`aws s3 mb`, rclone and restic send none). Elements other than
 * LocationConstraint (Bucket, Location for directory buckets) are ignored. Pure. Throws
 * S3Error `MalformedXML` for anything else that is not a `<CreateBucketConfiguration>`.
 */
export function parseCreateBucketConfiguration(
  body: string | Uint8Array
): CreateBucketConfiguration {
  const empty =
    typeof body === 'string'
      ? body.trim() === ''
      : body.every((b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09);
  if (empty) return {};
  const root = parseRoot(body, 'CreateBucketConfiguration');
  const location = leafText(root, 'LocationConstraint')?.trim();
  return location ? { locationConstraint: location } : {};
}

/** GetBucketVersioning's answer for a bucket that was never versioned: no Status. Pure. */
export function renderVersioningConfiguration(): string {
  return xmlDocument(s3Root('VersioningConfiguration'));
}

/**
 * `<LocationConstraint>` for GetBucketLocation: empty for us-east-1 (S3's legacy "null"
 * location, which clients read as us-east-1) or when `region` is undefined/empty. Pure.
 */
export function renderLocationConstraint(region: string | undefined): string {
  const value = region && region !== 'us-east-1' ? escapeXmlText(region) : '';
  // The escaped text is markup already; an empty one renders <LocationConstraint .../>.
  return xmlDocument(s3Root('LocationConstraint', value === '' ? undefined : (value as Xml)));
}
