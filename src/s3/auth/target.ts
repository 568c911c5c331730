/**
 * @module The request-target as the verifier reads it: decoded path, decoded query, and the
 * canonical URI / query lines of SigV4 rebuilt from them.
 *
 * Canonical URI: the path percent-decoded (never `+` → space) then strictly re-encoded,
 * without normalising `.`, `..` or `//` (S3's rule). Clients that leave some characters
 * unescaped on the wire (`!`, `*`, `'`, `(`, `)`) while signing that same wire form also
 * verify: the raw path is tried as a second candidate (it names the same key, so accepting
 * it grants nothing more). Canonical query: every parameter form-decoded (`+` is a space, as
 * S3 reads queries) then strictly re-encoded and sorted by sigv4's canonicalQuery.
 */
import { canonicalQuery, canonicalUri } from '../../sigv4/encode.js';
import { parseQueryPairs, percentDecode, splitTarget } from '../../sigv4/raw-target.js';
import { S3Error } from '../errors.js';

export interface ReadTarget {
  rawPath: string;
  rawQuery: string;
  /** Percent-decoded path, `+` kept. */
  path: string;
  /** Form-decoded query pairs in arrival order. */
  query: [string, string][];
}

/**
 * Splits and decodes a raw request-target. Pure. Throws S3Error `InvalidURI` for a malformed
 * percent-escape or escaped bytes that are not UTF-8.
 */
export function readTarget(rawTarget: string): ReadTarget {
  const { rawPath, rawQuery } = splitTarget(rawTarget);
  try {
    return { rawPath, rawQuery, path: percentDecode(rawPath), query: parseQueryPairs(rawQuery) };
  } catch (e) {
    if (e instanceof URIError) throw new S3Error('InvalidURI');
    throw e;
  }
}

/** The CanonicalURI lines worth trying for `t`, strict form first. Pure. */
export function canonicalUriCandidates(t: ReadTarget): string[] {
  const strict = canonicalUri(t.path);
  return t.rawPath === strict ? [strict] : [strict, t.rawPath];
}

/** The CanonicalQueryString line of `pairs` (all of them: drop X-Amz-Signature first). */
export function canonicalQueryOf(pairs: readonly (readonly [string, string])[]): string {
  return canonicalQuery(pairs);
}

/** The first value of query parameter `name` (case-sensitive), or undefined. */
export function queryParam(
  pairs: readonly (readonly [string, string])[],
  name: string
): string | undefined {
  for (const [k, v] of pairs) if (k === name) return v;
  return undefined;
}
