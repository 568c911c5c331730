/**
 * @module Reading parsed request documents: the shared helpers of the typed body parsers.
 *
 * Element lookups use local names (namespace prefixes and the xmlns are ignored: s3cmd
 * sends no namespace, SDKs send S3's). Every helper throws `S3Error('MalformedXML')` when
 * the document does not have the expected shape.
 */
import { malformedXml, parseXml, type ParseXmlOptions, type XmlElement } from './parse.js';

/** Parses `body` and checks that its root element is `rootName`. */
export function parseRoot(
  body: string | Uint8Array,
  rootName: string,
  options?: ParseXmlOptions
): XmlElement {
  const root = parseXml(body, options);
  if (root.name !== rootName) throw malformedXml(`expected <${rootName}>, got <${root.name}>`);
  return root;
}

/** The child elements of `el` named `name`, in document order. */
export function childrenNamed(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name);
}

/**
 * The exact text of the leaf child `name` of `el` (not trimmed: keys may begin or end with
 * spaces), or undefined when there is none. Throws when there are several such children or
 * the child has element children.
 */
export function leafText(el: XmlElement, name: string): string | undefined {
  let found: XmlElement | undefined;
  for (const c of el.children) {
    if (c.name !== name) continue;
    if (found) throw malformedXml(`more than one <${name}> in <${el.name}>`);
    found = c;
  }
  if (!found) return undefined;
  if (found.children.length > 0) throw malformedXml(`<${name}> must contain text only`);
  return found.text;
}

/** Like {@link leafText} but the element must be present. */
export function requiredLeafText(el: XmlElement, name: string): string {
  const text = leafText(el, name);
  if (text === undefined) throw malformedXml(`<${el.name}> lacks <${name}>`);
  return text;
}

/** A boolean leaf (`true`/`false`, any case, surrounding whitespace ignored); default if absent. */
export function booleanLeaf(el: XmlElement, name: string, fallback: boolean): boolean {
  const text = leafText(el, name);
  if (text === undefined) return fallback;
  const v = text.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw malformedXml(`<${name}> must be true or false`);
}

/** A non-negative decimal integer leaf (whitespace around it ignored); undefined if absent. */
export function integerLeaf(el: XmlElement, name: string): number | undefined {
  const text = leafText(el, name);
  if (text === undefined) return undefined;
  const v = text.trim();
  if (!/^[0-9]{1,15}$/.test(v)) throw malformedXml(`<${name}> must be a non-negative integer`);
  return Number(v);
}
