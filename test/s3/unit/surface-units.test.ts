/**
 * The small pure pieces of the S3 surface.
 *
 * Proves: SigV4 verifies header values as the bytes on the wire — a UTF-8 metadata value
 * signed by the AWS SDK's signer (smithy) verifies when it arrives one character per byte,
 * as Node delivers it, and a value altered by one byte does not; user metadata text is
 * decoded from UTF-8 or RFC 2047 (B and Q words, adjacent words joined, malformed words
 * kept) and returned as an RFC 2047 word only when not US-ASCII; Content-Encoding keeps the
 * codings around aws-chunked as sent; <Resource> names what the request-target names
 * (path and virtual-hosted style, bad escapes kept); ListBuckets pages are complete,
 * ordered, and their tokens are bound to the prefix and refused when altered.
 */
import { describe, expect, it } from 'vitest';
import { verifyRequest } from '../../../src/s3/auth/index.js';
import { decodeEncodedWords, headerText, metadataValueIn, metadataValueOut } from '../../../src/s3/header-text.js';
import { storedContentEncoding } from '../../../src/s3/object-headers.js';
import { resourceOfTarget } from '../../../src/s3/resource.js';
import { pageBuckets } from '../../../src/s3/bucket-page.js';
import { S3Error } from '../../../src/s3/errors.js';
import { lookup, signHeader } from './helpers.js';

describe('SigV4 over the bytes on the wire', () => {
  const DATE = new Date('2030-01-02T03:04:05Z');
  async function signedWithMeta(value: string) {
    const req = await signHeader({ method: 'PUT', path: '/bucket/k', headers: { 'x-amz-meta-note': value }, date: DATE });
    // Node hands header bytes over one character per byte: the UTF-8 bytes, read as latin1.
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Buffer.from(v, 'utf8').toString('latin1');
    return { ...req, headers, now: DATE };
  }

  it('a UTF-8 metadata value signed by the SDK signer verifies; one changed byte does not', async () => {
    for (const value of ['Hello World\u00e9', '日本語 😀', 'plain ascii']) {
      const req = await signedWithMeta(value);
      expect(verifyRequest(req, lookup).accessKeyId).toBe('AKIDSTRATA');
      const bytes = Buffer.from(req.headers['x-amz-meta-note']!, 'latin1');
      bytes[bytes.length - 1] ^= 1;
      const tampered = { ...req, headers: { ...req.headers, 'x-amz-meta-note': bytes.toString('latin1') } };
      expect(() => verifyRequest(tampered, lookup)).toThrow(S3Error);
    }
  });
});

describe('user metadata text', () => {
  it('decodes wire bytes as UTF-8 when they are, else keeps them', () => {
    expect(headerText('plain')).toBe('plain');
    expect(headerText(Buffer.from('café', 'utf8').toString('latin1'))).toBe('café');
    expect(headerText('caf\u00e9')).toBe('caf\u00e9'); // a lone latin1 byte is not UTF-8
  });

  it('decodes RFC 2047 words', () => {
    const b = (s: string) => `=?UTF-8?B?${Buffer.from(s).toString('base64')}?=`;
    expect(decodeEncodedWords(b('naïve'))).toBe('naïve');
    expect(decodeEncodedWords(`${b('a')} ${b('b')}`)).toBe('ab');
    expect(decodeEncodedWords(`x ${b('a')} y`)).toBe('x a y');
    expect(decodeEncodedWords('=?iso-8859-1?q?caf=E9_cr=E8me?=')).toBe('café crème');
    expect(decodeEncodedWords('=?UTF-8?B?not base64!?=')).toBe('=?UTF-8?B?not base64!?=');
    expect(decodeEncodedWords('=?x-unknown?B?YQ==?=')).toBe('=?x-unknown?B?YQ==?=');
    expect(decodeEncodedWords('=?UTF-8?Q?=ZZ?=')).toBe('=?UTF-8?Q?=ZZ?=');
    expect(metadataValueIn(b('Hello World\u00e9'))).toBe('Hello World\u00e9');
  });

  it('returns non-ASCII values as one RFC 2047 B word, ASCII as is', () => {
    expect(metadataValueOut('plain text')).toBe('plain text');
    expect(metadataValueOut('é')).toBe('=?UTF-8?B?w6k=?=');
    expect(decodeEncodedWords(metadataValueOut('日本語 😀'))).toBe('日本語 😀');
  });

  it('returns control characters a header cannot carry as an encoded word (regression: GET/HEAD answered 500)', () => {
    const stored = metadataValueIn('=?UTF-8?B?YQ0KYg==?=');
    expect(stored).toBe('a\r\nb');
    for (const v of [stored, 'nul\u0000', 'del\u007f', 'bell\u0007']) {
      const out = metadataValueOut(v);
      expect(out, JSON.stringify(v)).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]*\?=$/);
      expect(decodeEncodedWords(out)).toBe(v);
    }
    expect(metadataValueOut('tab\tkept')).toBe('tab\tkept');
  });
});

describe('Content-Encoding', () => {
  it('keeps the codings around aws-chunked as sent', () => {
    expect(storedContentEncoding('aws-chunked, gzip')).toBe('gzip');
    expect(storedContentEncoding('gzip,aws-chunked')).toBe('gzip');
    expect(storedContentEncoding('deflate,  aws-chunked ,gzip')).toBe('deflate,gzip');
    expect(storedContentEncoding('deflate, gzip')).toBe('deflate, gzip');
    expect(storedContentEncoding('AWS-CHUNKED')).toBeUndefined();
    expect(storedContentEncoding('aws-chunked, aws-chunked')).toBeUndefined();
    expect(storedContentEncoding('  ')).toBeUndefined();
  });
});

describe('<Resource> of an unrouted request', () => {
  it('names the bucket and key the target names', () => {
    expect(resourceOfTarget('/', undefined, undefined)).toBe('/');
    expect(resourceOfTarget('/b', undefined, undefined)).toBe('/b');
    expect(resourceOfTarget('/b/', undefined, undefined)).toBe('/b');
    expect(resourceOfTarget('/b/dir/a%20b?acl', undefined, undefined)).toBe('/b/dir/a b');
    expect(resourceOfTarget('/b/bad%zz', undefined, undefined)).toBe('/b/bad%zz');
    expect(resourceOfTarget('/k%2Fx', 'photos.s3.test:9000', 's3.test')).toBe('/photos/k/x');
    expect(resourceOfTarget('/', 'photos.s3.test', 's3.test')).toBe('/photos');
  });
});

describe('ListBuckets pages', () => {
  const secret = Buffer.alloc(32, 7);
  const buckets = Array.from({ length: 7 }, (_, i) => ({ name: `b${i}` }));

  it('pages through every bucket in order, once', () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const p = pageBuckets(buckets, { maxBuckets: 3, ...(token && { continuationToken: token }) }, secret);
      seen.push(...p.buckets.map((b) => b.name));
      token = p.continuationToken;
      pages++;
    } while (token);
    expect(seen).toEqual(buckets.map((b) => b.name));
    expect(pages).toBe(3);
    expect(pageBuckets(buckets, {}, secret)).toEqual({ buckets });
    expect(pageBuckets(buckets, { prefix: 'b1' }, secret)).toEqual({ buckets: [{ name: 'b1' }] });
  });

  it('refuses altered tokens and tokens of another prefix', () => {
    const t = pageBuckets(buckets, { maxBuckets: 1, prefix: 'b' }, secret).continuationToken!;
    const code = (fn: () => unknown) => {
      try {
        fn();
        return 'ok';
      } catch (e) {
        return (e as S3Error).code;
      }
    };
    expect(code(() => pageBuckets(buckets, { maxBuckets: 1, prefix: 'b', continuationToken: t }, secret))).toBe('ok');
    expect(code(() => pageBuckets(buckets, { maxBuckets: 1, prefix: '', continuationToken: t }, secret))).toBe('InvalidArgument');
    const flipped = (t[0] === 'A' ? 'B' : 'A') + t.slice(1);
    expect(code(() => pageBuckets(buckets, { maxBuckets: 1, prefix: 'b', continuationToken: flipped }, secret))).toBe('InvalidArgument');
    expect(code(() => pageBuckets(buckets, { maxBuckets: 1, prefix: 'b', continuationToken: t }, Buffer.alloc(32, 8)))).toBe('InvalidArgument');
  });
});
