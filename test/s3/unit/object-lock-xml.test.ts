/**
 * Object Lock documents and headers, without sockets: ObjectLockConfiguration, Retention and
 * LegalHold parsed and rendered (valid forms round-trip; malformed, truncated, oversized and
 * hostile ones refused with the code S3 gives), ISO 8601 times (every accepted form, and the
 * impossible dates refused), and the x-amz-object-lock-* request headers against a real
 * (memory) store with a lock-enabled and a plain bucket.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  parseIsoTime,
  parseLegalHold,
  parseObjectLockConfiguration,
  parseRetention,
  renderLegalHold,
  renderObjectLockConfiguration,
  renderRetention,
} from '../../../src/s3/xml/object-lock.js';
import { S3Error } from '../../../src/s3/errors.js';
import { bucketLockRequested, hasIntegrityHeader, lockHeaders, lockRequestFromHeaders, requireLockIntegrity } from '../../../src/s3/object-lock-headers.js';
import { createMemoryProvider } from '../../../src/provider/memory/index.js';
import { Store } from '../../../src/store/store.js';
import { lockedBucketConfigs } from '../../../src/store/object-lock-config.js';
import type { RequestContext } from '../../../src/s3/context.js';

const NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';
const code = (f: () => unknown): string => {
  try {
    f();
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(S3Error);
    return (err as S3Error).code;
  }
};
const config = (rule: string, enabled = '<ObjectLockEnabled>Enabled</ObjectLockEnabled>') => `<ObjectLockConfiguration ${NS}>${enabled}${rule}</ObjectLockConfiguration>`;
const rule = (inner: string) => `<Rule><DefaultRetention>${inner}</DefaultRetention></Rule>`;

describe('ObjectLockConfiguration', () => {
  it('parses and renders every valid form', () => {
    expect(parseObjectLockConfiguration(config(''))).toEqual({});
    expect(parseObjectLockConfiguration(config(rule('<Mode>GOVERNANCE</Mode><Days>1</Days>')))).toEqual({ rule: { mode: 'GOVERNANCE', days: 1 } });
    expect(parseObjectLockConfiguration(config(rule('<Years> 100 </Years><Mode>COMPLIANCE</Mode>')))).toEqual({ rule: { mode: 'COMPLIANCE', years: 100 } });
    expect(parseObjectLockConfiguration(config(rule('<Mode>GOVERNANCE</Mode><Days>36500</Days>')))).toEqual({ rule: { mode: 'GOVERNANCE', days: 36500 } });
    for (const c of [{}, { rule: { mode: 'COMPLIANCE' as const, days: 7 } }, { rule: { mode: 'GOVERNANCE' as const, years: 2 } }]) {
      expect(parseObjectLockConfiguration(renderObjectLockConfiguration(c))).toEqual(c);
    }
    expect(renderObjectLockConfiguration({})).toContain('<ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>');
  });

  const refused: [string, string, string][] = [
    ['both Days and Years', config(rule('<Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>')), 'MalformedXML'],
    ['neither Days nor Years', config(rule('<Mode>GOVERNANCE</Mode>')), 'MalformedXML'],
    ['no Mode', config(rule('<Days>1</Days>')), 'MalformedXML'],
    ['lower-case mode', config(rule('<Mode>governance</Mode><Days>1</Days>')), 'MalformedXML'],
    ['unknown mode', config(rule('<Mode>abc</Mode><Years>1</Years>')), 'MalformedXML'],
    ['zero days', config(rule('<Mode>GOVERNANCE</Mode><Days>0</Days>')), 'InvalidRetentionPeriod'],
    ['negative years', config(rule('<Mode>GOVERNANCE</Mode><Years>-1</Years>')), 'InvalidRetentionPeriod'],
    ['too many days', config(rule('<Mode>GOVERNANCE</Mode><Days>36501</Days>')), 'InvalidRetentionPeriod'],
    ['too many years', config(rule('<Mode>COMPLIANCE</Mode><Years>101</Years>')), 'InvalidRetentionPeriod'],
    ['huge days', config(rule('<Mode>COMPLIANCE</Mode><Days>999999999999</Days>')), 'InvalidRetentionPeriod'],
    ['days past a safe integer', config(rule('<Mode>COMPLIANCE</Mode><Days>99999999999999999999</Days>')), 'MalformedXML'],
    ['fractional days', config(rule('<Mode>GOVERNANCE</Mode><Days>1.5</Days>')), 'MalformedXML'],
    ['empty days', config(rule('<Mode>GOVERNANCE</Mode><Days></Days>')), 'MalformedXML'],
    ['text days', config(rule('<Mode>GOVERNANCE</Mode><Days>abc</Days>')), 'MalformedXML'],
    ['two Days', config(rule('<Mode>GOVERNANCE</Mode><Days>1</Days><Days>2</Days>')), 'MalformedXML'],
    ['status Disabled', config('', '<ObjectLockEnabled>Disabled</ObjectLockEnabled>'), 'MalformedXML'],
    ['no status', config(rule('<Mode>GOVERNANCE</Mode><Days>1</Days>'), ''), 'MalformedXML'],
    ['Rule without DefaultRetention', config('<Rule></Rule>'), 'MalformedXML'],
    ['two Rules', config(rule('<Mode>GOVERNANCE</Mode><Days>1</Days>') + rule('<Mode>GOVERNANCE</Mode><Days>1</Days>')), 'MalformedXML'],
    ['wrong root', `<Retention ${NS}/>`, 'MalformedXML'],
    ['truncated', config(rule('<Mode>GOVERNANCE</Mode><Days>1</Days>')).slice(0, -12), 'MalformedXML'],
    ['empty body', '', 'MalformedXML'],
    ['a DOCTYPE (entity expansion)', `<!DOCTYPE x [<!ENTITY a "aaaa">]>${config('')}`, 'MalformedXML'],
    ['too deep', `<ObjectLockConfiguration>${'<a>'.repeat(40)}${'</a>'.repeat(40)}</ObjectLockConfiguration>`, 'MalformedXML'],
    ['oversized', config(`<Pad>${'x'.repeat(1024 * 1024)}</Pad>`), 'MaxMessageLengthExceeded'],
  ];
  for (const [name, body, want] of refused) {
    it(`refuses ${name}: ${want}`, () => expect(code(() => parseObjectLockConfiguration(body))).toBe(want));
  }
});

describe('Retention and LegalHold', () => {
  it('parses and renders retentions; an empty one removes', () => {
    const r = parseRetention(`<Retention ${NS}><Mode>COMPLIANCE</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>`);
    expect(r).toEqual({ mode: 'COMPLIANCE', retainUntil: Date.UTC(2030, 0, 1) });
    expect(parseRetention(renderRetention(r!))).toEqual(r);
    expect(renderRetention(r!)).toContain('<RetainUntilDate>2030-01-01T00:00:00.000Z</RetainUntilDate>');
    expect(parseRetention(`<Retention ${NS}/>`)).toBeUndefined();
    expect(parseRetention('<Retention></Retention>')).toBeUndefined();
  });

  const badRetention: [string, string][] = [
    ['mode only', '<Retention><Mode>GOVERNANCE</Mode></Retention>'],
    ['date only', '<Retention><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>'],
    ['lower-case mode', '<Retention><Mode>governance</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>'],
    ['unknown mode', '<Retention><Mode>abc</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>'],
    ['a date without a zone', '<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2030-01-01T00:00:00</RetainUntilDate></Retention>'],
    ['an HTTP date', '<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>Tue, 01 Jan 2030 00:00:00 GMT</RetainUntilDate></Retention>'],
    ['February 30', '<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2030-02-30T00:00:00Z</RetainUntilDate></Retention>'],
    ['two modes', '<Retention><Mode>GOVERNANCE</Mode><Mode>GOVERNANCE</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>'],
    ['wrong root', '<LegalHold><Status>ON</Status></LegalHold>'],
    ['not XML', 'GOVERNANCE 2030'],
  ];
  for (const [name, body] of badRetention) {
    it(`Retention refuses ${name}`, () => expect(code(() => parseRetention(body))).toBe('MalformedXML'));
  }

  it('legal hold: ON and OFF exactly; anything else is MalformedXML', () => {
    expect(parseLegalHold(`<LegalHold ${NS}><Status>ON</Status></LegalHold>`)).toBe(true);
    expect(parseLegalHold('<LegalHold><Status> OFF </Status></LegalHold>')).toBe(false);
    expect(parseLegalHold(renderLegalHold(true))).toBe(true);
    expect(parseLegalHold(renderLegalHold(false))).toBe(false);
    for (const body of ['<LegalHold><Status>abc</Status></LegalHold>', '<LegalHold><Status>on</Status></LegalHold>', '<LegalHold/>', '<LegalHold><Status>ON</Status><Status>OFF</Status></LegalHold>', '<Retention/>']) {
      expect(code(() => parseLegalHold(body)), body).toBe('MalformedXML');
    }
  });
});

describe('ISO 8601 times', () => {
  const ok: [string, number][] = [
    ['2030-01-01T00:00:00Z', Date.UTC(2030, 0, 1)],
    ['2030-01-01T00:00:00.000Z', Date.UTC(2030, 0, 1)],
    ['2030-01-01T00:00:00.123456Z', Date.UTC(2030, 0, 1, 0, 0, 0, 123)],
    ['2030-01-01T00:00:00.5Z', Date.UTC(2030, 0, 1, 0, 0, 0, 500)],
    ['2030-01-01T02:30:00+02:30', Date.UTC(2030, 0, 1)],
    ['2029-12-31T19:00:00-0500', Date.UTC(2030, 0, 1)],
    ['2028-02-29T23:59:59Z', Date.UTC(2028, 1, 29, 23, 59, 59)],
    ['0001-01-01T00:00:00Z', Date.UTC(2000, 0, 1) - 730119 * 86_400_000],
    [' 2030-01-01T00:00:00Z ', Date.UTC(2030, 0, 1)],
  ];
  for (const [text, want] of ok) it(`accepts ${JSON.stringify(text)}`, () => expect(parseIsoTime(text)).toBe(want));
  const bad = ['', '2030-01-01', '2030-1-1T00:00:00Z', '2030-13-01T00:00:00Z', '2029-02-29T00:00:00Z', '2030-01-01T24:00:00Z', '2030-01-01T00:60:00Z', '2030-01-01T00:00:60Z', '2030-01-01T00:00:00+24:00', '2030-01-01T00:00:00+01:60', '2030-01-01 00:00:00Z', '12030-01-01T00:00:00Z', '2030-01-01T00:00:00.1234567890Z', 'now', '1893456000'];
  for (const text of bad) it(`refuses ${JSON.stringify(text)}`, () => expect(parseIsoTime(text)).toBeUndefined());
});

describe('x-amz-object-lock-* headers', () => {
  let r: RequestContext;
  const NOW = Date.UTC(2030, 0, 1);
  beforeAll(async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createBucket('plain');
    await store.createBucket('locked', undefined, lockedBucketConfigs());
    await store.createBucket('ruled', undefined, lockedBucketConfigs());
    await store.putBucketLockConfig('ruled', { rule: { mode: 'COMPLIANCE', days: 1 } });
    r = { store, deps: { store } } as unknown as RequestContext;
  });
  const H = (h: Record<string, string>) => h;
  const future = '2031-01-01T00:00:00Z';

  it('no headers: nothing, or the bucket default', () => {
    expect(lockRequestFromHeaders(r, 'plain', H({}), NOW)).toBeUndefined();
    expect(lockRequestFromHeaders(r, 'locked', H({}), NOW)).toBeUndefined();
    expect(lockRequestFromHeaders(r, 'ruled', H({}), NOW)).toEqual({ defaultRule: { mode: 'COMPLIANCE', days: 1 } });
    expect(lockRequestFromHeaders(r, 'missing-bucket', H({}), NOW)).toBeUndefined();
  });

  it('a retention replaces the default; a legal hold adds to it', () => {
    const h = H({ 'x-amz-object-lock-mode': 'GOVERNANCE', 'x-amz-object-lock-retain-until-date': future });
    expect(lockRequestFromHeaders(r, 'ruled', h, NOW)).toEqual({ retention: { mode: 'GOVERNANCE', retainUntil: Date.UTC(2031, 0, 1) } });
    expect(lockRequestFromHeaders(r, 'ruled', H({ 'x-amz-object-lock-legal-hold': 'ON' }), NOW)).toEqual({ defaultRule: { mode: 'COMPLIANCE', days: 1 }, legalHold: true });
    expect(lockRequestFromHeaders(r, 'locked', H({ 'x-amz-object-lock-legal-hold': 'OFF' }), NOW)).toEqual({ legalHold: false });
  });

  const refusals: [string, string, Record<string, string>, string][] = [
    ['a mode on a plain bucket', 'plain', { 'x-amz-object-lock-mode': 'GOVERNANCE', 'x-amz-object-lock-retain-until-date': future }, 'InvalidRequest'],
    ['a legal hold on a plain bucket', 'plain', { 'x-amz-object-lock-legal-hold': 'OFF' }, 'InvalidRequest'],
    ['a mode without a date', 'locked', { 'x-amz-object-lock-mode': 'GOVERNANCE' }, 'InvalidArgument'],
    ['a date without a mode', 'locked', { 'x-amz-object-lock-retain-until-date': future }, 'InvalidArgument'],
    ['an unknown mode', 'locked', { 'x-amz-object-lock-mode': 'governance', 'x-amz-object-lock-retain-until-date': future }, 'InvalidArgument'],
    ['a past date', 'locked', { 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2029-12-31T23:59:59Z' }, 'InvalidArgument'],
    ['the present instant', 'locked', { 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2030-01-01T00:00:00Z' }, 'InvalidArgument'],
    ['a date that is not ISO 8601', 'locked', { 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': 'Wed, 01 Jan 2031 00:00:00 GMT' }, 'InvalidArgument'],
    ['a date past 9999', 'locked', { 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '+10000-01-01T00:00:00Z' }, 'InvalidArgument'],
    ['a legal hold of "on"', 'locked', { 'x-amz-object-lock-legal-hold': 'on' }, 'InvalidArgument'],
    ['an empty legal hold', 'locked', { 'x-amz-object-lock-legal-hold': '' }, 'InvalidArgument'],
  ];
  for (const [name, bucket, h, want] of refusals) {
    it(`refuses ${name}: ${want}`, () => expect(code(() => lockRequestFromHeaders(r, bucket, h, NOW))).toBe(want));
  }

  it('a locked body needs Content-MD5 or a checksum (value or trailer)', () => {
    const lock = { legalHold: true };
    expect(code(() => requireLockIntegrity({}, lock, 'Put Object'))).toBe('InvalidRequest');
    expect(code(() => requireLockIntegrity({ 'x-amz-sdk-checksum-algorithm': 'CRC32' }, lock, 'Put Object'))).toBe('InvalidRequest');
    expect(code(() => requireLockIntegrity({}, undefined, 'Put Object'))).toBe('ok');
    for (const h of [{ 'content-md5': 'x' }, { 'x-amz-checksum-crc32': 'x' }, { 'x-amz-checksum-sha256': 'x' }, { 'x-amz-trailer': 'x-amz-checksum-crc64nvme' }]) {
      expect(hasIntegrityHeader(h), JSON.stringify(h)).toBe(true);
      expect(code(() => requireLockIntegrity(h, lock, 'Put Object'))).toBe('ok');
    }
  });

  it('CreateBucket header: true/false in any case; anything else refused', () => {
    expect(bucketLockRequested({})).toBe(false);
    expect(bucketLockRequested({ 'x-amz-bucket-object-lock-enabled': 'TRUE' })).toBe(true);
    expect(bucketLockRequested({ 'x-amz-bucket-object-lock-enabled': ' false ' })).toBe(false);
    for (const v of ['yes', '1', '']) expect(code(() => bucketLockRequested({ 'x-amz-bucket-object-lock-enabled': v }))).toBe('InvalidArgument');
  });

  it('response headers show only what the reader may see', () => {
    const lock = { mode: 'GOVERNANCE' as const, retainUntil: Date.UTC(2031, 0, 1), legalHold: false };
    expect(lockHeaders(lock, { retention: true, legalHold: true })).toEqual({
      'x-amz-object-lock-mode': 'GOVERNANCE',
      'x-amz-object-lock-retain-until-date': '2031-01-01T00:00:00.000Z',
      'x-amz-object-lock-legal-hold': 'OFF',
    });
    expect(lockHeaders(lock, { retention: false, legalHold: true })).toEqual({ 'x-amz-object-lock-legal-hold': 'OFF' });
    expect(lockHeaders(undefined, { retention: true, legalHold: true })).toEqual({});
  });
});
