/**
 * Canned ACLs (grants, who they allow, headers), ACL documents (render, parse, malformed and
 * hostile input, mapping back to a canned ACL) and the Block Public Access configuration
 * (stored form, XML).
 */
import { describe, expect, it } from 'vitest';
import {
  aclAllows,
  ALL_USERS_URI,
  AUTHENTICATED_USERS_URI,
  CANNED_ACLS,
  cannedFromGrants,
  cannedGrants,
  isPublicAcl,
  requestedAcl,
} from '../../../src/s3/authz/acl.js';
import { objectAccessFor, objectAcl, objectOwner } from '../../../src/s3/authz/acl-object.js';
import {
  checkAclAllowed,
  decodeOwnership,
  encodeOwnership,
  OBJECT_OWNERSHIPS,
  ownershipHeader,
  parseOwnershipControls,
  renderOwnershipControls,
} from '../../../src/s3/authz/acl-ownership.js';
import { parseAccessControlPolicy, renderAccessControlPolicy } from '../../../src/s3/xml/acl.js';
import {
  decodePublicAccessBlock,
  encodePublicAccessBlock,
  parsePublicAccessBlock,
  renderPublicAccessBlock,
} from '../../../src/s3/authz/public-access.js';
import { decodeVersion, encodeVersion, type ObjectVersion } from '../../../src/store/records.js';
import { decodeUpload, encodeUpload } from '../../../src/store/uploads.js';
import { expectS3Error } from './helpers.js';

const OWNER = 'AKIDOWNER';
const OTHER = 'AKIDOTHER';

describe('canned ACLs', () => {
  it('x-amz-acl: canned names accepted, unknown refused, AWS-service ACLs and grants 501', () => {
    expect(requestedAcl({})).toBeUndefined();
    for (const a of CANNED_ACLS) expect(requestedAcl({ 'x-amz-acl': a })).toBe(a);
    expect(requestedAcl({ 'x-amz-acl': ' public-read ' })).toBe('public-read');
    expectS3Error(() => requestedAcl({ 'x-amz-acl': 'public' }), 'InvalidArgument');
    expectS3Error(() => requestedAcl({ 'x-amz-acl': 'PUBLIC-READ' }), 'InvalidArgument');
    expectS3Error(() => requestedAcl({ 'x-amz-acl': 'aws-exec-read' }), 'NotImplemented');
    expectS3Error(() => requestedAcl({ 'x-amz-acl': 'log-delivery-write' }), 'NotImplemented');
    for (const h of ['x-amz-grant-read', 'x-amz-grant-write', 'x-amz-grant-read-acp', 'x-amz-grant-write-acp', 'x-amz-grant-full-control']) {
      expectS3Error(() => requestedAcl({ [h]: `id=${OTHER}` }), 'NotImplemented');
      expectS3Error(() => requestedAcl({ [h]: `id=${OTHER}`, 'x-amz-acl': 'private' }), 'InvalidRequest');
    }
  });

  it('who each canned ACL allows, on buckets and objects', () => {
    const bucketOwner = OWNER;
    const cases: [string, 'bucket' | 'object', 'READ' | 'WRITE' | 'READ_ACP' | 'WRITE_ACP', string | null, boolean][] = [
      ['private', 'object', 'READ', OWNER, true],
      ['private', 'object', 'READ', OTHER, false],
      ['private', 'object', 'READ', null, false],
      ['public-read', 'object', 'READ', null, true],
      ['public-read', 'object', 'READ_ACP', null, false],
      ['public-read', 'bucket', 'WRITE', null, false],
      ['public-read-write', 'bucket', 'WRITE', null, true],
      ['public-read-write', 'bucket', 'WRITE_ACP', OTHER, false],
      ['authenticated-read', 'object', 'READ', OTHER, true],
      ['authenticated-read', 'object', 'READ', null, false],
      ['private', 'bucket', 'WRITE_ACP', OWNER, true],
    ];
    for (const [acl, kind, perm, who, want] of cases) {
      expect(aclAllows(acl as never, kind, perm, who, OWNER, bucketOwner, false), `${acl} ${kind} ${perm} ${who}`).toBe(want);
    }
    // bucket-owner-*: the bucket owner of an object someone else wrote.
    expect(aclAllows('bucket-owner-read', 'object', 'READ', OWNER, OTHER, OWNER, false)).toBe(true);
    expect(aclAllows('bucket-owner-read', 'object', 'READ_ACP', OWNER, OTHER, OWNER, false)).toBe(false);
    expect(aclAllows('bucket-owner-full-control', 'object', 'WRITE_ACP', OWNER, OTHER, OWNER, false)).toBe(true);
    expect(aclAllows('private', 'object', 'READ', OWNER, OTHER, OWNER, false)).toBe(false);
    // IgnorePublicAcls: group grants count for nothing, the owner's stays.
    expect(aclAllows('public-read', 'object', 'READ', null, OWNER, OWNER, true)).toBe(false);
    expect(aclAllows('authenticated-read', 'object', 'READ', OTHER, OWNER, OWNER, true)).toBe(false);
    expect(aclAllows('public-read', 'object', 'READ', OWNER, OWNER, OWNER, true)).toBe(true);
    // No owner known (an empty id never matches anyone).
    expect(aclAllows('private', 'bucket', 'READ', '', undefined, undefined, false)).toBe(false);
  });

  it('public ACLs are the ones granting to a group', () => {
    expect(CANNED_ACLS.filter(isPublicAcl)).toEqual(['public-read', 'public-read-write', 'authenticated-read']);
    for (const a of CANNED_ACLS) {
      const groups = cannedGrants(a, 'object', OWNER, OTHER).some((g) => g.grantee.type === 'Group');
      expect(groups, a).toBe(isPublicAcl(a));
    }
  });

  it('every canned ACL survives render -> parse -> cannedFromGrants, for buckets and objects', () => {
    for (const kind of ['bucket', 'object'] as const) {
      for (const acl of CANNED_ACLS) {
        if (kind === 'bucket' && acl.startsWith('bucket-owner-')) continue;
        const xml = renderAccessControlPolicy({ id: OTHER, displayName: OTHER }, cannedGrants(acl, kind, OTHER, OWNER));
        const doc = parseAccessControlPolicy(xml);
        expect(doc.ownerId).toBe(OTHER);
        expect(cannedFromGrants(doc.grants, kind, OTHER, OWNER), `${kind} ${acl}`).toBe(acl);
      }
    }
  });

  it('ACL documents that are not a canned set do not map to one (they are refused as grants to others)', () => {
    const g = (id: string, permission: 'READ' | 'FULL_CONTROL' = 'FULL_CONTROL') => ({ grantee: { type: 'CanonicalUser' as const, id }, permission });
    expect(cannedFromGrants([], 'bucket', OWNER, OWNER)).toBeUndefined();
    expect(cannedFromGrants([g(OWNER), g(OTHER, 'READ')], 'bucket', OWNER, OWNER)).toBeUndefined();
    expect(cannedFromGrants([g(OWNER, 'READ')], 'bucket', OWNER, OWNER)).toBeUndefined();
    expect(cannedFromGrants([g(OWNER), { grantee: { type: 'Group', uri: 'http://acs.amazonaws.com/groups/s3/LogDelivery' }, permission: 'WRITE' }], 'bucket', OWNER, OWNER)).toBeUndefined();
    expect(cannedFromGrants([g(OWNER), g(OWNER)], 'bucket', OWNER, OWNER)).toBe('private');
    expect(cannedFromGrants([{ grantee: { type: 'Group', uri: ALL_USERS_URI }, permission: 'READ' }, g(OWNER)], 'bucket', OWNER, OWNER)).toBe('public-read');
    expect(cannedFromGrants([g(OWNER), { grantee: { type: 'Group', uri: AUTHENTICATED_USERS_URI }, permission: 'WRITE' }], 'bucket', OWNER, OWNER)).toBeUndefined();
  });
});

describe('ACL documents', () => {
  const wrap = (inner: string) => `<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>${OWNER}</ID></Owner><AccessControlList>${inner}</AccessControlList></AccessControlPolicy>`;

  it('renders S3 grantee typing', () => {
    const xml = renderAccessControlPolicy({ id: OWNER, displayName: 'Owner <&>' }, cannedGrants('public-read', 'bucket', OWNER, OWNER));
    expect(xml).toContain('<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>AKIDOWNER</ID></Grantee><Permission>FULL_CONTROL</Permission>');
    expect(xml).toContain(`<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>${ALL_USERS_URI}</URI></Grantee><Permission>READ</Permission>`);
    expect(xml).toContain('<DisplayName>Owner &lt;&amp;&gt;</DisplayName>');
  });

  it('parses any XSI prefix, untyped grantees by their element, and reports e-mail grantees', () => {
    const doc = parseAccessControlPolicy(
      wrap(
        `<Grant><Grantee xmlns:x="http://www.w3.org/2001/XMLSchema-instance" x:type="CanonicalUser"><ID>${OWNER}</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant>` +
          `<Grant><Grantee><URI>${ALL_USERS_URI}</URI></Grantee><Permission>READ</Permission></Grant>` +
          '<Grant><Grantee xsi:type="AmazonCustomerByEmail" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><EmailAddress>a@b.c</EmailAddress></Grantee><Permission>READ</Permission></Grant>'
      )
    );
    expect(doc.grants).toHaveLength(2);
    expect(doc.unsupported).toEqual(['emailAddress=a@b.c']);
  });

  it('malformed, truncated and hostile documents are MalformedACLError', () => {
    const good = wrap(`<Grant><Grantee xsi:type="CanonicalUser" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><ID>${OWNER}</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant>`);
    expect(() => parseAccessControlPolicy(good)).not.toThrow();
    for (let n = 1; n < good.length; n += 7) expectS3Error(() => parseAccessControlPolicy(good.slice(0, n)), 'MalformedACLError');
    const bad = [
      '',
      '<Other/>',
      wrap('<Grant><Permission>READ</Permission></Grant>'),
      wrap(`<Grant><Grantee><ID>${OWNER}</ID></Grantee><Permission>ALL</Permission></Grant>`),
      wrap(`<Grant><Grantee><ID>${OWNER}</ID></Grantee><Grantee><ID>x</ID></Grantee><Permission>READ</Permission></Grant>`),
      wrap('<Grant><Grantee xsi:type="Group" xmlns:xsi="x"></Grantee><Permission>READ</Permission></Grant>'),
      '<AccessControlPolicy><Owner><ID>a</ID></Owner></AccessControlPolicy>',
      '<!DOCTYPE x [<!ENTITY e "e">]><AccessControlPolicy/>',
      '<AccessControlPolicy>' + '<a>'.repeat(100) + '</a>'.repeat(100) + '</AccessControlPolicy>',
    ];
    for (const b of bad) expectS3Error(() => parseAccessControlPolicy(b), 'MalformedACLError');
  });
});

describe('object owner and ACL in the records', () => {
  it('defaults store nothing; another writer or a non-private ACL is stored; anonymous owns nothing', () => {
    expect(objectAccessFor(OWNER, OWNER, undefined)).toBeUndefined();
    expect(objectAccessFor(OWNER, OWNER, 'private')).toBeUndefined();
    expect(objectAccessFor(OWNER, OWNER, 'public-read')).toEqual({ acl: 'public-read' });
    expect(objectAccessFor(OTHER, OWNER, undefined)).toEqual({ owner: OTHER, acl: 'private' });
    expect(objectAccessFor(null, OWNER, 'public-read')).toEqual({ acl: 'public-read' });
    expect(objectAccessFor(null, OWNER, undefined)).toBeUndefined();
  });

  it('version records round-trip the access field (flag 8), and read records written without it', () => {
    const base: ObjectVersion = {
      versionId: 'v1',
      deleteMarker: false,
      size: 3,
      md5: new Uint8Array(16),
      partCount: 0,
      lastModified: 1,
      system: {},
      userMetadata: {},
      tags: { a: 'b' },
      location: { kind: 'empty' },
    };
    expect(decodeVersion(encodeVersion(base))).toEqual(base);
    for (const access of [{ acl: 'public-read' }, { owner: OTHER, acl: 'private' }, { owner: OTHER, acl: 'bucket-owner-full-control' }]) {
      const v = { ...base, access };
      const bytes = encodeVersion(v);
      expect(bytes[0]! & 8).toBe(8);
      expect(decodeVersion(bytes)).toEqual(v);
    }
    // An unknown flag bit is still refused (64 is the version log's, 128 nobody's).
    const bytes = encodeVersion(base);
    bytes[0] = bytes[0]! | 128;
    expect(() => decodeVersion(bytes)).toThrow(/flags/);
  });

  it('upload records carry the access field and still read records written before it', () => {
    const u = { key: 'k', initiated: 5, system: {}, userMetadata: {}, tags: {}, checksumType: 'FULL_OBJECT' as const };
    expect(decodeUpload(encodeUpload(u))).toEqual(u);
    const withAccess = { ...u, access: { owner: OTHER, acl: 'public-read' } };
    expect(decodeUpload(encodeUpload(withAccess))).toEqual(withAccess);
    const corrupt = Uint8Array.from([...encodeUpload(u), 7]);
    expect(() => decodeUpload(corrupt)).toThrow();
  });
});

describe('Object Ownership', () => {
  it('who owns what a key writes, per setting', () => {
    // [ownership, writer, acl] -> stored access
    expect(objectAccessFor(OTHER, OWNER, undefined, 'ObjectWriter')).toEqual({ owner: OTHER, acl: 'private' });
    expect(objectAccessFor(OTHER, OWNER, 'bucket-owner-full-control', 'ObjectWriter')).toEqual({ owner: OTHER, acl: 'bucket-owner-full-control' });
    expect(objectAccessFor(OTHER, OWNER, 'bucket-owner-full-control', 'BucketOwnerPreferred')).toEqual({ acl: 'bucket-owner-full-control' });
    expect(objectAccessFor(OTHER, OWNER, 'private', 'BucketOwnerPreferred')).toEqual({ owner: OTHER, acl: 'private' });
    expect(objectAccessFor(OTHER, OWNER, 'bucket-owner-full-control', 'BucketOwnerEnforced')).toBeUndefined();
    expect(objectAccessFor(OTHER, OWNER, undefined, 'BucketOwnerEnforced')).toBeUndefined();
    // Enforced: stored owners and ACLs of older objects are overridden when read.
    expect(objectOwner({ access: { owner: OTHER, acl: 'public-read' } }, OWNER, 'BucketOwnerEnforced')).toBe(OWNER);
    expect(objectAcl({ access: { owner: OTHER, acl: 'public-read' } }, 'BucketOwnerEnforced')).toBe('private');
    expect(objectOwner({ access: { owner: OTHER, acl: 'public-read' } }, OWNER)).toBe(OTHER);
    expect(objectAcl({ access: { acl: 'no-such-acl' } })).toBe('private');
  });

  it('ACLs a write may ask for when ACLs are disabled', () => {
    expect(() => checkAclAllowed('BucketOwnerEnforced', undefined, 'object')).not.toThrow();
    expect(() => checkAclAllowed('BucketOwnerEnforced', 'bucket-owner-full-control', 'object')).not.toThrow();
    expectS3Error(() => checkAclAllowed('BucketOwnerEnforced', 'private', 'object'), 'AccessControlListNotSupported');
    expect(() => checkAclAllowed('BucketOwnerEnforced', 'private', 'bucket')).not.toThrow();
    expectS3Error(() => checkAclAllowed('BucketOwnerEnforced', 'public-read', 'bucket'), 'AccessControlListNotSupported');
    for (const o of [undefined, 'ObjectWriter', 'BucketOwnerPreferred'] as const) expect(() => checkAclAllowed(o, 'public-read-write', 'object')).not.toThrow();
  });

  it('documents, header and stored form; unknown stored values read as enforced (fail closed)', () => {
    for (const o of OBJECT_OWNERSHIPS) {
      expect(parseOwnershipControls(renderOwnershipControls(o))).toBe(o);
      expect(decodeOwnership(encodeOwnership(o))).toBe(o);
      expect(ownershipHeader({ 'x-amz-object-ownership': o })).toBe(o);
    }
    expect(decodeOwnership(new TextEncoder().encode('SomethingNew'))).toBe('BucketOwnerEnforced');
    expect(ownershipHeader({})).toBeUndefined();
    expectS3Error(() => ownershipHeader({ 'x-amz-object-ownership': 'bucketownerenforced' }), 'InvalidArgument');
    for (const bad of [
      '<OwnershipControls/>',
      '<OwnershipControls><Rule><ObjectOwnership>Mine</ObjectOwnership></Rule></OwnershipControls>',
      '<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>',
      '<OwnershipControls><Rule/></OwnershipControls>',
      '<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule><Extra/></OwnershipControls>',
      '<OwnershipControls><Rule><ObjectOwnership>ObjectWriter',
    ]) {
      expectS3Error(() => parseOwnershipControls(bad), 'MalformedXML');
    }
  });
});

describe('Block Public Access configuration', () => {
  it('all 16 combinations round-trip through the stored byte and the XML', () => {
    for (let bits = 0; bits < 16; bits++) {
      const c = { blockPublicAcls: !!(bits & 1), ignorePublicAcls: !!(bits & 2), blockPublicPolicy: !!(bits & 4), restrictPublicBuckets: !!(bits & 8) };
      expect(decodePublicAccessBlock(encodePublicAccessBlock(c))).toEqual(c);
      expect(parsePublicAccessBlock(renderPublicAccessBlock(c))).toEqual(c);
    }
  });

  it('an unreadable stored value blocks everything (fail closed)', () => {
    const all = { blockPublicAcls: true, ignorePublicAcls: true, blockPublicPolicy: true, restrictPublicBuckets: true };
    expect(decodePublicAccessBlock(Uint8Array.of(0x10))).toEqual(all);
    expect(decodePublicAccessBlock(Uint8Array.of())).toEqual(all);
    expect(decodePublicAccessBlock(Uint8Array.of(1, 2))).toEqual(all);
  });

  it('XML: absent elements are false; other values, unknown elements and bad documents are MalformedXML', () => {
    expect(parsePublicAccessBlock('<PublicAccessBlockConfiguration><BlockPublicAcls> TRUE </BlockPublicAcls></PublicAccessBlockConfiguration>')).toEqual({
      blockPublicAcls: true,
      ignorePublicAcls: false,
      blockPublicPolicy: false,
      restrictPublicBuckets: false,
    });
    for (const b of [
      '<PublicAccessBlockConfiguration><BlockPublicAcls>yes</BlockPublicAcls></PublicAccessBlockConfiguration>',
      '<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls><BlockPublicAcls>false</BlockPublicAcls></PublicAccessBlockConfiguration>',
      '<PublicAccessBlockConfiguration><BlockEverything>true</BlockEverything></PublicAccessBlockConfiguration>',
      '<PublicAccessBlock/>',
      '<PublicAccessBlockConfiguration>',
      '',
    ]) {
      expectS3Error(() => parsePublicAccessBlock(b), 'MalformedXML');
    }
  });
});
