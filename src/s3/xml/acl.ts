/**
 * @module ACL documents: the `AccessControlPolicy` of Get/PutBucketAcl and Get/PutObjectAcl.
 *
 * Rendered as S3 sends it: the Owner, then one Grant per grantee and permission, each
 * Grantee typed with `xsi:type` (CanonicalUser with ID and DisplayName, Group with URI).
 * Parsed strictly: a malformed document is `MalformedACLError`; a grantee Strata cannot
 * express (an e-mail address) is reported as such, for the caller to refuse.
 */
import { S3Error, isS3Error } from '../errors.js';
import { el, leaf, s3Root, xmlDocument, type Xml } from './build.js';
import { replaceUnsafeXmlChars as safe, escapeXmlText } from './escape.js';
import { ownerXml, type OwnerInfo } from './owner.js';
import type { XmlElement } from './parse.js';
import { childrenNamed, leafText, parseRoot } from './read.js';
import type { AclGrant, GrantPermission } from '../authz/acl.js';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const PERMISSIONS: readonly GrantPermission[] = ['FULL_CONTROL', 'READ', 'WRITE', 'READ_ACP', 'WRITE_ACP'];

/** A grant as rendered: canonical users may carry a display name. */
export type RenderedGrant = AclGrant & { displayName?: string };

function granteeXml(g: RenderedGrant): Xml {
  const who = g.grantee;
  const inner =
    who.type === 'CanonicalUser'
      ? `<ID>${escapeXmlText(safe(who.id))}</ID>${g.displayName === undefined ? '' : `<DisplayName>${escapeXmlText(safe(g.displayName))}</DisplayName>`}`
      : `<URI>${escapeXmlText(who.uri)}</URI>`;
  return `<Grantee xmlns:xsi="${XSI}" xsi:type="${who.type}">${inner}</Grantee>` as Xml;
}

/** The AccessControlPolicy document for `owner` and `grants`. Pure. */
export function renderAccessControlPolicy(owner: OwnerInfo, grants: readonly RenderedGrant[]): string {
  return xmlDocument(
    s3Root(
      'AccessControlPolicy',
      ownerXml('Owner', owner),
      el('AccessControlList', grants.map((g) => el('Grant', granteeXml(g), leaf('Permission', g.permission))))
    )
  );
}

/** A parsed PutBucketAcl / PutObjectAcl body. */
export interface ParsedAcl {
  /** The Owner ID the document names, if any. */
  ownerId?: string;
  grants: AclGrant[];
  /** Grantees Strata cannot express (e-mail addresses), as written. */
  unsupported: string[];
}

const malformedAcl = (why: string) =>
  new S3Error('MalformedACLError', `The XML you provided was not well-formed or did not validate against our published schema (${why})`);

/** The `xsi:type` of a Grantee, whatever prefix the document binds the XSI namespace to. */
function granteeType(g: XmlElement): string | undefined {
  for (const [name, value] of Object.entries(g.attributes)) if (name === 'type' || name.endsWith(':type')) return value.trim();
  return undefined;
}

function parseGrant(grant: XmlElement, out: ParsedAcl): void {
  const grantees = childrenNamed(grant, 'Grantee');
  if (grantees.length !== 1) throw malformedAcl('each <Grant> needs exactly one <Grantee>');
  const g = grantees[0]!;
  const permission = (leafText(grant, 'Permission') ?? '').trim();
  if (!(PERMISSIONS as readonly string[]).includes(permission)) throw malformedAcl(`invalid <Permission> ${JSON.stringify(permission)}`);
  const id = leafText(g, 'ID')?.trim();
  const uri = leafText(g, 'URI')?.trim();
  const email = leafText(g, 'EmailAddress')?.trim();
  const type = granteeType(g) ?? (id !== undefined ? 'CanonicalUser' : uri !== undefined ? 'Group' : email !== undefined ? 'AmazonCustomerByEmail' : undefined);
  const p = permission as GrantPermission;
  if (type === 'CanonicalUser' && id) out.grants.push({ grantee: { type: 'CanonicalUser', id }, permission: p });
  else if (type === 'Group' && uri) out.grants.push({ grantee: { type: 'Group', uri }, permission: p });
  else if (type === 'AmazonCustomerByEmail' && email) out.unsupported.push(`emailAddress=${email}`);
  else throw malformedAcl('a <Grantee> needs an xsi:type with its ID, URI or EmailAddress');
}

/**
 * Parses an AccessControlPolicy body. Pure. Throws S3Error `MalformedACLError` for anything
 * that is not a well-formed AccessControlPolicy (size errors keep their own codes).
 */
export function parseAccessControlPolicy(body: Uint8Array | string): ParsedAcl {
  let root: XmlElement;
  try {
    root = parseRoot(body, 'AccessControlPolicy');
  } catch (err) {
    if (isS3Error(err, 'MalformedXML')) throw malformedAcl(err.message);
    throw err;
  }
  const out: ParsedAcl = { grants: [], unsupported: [] };
  try {
    const owners = childrenNamed(root, 'Owner');
    if (owners.length > 1) throw malformedAcl('more than one <Owner>');
    const ownerId = owners[0] ? leafText(owners[0], 'ID')?.trim() : undefined;
    if (ownerId !== undefined) out.ownerId = ownerId;
    const lists = childrenNamed(root, 'AccessControlList');
    if (lists.length !== 1) throw malformedAcl('expected one <AccessControlList>');
    for (const grant of childrenNamed(lists[0]!, 'Grant')) parseGrant(grant, out);
  } catch (err) {
    if (isS3Error(err, 'MalformedXML')) throw malformedAcl(err.message);
    throw err;
  }
  return out;
}
