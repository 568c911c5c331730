/**
 * @module S3 protocol limits shared by the router, the XML body parsers and the handlers.
 * Values are S3's (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html and the
 * API reference of each operation) unless a comment says otherwise.
 */

/** Longest object key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/** Part numbers run from 1 to this, inclusive. */
export const MAX_PART_NUMBER = 10_000;

/** Most entries in one ListObjects(V2) / ListParts / ListMultipartUploads page; larger asks are clamped. */
export const MAX_LIST_ENTRIES = 1000;

/** Most keys in one DeleteObjects request. */
export const MAX_DELETE_OBJECTS = 1000;

/** Most tags on an object (buckets allow 50). */
export const MAX_OBJECT_TAGS = 10;
/** Most tags on a bucket. */
export const MAX_BUCKET_TAGS = 50;
/** Longest tag key, in Unicode characters. */
export const MAX_TAG_KEY_CHARS = 128;
/** Longest tag value, in Unicode characters. */
export const MAX_TAG_VALUE_CHARS = 256;

/** Most rules in a bucket CORS configuration. */
export const MAX_CORS_RULES = 100;

/**
 * Largest CompleteMultipartUpload body, in bytes. S3 does not publish one; 10 000 parts
 * with an ETag and every checksum element take about 4.5 MB, so 8 MiB leaves room for
 * indentation while still bounding memory (most other bodies are capped at 1 MiB).
 */
export const MAX_COMPLETE_MULTIPART_BODY_BYTES = 8 * 1024 * 1024;

/** Longest validity of a presigned URL: 7 days, in seconds (X-Amz-Expires). */
export const MAX_PRESIGNED_EXPIRES_SECONDS = 7 * 24 * 3600;

/** Largest allowed difference between a request's time and the server's: 15 min, in ms. */
export const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;

/**
 * Largest request header section, in bytes: every header line (`name: value` CRLF) plus
 * the query string. S3 limits "the PUT request header" to 8 KB and answers
 * `400 RequestHeaderSectionTooLarge` with MaxSizeAllowed 8192 past it (for any request).
 * Node refuses header blocks over 16 KiB itself (431) before any of this runs.
 */
export const MAX_REQUEST_HEADER_BYTES = 8192;
