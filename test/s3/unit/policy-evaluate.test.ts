/**
 * Bucket policy evaluation: principals, actions, resources and wildcards; Deny beats Allow;
 * condition semantics as IAM documents them (absent keys, negated operators, IfExists,
 * Null, set operators, networks, dates); and the fail-closed handling of values that cannot
 * be known when access is decided.
 */
import { describe, expect, it } from 'vitest';
import { parseBucketPolicy } from '../../../src/s3/authz/policy-parse.js';
import { evaluatePolicy, type PolicyDecision } from '../../../src/s3/authz/policy-evaluate.js';
import { UNKNOWN, type ContextValue } from '../../../src/s3/authz/policy-conditions.js';

const BUCKET = 'photos';
const policy = (statements: Record<string, unknown>[]) => parseBucketPolicy(new TextEncoder().encode(JSON.stringify({ Version: '2012-10-17', Statement: statements })), BUCKET);
const allow = (over: Record<string, unknown> = {}) => ({ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${BUCKET}/*`, ...over });
const deny = (over: Record<string, unknown> = {}) => ({ ...allow(over), Effect: 'Deny', ...over });

interface Req {
  principal?: string | null;
  action?: string;
  resource?: string;
  ctx?: Record<string, ContextValue>;
}
function decide(p: ReturnType<typeof policy>, r: Req = {}): PolicyDecision {
  const ctx = r.ctx ?? {};
  return evaluatePolicy(p, {
    principal: r.principal === undefined ? 'AKIDALT' : r.principal,
    action: r.action ?? 's3:GetObject',
    resource: r.resource ?? `${BUCKET}/a.jpg`,
    context: { get: (k) => ctx[k] },
  });
}

describe('statement matching', () => {
  it('principals: * includes anonymous; key ids in every accepted form match only that key', () => {
    const p = policy([allow({ Principal: { AWS: ['AKIDALT', 'arn:aws:iam::AKIDROOT:root', 'arn:aws:iam::000:user/AKIDUSER'] } })]);
    for (const who of ['AKIDALT', 'AKIDROOT', 'AKIDUSER']) expect(decide(p, { principal: who })).toBe('allow');
    expect(decide(p, { principal: 'AKIDOTHER' })).toBe('none');
    expect(decide(p, { principal: null })).toBe('none');
    expect(decide(policy([allow()]), { principal: null })).toBe('allow');
    expect(decide(policy([allow({ Principal: { AWS: '*' } })]), { principal: null })).toBe('allow');
  });

  it('actions: case-insensitive, wildcards, NotAction', () => {
    const p = policy([allow({ Action: ['s3:get*', 's3:ListBucket'] })]);
    expect(decide(p, { action: 's3:GetObjectTagging' })).toBe('allow');
    expect(decide(p, { action: 's3:PutObject' })).toBe('none');
    expect(decide(policy([allow({ Action: '*' })]), { action: 's3:DeleteObject' })).toBe('allow');
    const not = policy([allow({ Action: undefined, NotAction: 's3:Delete*' })]);
    expect(decide(not, { action: 's3:GetObject' })).toBe('allow');
    expect(decide(not, { action: 's3:DeleteObject' })).toBe('none');
  });

  it('resources: bucket vs objects, wildcards in the key, NotResource', () => {
    const p = policy([allow({ Resource: `arn:aws:s3:::${BUCKET}/public/*` })]);
    expect(decide(p, { resource: `${BUCKET}/public/x` })).toBe('allow');
    expect(decide(p, { resource: `${BUCKET}/public` })).toBe('none');
    expect(decide(p, { resource: `${BUCKET}/private/public/x` })).toBe('none');
    expect(decide(p, { resource: BUCKET })).toBe('none');
    expect(decide(policy([allow({ Resource: `arn:aws:s3:::${BUCKET}` })]), { resource: `${BUCKET}/k` })).toBe('none');
    expect(decide(policy([allow({ Resource: 'arn:aws:s3:::*' })]), { resource: `${BUCKET}/deep/k` })).toBe('allow');
    expect(decide(policy([allow({ Resource: `arn:aws:s3:::${BUCKET}/????.jpg` })]), { resource: `${BUCKET}/abcd.jpg` })).toBe('allow');
    expect(decide(policy([allow({ Resource: `arn:aws:s3:::${BUCKET}/????.jpg` })]), { resource: `${BUCKET}/abc.jpg` })).toBe('none');
    const not = policy([allow({ Resource: undefined, NotResource: `arn:aws:s3:::${BUCKET}/secret/*` })]);
    expect(decide(not, { resource: `${BUCKET}/secret/k` })).toBe('none');
    expect(decide(not, { resource: `${BUCKET}/open/k` })).toBe('allow');
  });

  it('Deny beats Allow in any order; NotPrincipal denies everyone else, anonymous included', () => {
    for (const statements of [
      [allow(), deny({ Principal: { AWS: 'AKIDALT' } })],
      [deny({ Principal: { AWS: 'AKIDALT' } }), allow()],
    ]) {
      const p = policy(statements);
      expect(decide(p, { principal: 'AKIDALT' })).toBe('deny');
      expect(decide(p, { principal: 'AKIDOTHER' })).toBe('allow');
    }
    const p = policy([allow(), deny({ Principal: undefined, NotPrincipal: { AWS: 'AKIDOWNER' } })]);
    expect(decide(p, { principal: 'AKIDOWNER' })).toBe('allow');
    expect(decide(p, { principal: 'AKIDALT' })).toBe('deny');
    expect(decide(p, { principal: null })).toBe('deny');
  });
});

describe('cost', () => {
  it('a policy too expensive to match against a request denies it; ordinary ones are cheap', () => {
    const hostile = Array.from({ length: 38 }, () => `arn:aws:s3:::${BUCKET}/*${'a'.repeat(500)}?b*`);
    const p = policy([allow({ Resource: [...hostile, `arn:aws:s3:::${BUCKET}/*`] })]);
    expect(decide(p, { resource: `${BUCKET}/${'a'.repeat(1020)}` })).toBe('deny');
    expect(decide(p, { resource: `${BUCKET}/short` })).toBe('allow');
    const t = performance.now();
    for (let i = 0; i < 20; i++) decide(p, { resource: `${BUCKET}/${'a'.repeat(1020)}` });
    expect((performance.now() - t) / 20).toBeLessThan(25);
  });
});

describe('conditions', () => {
  const c = (Condition: Record<string, unknown>, effect: 'Allow' | 'Deny' = 'Allow') => policy([effect === 'Allow' ? allow({ Condition }) : deny({ Condition })]);

  it('string operators; values of one key are ORed, keys and operators ANDed', () => {
    const p = c({ StringLike: { 's3:prefix': ['home/*', 'pub/?'] }, StringEquals: { 's3:delimiter': '/' } });
    expect(decide(p, { ctx: { 's3:prefix': ['home/a/b'], 's3:delimiter': ['/'] } })).toBe('allow');
    expect(decide(p, { ctx: { 's3:prefix': ['pub/x'], 's3:delimiter': ['/'] } })).toBe('allow');
    expect(decide(p, { ctx: { 's3:prefix': ['pub/xy'], 's3:delimiter': ['/'] } })).toBe('none');
    expect(decide(p, { ctx: { 's3:prefix': ['home/a'], 's3:delimiter': ['-'] } })).toBe('none');
    expect(decide(c({ StringEqualsIgnoreCase: { 'aws:UserAgent': 'CURL' } }), { ctx: { 'aws:useragent': ['curl'] } })).toBe('allow');
    expect(decide(c({ StringEquals: { 'aws:UserAgent': 'CURL' } }), { ctx: { 'aws:useragent': ['curl'] } })).toBe('none');
  });

  it('an absent key: positive operators false, negated true, IfExists true, Null tells presence', () => {
    const none = { ctx: {} };
    expect(decide(c({ StringEquals: { 's3:x-amz-acl': 'private' } }), none)).toBe('none');
    expect(decide(c({ StringNotEquals: { 's3:x-amz-acl': 'private' } }), none)).toBe('allow');
    expect(decide(c({ StringNotLike: { 's3:x-amz-acl': 'public*' } }), none)).toBe('allow');
    expect(decide(c({ NotIpAddress: { 'aws:SourceIp': '10.0.0.0/8' } }), none)).toBe('allow');
    expect(decide(c({ StringEqualsIfExists: { 's3:x-amz-acl': 'private' } }), none)).toBe('allow');
    expect(decide(c({ StringEqualsIfExists: { 's3:x-amz-acl': 'private' } }), { ctx: { 's3:x-amz-acl': ['public-read'] } })).toBe('none');
    expect(decide(c({ Null: { 's3:x-amz-acl': 'true' } }), none)).toBe('allow');
    expect(decide(c({ Null: { 's3:x-amz-acl': 'true' } }), { ctx: { 's3:x-amz-acl': ['private'] } })).toBe('none');
    expect(decide(c({ Null: { 's3:x-amz-acl': 'false' } }), { ctx: { 's3:x-amz-acl': ['private'] } })).toBe('allow');
    // The suite's "deny unencrypted uploads": Deny when the header is missing.
    const noEnc = c({ Null: { 's3:x-amz-server-side-encryption': 'true' } }, 'Deny');
    expect(decide(noEnc, none)).toBe('deny');
    expect(decide(noEnc, { ctx: { 's3:x-amz-server-side-encryption': ['AES256'] } })).toBe('none');
  });

  it('set operators over multi-valued keys (ForAllValues is vacuously true on an empty set)', () => {
    const any = c({ 'ForAnyValue:StringEquals': { 's3:RequestObjectTagKeys': ['a', 'b'] } });
    const all = c({ 'ForAllValues:StringEquals': { 's3:RequestObjectTagKeys': ['a', 'b'] } });
    expect(decide(any, { ctx: { 's3:requestobjecttagkeys': ['x', 'b'] } })).toBe('allow');
    expect(decide(any, { ctx: { 's3:requestobjecttagkeys': ['x'] } })).toBe('none');
    expect(decide(any, { ctx: {} })).toBe('none');
    expect(decide(all, { ctx: { 's3:requestobjecttagkeys': ['a', 'b'] } })).toBe('allow');
    expect(decide(all, { ctx: { 's3:requestobjecttagkeys': ['a', 'x'] } })).toBe('none');
    expect(decide(all, { ctx: {} })).toBe('allow');
    const notAll = c({ 'ForAllValues:StringNotEquals': { 's3:RequestObjectTagKeys': ['secret'] } });
    expect(decide(notAll, { ctx: { 's3:requestobjecttagkeys': ['a', 'b'] } })).toBe('allow');
    expect(decide(notAll, { ctx: { 's3:requestobjecttagkeys': ['a', 'secret'] } })).toBe('none');
  });

  it('networks: IPv4, IPv6, IPv4-mapped peers, single addresses', () => {
    const p = c({ IpAddress: { 'aws:SourceIp': ['192.0.2.0/24', '2001:db8::/32', '198.51.100.7'] } });
    for (const ip of ['192.0.2.9', '::ffff:192.0.2.200', '2001:db8:1::5', '198.51.100.7']) expect(decide(p, { ctx: { 'aws:sourceip': [ip] } }), ip).toBe('allow');
    for (const ip of ['192.0.3.1', '2001:db9::1', '198.51.100.8', 'garbage']) expect(decide(p, { ctx: { 'aws:sourceip': [ip] } }), ip).toBe('none');
    const notIn = c({ NotIpAddress: { 'aws:SourceIp': '127.0.0.0/8' } }, 'Deny');
    expect(decide(notIn, { ctx: { 'aws:sourceip': ['127.0.0.1'] } })).toBe('none');
    expect(decide(notIn, { ctx: { 'aws:sourceip': ['10.0.0.1'] } })).toBe('deny');
  });

  it('dates (ISO 8601 or epoch seconds on either side), numbers and booleans', () => {
    const after = c({ DateGreaterThan: { 'aws:CurrentTime': '2030-01-01T00:00:00Z' } });
    expect(decide(after, { ctx: { 'aws:currenttime': ['2029-12-31T23:59:59Z'] } })).toBe('none');
    expect(decide(after, { ctx: { 'aws:currenttime': ['2030-01-01T00:00:01Z'] } })).toBe('allow');
    const epoch = c({ DateLessThan: { 'aws:EpochTime': '2030-01-01T00:00:00Z' } });
    expect(decide(epoch, { ctx: { 'aws:epochtime': [String(Date.UTC(2029, 0, 1) / 1000)] } })).toBe('allow');
    expect(decide(epoch, { ctx: { 'aws:epochtime': [String(Date.UTC(2031, 0, 1) / 1000)] } })).toBe('none');
    const max = c({ NumericLessThanEquals: { 's3:max-keys': '100' } });
    expect(decide(max, { ctx: { 's3:max-keys': ['100'] } })).toBe('allow');
    expect(decide(max, { ctx: { 's3:max-keys': ['101'] } })).toBe('none');
    expect(decide(max, { ctx: { 's3:max-keys': ['1e1'] } })).toBe('allow');
    expect(decide(max, { ctx: { 's3:max-keys': ['ten'] } })).toBe('none');
    const tls = c({ Bool: { 'aws:SecureTransport': 'false' } }, 'Deny');
    expect(decide(tls, { ctx: { 'aws:securetransport': ['false'] } })).toBe('deny');
    expect(decide(tls, { ctx: { 'aws:securetransport': ['true'] } })).toBe('none');
  });

  it('tag conditions keep the tag key case-sensitive', () => {
    const p = c({ StringEquals: { 's3:ExistingObjectTag/Security': 'public' } });
    expect(decide(p, { ctx: { 's3:existingobjecttag/Security': ['public'] } })).toBe('allow');
    expect(decide(p, { ctx: { 's3:existingobjecttag/security': ['public'] } })).toBe('none');
  });

  it('a value that cannot be known yet: the Deny applies, the Allow does not', () => {
    const unknown: Req = { ctx: { 's3:existingobjecttag/security': UNKNOWN } };
    expect(decide(c({ StringEquals: { 's3:ExistingObjectTag/security': 'public' } }), unknown)).toBe('none');
    expect(decide(c({ StringNotEquals: { 's3:ExistingObjectTag/security': 'public' } }), unknown)).toBe('none');
    expect(decide(c({ StringEquals: { 's3:ExistingObjectTag/security': 'secret' } }, 'Deny'), unknown)).toBe('deny');
    expect(decide(c({ StringNotEquals: { 's3:ExistingObjectTag/security': 'secret' } }, 'Deny'), unknown)).toBe('deny');
    // ...but a condition that is false anyway still decides.
    const both = c({ StringEquals: { 's3:ExistingObjectTag/security': 'secret', 's3:prefix': 'x' } }, 'Deny');
    expect(decide(both, { ctx: { 's3:existingobjecttag/security': UNKNOWN, 's3:prefix': ['y'] } })).toBe('none');
  });
});
