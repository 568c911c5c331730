/**
 * @module A small XML reader for S3 responses (ListObjectsV2 results, errors).
 *
 * Reads elements, text and CDATA into a tree; ignores attributes, comments and
 * processing instructions. It is deliberately not a general parser: a DOCTYPE or
 * any entity other than the five predefined ones and numeric character references
 * is refused (no DTD, no external or expanding entities), nesting depth is capped,
 * and callers cap the input size before parsing.
 */
import { ProviderError } from '../provider.js';

export interface XmlElement {
  /** Local name (any `prefix:` dropped). */
  name: string;
  children: XmlElement[];
  /** Concatenated direct text content, entities decoded. */
  text: string;
}

/** Deepest element nesting accepted; S3 responses use 4. */
const MAX_DEPTH = 32;

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function fail(message: string): never {
  throw new ProviderError('Io', `malformed XML from the server: ${message}`);
}

/** Decodes the five predefined entities and numeric references; refuses others. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&([^;&\s]{1,10});/g, (_, ref: string) => {
    if (ref in ENTITIES) return ENTITIES[ref];
    const m = /^#(x[0-9a-fA-F]{1,6}|[0-9]{1,7})$/.exec(ref);
    if (!m) fail(`entity &${ref}; is not allowed`);
    const cp = m[1][0] === 'x' ? parseInt(m[1].slice(1), 16) : parseInt(m[1], 10);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      fail(`invalid character reference &${ref};`);
    return String.fromCodePoint(cp);
  });
}

function localName(tag: string): string {
  const colon = tag.indexOf(':');
  return colon < 0 ? tag : tag.slice(colon + 1);
}

/** End of a tag starting at `from` (index of its `>`), honouring quoted attribute values. */
function tagEnd(xml: string, from: number): number {
  let quote = '';
  for (let i = from; i < xml.length; i++) {
    const c = xml[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i;
  }
  return fail('unterminated tag');
}

/**
 * Parses a document and returns its root element. Throws ProviderError 'Io' on
 * anything malformed or refused (see module doc).
 */
export function parseXml(xml: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = 0;
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const textEnd = lt < 0 ? xml.length : lt;
    if (textEnd > i) {
      const text = xml.slice(i, textEnd);
      if (stack.length > 0) stack[stack.length - 1].text += decodeEntities(text);
      else if (text.trim() !== '') fail('text outside the root element');
    }
    if (lt < 0) break;
    if (xml.startsWith('<?', lt)) {
      const end = xml.indexOf('?>', lt);
      if (end < 0) fail('unterminated processing instruction');
      i = end + 2;
    } else if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt);
      if (end < 0) fail('unterminated comment');
      i = end + 3;
    } else if (xml.startsWith('<![CDATA[', lt)) {
      const end = xml.indexOf(']]>', lt);
      if (end < 0 || stack.length === 0) fail('misplaced CDATA');
      stack[stack.length - 1].text += xml.slice(lt + 9, end);
      i = end + 3;
    } else if (xml.startsWith('<!', lt)) {
      fail('DOCTYPE and declarations are not allowed');
    } else if (xml.startsWith('</', lt)) {
      const end = xml.indexOf('>', lt);
      if (end < 0) fail('unterminated end tag');
      const name = localName(xml.slice(lt + 2, end).trim());
      const open = stack.pop();
      if (!open || open.name !== name) fail(`unexpected </${name}>`);
      if (stack.length === 0) root = open;
      i = end + 1;
    } else {
      const end = tagEnd(xml, lt + 1);
      const selfClosing = xml[end - 1] === '/';
      const inner = xml.slice(lt + 1, selfClosing ? end - 1 : end);
      const rawName = /^[^\s/>]+/.exec(inner)?.[0];
      if (!rawName) fail('empty tag name');
      if (root) fail('content after the root element');
      const el: XmlElement = { name: localName(rawName), children: [], text: '' };
      if (stack.length > 0) stack[stack.length - 1].children.push(el);
      if (selfClosing) {
        if (stack.length === 0) root = el;
      } else {
        if (stack.length >= MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
        stack.push(el);
      }
      i = end + 1;
    }
  }
  if (stack.length > 0 || !root) fail('document is incomplete');
  return root;
}

/** First direct child named `name`. */
export function child(el: XmlElement, name: string): XmlElement | undefined {
  return el.children.find((c) => c.name === name);
}

/** All direct children named `name`. */
export function children(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name);
}

/** Text of the first direct child named `name`, if any. */
export function childText(el: XmlElement, name: string): string | undefined {
  return child(el, name)?.text;
}
