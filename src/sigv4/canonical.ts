/**
 * @module The canonical request and the string to sign (SigV4 tasks 1 and 2).
 *
 *   CanonicalRequest = Method \n CanonicalURI \n CanonicalQueryString \n
 *                      CanonicalHeaders \n SignedHeaders \n HashedPayload
 *   StringToSign     = "AWS4-HMAC-SHA256" \n AmzDate \n Scope \n hex(SHA256(CanonicalRequest))
 *   Scope            = yyyymmdd/region/service/aws4_request
 *
 * Everything here is pure and shared by the signing client and the verifying server.
 */
import { sha256Hex } from './hash.js';

export const ALGORITHM = 'AWS4-HMAC-SHA256';

/** Header values as received or to be sent; arrays are repeated headers. */
export type HeaderInput = Readonly<Record<string, string | readonly string[] | number | undefined>>;

/** `yyyymmddThhmmssZ`, the `x-amz-date` form, of an instant (milliseconds dropped). */
export function formatAmzDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** The last text parseAmzDate parsed and its time (NaN: malformed): requests arriving within
 * the same second carry the same x-amz-date, and a server parses one per request. */
let lastAmzDate = { value: '', time: NaN };

/** Parses `yyyymmddThhmmssZ`; returns undefined when malformed. */
export function parseAmzDate(value: string): Date | undefined {
  if (value !== lastAmzDate.value) {
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
    lastAmzDate = { value, time: m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN };
  }
  return Number.isNaN(lastAmzDate.time) ? undefined : new Date(lastAmzDate.time);
}

/** `yyyymmdd/region/service/aws4_request`. */
export function credentialScope(amzDate: string, region: string, service: string): string {
  return `${amzDate.slice(0, 8)}/${region}/${service}/aws4_request`;
}

/** Trims a header value and collapses each run of spaces and tabs to one space. */
export function normalizeHeaderValue(value: string): string {
  return value.trim().replace(/[ \t]+/g, ' ');
}

/**
 * Lower-cased header map: repeated headers (array values, or names differing only
 * in case) are joined with `,` in the given order; values normalised; undefined
 * values dropped. Pure.
 */
export function lowerCaseHeaders(headers: HeaderInput): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const values = Array.isArray(raw) ? raw : [String(raw)];
    const lower = name.toLowerCase();
    const joined = values.map((v: string) => normalizeHeaderValue(v)).join(',');
    const prev = out.get(lower);
    out.set(lower, prev === undefined ? joined : `${prev},${joined}`);
  }
  return out;
}

/**
 * The distinct lower-case names of `signed`, sorted. A list that already is so (what every
 * signer sends: SignedHeaders is sorted lower-case) is taken as it is, without a set or a sort.
 */
function sortedNames(signed: Iterable<string>): string[] {
  const list = Array.isArray(signed) ? (signed as string[]) : [...signed];
  let ok = true;
  for (let i = 0; i < list.length && ok; i++) {
    const n = list[i]!;
    ok = n === n.toLowerCase() && (i === 0 || list[i - 1]! < n);
  }
  return ok ? list.slice() : [...new Set(list.map((n) => n.toLowerCase()))].sort();
}

/**
 * CanonicalHeaders and SignedHeaders for the headers named in `signed` (lower-case
 * names). Throws Error if a signed header is absent from `headers`: a verifier must
 * reject such a request, and a signer has a bug.
 */
export function canonicalHeaders(
  headers: ReadonlyMap<string, string>,
  signed: Iterable<string>
): { canonical: string; signedHeaders: string } {
  const names = sortedNames(signed);
  let canonical = '';
  for (const name of names) {
    const value = headers.get(name);
    if (value === undefined) throw new Error(`signed header ${name} is missing`);
    canonical += `${name}:${value}\n`;
  }
  return { canonical, signedHeaders: names.join(';') };
}

export interface CanonicalRequestParts {
  method: string;
  /** Already canonical (see canonicalUri). */
  canonicalUri: string;
  /** Already canonical (see canonicalQuery). */
  canonicalQuery: string;
  /** From canonicalHeaders(). */
  canonicalHeaders: string;
  signedHeaders: string;
  /** Hex SHA-256 of the body, or UNSIGNED-PAYLOAD / a streaming marker. */
  payloadHash: string;
}

/** Joins the six lines of the canonical request. */
export function canonicalRequest(p: CanonicalRequestParts): string {
  return `${p.method.toUpperCase()}\n${p.canonicalUri}\n${p.canonicalQuery}\n${p.canonicalHeaders}\n${p.signedHeaders}\n${p.payloadHash}`;
}

/**
 * The string to sign for a canonical request made at `amzDate` in `scope`. A string is
 * hashed as UTF-8; a verifier passes the request's bytes (see {@link wireBytes}).
 */
export function stringToSign(amzDate: string, scope: string, canonicalRequestText: string | Uint8Array): string {
  return `${ALGORITHM}\n${amzDate}\n${scope}\n${sha256Hex(canonicalRequestText)}`;
}

/**
 * The bytes a canonical request rebuilt from a *received* request stands for. HTTP/1.1
 * servers such as Node's hand header values over one character per wire byte (latin1), and
 * SigV4 signs the bytes on the wire, so the canonical request is hashed as latin1: a value
 * sent as UTF-8 is hashed as those UTF-8 bytes, never re-encoded. Every other part of a
 * canonical request (method, URI-encoded path and query, names, hashes) is ASCII. A text
 * with a character above U+00FF (not something a parser delivers) is hashed as UTF-8.
 */
export function wireBytes(canonicalRequestText: string): Uint8Array {
  return /[^\u0000-\u00ff]/.test(canonicalRequestText)
    ? Buffer.from(canonicalRequestText, 'utf8')
    : Buffer.from(canonicalRequestText, 'latin1');
}

/**
 * What {@link wireBytes} hashes, without copying when it need not: an all-ASCII text (the
 * usual canonical request) is the same bytes in latin1 and UTF-8, so the string itself is
 * passed on (hashed as UTF-8); any other text becomes wireBytes' bytes.
 */
export function wireText(canonicalRequestText: string): string | Uint8Array {
  return /[^\u0000-\u007f]/.test(canonicalRequestText) ? wireBytes(canonicalRequestText) : canonicalRequestText;
}
