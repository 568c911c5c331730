/**
 * Bucket policy validation: what is accepted, and everything refused with MalformedPolicy —
 * malformed, oversized and hostile documents, and every element Strata does not implement
 * (refused, never ignored).
 */
import { describe, expect, it } from 'vitest';
import { MAX_POLICY_BYTES, parseBucketPolicy } from '../../../src/s3/authz/policy-parse.js';
import { isPolicyPublic } from '../../../src/s3/authz/policy-evaluate.js';
import { expectS3Error } from './helpers.js';

const BUCKET = 'photos';
const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const parse = (v: unknown) => parseBucketPolicy(enc(v), BUCKET);
const malformed = (v: unknown) => expectS3Error(() => parse(v), 'MalformedPolicy');

/** A one-statement policy with `over` merged into the statement. */
function one(over: Record<string, unknown>, top: Record<string, unknown> = {}): Record<string, unknown> {
  const statement = { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${BUCKET}/*`, ...over };
  for (const [k, v] of Object.entries(over)) if (v === undefined) delete (statement as Record<string, unknown>)[k];
  return { Version: '2012-10-17', Statement: [statement], ...top };
}

describe('accepted policies', () => {
  it('the forms clients send: statement object or list, principal forms, action and resource lists', () => {
    const p = parse({
      Version: '2012-10-17',
      Id: 'p1',
      Statement: [
        { Sid: 'Public read', Effect: 'Allow', Principal: { AWS: '*' }, Action: ['s3:GetObject', 's3:Get*'], Resource: [`arn:aws:s3:::${BUCKET}`, `arn:aws:s3:::${BUCKET}/*`] },
        { Effect: 'Deny', Principal: { AWS: ['AKIDALT', 'arn:aws:iam::AKIDTENANT:root', 'arn:aws:iam::123456789012:user/team/AKIDUSER'] }, Action: '*', Resource: '*' },
        { Effect: 'Deny', Principal: { CanonicalUser: 'AKIDCANON' }, NotAction: 's3:List*', NotResource: 'arn:aws:s3:::other/*' },
        { Effect: 'Deny', NotPrincipal: { AWS: 'AKIDOWNER' }, Action: 's3:DeleteObject', Resource: `arn:aws:s3:::${BUCKET}/keep/*` },
      ],
    });
    expect(p.statements).toHaveLength(4);
    expect(p.id).toBe('p1');
    expect(p.statements[0]!.principal.any).toBe(true);
    expect([...p.statements[1]!.principal.ids].sort()).toEqual(['AKIDALT', 'AKIDTENANT', 'AKIDUSER']);
    expect(p.statements[2]!.action.not && p.statements[2]!.resource.not).toBe(true);
    expect(p.statements[3]!.principal.not).toBe(true);
    // A single statement object, no Version (2008-10-17).
    expect(parse({ Statement: { Effect: 'Allow', Principal: '*', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${BUCKET}` } }).version).toBe('2008-10-17');
  });

  it('resources: this bucket, objects in it, or wildcards that can name them', () => {
    for (const r of ['*', 'arn:aws:s3:::*', 'arn:aws:s3:::*/*', `arn:aws:s3:::${BUCKET}`, 'arn:aws:s3:::ph?tos/a*', 'arn:aws:s3:::p*', `arn:aws:s3:::${BUCKET}/`]) {
      expect(() => parse(one({ Resource: r })), r).not.toThrow();
    }
    for (const r of ['arn:aws:s3:::other', 'arn:aws:s3:::other/*', `arn:aws:s3:::${BUCKET}x/*`, 'arn:aws:s3:::', 'arn:aws:iam::1:root', 'photos/*', `arn:aws:s3:::${BUCKET.toUpperCase()}/*`]) {
      malformed(one({ Resource: r }));
    }
  });

  it('conditions with every supported operator family', () => {
    const p = parse(
      one({
        Condition: {
          StringLike: { 's3:prefix': ['home/*', 'public/?'] },
          StringNotEqualsIgnoreCase: { 'aws:UserAgent': 'BadBot' },
          NumericLessThanEquals: { 's3:max-keys': 100 },
          DateGreaterThan: { 'aws:CurrentTime': '2020-01-01T00:00:00Z' },
          DateLessThan: { 'aws:EpochTime': 4102444800 },
          Bool: { 'aws:SecureTransport': false },
          IpAddress: { 'aws:SourceIp': ['10.0.0.0/8', '2001:db8::/32', '192.0.2.1'] },
          NotIpAddress: { 'aws:SourceIp': '10.1.0.0/16' },
          Null: { 's3:x-amz-server-side-encryption': 'true' },
          StringEqualsIfExists: { 'aws:Referer': 'https://example.com/' },
          'ForAnyValue:StringEquals': { 's3:RequestObjectTagKeys': ['a', 'b'] },
          'ForAllValues:StringLike': { 's3:RequestObjectTagKeys': '*' },
          StringEquals: { 's3:ExistingObjectTag/Security': 'public', 's3:RequestObjectTag/x': 'y', 's3:x-amz-acl': 'private' },
        },
      })
    );
    expect(p.statements[0]!.conditions.length).toBe(15);
    expect(p.readsObjectTags).toBe(true);
  });

  it('exactly 20 KB is accepted, one byte more is refused', () => {
    const base = JSON.stringify(one({}));
    const exact = base + ' '.repeat(MAX_POLICY_BYTES - base.length);
    expect(enc(exact).length).toBe(MAX_POLICY_BYTES);
    expect(() => parse(exact)).not.toThrow();
    const err = malformed(exact + ' ');
    expect(err.message).toMatch(/20 KB/);
  });

  it('policy variables are literal text under 2008-10-17', () => {
    expect(() => parse({ ...one({ Resource: 'arn:aws:s3:::photos/${aws:username}/*' }), Version: '2008-10-17' })).not.toThrow();
  });
});

describe('refused policies (MalformedPolicy), never partly applied', () => {
  it('not JSON, not an object, not UTF-8, duplicate members, hostile nesting', () => {
    for (const bad of ['', 'null', '[]', '"x"', '{', '{"Statement":[]}x', '\ufeff{}', '{"Version":"2012-10-17","Version":"2012-10-17","Statement":[]}']) malformed(bad);
    expectS3Error(() => parseBucketPolicy(Uint8Array.of(0x7b, 0xff, 0x7d), BUCKET), 'MalformedPolicy');
    // A Deny turned Allow by a second "Effect": refused instead of read either way.
    malformed('{"Statement":[{"Effect":"Deny","Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*"}]}');
    malformed('{"Statement":' + '['.repeat(40) + ']'.repeat(40) + '}');
  });

  it('missing, unknown or doubled elements', () => {
    malformed({ Version: '2012-10-17' });
    malformed({ Version: '2012-10-17', Statement: [] });
    malformed({ Version: '2012-10-17', Statement: ['x'] });
    malformed({ Version: '2012-10-17', Statement: one({}).Statement, Extra: 1 });
    malformed({ Version: '2012-10-18', Statement: one({}).Statement });
    malformed({ Version: 2012, Statement: one({}).Statement });
    malformed({ ...one({}), Id: 5 });
    for (const field of ['Effect', 'Principal', 'Action', 'Resource']) malformed(one({ [field]: undefined }));
    malformed(one({ Effect: 'allow' }));
    malformed(one({ Effect: true }));
    malformed(one({ NotAction: 's3:PutObject' }));
    malformed(one({ NotResource: '*' }));
    malformed(one({ NotPrincipal: '*' }));
    malformed(one({ Unknown: 'x' }));
    malformed(one({ Sid: 7 }));
    malformed({ Statement: [{ ...(one({ Sid: 'same' }).Statement as object[])[0]!, Sid: 'same' }, { ...(one({}).Statement as object[])[0]!, Sid: 'same' }] });
  });

  it('NotPrincipal with Allow is refused (S3 refuses it too)', () => {
    const err = malformed(one({ Principal: undefined, NotPrincipal: { AWS: 'arn:aws:iam::s3tenant1:root' } }));
    expect(err.message).toMatch(/NotPrincipal/);
  });

  it('principals Strata cannot identify', () => {
    for (const p of [{ Service: 'cloudtrail.amazonaws.com' }, { Federated: 'x' }, {}, 'AKID', ['*'], { AWS: [] }, { AWS: 'arn:aws:iam::*:root' }, { AWS: 'a b' }, { AWS: 'arn:aws:sts::1:assumed-role/r/s' }, { AWS: 5 }]) {
      malformed(one({ Principal: p }));
    }
  });

  it('actions: other services, unknown names, typos in wildcards', () => {
    for (const a of ['iam:CreateUser', 's3:', 's3:GetObjekt', 's3:Frobnicate*', 'GetObject', '', ['s3:GetObject', 'ec2:*'], [], 5]) malformed(one({ Action: a }));
    for (const a of ['s3:*', 's3:get*', 'S3:GETOBJECT', 's3:?etObject', '*', ['s3:List*', 's3:PutObjectAcl']]) expect(() => parse(one({ Action: a })), JSON.stringify(a)).not.toThrow();
  });

  it('conditions Strata does not implement or that cannot hold, rather than ignoring them', () => {
    const cases: Record<string, unknown>[] = [
      { BinaryEquals: { 's3:x-amz-acl': 'QUJD' } },
      { ArnLike: { 'aws:SourceArn': 'arn:aws:sns:*' } },
      { StringEquals: { 'aws:SourceArn': 'x' } },
      { StringEquals: { 'aws:SourceVpce': 'vpce-1' } },
      { StringEquals: { 's3:VersionId': '1' } },
      { StringEquals: { 's3:object-lock-mode': 'GOVERNANCE' } },
      { StringEquals: { 's3:ExistingObjectTag/': 'x' } },
      { stringequals: { 's3:prefix': 'x' } },
      { StringEqualsAnything: { 's3:prefix': 'x' } },
      { IpAddress: { 's3:prefix': '10.0.0.0/8' } },
      { StringEquals: { 'aws:SourceIp': '10.0.0.1' } },
      { DateLessThan: { 'aws:SourceIp': '2020-01-01' } },
      { NumericLessThan: { 'aws:CurrentTime': 5 } },
      { Bool: { 's3:prefix': 'true' } },
      { IpAddress: { 'aws:SourceIp': '10.0.0.0/33' } },
      { IpAddress: { 'aws:SourceIp': '300.1.1.1' } },
      { IpAddress: { 'aws:SourceIp': 'example.com' } },
      { DateGreaterThan: { 'aws:CurrentTime': 'yesterday' } },
      { NumericEquals: { 's3:max-keys': 'ten' } },
      { Bool: { 'aws:SecureTransport': 'yes' } },
      { Null: { 's3:prefix': 'maybe' } },
      { NullIfExists: { 's3:prefix': 'true' } },
      { 'ForAnyValue:Null': { 's3:prefix': 'true' } },
      { StringEquals: { 's3:prefix': [] } },
      { StringEquals: { 's3:prefix': { a: 1 } } },
      { StringEquals: { 's3:prefix': null } },
      { StringEquals: {} },
      { StringEquals: 'x' },
      { StringEquals: { 's3:prefix': '${aws:username}/*' } },
    ];
    for (const c of cases) malformed(one({ Condition: c }));
    malformed(one({ Condition: [] }));
    malformed(one({ Resource: 'arn:aws:s3:::photos/${aws:username}/*' }));
  });
});

describe('public policies (S3: "The meaning of public")', () => {
  it('Allow to everyone is public unless confined to fixed networks; named keys and Deny are not', () => {
    expect(isPolicyPublic(parse(one({})))).toBe(true);
    expect(isPolicyPublic(parse(one({ Principal: { AWS: ['AKIDALT', '*'] } })))).toBe(true);
    expect(isPolicyPublic(parse(one({ Principal: { AWS: 'arn:aws:iam::s3tenant1:root' } })))).toBe(false);
    expect(isPolicyPublic(parse(one({ Effect: 'Deny' })))).toBe(false);
    expect(isPolicyPublic(parse(one({ Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/32' } } })))).toBe(false);
    expect(isPolicyPublic(parse(one({ Condition: { IpAddress: { 'aws:SourceIp': ['10.0.0.0/8', '2001:db8::/32'] } } })))).toBe(false);
    // Wide networks, negated or optional network conditions still mean everyone.
    expect(isPolicyPublic(parse(one({ Condition: { IpAddress: { 'aws:SourceIp': '0.0.0.0/1' } } })))).toBe(true);
    expect(isPolicyPublic(parse(one({ Condition: { IpAddress: { 'aws:SourceIp': '::/16' } } })))).toBe(true);
    expect(isPolicyPublic(parse(one({ Condition: { NotIpAddress: { 'aws:SourceIp': '10.0.0.0/8' } } })))).toBe(true);
    expect(isPolicyPublic(parse(one({ Condition: { IpAddressIfExists: { 'aws:SourceIp': '10.0.0.0/8' } } })))).toBe(true);
    expect(isPolicyPublic(parse(one({ Condition: { StringEquals: { 'aws:Referer': 'https://example.com/' } } })))).toBe(true);
  });
});
