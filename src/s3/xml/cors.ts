/**
 * @module Bucket CORS configuration documents (Get/PutBucketCors).
 *
 * Rules (S3 user guide, "CORS configuration"): 1..100 CORSRule elements; each has at least
 * one AllowedOrigin and one AllowedMethod (GET, PUT, POST, DELETE, HEAD only); an origin
 * or allowed header contains at most one `*`; MaxAgeSeconds is a non-negative integer;
 * ID is at most 255 characters.
 */
import { S3Error } from '../errors.js';
import { MAX_CORS_RULES } from '../limits.js';
import { el, leaf, s3Root, xmlDocument } from './build.js';
import { replaceUnsafeXmlChars as safe } from './escape.js';
import { malformedXml, type XmlElement } from './parse.js';
import { childrenNamed, integerLeaf, leafText, parseRoot } from './read.js';

/** The methods a CORS rule may allow. */
export const CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'] as const;
export type CorsMethod = (typeof CORS_METHODS)[number];

/** Longest rule ID, in characters. */
const MAX_CORS_ID_CHARS = 255;

export interface CorsRule {
  id?: string;
  allowedOrigins: string[];
  allowedMethods: CorsMethod[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

function texts(parent: XmlElement, name: string): string[] {
  return childrenNamed(parent, name).map((c) => {
    if (c.children.length > 0) throw malformedXml(`<${name}> must contain text only`);
    return c.text.trim();
  });
}

/** What an HTTP header value may hold (ExposeHeader values are sent back in one). */
const HEADER_SAFE = /^[\t\x20-\x7e\x80-\xff]*$/;

function atMostOneWildcard(values: readonly string[], what: string): void {
  for (const v of values) {
    if (v.indexOf('*') !== v.lastIndexOf('*'))
      throw new S3Error('InvalidRequest', `${what} "${v}" can not have more than one wildcard.`);
  }
}

/**
 * Parses a `<CORSConfiguration>` body. Pure. Throws S3Error `MalformedXML` (shape: no
 * rules, more than 100, a rule without origin or method, a bad MaxAgeSeconds) or
 * `InvalidRequest` (an unsupported method, several wildcards, an ID too long, an
 * ExposeHeader that cannot be sent in a header).
 */
export function parseCorsConfiguration(body: string | Uint8Array): { rules: CorsRule[] } {
  const root = parseRoot(body, 'CORSConfiguration');
  const ruleElements = childrenNamed(root, 'CORSRule');
  if (ruleElements.length === 0) throw malformedXml('no <CORSRule> elements');
  if (ruleElements.length > MAX_CORS_RULES)
    throw malformedXml(`more than ${MAX_CORS_RULES} CORS rules`);
  const rules = ruleElements.map((r) => {
    const allowedOrigins = texts(r, 'AllowedOrigin');
    const methods = texts(r, 'AllowedMethod');
    if (allowedOrigins.length === 0) throw malformedXml('a <CORSRule> lacks <AllowedOrigin>');
    if (methods.length === 0) throw malformedXml('a <CORSRule> lacks <AllowedMethod>');
    for (const m of methods) {
      if (!(CORS_METHODS as readonly string[]).includes(m))
        throw new S3Error(
          'InvalidRequest',
          `Found unsupported HTTP method in CORS config. Unsupported method is ${m}`
        );
    }
    const allowedHeaders = texts(r, 'AllowedHeader');
    atMostOneWildcard(allowedOrigins, 'AllowedOrigin');
    atMostOneWildcard(allowedHeaders, 'AllowedHeader');
    const exposeHeaders = texts(r, 'ExposeHeader');
    for (const h of exposeHeaders) {
      // Sent back in Access-Control-Expose-Headers: a value Node cannot write would make
      // every cross-origin request to the bucket fail.
      if (!HEADER_SAFE.test(h))
        throw new S3Error('InvalidRequest', `ExposeHeader "${h}" contains characters not allowed in an HTTP header.`);
    }
    const rule: CorsRule = {
      allowedOrigins,
      allowedMethods: methods as CorsMethod[],
      allowedHeaders,
      exposeHeaders,
    };
    const id = leafText(r, 'ID')?.trim();
    if (id) {
      if ([...id].length > MAX_CORS_ID_CHARS)
        throw new S3Error(
          'InvalidRequest',
          `The ID of a CORS rule is longer than ${MAX_CORS_ID_CHARS}`
        );
      rule.id = id;
    }
    const maxAge = integerLeaf(r, 'MaxAgeSeconds');
    if (maxAge !== undefined) rule.maxAgeSeconds = maxAge;
    return rule;
  });
  return { rules };
}

/** `CORSConfiguration`, elements in S3's order. Pure. */
export function renderCorsConfiguration(rules: readonly CorsRule[]): string {
  return xmlDocument(
    s3Root(
      'CORSConfiguration',
      rules.map((r) =>
        el(
          'CORSRule',
          leaf('ID', r.id === undefined ? undefined : safe(r.id)),
          r.allowedHeaders.map((h) => leaf('AllowedHeader', safe(h))),
          r.allowedMethods.map((m) => leaf('AllowedMethod', m)),
          r.allowedOrigins.map((o) => leaf('AllowedOrigin', safe(o))),
          r.exposeHeaders.map((h) => leaf('ExposeHeader', safe(h))),
          leaf('MaxAgeSeconds', r.maxAgeSeconds)
        )
      )
    )
  );
}
