/**
 * The SSE request parsers with hostile input: header sets (every partial SSE-C set, bad
 * base64, keys of every wrong length, MD5 of another key, contradictory and KMS headers,
 * oversized values) and bucket encryption documents (wrong shapes, unknown algorithms,
 * DOCTYPE / entity tricks, deep nesting, non-UTF-8, truncation). Every failure is an
 * S3Error with S3's code; nothing else escapes.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { customerKeyFrom, writeSseFrom } from '../../../src/s3/sse-headers.js';
import { decodeBucketEncryption, encodeBucketEncryption, parseBucketEncryption, renderBucketEncryption } from '../../../src/s3/sse-config.js';
import { S3Error } from '../../../src/s3/errors.js';
import { route } from '../../../src/s3/router.js';
import { randomBytes } from '../../support/random.js';

const P = 'x-amz-server-side-encryption-customer-';
const key = Buffer.from(randomBytes(32, 3));
const md5 = (k: Uint8Array) => createHash('md5').update(k).digest('base64');
const full = (k: Buffer = key): Record<string, string> => ({ [`${P}algorithm`]: 'AES256', [`${P}key`]: k.toString('base64'), [`${P}key-md5`]: md5(k) });

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof S3Error) return `${err.status} ${err.code}`;
    throw err;
  }
  return 'ok';
}

describe('SSE-C headers', () => {
  it('accepts a full valid set and returns the key and its MD5, with or without padding whitespace', () => {
    const c = customerKeyFrom(full());
    expect(c?.key.equals(key)).toBe(true);
    expect(c?.md5).toBe(md5(key));
    expect(customerKeyFrom({ ...full(), [`${P}key`]: ` ${key.toString('base64')} ` })?.key.equals(key)).toBe(true);
    expect(customerKeyFrom({})).toBeUndefined();
  });

  it('refuses every partial set', () => {
    const f = full();
    const names = Object.keys(f);
    for (let mask = 1; mask < 7; mask++) {
      const h: Record<string, string> = {};
      names.forEach((n, i) => {
        if (mask & (1 << i)) h[n] = f[n]!;
      });
      expect(codeOf(() => customerKeyFrom(h)), JSON.stringify(Object.keys(h))).toBe('400 InvalidArgument');
    }
  });

  it('refuses keys of every wrong length, non-base64 and non-canonical base64, a wrong or malformed MD5', () => {
    for (const n of [0, 1, 16, 24, 31, 33, 64, 4096]) {
      const k = Buffer.from(randomBytes(n, n + 1));
      expect(codeOf(() => customerKeyFrom(full(k))), `${n} bytes`).toBe('400 InvalidArgument');
    }
    for (const bad of ['!!!!', `${key.toString('base64')}=`, key.toString('base64url'), key.toString('hex'), '\u00ff'.repeat(44), 'A'.repeat(100_000)]) {
      expect(codeOf(() => customerKeyFrom({ ...full(), [`${P}key`]: bad }))).toBe('400 InvalidArgument');
    }
    for (const bad of ['', 'AAAAAAAAAAAAAAAAAAAAAA==', md5(Buffer.from(randomBytes(32, 9))), md5(key).slice(0, 10), `${md5(key)}x`]) {
      expect(codeOf(() => customerKeyFrom({ ...full(), [`${P}key-md5`]: bad }))).toBe('400 InvalidArgument');
    }
  });

  it('refuses algorithms other than AES256 with InvalidEncryptionAlgorithmError, without echoing long values', () => {
    for (const alg of ['AES128', 'aes256', 'AES256 ', '', 'x'.repeat(10_000)]) {
      const h = { ...full(), [`${P}algorithm`]: alg };
      if (alg === 'AES256 ') expect(customerKeyFrom(h)).toBeDefined(); // trimmed
      else expect(codeOf(() => customerKeyFrom(h))).toBe('400 InvalidEncryptionAlgorithmError');
    }
    try {
      customerKeyFrom({ ...full(), [`${P}algorithm`]: 'x'.repeat(10_000) });
    } catch (err) {
      expect(String((err as S3Error).detail.ArgumentValue).length).toBeLessThanOrEqual(64);
    }
  });

  it('reads the copy-source set under its own prefix only', () => {
    const src = 'x-amz-copy-source-server-side-encryption-customer-';
    const h = { [`${src}algorithm`]: 'AES256', [`${src}key`]: key.toString('base64'), [`${src}key-md5`]: md5(key) };
    expect(customerKeyFrom(h)).toBeUndefined();
    expect(customerKeyFrom(h, src)?.key.equals(key)).toBe(true);
  });
});

describe('write SSE headers', () => {
  it('maps every combination to its answer', () => {
    expect(writeSseFrom({})).toEqual({ kind: 'none' });
    expect(writeSseFrom({ 'x-amz-server-side-encryption': 'AES256' })).toEqual({ kind: 'sse-s3' });
    expect(writeSseFrom({ 'x-amz-server-side-encryption': ' AES256 ', 'x-amz-server-side-encryption-bucket-key-enabled': 'TRUE' })).toEqual({ kind: 'sse-s3' });
    expect(writeSseFrom(full()).kind).toBe('sse-c');
    const cases: [Record<string, string>, string][] = [
      [{ 'x-amz-server-side-encryption': 'aws:kms' }, '501 NotImplemented'],
      [{ 'x-amz-server-side-encryption': 'aws:kms:dsse', 'x-amz-server-side-encryption-aws-kms-key-id': 'k' }, '501 NotImplemented'],
      [{ 'x-amz-server-side-encryption': 'aws:kms', ...full() }, '400 InvalidArgument'],
      [{ 'x-amz-server-side-encryption': 'AES256', [`${P}algorithm`]: 'AES256' }, '400 InvalidArgument'],
      [{ 'x-amz-server-side-encryption': 'AES256', 'x-amz-server-side-encryption-aws-kms-key-id': 'k' }, '400 InvalidArgument'],
      [{ 'x-amz-server-side-encryption-context': 'e30=' }, '400 InvalidArgument'],
      [{ 'x-amz-server-side-encryption-aws-kms-key-id': 'k', ...full() }, '400 InvalidArgument'],
      [{ 'x-amz-server-side-encryption': 'AES256', 'x-amz-server-side-encryption-bucket-key-enabled': '1' }, '400 InvalidArgument'],
      [{ 'x-amz-server-side-encryption': 'aes256' }, '400 InvalidArgument'],
      [{ 'x-amz-server-side-encryption': 'A'.repeat(100_000) }, '400 InvalidArgument'],
    ];
    for (const [h, want] of cases) expect(codeOf(() => writeSseFrom(h)), JSON.stringify(h).slice(0, 200)).toBe(want);
  });
});

describe('bucket encryption documents', () => {
  const doc = (inner: string) => `<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${inner}</ServerSideEncryptionConfiguration>`;
  const rule = (alg: string, extra = '', ruleExtra = '') =>
    `<Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>${alg}</SSEAlgorithm>${extra}</ApplyServerSideEncryptionByDefault>${ruleExtra}</Rule>`;

  it('round-trips AES256 with and without the bucket-key flag', () => {
    expect(parseBucketEncryption(doc(rule('AES256')))).toEqual({ algorithm: 'AES256', bucketKeyEnabled: false });
    const c = parseBucketEncryption(doc(rule(' AES256 ', '', '<BucketKeyEnabled>true</BucketKeyEnabled>')));
    expect(c).toEqual({ algorithm: 'AES256', bucketKeyEnabled: true });
    expect(parseBucketEncryption(renderBucketEncryption(c))).toEqual(c);
    expect(decodeBucketEncryption(encodeBucketEncryption(c))).toEqual(c);
    expect(() => decodeBucketEncryption(Buffer.from('{"algorithm":"aws:kms"}'))).toThrow();
  });

  it('refuses wrong shapes, algorithms and hostile XML with S3 errors', () => {
    const cases: [string | Uint8Array, string][] = [
      [doc(rule('aws:kms', '<KMSMasterKeyID>k</KMSMasterKeyID>')), '501 NotImplemented'],
      [doc(rule('aws:kms:dsse')), '501 NotImplemented'],
      [doc(rule('AES128')), '400 InvalidArgument'],
      [doc(rule('AES256', '<KMSMasterKeyID>k</KMSMasterKeyID>')), '400 InvalidArgument'],
      [doc(''), '400 MalformedXML'],
      [doc(rule('AES256') + rule('AES256')), '400 MalformedXML'],
      [doc('<Rule/>'), '400 MalformedXML'],
      [doc('<Rule><ApplyServerSideEncryptionByDefault/></Rule>'), '400 MalformedXML'],
      [doc(rule('<x>AES256</x>')), '400 MalformedXML'],
      [doc(rule('AES256', '', '<BucketKeyEnabled>maybe</BucketKeyEnabled>')), '400 MalformedXML'],
      ['<CORSConfiguration/>', '400 MalformedXML'],
      [doc(rule('AES256')).slice(0, 80), '400 MalformedXML'],
      ['<!DOCTYPE x [<!ENTITY a "AES256">]>' + doc(rule('&a;')), '400 MalformedXML'],
      [doc(rule('&unknown;')), '400 MalformedXML'],
      [doc('<Rule>'.repeat(100) + '</Rule>'.repeat(100)), '400 MalformedXML'],
      [Buffer.concat([Buffer.from(doc('').slice(0, 40)), Buffer.from([0xff, 0xfe]), Buffer.from('</ServerSideEncryptionConfiguration>')]), '400 MalformedXML'],
      ['', '400 MalformedXML'],
    ];
    for (const [body, want] of cases) expect(codeOf(() => parseBucketEncryption(body)), String(body).slice(0, 120)).toBe(want);
  });

  it('routes ?encryption on a bucket and not on objects', () => {
    const r = (method: string, target: string) => route({ method, rawTarget: target, headers: { host: 'h' } });
    expect(r('GET', '/bkt?encryption')).toEqual({ op: 'GetBucketEncryption', bucket: 'bkt' });
    expect(r('PUT', '/bkt?encryption')).toEqual({ op: 'PutBucketEncryption', bucket: 'bkt' });
    expect(r('DELETE', '/bkt?encryption')).toEqual({ op: 'DeleteBucketEncryption', bucket: 'bkt' });
    expect(r('HEAD', '/bkt?encryption').op).toBe('HeadBucket');
  });
});
