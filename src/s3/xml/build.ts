/**
 * @module A tiny builder for S3 response documents.
 *
 * Builders return {@link Xml}, a branded string that is already well-formed markup, so
 * text cannot be inserted unescaped or escaped twice by accident:
 *
 * @example
 *   xmlDocument(s3Root('InitiateMultipartUploadResult',
 *     leaf('Bucket', bucket), leaf('Key', key), leaf('UploadId', uploadId)))
 */
import { escapeXmlText } from './escape.js';

/** The namespace of every S3 response document except `<Error>`. */
export const S3_XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** The declaration S3 puts before every document. */
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

declare const XML_BRAND: unique symbol;

/** Well-formed markup produced by this module. */
export type Xml = string & { readonly [XML_BRAND]: true };

/** Content of an element: markup, lists of markup, or nothing (undefined/null/false skip). */
export type XmlContent = Xml | readonly XmlContent[] | undefined | null | false;

/** A leaf value: strings are escaped, numbers and booleans printed, Dates as ISO 8601 (ms). */
export type LeafValue = string | number | boolean | Date | undefined | null;

function flatten(content: readonly XmlContent[]): string {
  let out = '';
  for (const c of content) {
    if (c === undefined || c === null || c === false) continue;
    out += typeof c === 'string' ? c : flatten(c as readonly XmlContent[]);
  }
  return out;
}

/** `<name>content</name>`, or `<name/>` when the content is empty. Pure. */
export function el(name: string, ...content: XmlContent[]): Xml {
  const inner = flatten(content);
  return (inner === '' ? `<${name}/>` : `<${name}>${inner}</${name}>`) as Xml;
}

/** A root element carrying the S3 namespace. Pure. */
export function s3Root(name: string, ...content: XmlContent[]): Xml {
  const inner = flatten(content);
  const open = `<${name} xmlns="${S3_XMLNS}"`;
  return (inner === '' ? `${open}/>` : `${open}>${inner}</${name}>`) as Xml;
}

/**
 * `<name>value</name>` with the value escaped; nothing when value is undefined or null
 * (an empty string gives `<name></name>`, which S3 uses for e.g. an empty Prefix).
 * Throws XmlUnsafeCharacterError for text XML 1.0 cannot carry (see escape.ts).
 */
export function leaf(name: string, value: LeafValue): Xml | undefined {
  if (value === undefined || value === null) return undefined;
  const text =
    value instanceof Date
      ? value.toISOString()
      : typeof value === 'string'
        ? escapeXmlText(value)
        : String(value);
  return `<${name}>${text}</${name}>` as Xml;
}

/** The XML declaration followed by `root`: a complete response body. Pure. */
export function xmlDocument(root: Xml): string {
  return XML_DECLARATION + root;
}

declare const XML_CHUNKS_BRAND: unique symbol;

/**
 * A complete response document in order-preserving pieces: their concatenation is the
 * document. Each piece ends at a whole element, so none splits a character.
 */
export type XmlChunks = readonly string[] & { readonly [XML_CHUNKS_BRAND]: true };

/**
 * A piece is closed once it reaches this many UTF-16 units: small enough that V8 keeps it
 * (even as a two-byte string, 64 KiB) out of its large-object space, and its Buffer (at most
 * three bytes per unit plus the last element) under glibc's default mmap threshold.
 */
export const XML_CHUNK_CHARS = 32_768;

/**
 * `xmlDocument(s3Root(name, ...content))`, returned in pieces of about
 * {@link XML_CHUNK_CHARS}: the form for documents that grow with a request (listings, a
 * DeleteResult), whose single string would be hundreds of KiB. One string that size is a V8
 * large object on freshly mapped pages, and so is its Buffer: building then encoding a
 * 300 KB listing page cost ~2.4 ms here, mostly page faults, against ~0.3 ms in pieces
 * (`sendXml` encodes and writes them in one corked write). Pure.
 */
export function s3DocumentChunks(name: string, ...content: XmlContent[]): XmlChunks {
  const chunks: string[] = [];
  let piece = `${XML_DECLARATION}<${name} xmlns="${S3_XMLNS}"`;
  let open = false;
  const walk = (list: readonly XmlContent[]): void => {
    for (const c of list) {
      if (c === undefined || c === null || c === false) continue;
      if (typeof c !== 'string') {
        walk(c as readonly XmlContent[]);
        continue;
      }
      if (c === '') continue;
      if (!open) {
        piece += '>';
        open = true;
      }
      piece += c;
      if (piece.length >= XML_CHUNK_CHARS) {
        chunks.push(piece);
        piece = '';
      }
    }
  };
  walk(content);
  chunks.push(open ? `${piece}</${name}>` : `${piece}/>`);
  return chunks as unknown as XmlChunks;
}

/** An ETag as S3 writes it in XML: in double quotes (escaped to `&quot;` by {@link leaf}). */
export function quoteEtag(etag: string): string {
  return etag.startsWith('"') && etag.endsWith('"') && etag.length >= 2 ? etag : `"${etag}"`;
}
