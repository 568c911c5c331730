/**
 * @module XML text escaping, and the policy for characters XML 1.0 cannot carry.
 *
 * XML 1.0 forbids the C0 controls other than tab, LF and CR, lone surrogates, U+FFFE and
 * U+FFFF — raw *and* as character references (`&#x1F;` is not well-formed XML 1.0), and
 * strict parsers (Go's encoding/xml, Java's) reject documents containing them. S3 keys may
 * contain them, so Strata never emits them, and decides per document:
 *
 * - {@link escapeXmlText} fails closed: it throws {@link XmlUnsafeCharacterError}.
 * - Listings (ListBucketResult, ListMultipartUploadsResult) ask {@link isXmlSafe}; when a
 *   string is not safe and the client did not ask for `encoding-type=url`, the renderer
 *   URL-encodes the whole response and says so with `<EncodingType>url</EncodingType>`
 *   (botocore and minio-go decode whenever that element is present). The key stays exact.
 * - Documents that only echo what the client sent (DeleteResult, multipart results,
 *   errors) replace such characters by U+FFFD ({@link replaceUnsafeXmlChars}).
 *
 * A CR is escaped as `&#13;`: XML end-of-line handling would otherwise turn it into LF.
 */
import { uriEncode } from '../../sigv4/encode.js';

/**
 * Characters that must never appear in an XML 1.0 document: C0 controls except tab, LF and
 * CR, U+FFFE, U+FFFF, and UTF-16 surrogates that are not part of a pair.
 */
const XML_UNSAFE =
  /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const XML_UNSAFE_ALL = new RegExp(XML_UNSAFE.source, 'g');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const NEEDS_ESCAPE = /[&<>"\r]/;
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\r': '&#13;',
};

/** Thrown by {@link escapeXmlText} for a string XML 1.0 cannot represent. */
export class XmlUnsafeCharacterError extends Error {
  override readonly name = 'XmlUnsafeCharacterError';
  readonly code = 'XML_UNSAFE_CHARACTER';
  /** Code point of the first offending character. */
  readonly codePoint: number;
  constructor(codePoint: number) {
    super(`U+${codePoint.toString(16).toUpperCase().padStart(4, '0')} cannot appear in XML 1.0`);
    this.codePoint = codePoint;
  }
}

/** Whether `value` can be written into an XML 1.0 document (escaped). Pure. */
export function isXmlSafe(value: string): boolean {
  return !XML_UNSAFE.test(value);
}

/**
 * `value` escaped for XML character data (`&`, `<`, `>`, `"` and CR become references).
 * Pure. Throws XmlUnsafeCharacterError when `value` is not {@link isXmlSafe}: callers pick
 * a policy (URL-encode or {@link replaceUnsafeXmlChars}) before calling.
 */
export function escapeXmlText(value: string): string {
  const bad = XML_UNSAFE.exec(value);
  if (bad) throw new XmlUnsafeCharacterError(bad[0].charCodeAt(0));
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/[&<>"\r]/g, (c) => ESCAPES[c]!);
}

/**
 * {@link escapeXmlText} for a string the caller has already found {@link isXmlSafe} (a
 * listing checks every key once to pick its encoding): escapes without testing again. Pure.
 */
export function escapeSafeXmlText(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/[&<>"\r]/g, (c) => ESCAPES[c]!);
}

/** `value` with every character XML 1.0 cannot carry replaced by U+FFFD. Pure. */
export function replaceUnsafeXmlChars(value: string): string {
  return isXmlSafe(value) ? value : value.replace(XML_UNSAFE_ALL, '\uFFFD');
}

/**
 * The `encoding-type=url` form of a listing string: every UTF-8 byte outside
 * `A-Za-z0-9-._~` and `/` percent-encoded (a space is `%20`, a `+` is `%2B`), which both
 * `unquote` and `unquote_plus` style decoders restore exactly. Lone surrogates (not
 * representable in UTF-8) become U+FFFD first. Pure.
 */
export function urlEncodeListingValue(value: string): string {
  return uriEncode(value.replace(LONE_SURROGATE, '\uFFFD'), true);
}
