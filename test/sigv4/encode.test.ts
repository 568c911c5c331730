/** SigV4 URI encoding and canonicalisation rules, edge by edge. */
import { describe, expect, it } from 'vitest';
import {
  canonicalHeaders,
  canonicalQuery,
  canonicalUri,
  deriveSigningKey,
  formatAmzDate,
  lowerCaseHeaders,
  parseAmzDate,
  parseRawQuery,
  signaturesEqual,
  signingKeyCacheSize,
  uriEncode,
} from '../../src/sigv4/index.js';

describe('uriEncode', () => {
  it('keeps exactly the unreserved set and encodes every other byte as uppercase %XY', () => {
    expect(uriEncode('AZaz09-._~')).toBe('AZaz09-._~');
    expect(uriEncode(' !"#$%&\'()*+,/:;=?@[]')).toBe(
      '%20%21%22%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D'
    );
    expect(uriEncode('é😀\u0001')).toBe('%C3%A9%F0%9F%98%80%01');
  });
  it('keeps / only when asked (paths)', () => {
    expect(uriEncode('a/b c', true)).toBe('a/b%20c');
    expect(uriEncode('a/b c')).toBe('a%2Fb%20c');
  });
  it('refuses lone surrogates', () => {
    expect(() => uriEncode('\ud800')).toThrow(URIError);
  });
});

describe('canonicalUri', () => {
  it('does not normalise dot or empty segments (S3 keys may hold them)', () => {
    expect(canonicalUri('/b/../x//y/./')).toBe('/b/../x//y/./');
    expect(canonicalUri('')).toBe('/');
  });
  it('double-encodes for non-S3 services', () => {
    expect(canonicalUri('/a b', { doubleEncode: true })).toBe('/a%2520b');
  });
});

describe('canonicalQuery', () => {
  it('sorts by encoded name then value and keeps empty values as name=', () => {
    expect(
      canonicalQuery([
        ['b', '2'],
        ['a', 'z'],
        ['a', 'y'],
        ['list-type', ''],
        ['A', ' '],
      ])
    ).toBe('A=%20&a=y&a=z&b=2&list-type=');
  });
  it('round-trips through parseRawQuery', () => {
    const pairs: [string, string][] = [
      ['prefix', 'a/b c+%'],
      ['start-after', '😀'],
      ['x', ''],
    ];
    const raw = canonicalQuery(pairs);
    expect(parseRawQuery('?' + raw)).toEqual(pairs.slice().sort());
  });
});

describe('canonical headers', () => {
  it('lower-cases, trims, collapses runs of spaces and joins repeated headers with commas', () => {
    const map = lowerCaseHeaders({
      'X-Amz-Meta-A': '  a   b\t c ',
      'x-amz-meta-a': 'd',
      Multi: ['1', ' 2 '],
      Gone: undefined,
    });
    expect(map.get('x-amz-meta-a')).toBe('a b c,d');
    expect(map.get('multi')).toBe('1,2');
    expect(map.has('gone')).toBe(false);
    const { canonical, signedHeaders } = canonicalHeaders(map, ['multi', 'X-Amz-Meta-A']);
    expect(canonical).toBe('multi:1,2\nx-amz-meta-a:a b c,d\n');
    expect(signedHeaders).toBe('multi;x-amz-meta-a');
  });
  it('throws when a signed header is absent', () => {
    expect(() => canonicalHeaders(new Map(), ['host'])).toThrow(/host/);
  });
});

describe('dates, keys, comparison', () => {
  it('formats and parses x-amz-date', () => {
    const d = new Date('2024-02-29T23:59:58.123Z');
    expect(formatAmzDate(d)).toBe('20240229T235958Z');
    expect(parseAmzDate('20240229T235958Z')?.toISOString()).toBe('2024-02-29T23:59:58.000Z');
    expect(parseAmzDate('2024-02-29')).toBeUndefined();
  });
  it('caches signing keys by (secret, day, region, service) with a bounded cache', () => {
    const a = deriveSigningKey('s', '20240101', 'r', 's3');
    expect(deriveSigningKey('s', '20240101', 'r', 's3')).toBe(a);
    expect(deriveSigningKey('t', '20240101', 'r', 's3')).not.toEqual(a);
    for (let i = 0; i < 200; i++) deriveSigningKey('s', '20240101', `r${i}`, 's3');
    expect(signingKeyCacheSize()).toBeLessThanOrEqual(64);
  });
  it('compares signatures exactly', () => {
    expect(signaturesEqual('abc', 'abc')).toBe(true);
    expect(signaturesEqual('abc', 'abd')).toBe(false);
    expect(signaturesEqual('abc', 'abcd')).toBe(false);
  });
});
