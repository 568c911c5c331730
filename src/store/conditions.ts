/**
 * @module Conditional requests: ETag normalisation and the HTTP precondition rules as S3
 * applies them to GET/HEAD (and to copy sources), and to writes (If-None-Match and
 * If-Match, `*` or ETags, on PUT, Complete and Copy).
 */
import { StoreError } from './errors.js';
import { etagOf, type ObjectVersion } from './records.js';

export interface ReadConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
  /** ms since the epoch */
  ifModifiedSince?: number;
  ifUnmodifiedSince?: number;
}

export interface WriteConditions {
  /** '*': the key must not exist; ETags: the current object's ETag must not be one of them. */
  ifNoneMatch?: string;
  /** The current object's ETag must be one of these (or '*': must exist). */
  ifMatch?: string;
}

/**
 * The ETags of an If-Match / If-None-Match value: comma-separated, each stripped of
 * whitespace, a weak `W/` prefix, quotes and XML/HTML-escaped quotes, lower-cased.
 */
export function parseEtagList(value: string): string[] {
  return value
    .split(',')
    .map((t) =>
      t
        .trim()
        .replace(/^W\//i, '')
        .replace(/&quot;|&#34;|&#x22;/gi, '"')
        .replace(/^"+|"+$/g, '')
        .toLowerCase()
    )
    .filter((t) => t.length > 0);
}

export function etagMatches(list: string, etag: string): boolean {
  const tags = parseEtagList(list);
  return tags.includes('*') || tags.includes(etag.toLowerCase());
}

/** Seconds-resolution comparison, as HTTP dates carry no milliseconds. */
const secs = (ms: number) => Math.floor(ms / 1000);

/**
 * Applies GET/HEAD preconditions to `v` (S3 order): If-Match false -> 412; else
 * If-Unmodified-Since false (only when If-Match is absent) -> 412; If-None-Match matching ->
 * 304; else If-Modified-Since not modified (only when If-None-Match is absent) -> 304.
 * Throws StoreError 'PreconditionFailed' or 'NotModified'.
 */
export function checkRead(v: ObjectVersion, c: ReadConditions | undefined): void {
  if (!c) return;
  const etag = etagOf(v);
  if (c.ifMatch !== undefined) {
    if (!etagMatches(c.ifMatch, etag)) throw new StoreError('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', { detail: { Condition: 'If-Match' } });
  } else if (c.ifUnmodifiedSince !== undefined && secs(v.lastModified) > secs(c.ifUnmodifiedSince)) {
    throw new StoreError('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', { detail: { Condition: 'If-Unmodified-Since' } });
  }
  if (c.ifNoneMatch !== undefined) {
    if (etagMatches(c.ifNoneMatch, etag)) throw new StoreError('NotModified', 'Not Modified');
  } else if (c.ifModifiedSince !== undefined && secs(v.lastModified) <= secs(c.ifModifiedSince)) {
    throw new StoreError('NotModified', 'Not Modified');
  }
}

/**
 * Applies write preconditions to the key's current version (undefined: absent). Throws
 * StoreError `code` (PreconditionFailed when checked before the body was read,
 * ConditionalRequestConflict when a concurrent write changed the answer since).
 */
export function checkWrite(
  current: ObjectVersion | undefined,
  c: WriteConditions | undefined,
  code: 'PreconditionFailed' | 'ConditionalRequestConflict' = 'PreconditionFailed'
): void {
  if (!c) return;
  const msg =
    code === 'PreconditionFailed'
      ? 'At least one of the pre-conditions you specified did not hold'
      : 'A conflicting operation occurred. If using PutObject you can retry the request.';
  // If-None-Match: `*` fails when the key exists, an ETag list when the current ETag is in it.
  if (c.ifNoneMatch !== undefined && current && etagMatches(c.ifNoneMatch, etagOf(current))) {
    throw new StoreError(code, msg, { detail: { Condition: 'If-None-Match' } });
  }
  if (c.ifMatch !== undefined && (!current || !etagMatches(c.ifMatch, etagOf(current)))) {
    // AWS answers 404 NoSuchKey for If-Match on a missing key.
    if (!current && code === 'PreconditionFailed') throw new StoreError('NoSuchKey', 'The specified key does not exist.');
    throw new StoreError(code, msg, { detail: { Condition: 'If-Match' } });
  }
}
