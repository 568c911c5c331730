/**
 * @module Object Ownership of a bucket (Put/Get/DeleteBucketOwnershipControls,
 * `x-amz-object-ownership` on CreateBucket): who owns the objects written into it, and
 * whether ACLs apply at all.
 *
 * - `ObjectWriter`: the key that writes an object owns it (also what a bucket without
 *   ownership controls does: the S3 behaviour before 2023, and Strata's default);
 * - `BucketOwnerPreferred`: as ObjectWriter, except that an object written with the
 *   `bucket-owner-full-control` ACL is owned by the bucket owner;
 * - `BucketOwnerEnforced`: ACLs are disabled. The bucket owner owns every object (those
 *   written before included); ACLs grant nothing; setting any ACL other than
 *   `bucket-owner-full-control` (or `private` on the bucket) is `400
 *   AccessControlListNotSupported`; only the bucket policy and key grants give access.
 */
import { S3Error } from '../errors.js';
import { leaf, el, s3Root, xmlDocument } from '../xml/build.js';
import { malformedXml } from '../xml/parse.js';
import { childrenNamed, parseRoot, requiredLeafText } from '../xml/read.js';

/** The bucket configuration holding the setting (its name, UTF-8). */
export const OWNERSHIP_CONFIG = 'ownership';

export const OBJECT_OWNERSHIPS = ['BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter'] as const;
export type ObjectOwnership = (typeof OBJECT_OWNERSHIPS)[number];

const isOwnership = (v: string): v is ObjectOwnership => (OBJECT_OWNERSHIPS as readonly string[]).includes(v);

/** `x-amz-object-ownership` of a CreateBucket, or undefined. Throws S3Error `InvalidArgument`. */
export function ownershipHeader(headers: Readonly<Record<string, string | undefined>>): ObjectOwnership | undefined {
  const v = headers['x-amz-object-ownership'];
  if (v === undefined) return undefined;
  if (isOwnership(v.trim())) return v.trim() as ObjectOwnership;
  throw new S3Error('InvalidArgument', 'Invalid x-amz-object-ownership header', { ArgumentName: 'x-amz-object-ownership', ArgumentValue: v });
}

/**
 * Parses an `<OwnershipControls>` body: exactly one Rule with an ObjectOwnership S3 knows.
 * Pure. Throws S3Error `MalformedXML`.
 */
export function parseOwnershipControls(body: Uint8Array | string): ObjectOwnership {
  const root = parseRoot(body, 'OwnershipControls');
  const rules = childrenNamed(root, 'Rule');
  if (rules.length !== 1 || root.children.length !== 1) throw malformedXml('OwnershipControls takes exactly one <Rule>');
  const value = requiredLeafText(rules[0]!, 'ObjectOwnership').trim();
  if (!isOwnership(value)) throw malformedXml(`unknown ObjectOwnership ${JSON.stringify(value)}`);
  return value;
}

/** The GetBucketOwnershipControls document. Pure. */
export function renderOwnershipControls(o: ObjectOwnership): string {
  return xmlDocument(s3Root('OwnershipControls', el('Rule', leaf('ObjectOwnership', o))));
}

export function encodeOwnership(o: ObjectOwnership): Uint8Array {
  return new TextEncoder().encode(o);
}

/** Decodes the stored setting; a value this version does not know reads as BucketOwnerEnforced (ACLs off: less access). */
export function decodeOwnership(bytes: Uint8Array): ObjectOwnership {
  const v = new TextDecoder().decode(bytes);
  return isOwnership(v) ? v : 'BucketOwnerEnforced';
}

/** 400 for an ACL on a bucket whose ACLs are disabled. */
export const aclNotSupported = () => new S3Error('AccessControlListNotSupported');

/**
 * Refuses an ACL a write asks for on a bucket with ACLs disabled: only
 * `bucket-owner-full-control` (and, for the bucket itself, `private`) say nothing more than
 * the enforced ownership. Throws S3Error `AccessControlListNotSupported`.
 */
export function checkAclAllowed(ownership: ObjectOwnership | undefined, acl: string | undefined, kind: 'bucket' | 'object'): void {
  if (ownership !== 'BucketOwnerEnforced' || acl === undefined) return;
  if (acl === 'bucket-owner-full-control' || (kind === 'bucket' && acl === 'private')) return;
  throw aclNotSupported();
}
