/**
 * POST Object policies and form signatures.
 *
 * Proves: a policy parses only with `expiration` (strict ISO 8601, real calendar values)
 * and `conditions` spelled exactly, and every malformed condition (empty object, unknown
 * operator, missing `$`, wrong arity, negative or reversed content-length-range, non-string
 * values) is InvalidPolicyDocument; checks apply eq / starts-with with case-insensitive
 * names and case-sensitive values, treat a missing field as "", match each type of a
 * Content-Type list, refuse an expired policy and every field no condition names (bucket
 * included; signature fields, file, x-ignore-* and checksums exempt), and report the
 * failed condition. Form signatures verify for SigV4 (HMAC-SHA256 with the scoped key, hex)
 * and SigV2 (HMAC-SHA1, base64) computed here with node:crypto; a wrong signature, an
 * unknown key, a missing field, a bad scope or algorithm are each refused with S3's code;
 * a form without any authentication field is anonymous. Form fields become header values
 * exactly as Node would deliver headers (whitespace trimmed, no control characters).
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkPolicy, contentLengthRange, parsePolicy } from '../../../src/s3/post-object/policy.js';
import { verifyFormSignature } from '../../../src/s3/post-object/signature.js';
import { headersFromFields } from '../../../src/s3/post-object/fields.js';
import { S3Error } from '../../../src/s3/errors.js';

const b64 = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64');
const FUTURE = '2099-01-01T00:00:00.000Z';
const NOW = new Date('2030-06-01T00:00:00Z');

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof S3Error) return e.code;
    throw e;
  }
  return 'ok';
}

describe('parsePolicy', () => {
  it('parses conditions of every form', () => {
    const p = parsePolicy(
      b64({
        expiration: '2099-12-31T23:59:59Z',
        conditions: [{ bucket: 'b' }, ['StArTs-WiTh', '$KeY', 'user/'], ['eq', '$acl', 'private'], ['content-length-range', 10, '2048'], { $success_action_status: 201 }],
      })
    );
    expect(p.expiration.toISOString()).toBe('2099-12-31T23:59:59.000Z');
    expect(p.conditions.map((c) => (c.op === 'content-length-range' ? [c.op, c.min, c.max] : [c.op, c.field, c.value]))).toEqual([
      ['eq', 'bucket', 'b'],
      ['starts-with', 'key', 'user/'],
      ['eq', 'acl', 'private'],
      ['content-length-range', 10, 2048],
      ['eq', 'success_action_status', '201'],
    ]);
    expect(contentLengthRange(p)).toEqual({ min: 10, max: 2048 });
  });

  it('refuses malformed documents with InvalidPolicyDocument', () => {
    const bad: unknown[] = [
      'not base64 !!',
      b64('not json'),
      b64('[1,2]'),
      b64({ conditions: [] }),
      b64({ expiration: FUTURE }),
      b64({ EXPIRATION: FUTURE, conditions: [] }),
      b64({ expiration: FUTURE, CONDITIONS: [] }),
      b64({ expiration: FUTURE, conditions: {} }),
      b64({ expiration: '2099-01-01 00:00:00.000+00:00', conditions: [] }),
      b64({ expiration: '2099-02-30T00:00:00Z', conditions: [] }),
      b64({ expiration: '2099-01-01T24:00:00Z', conditions: [] }),
      b64({ expiration: 4102444800, conditions: [] }),
      b64({ expiration: FUTURE, conditions: [{}] }),
      b64({ expiration: FUTURE, conditions: [['matches', '$key', 'a']] }),
      b64({ expiration: FUTURE, conditions: [['eq', 'key', 'a']] }),
      b64({ expiration: FUTURE, conditions: [['eq', '$key']] }),
      b64({ expiration: FUTURE, conditions: [['eq', '$key', { a: 1 }]] }),
      b64({ expiration: FUTURE, conditions: [['content-length-range', 0]] }),
      b64({ expiration: FUTURE, conditions: [['content-length-range', -1, 0]] }),
      b64({ expiration: FUTURE, conditions: [['content-length-range', 5, 4]] }),
      b64({ expiration: FUTURE, conditions: [['content-length-range', 0.5, 4]] }),
      b64({ expiration: FUTURE, conditions: ['key'] }),
      b64({ expiration: FUTURE, conditions: [null] }),
    ];
    for (const p of bad) expect(code(() => parsePolicy(p as string)), String(p)).toBe('InvalidPolicyDocument');
  });
});

describe('checkPolicy', () => {
  const policy = parsePolicy(
    b64({
      expiration: '2031-01-01T00:00:00Z',
      conditions: [{ bucket: 'photos' }, ['starts-with', '$key', 'user/'], { acl: 'private' }, ['starts-with', '$Content-Type', 'image/'], ['starts-with', '$x-amz-meta-tag', ''], ['content-length-range', 0, 100]],
    })
  );
  const fields = (extra: Record<string, string> = {}) =>
    new Map(Object.entries({ bucket: 'photos', key: 'user/a.jpg', acl: 'private', 'content-type': 'image/png', policy: 'p', 'x-amz-signature': 's', ...extra }));

  it('accepts a form that meets every condition (missing fields read as "")', () => {
    expect(code(() => checkPolicy(policy, fields(), NOW))).toBe('ok');
    expect(code(() => checkPolicy(policy, fields({ 'x-amz-meta-tag': 'anything', 'x-ignore-me': '1', 'x-amz-checksum-crc32': 'AAAAAA==' }), NOW))).toBe('ok');
    expect(code(() => checkPolicy(policy, fields({ 'content-type': 'image/png, image/jpeg' }), NOW))).toBe('ok');
  });

  it('refuses with AccessDenied: expired, a condition that fails, a field no condition names', () => {
    expect(code(() => checkPolicy(policy, fields(), new Date('2031-01-01T00:00:01Z')))).toBe('AccessDenied');
    const bads: Record<string, string>[] = [{ bucket: 'other' }, { key: 'admin/a.jpg' }, { acl: 'PRIVATE' }, { 'content-type': 'text/html' }, { 'content-type': 'image/png, text/html' }, { 'x-amz-meta-other': 'x' }, { success_action_status: '201' }];
    for (const bad of bads) {
      expect(code(() => checkPolicy(policy, fields(bad), NOW)), JSON.stringify(bad)).toBe('AccessDenied');
    }
    const noAcl = fields();
    noAcl.delete('acl');
    expect(code(() => checkPolicy(policy, noAcl, NOW))).toBe('AccessDenied');
    // Without a bucket condition the bucket (always a field) is unaccounted for.
    const noBucket = parsePolicy(b64({ expiration: FUTURE, conditions: [['starts-with', '$key', '']] }));
    expect(code(() => checkPolicy(noBucket, new Map([['bucket', 'b'], ['key', 'k']]), NOW))).toBe('AccessDenied');
  });

  it('names the failed condition in the message', () => {
    try {
      checkPolicy(policy, fields({ key: 'x' }), NOW);
      expect.unreachable();
    } catch (e) {
      expect((e as S3Error).message).toBe('Invalid according to Policy: Policy Condition failed: ["starts-with","$key","user/"]');
    }
  });
});

describe('verifyFormSignature', () => {
  const secrets = new Map([['AKIDPOST', 'post-secret-key']]);
  const lookup = (id: string) => secrets.get(id);
  const policy = b64({ expiration: FUTURE, conditions: [] });
  const v4key = (date: string, region: string) => {
    let k = createHmac('sha256', 'AWS4post-secret-key').update(date).digest();
    for (const part of [region, 's3', 'aws4_request']) k = createHmac('sha256', k).update(part).digest();
    return k;
  };
  const v4 = (over: Record<string, string> = {}) =>
    new Map(
      Object.entries({
        policy,
        'x-amz-algorithm': 'AWS4-HMAC-SHA256',
        'x-amz-credential': 'AKIDPOST/20300601/eu-west-1/s3/aws4_request',
        'x-amz-date': '20300601T120000Z',
        'x-amz-signature': createHmac('sha256', v4key('20300601', 'eu-west-1')).update(policy).digest('hex'),
        ...over,
      })
    );
  const v2 = (over: Record<string, string> = {}) =>
    new Map(Object.entries({ policy, awsaccesskeyid: 'AKIDPOST', signature: createHmac('sha1', 'post-secret-key').update(policy).digest('base64'), ...over }));

  it('verifies SigV4 and SigV2 forms; a form without credentials is anonymous', () => {
    expect(verifyFormSignature(v4(), lookup, undefined)).toEqual({ kind: 'signed', accessKeyId: 'AKIDPOST', signatureVersion: 4, policy });
    expect(verifyFormSignature(v2(), lookup, undefined)).toEqual({ kind: 'signed', accessKeyId: 'AKIDPOST', signatureVersion: 2, policy });
    expect(verifyFormSignature(new Map([['key', 'k']]), lookup, undefined)).toEqual({ kind: 'anonymous' });
  });

  it('refuses wrong signatures, unknown keys, missing fields, bad scopes', () => {
    const other = b64({ expiration: FUTURE, conditions: [{ acl: 'public-read' }] });
    const cases: [Map<string, string>, string][] = [
      [v4({ policy: other }), 'SignatureDoesNotMatch'],
      [v4({ 'x-amz-signature': '0'.repeat(64) }), 'SignatureDoesNotMatch'],
      [v4({ 'x-amz-credential': 'NOPE/20300601/eu-west-1/s3/aws4_request' }), 'InvalidAccessKeyId'],
      [v4({ 'x-amz-credential': 'AKIDPOST/20300602/eu-west-1/s3/aws4_request' }), 'InvalidArgument'],
      [v4({ 'x-amz-credential': 'AKIDPOST/20300601/eu-west-1/ec2/aws4_request' }), 'InvalidArgument'],
      [v4({ 'x-amz-algorithm': 'AWS4-HMAC-SHA1' }), 'InvalidArgument'],
      [v4({ 'x-amz-date': 'yesterday' }), 'InvalidArgument'],
      [v4({ 'x-amz-signature': '' }), 'InvalidArgument'],
      [v2({ policy: other }), 'SignatureDoesNotMatch'],
      [v2({ awsaccesskeyid: 'NOPE' }), 'InvalidAccessKeyId'],
      [v2({ signature: '' }), 'InvalidArgument'],
      [v2({ policy: '' }), 'InvalidArgument'],
      [new Map([['policy', policy]]), 'InvalidArgument'],
      [new Map([['signature', 'x']]), 'InvalidArgument'],
    ];
    for (const [f, want] of cases) expect(code(() => verifyFormSignature(f, lookup, undefined)), JSON.stringify([...f])).toBe(want);
    // A strict region refuses another region's scope.
    expect(code(() => verifyFormSignature(v4(), lookup, 'us-east-1'))).toBe('InvalidArgument');
  });
});

describe('headersFromFields', () => {
  it('reads values as Node reads header values: surrounding spaces and tabs dropped, UTF-8 bytes one per character', () => {
    // Regression: `acl = "public-read "` passed a bucket policy denying s3:x-amz-acl
    // public-read (the condition saw the space) while the ACL stored was public-read.
    const h = headersFromFields(
      new Map([
        ['acl', ' public-read\t'],
        ['x-amz-meta-name', '  naïve  '],
        ['content-type', '\ttext/plain '],
        ['key', ' not a header '],
      ])
    );
    expect(h).toEqual({ 'x-amz-acl': 'public-read', 'x-amz-meta-name': Buffer.from('naïve', 'utf8').toString('latin1'), 'content-type': 'text/plain' });
  });

  it('refuses a control character no header could carry, in any field that becomes a header', () => {
    // Regression: a CR/LF in Content-Disposition or metadata was stored, and every GET of the
    // object then failed (500): a header value cannot hold it.
    for (const [name, value] of [
      ['content-disposition', 'attachment\r\nx-evil: 1'],
      ['x-amz-meta-a', 'line\nbreak'],
      ['acl', 'private\u0000'],
      ['cache-control', 'no\u007fcache'],
      ['x-amz-server-side-encryption', 'AES256\r'],
    ]) {
      expect(code(() => headersFromFields(new Map([[name!, value!]]))), name).toBe('InvalidArgument');
    }
    // Fields that are not headers are not judged here (the key has its own rules).
    expect(headersFromFields(new Map([['key', 'a\nb']]))).toEqual({});
  });
});
