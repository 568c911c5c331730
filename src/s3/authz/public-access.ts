/**
 * @module Block Public Access for one bucket: the four switches, their stored form and
 * their XML (Put/Get/DeletePublicAccessBlock).
 *
 * What each switch does (S3 API reference, PublicAccessBlockConfiguration):
 * - BlockPublicAcls: setting a public ACL (PutBucketAcl, PutObjectAcl, an `x-amz-acl` on a
 *   write) is refused with 403 AccessDenied; existing ACLs are left alone;
 * - IgnorePublicAcls: AllUsers / AuthenticatedUsers grants are ignored when deciding access;
 * - BlockPublicPolicy: PutBucketPolicy with a public policy is refused (403 AccessDenied);
 * - RestrictPublicBuckets: while the bucket's policy is public, its Allow statements grant
 *   nothing (only the owner, admins and keys granted the bucket keep access).
 *
 * New buckets have no configuration, i.e. all four off (see README, "Access control").
 */
import { S3Error } from '../errors.js';
import { leaf, s3Root, xmlDocument } from '../xml/build.js';
import { booleanLeaf, parseRoot } from '../xml/read.js';
import { malformedXml } from '../xml/parse.js';

/** The bucket configuration name holding the switches. */
export const PUBLIC_ACCESS_CONFIG = 'public-access-block';

export interface PublicAccessBlock {
  blockPublicAcls: boolean;
  ignorePublicAcls: boolean;
  blockPublicPolicy: boolean;
  restrictPublicBuckets: boolean;
}

/** No configuration: every switch off. */
export const NO_PUBLIC_ACCESS_BLOCK: PublicAccessBlock = Object.freeze({
  blockPublicAcls: false,
  ignorePublicAcls: false,
  blockPublicPolicy: false,
  restrictPublicBuckets: false,
});

const FIELDS = ['blockPublicAcls', 'ignorePublicAcls', 'blockPublicPolicy', 'restrictPublicBuckets'] as const;
const ELEMENTS = ['BlockPublicAcls', 'IgnorePublicAcls', 'BlockPublicPolicy', 'RestrictPublicBuckets'] as const;

/** One byte: bit i is FIELDS[i]. */
export function encodePublicAccessBlock(c: PublicAccessBlock): Uint8Array {
  let bits = 0;
  FIELDS.forEach((f, i) => (bits |= c[f] ? 1 << i : 0));
  return Uint8Array.of(bits);
}

/**
 * Decodes the stored byte. A value this version cannot read (wrong length, unknown bits)
 * decodes as every switch ON: an unreadable setting must not open the bucket.
 */
export function decodePublicAccessBlock(bytes: Uint8Array): PublicAccessBlock {
  const bits = bytes.length === 1 ? bytes[0]! : 0xff;
  if (bits & ~0x0f) return { blockPublicAcls: true, ignorePublicAcls: true, blockPublicPolicy: true, restrictPublicBuckets: true };
  const out = { ...NO_PUBLIC_ACCESS_BLOCK };
  FIELDS.forEach((f, i) => (out[f] = (bits & (1 << i)) !== 0));
  return out;
}

/**
 * Parses a `<PublicAccessBlockConfiguration>` body; absent elements are false. Pure. Throws
 * S3Error `MalformedXML` (shape, a value other than true/false, an unknown element).
 */
export function parsePublicAccessBlock(body: Uint8Array | string): PublicAccessBlock {
  const root = parseRoot(body, 'PublicAccessBlockConfiguration');
  for (const c of root.children) {
    if (!(ELEMENTS as readonly string[]).includes(c.name)) throw malformedXml(`unknown element <${c.name}>`);
  }
  const out = { ...NO_PUBLIC_ACCESS_BLOCK };
  FIELDS.forEach((f, i) => (out[f] = booleanLeaf(root, ELEMENTS[i]!, false)));
  return out;
}

/** The GetPublicAccessBlock document. Pure. */
export function renderPublicAccessBlock(c: PublicAccessBlock): string {
  return xmlDocument(s3Root('PublicAccessBlockConfiguration', ...ELEMENTS.map((e, i) => leaf(e, c[FIELDS[i]!]))));
}

/** The GetBucketPolicyStatus document. Pure. */
export function renderPolicyStatus(isPublic: boolean): string {
  return xmlDocument(s3Root('PolicyStatus', leaf('IsPublic', isPublic)));
}

/** 403 for a request Block Public Access refuses, saying which switch did. */
export function blockedBy(setting: 'BlockPublicAcls' | 'BlockPublicPolicy'): S3Error {
  return new S3Error('AccessDenied', `Access Denied: the bucket's Block Public Access setting ${setting} refuses this`);
}
