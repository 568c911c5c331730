/**
 * @module URI encoding as Signature Version 4 defines it.
 *
 * SigV4 encodes every byte of the UTF-8 form except the RFC 3986 unreserved set
 * `A-Z a-z 0-9 - . _ ~` as `%XY` with uppercase hex; a space is `%20`, never `+`.
 * Paths keep `/` and are encoded segment by segment; query keys and values encode
 * `/` too. This is stricter than `encodeURIComponent` (which leaves `!'()*` alone).
 *
 * Both sides use these: the client to build the wire path and the canonical request,
 * the server to rebuild the canonical request from the decoded path and query.
 */

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const HEX = '0123456789ABCDEF';

/**
 * Encodes `value` per SigV4: unreserved characters stay, every other UTF-8 byte
 * becomes `%XY`. With `keepSlash`, `/` stays too (for paths). Pure.
 * Throws URIError for a string with a lone surrogate (not encodable as UTF-8).
 */
export function uriEncode(value: string, keepSlash = false): string {
  let out = '';
  for (const ch of value) {
    if (UNRESERVED.test(ch) || (keepSlash && ch === '/')) {
      out += ch;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff)
      throw new URIError('lone surrogate in a string to URI-encode');
    for (const byte of Buffer.from(ch, 'utf8')) out += '%' + HEX[byte >> 4] + HEX[byte & 15];
  }
  return out;
}

export interface CanonicalUriOptions {
  /**
   * Encode each segment twice, as every AWS service except S3 expects (SigV4
   * "double-encodes" the already-encoded path). Default false: S3's rule.
   */
  doubleEncode?: boolean;
}

/**
 * The CanonicalURI line for a *decoded* absolute path (`/bucket/my key`): each
 * segment URI-encoded, `/` kept, no normalisation of `.`, `..` or empty segments
 * (S3 keys may contain them, so S3 does not normalise). An empty path is `/`.
 */
export function canonicalUri(decodedPath: string, options: CanonicalUriOptions = {}): string {
  if (decodedPath === '') return '/';
  const once = uriEncode(decodedPath, true);
  return options.doubleEncode ? uriEncode(once, true) : once;
}

/** A query as name/value pairs (repeated names allowed), or a record of single values. */
export type QueryInput = Iterable<readonly [string, string]> | Readonly<Record<string, string>>;

function pairsOf(query: QueryInput): (readonly [string, string])[] {
  if (Symbol.iterator in query) return [...(query as Iterable<readonly [string, string]>)];
  return Object.entries(query as Record<string, string>);
}

/**
 * The CanonicalQueryString line: every name and value SigV4-encoded, pairs sorted by
 * encoded name then encoded value (byte order), joined `name=value` with `&`; a
 * parameter without a value is `name=`. Input names/values are *decoded* strings.
 */
export function canonicalQuery(query: QueryInput | undefined): string {
  if (!query || (Array.isArray(query) && query.length === 0)) return '';
  const encoded = pairsOf(query).map(([k, v]) => [uriEncode(k), uriEncode(v)] as const);
  encoded.sort(([ak, av], [bk, bv]) =>
    ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0
  );
  return encoded.map(([k, v]) => `${k}=${v}`).join('&');
}

/**
 * Splits a raw (wire) query string into decoded pairs, for the server side. `+` is
 * kept literally (SigV4 clients send spaces as `%20`). Throws URIError on a
 * malformed escape.
 */
export function parseRawQuery(raw: string): [string, string][] {
  const text = raw.startsWith('?') ? raw.slice(1) : raw;
  if (text === '') return [];
  return text
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const eq = part.indexOf('=');
      const name = eq < 0 ? part : part.slice(0, eq);
      const value = eq < 0 ? '' : part.slice(eq + 1);
      return [decodeURIComponent(name), decodeURIComponent(value)];
    });
}
