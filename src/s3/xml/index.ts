/**
 * @module S3 XML: the safe request-body parser, the typed body parsers and the response
 * renderers (pure functions from plain data to a complete document).
 */
export * from './escape.js';
export * from './build.js';
export { MAX_XML_BODY_BYTES, MAX_XML_DEPTH, MAX_XML_ELEMENTS, parseXml } from './parse.js';
export type { ParseXmlOptions, XmlElement } from './parse.js';
export * from './checksums.js';
export * from './owner.js';
export * from './multipart.js';
export * from './listing.js';
export * from './objects.js';
export * from './bucket.js';
export * from './tagging.js';
export * from './cors.js';
export * from './object-lock.js';
