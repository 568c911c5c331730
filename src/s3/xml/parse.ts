/**
 * @module A small, safe XML parser for S3 request bodies.
 *
 * S3 request documents are tiny trees of elements with text leaves, so this parser keeps
 * only that: element local names (namespace prefixes are tolerated and dropped), their
 * attributes, child elements and directly contained text. It is deliberately not a general
 * XML processor:
 *
 * - no DOCTYPE (hence no entity definitions, no external entities, no "billion laughs");
 *   only the five predefined entities and numeric character references are understood;
 * - bounded: input size ({@link MAX_XML_BODY_BYTES} unless the caller says otherwise),
 *   nesting depth and element count; the scan is linear (indexOf, no backtracking regex);
 * - strict UTF-8, XML 1.0 characters only in the raw text; line ends normalised to LF as
 *   XML requires (so a CR inside a key must be sent as `&#13;`, as S3 documents);
 * - character references may name C0 controls other than NUL (`&#1;`), as XML 1.1 allows:
 *   that is how a DeleteObjects request can name a key containing one.
 *
 * Every failure is `S3Error('MalformedXML')` (or `MaxMessageLengthExceeded` for size); the
 * parser never recurses, so hostile input cannot overflow the stack.
 */
import { S3Error } from '../errors.js';
import { isXmlSafe } from './escape.js';

/** Largest request document accepted by default: 1 MiB, S3's limit for most XML bodies. */
export const MAX_XML_BODY_BYTES = 1024 * 1024;
/** Deepest element nesting accepted by default; S3 documents are at most 4 levels deep. */
export const MAX_XML_DEPTH = 16;
/** Most elements accepted by default (a 1000-object Delete has about 3000). */
export const MAX_XML_ELEMENTS = 10_000;
/** Longest element or attribute name, in UTF-16 units; S3 names are under 40. */
const MAX_NAME_LENGTH = 256;
/** Most attributes on one element; S3 documents use at most `xmlns`. */
const MAX_ATTRIBUTES = 32;

export interface XmlElement {
  /** Local name (prefix removed): `Key` for both `<Key>` and `<s3:Key>`. */
  name: string;
  /** Attributes by qualified name, values entity-decoded. */
  attributes: Record<string, string>;
  children: XmlElement[];
  /** Character data directly inside this element (CDATA included), entity-decoded. */
  text: string;
}

export interface ParseXmlOptions {
  /** Largest accepted input in bytes (UTF-8); default {@link MAX_XML_BODY_BYTES}. */
  maxBytes?: number;
  /** Deepest accepted nesting; default {@link MAX_XML_DEPTH}. */
  maxDepth?: number;
  /** Most accepted elements; default {@link MAX_XML_ELEMENTS}. */
  maxElements?: number;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const NAME = /[A-Za-z_:\u00C0-\uFFFD][-A-Za-z0-9_:.\u00B7\u00C0-\uFFFD]*/y;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** `S3Error('MalformedXML')` naming what was wrong. */
export function malformedXml(reason: string): S3Error {
  return new S3Error(
    'MalformedXML',
    `The XML you provided was not well-formed or did not validate against our published schema (${reason})`
  );
}

function referencedChar(ref: string): string {
  const hex = ref.startsWith('#x');
  const digits = ref.slice(hex ? 2 : 1);
  if (!(hex ? /^[0-9A-Fa-f]{1,6}$/ : /^[0-9]{1,7}$/).test(digits))
    throw malformedXml(`bad character reference &${ref};`);
  const cp = parseInt(digits, hex ? 16 : 10);
  const ok =
    (cp >= 0x1 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff);
  if (!ok) throw malformedXml(`character reference &${ref}; names an illegal character`);
  return String.fromCodePoint(cp);
}

/** Decodes the five predefined entities and numeric references; throws on anything else. */
function decodeEntities(raw: string): string {
  let amp = raw.indexOf('&');
  if (amp < 0) return raw;
  let out = '';
  let from = 0;
  while (amp >= 0) {
    const semi = raw.indexOf(';', amp + 1);
    if (semi < 0 || semi - amp > 12) throw malformedXml('unterminated entity reference');
    const ref = raw.slice(amp + 1, semi);
    const predefined = PREDEFINED[ref];
    out += raw.slice(from, amp) + (predefined ?? (ref.startsWith('#') ? referencedChar(ref) : ''));
    if (predefined === undefined && !ref.startsWith('#'))
      throw malformedXml(`undefined entity &${ref};`);
    from = semi + 1;
    amp = raw.indexOf('&', from);
  }
  return out + raw.slice(from);
}

function toText(body: string | Uint8Array, maxBytes: number): string {
  if (typeof body === 'string') {
    if (Buffer.byteLength(body, 'utf8') > maxBytes) throw new S3Error('MaxMessageLengthExceeded');
    return body.startsWith('\uFEFF') ? body.slice(1) : body;
  }
  if (body.byteLength > maxBytes) throw new S3Error('MaxMessageLengthExceeded');
  try {
    return UTF8.decode(body); // strips a UTF-8 BOM
  } catch {
    throw malformedXml('the body is not valid UTF-8');
  }
}

/**
 * Parses a request document and returns its root element. Pure. Throws
 * `S3Error('MalformedXML')` for anything that is not a well-formed document within the
 * limits (including an empty body) and `S3Error('MaxMessageLengthExceeded')` when the
 * input is larger than `maxBytes`.
 */
export function parseXml(body: string | Uint8Array, options: ParseXmlOptions = {}): XmlElement {
  const maxDepth = options.maxDepth ?? MAX_XML_DEPTH;
  const maxElements = options.maxElements ?? MAX_XML_ELEMENTS;
  let s = toText(body, options.maxBytes ?? MAX_XML_BODY_BYTES);
  if (s.includes('\r')) s = s.replace(/\r\n?/g, '\n');
  if (!isXmlSafe(s)) throw malformedXml('the document contains characters XML does not allow');

  const n = s.length;
  let i = 0;
  let elements = 0;
  const stack: { el: XmlElement; qname: string }[] = [];
  let root: XmlElement | undefined;

  const skipWs = () => {
    while (i < n && (s[i] === ' ' || s[i] === '\n' || s[i] === '\t')) i++;
  };
  const skipTo = (terminator: string, what: string) => {
    const end = s.indexOf(terminator, i);
    if (end < 0) throw malformedXml(`unterminated ${what}`);
    const inner = s.slice(i, end);
    i = end + terminator.length;
    return inner;
  };
  /** Comments, processing instructions and whitespace, allowed outside the root element. */
  const skipMisc = () => {
    for (;;) {
      skipWs();
      if (s.startsWith('<!--', i)) {
        i += 4;
        skipTo('-->', 'comment');
      } else if (s.startsWith('<?', i)) {
        i += 2;
        if (/^xml(\s|$)/i.test(skipTo('?>', 'processing instruction')))
          throw malformedXml('misplaced XML declaration');
      } else if (s.startsWith('<!', i)) {
        throw malformedXml('DOCTYPE and other declarations are not allowed');
      } else return;
    }
  };
  const readName = (what: string) => {
    NAME.lastIndex = i;
    const m = NAME.exec(s);
    if (!m || m[0].length > MAX_NAME_LENGTH) throw malformedXml(`bad ${what} name`);
    i += m[0].length;
    return m[0];
  };
  const openElement = () => {
    i++; // '<'
    const qname = readName('element');
    const local = qname.slice(qname.lastIndexOf(':') + 1);
    if (local === '') throw malformedXml(`bad element name ${qname}`);
    const el: XmlElement = { name: local, attributes: {}, children: [], text: '' };
    let count = 0;
    for (;;) {
      const before = i;
      skipWs();
      if (s[i] === '>' || s.startsWith('/>', i)) break;
      if (i === before || i >= n) throw malformedXml(`malformed start tag <${qname}>`);
      const attr = readName('attribute');
      skipWs();
      if (s[i] !== '=') throw malformedXml(`attribute ${attr} has no value`);
      i++;
      skipWs();
      const quote = s[i];
      if (quote !== '"' && quote !== "'") throw malformedXml(`attribute ${attr} is not quoted`);
      i++;
      const raw = skipTo(quote, 'attribute value');
      if (raw.includes('<')) throw malformedXml(`'<' in attribute ${attr}`);
      if (attr in el.attributes || ++count > MAX_ATTRIBUTES)
        throw malformedXml(`duplicate or too many attributes on <${qname}>`);
      el.attributes[attr] = decodeEntities(raw);
    }
    if (++elements > maxElements) throw malformedXml(`more than ${maxElements} elements`);
    if (stack.length + 1 > maxDepth) throw malformedXml(`nesting deeper than ${maxDepth}`);
    const parent = stack[stack.length - 1];
    if (parent) parent.el.children.push(el);
    else root = el;
    if (s[i] === '>') {
      i++;
      stack.push({ el, qname });
    } else i += 2; // '/>'
  };

  if (s.startsWith('<?xml', i) && /[\s?]/.test(s[i + 5] ?? '')) {
    i += 5;
    skipTo('?>', 'XML declaration');
  }
  skipMisc();
  if (s[i] !== '<' || i >= n) throw malformedXml('no root element');
  openElement();
  while (stack.length > 0) {
    if (i >= n) throw malformedXml('the document ended before its elements were closed');
    const top = stack[stack.length - 1]!;
    if (s[i] !== '<') {
      const next = s.indexOf('<', i);
      const raw = next < 0 ? s.slice(i) : s.slice(i, next);
      i = next < 0 ? n : next;
      top.el.text += decodeEntities(raw);
    } else if (s.startsWith('</', i)) {
      i += 2;
      const name = skipTo('>', 'end tag').trimEnd();
      if (name !== top.qname) throw malformedXml(`</${name}> does not close <${top.qname}>`);
      stack.pop();
    } else if (s.startsWith('<!--', i)) {
      i += 4;
      skipTo('-->', 'comment');
    } else if (s.startsWith('<![CDATA[', i)) {
      i += 9;
      top.el.text += skipTo(']]>', 'CDATA section');
    } else if (s.startsWith('<!', i)) {
      throw malformedXml('declarations are not allowed inside elements');
    } else if (s.startsWith('<?', i)) {
      i += 2;
      if (/^xml(\s|$)/i.test(skipTo('?>', 'processing instruction')))
        throw malformedXml('misplaced XML declaration');
    } else openElement();
  }
  skipMisc();
  if (i < n) throw malformedXml('content after the root element');
  return root!;
}
