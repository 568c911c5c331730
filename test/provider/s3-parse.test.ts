/** The s3 provider's pure parts: the XML reader, ListObjectsV2 parsing, error mapping, backoff. */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/provider/provider.js';
import type { S3Response } from '../../src/provider/s3/client.js';
import { errorFromResponse } from '../../src/provider/s3/errors.js';
import { parseListResult } from '../../src/provider/s3/list.js';
import { parseContentRange } from '../../src/provider/s3/response.js';
import { backoffDelay, isRetryableStatus } from '../../src/provider/s3/retry.js';
import { childText, parseXml } from '../../src/provider/s3/xml.js';
import { Readable } from 'node:stream';

describe('parseXml', () => {
  it('reads elements, text, CDATA, the five entities and numeric references', () => {
    const root = parseXml(
      '<?xml version="1.0"?>\n<!-- c --><a:Root xmlns:a="x"><K attr="1>2">&lt;&gt;&amp;&quot;&apos;&#x1F600;&#65;</K><E/><C><![CDATA[<raw>&amp;]]></C></a:Root>'
    );
    expect(root.name).toBe('Root');
    expect(childText(root, 'K')).toBe(`<>&"'😀A`);
    expect(childText(root, 'E')).toBe('');
    expect(childText(root, 'C')).toBe('<raw>&amp;');
  });
  it('refuses DTDs, unknown entities, bad references, mismatched tags and deep nesting', () => {
    const bad = [
      '<!DOCTYPE x [<!ENTITY e "boom">]><x>&e;</x>',
      '<x>&nbsp;</x>',
      '<x>&#xD800;</x>',
      '<x>&#x110000;</x>',
      '<x><y></x>',
      '<x>',
      '<x/><y/>',
      '<a>'.repeat(40) + '</a>'.repeat(40),
    ];
    for (const xml of bad) {
      expect(() => parseXml(xml), xml).toThrow(ProviderError);
    }
  });
});

describe('parseListResult', () => {
  const doc = (inner: string): string =>
    `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${inner}</ListBucketResult>`;
  const item = (key: string, size = 1): string =>
    `<Contents><Key>${key}</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified><ETag>&quot;abc&quot;</ETag><Size>${size}</Size></Contents>`;

  it('URL-decodes keys only when the server says it encoded them, and strips the prefix', () => {
    const encoded = parseListResult(
      doc(
        `<EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>${item('p/a+b%2B%01%F0%9F%98%80')}`
      ),
      'p/',
      10
    );
    expect(encoded.items[0]).toEqual({
      key: 'a b+\u0001😀',
      size: 1,
      etag: 'abc',
      lastModified: new Date('2024-01-02T03:04:05.000Z'),
    });
    expect(encoded.truncated).toBe(true);
    const raw = parseListResult(
      doc(`<IsTruncated>false</IsTruncated>${item('p/a+b%2B')}`),
      'p/',
      10
    );
    expect(raw.items[0].key).toBe('a+b%2B');
    expect(raw.truncated).toBe(false);
  });
  it('refuses more keys than asked for, keys outside the prefix and bad sizes', () => {
    expect(() => parseListResult(doc(item('p/a') + item('p/b')), 'p/', 1)).toThrow(/max-keys/);
    expect(() => parseListResult(doc(item('q/a')), 'p/', 10)).toThrow(/outside/);
    expect(() => parseListResult(doc(item('p/a', -1)), 'p/', 10)).toThrow(/Size/);
    expect(() => parseListResult('<Error/>', '', 10)).toThrow(/unexpected/);
  });
});

describe('errors and retries', () => {
  const res = (status: number, code?: string): S3Response => ({
    status,
    headers: {},
    body: Readable.from([]),
    error: { code },
  });
  it('maps S3 answers to provider codes', () => {
    const cases: [number, string | undefined, string][] = [
      [404, 'NoSuchKey', 'NotFound'],
      [404, undefined, 'NotFound'],
      [404, 'NoSuchBucket', 'Io'],
      [412, 'PreconditionFailed', 'PreconditionFailed'],
      [409, 'ConditionalRequestConflict', 'PreconditionFailed'],
      [416, 'InvalidRange', 'InvalidRange'],
      [400, 'KeyTooLongError', 'InvalidKey'],
      [403, 'SignatureDoesNotMatch', 'Io'],
      [503, 'SlowDown', 'Unavailable'],
      [500, undefined, 'Unavailable'],
    ];
    for (const [status, code, want] of cases)
      expect(errorFromResponse(res(status, code), 'k').code, `${status} ${code}`).toBe(want);
  });
  it('retries 5xx, 429, SlowDown and RequestTimeout only', () => {
    expect([500, 503, 429].map((s) => isRetryableStatus(s, undefined))).toEqual([true, true, true]);
    expect(isRetryableStatus(400, 'RequestTimeout')).toBe(true);
    expect([400, 403, 404, 412].map((s) => isRetryableStatus(s, undefined))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
  it('backs off exponentially with equal jitter, capped, honouring Retry-After', () => {
    const policy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(policy, n, undefined, () => 0))).toEqual([
      50, 100, 200, 400, 500,
    ]);
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(policy, n, undefined, () => 1))).toEqual([
      100, 200, 400, 800, 1000,
    ]);
    expect(backoffDelay(policy, 1, '0.7', () => 0)).toBe(700);
    expect(backoffDelay(policy, 1, '60', () => 0)).toBe(1000);
  });
  it('parses Content-Range', () => {
    expect(parseContentRange('bytes 0-9/100')).toEqual({ start: 0, end: 9, total: 100 });
    expect(parseContentRange('bytes */0')).toEqual({ start: undefined, end: undefined, total: 0 });
    expect(parseContentRange('items 0-1/2')).toBeUndefined();
  });
});
