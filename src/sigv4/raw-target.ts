/**
 * @module Server-side reading of a raw HTTP request-target (`/b/dir/../x%2By?list-type=2&prefix=a+b`).
 *
 * A verifying server must work from the request-target exactly as received: WHATWG URL
 * parsing (what `c.req.path` gives under Hono) removes `.`/`..` segments and decodes some
 * escapes, which changes both the S3 key and the canonical URI the client signed.
 *
 * - Paths are percent-decoded only: `+` stays `+` (S3 keys often contain `+`), `%2F` becomes
 *   `/`, and `.`, `..` and empty segments are kept.
 * - Query names and values are form-decoded: `+` is a space, as S3 does when it
 *   canonicalises a received query (clients such as AWS SDK for Java v1 send `+` for a
 *   space while signing `%20`).
 *
 * Every decoder is strict: a `%` not followed by two hex digits, or bytes that are not
 * UTF-8, throw URIError (callers map it to their protocol's error, e.g. S3 `InvalidURI`).
 */

/** The path and query of a request-target, both still percent-encoded as received. */
export interface RawTargetParts {
  /** From the first `/` up to `?` (or the end); `/` when the target has no path. */
  rawPath: string;
  /** After the first `?`, without it; '' when absent. */
  rawQuery: string;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Splits a request-target into raw path and raw query. Accepts origin-form (`/p?q`),
 * absolute-form (`http://host/p?q`; the authority is dropped) and asterisk-form (`*`,
 * read as `/`). Pure; never throws.
 */
export function splitTarget(rawTarget: string): RawTargetParts {
  let target = rawTarget;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?]*/.exec(target);
  if (scheme) target = target.slice(scheme[0].length);
  if (target === '*') target = '/';
  const q = target.indexOf('?');
  let rawPath = q < 0 ? target : target.slice(0, q);
  const rawQuery = q < 0 ? '' : target.slice(q + 1);
  if (!rawPath.startsWith('/')) rawPath = '/' + rawPath;
  return { rawPath, rawQuery };
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * Percent-decodes `raw` into a string. With `plusIsSpace`, `+` decodes to a space (query
 * form-decoding); otherwise it is kept. Characters outside ASCII (which HTTP/1.1 servers
 * such as Node's do not deliver) are taken as themselves. Throws URIError for a malformed
 * escape or for escaped bytes that are not valid UTF-8. Pure.
 */
export function percentDecode(raw: string, plusIsSpace = false): string {
  if (!/[%+]/.test(raw)) return raw;
  const bytes: number[] = [];
  let out = '';
  const flush = () => {
    if (bytes.length === 0) return;
    try {
      out += UTF8.decode(Uint8Array.from(bytes));
    } catch {
      throw new URIError('percent-escaped bytes are not valid UTF-8');
    }
    bytes.length = 0;
  };
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code === 0x25 /* % */) {
      const hi = i + 2 < raw.length ? hexValue(raw.charCodeAt(i + 1)) : -1;
      const lo = hi >= 0 ? hexValue(raw.charCodeAt(i + 2)) : -1;
      if (lo < 0) throw new URIError(`malformed percent-escape at offset ${i}`);
      bytes.push(hi * 16 + lo);
      i += 2;
      continue;
    }
    flush();
    out += plusIsSpace && code === 0x2b /* + */ ? ' ' : raw[i];
  }
  flush();
  return out;
}

/**
 * The query of a request as decoded name/value pairs in arrival order: `&`-separated,
 * split at the first `=`, form-decoded (`+` is a space); a parameter without `=` has the
 * value ''; empty segments (`a=1&&b=2`) are skipped. Throws URIError (see percentDecode).
 */
export function parseQueryPairs(rawQuery: string): [string, string][] {
  const text = rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery;
  if (text === '') return [];
  const pairs: [string, string][] = [];
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    pairs.push([percentDecode(name, true), percentDecode(value, true)]);
  }
  return pairs;
}
