/**
 * The lifecycle configuration parser with valid, malformed, truncated, oversized and hostile
 * documents: every failure is an S3Error with S3's code (MalformedXML / InvalidArgument /
 * InvalidRequest / NotImplemented / MaxMessageLengthExceeded); a valid document round-trips
 * through the stored form and GET's rendering; the stored form fails closed when damaged;
 * and the rule arithmetic (day rounding, filters, the earliest rule for x-amz-expiration).
 */
import { describe, expect, it } from 'vitest';
import { parseLifecycleConfiguration, renderLifecycleConfiguration } from '../../../src/s3/xml/lifecycle.js';
import { S3Error } from '../../../src/s3/errors.js';
import { StoreError } from '../../../src/store/errors.js';
import { afterDays, currentExpiry, decodeLifecycle, encodeLifecycle, lifecycleDayMs, ruleMatches, type LifecycleRule } from '../../../src/store/lifecycle-config.js';
import type { ObjectVersion } from '../../../src/store/records.js';
import { route } from '../../../src/s3/router.js';

const DAY = 86_400_000;
const doc = (rules: string) => `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${rules}</LifecycleConfiguration>`;
const rule = (body: string, id = 'r1') => `<Rule>${id ? `<ID>${id}</ID>` : ''}${body}</Rule>`;
const exp = (days = 1) => `<Status>Enabled</Status><Expiration><Days>${days}</Days></Expiration>`;

function codeOf(body: string | Uint8Array): string {
  try {
    parseLifecycleConfiguration(body);
  } catch (err) {
    if (err instanceof S3Error) return `${err.status} ${err.code}`;
    throw err;
  }
  return 'ok';
}

describe('parseLifecycleConfiguration', () => {
  it('accepts every supported shape and round-trips it (stored form, GET document)', () => {
    const xml = doc(
      rule(`<Prefix>logs/</Prefix>${exp(31)}`, 'legacy') +
        rule(`<Filter/><Status>Disabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`, 'empty') +
        rule(`<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter>${exp(2)}`, 'tag') +
        rule(
          `<Filter><And><Prefix>p/</Prefix><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key><Value></Value></Tag><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>100</ObjectSizeLessThan></And></Filter>` +
            `<Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays><NewerNoncurrentVersions>5</NewerNoncurrentVersions></NoncurrentVersionExpiration>`,
          'and'
        ) +
        rule(`<Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload>`, 'mp') +
        rule(`<Filter><ObjectSizeGreaterThan>0</ObjectSizeGreaterThan></Filter><Status>Enabled</Status><Expiration><Date>2030-01-01T00:00:00.000Z</Date></Expiration>`, 'date')
    );
    const c = parseLifecycleConfiguration(xml);
    expect(c.rules.map((r) => [r.id, r.form, r.enabled])).toEqual([
      ['legacy', 'prefix', true],
      ['empty', 'empty', false],
      ['tag', 'filter', true],
      ['and', 'and', true],
      ['mp', 'filter', true],
      ['date', 'filter', true],
    ]);
    expect(c.rules[3]!.filter).toEqual({ prefix: 'p/', tags: [{ key: 'a', value: '1' }, { key: 'b', value: '' }], sizeGreaterThan: 10, sizeLessThan: 100 });
    expect(c.rules[3]!.noncurrentExpiration).toEqual({ days: 3, newerNoncurrentVersions: 5 });
    expect(c.rules[5]!.expiration).toEqual({ date: Date.UTC(2030, 0, 1) });
    const stored = decodeLifecycle(encodeLifecycle(c));
    expect(stored).toEqual(c);
    // GET's document parses back to the same configuration.
    expect(parseLifecycleConfiguration(renderLifecycleConfiguration(stored))).toEqual(c);
    const rendered = renderLifecycleConfiguration(stored);
    expect(rendered).toContain('<Rule><ID>legacy</ID><Prefix>logs/</Prefix><Status>Enabled</Status><Expiration><Days>31</Days></Expiration></Rule>');
    expect(rendered).toContain('<Date>2030-01-01T00:00:00Z</Date>');
  });

  it('makes up an ID when none is given, unique per rule', () => {
    const c = parseLifecycleConfiguration(doc(rule(`<Prefix>a</Prefix>${exp()}`, '') + rule(`<Prefix>b</Prefix>${exp()}`, '')));
    expect(c.rules[0]!.id.length).toBeGreaterThan(10);
    expect(c.rules[0]!.id).not.toBe(c.rules[1]!.id);
  });

  it.each([
    ['not XML', 'hello', '400 MalformedXML'],
    ['truncated', doc(rule(`<Prefix>a</Prefix>${exp()}`)).slice(0, 60), '400 MalformedXML'],
    ['another root', '<CORSConfiguration/>', '400 MalformedXML'],
    ['no rules', doc(''), '400 MalformedXML'],
    ['unknown element in a rule', doc(rule(`<Prefix>a</Prefix>${exp()}<Foo/>`)), '400 MalformedXML'],
    ['unknown root child', doc(`<Foo/>`), '400 MalformedXML'],
    ['status lower case', doc(rule(`<Prefix>a</Prefix><Status>enabled</Status><Expiration><Days>1</Days></Expiration>`)), '400 MalformedXML'],
    ['status missing', doc(rule(`<Prefix>a</Prefix><Expiration><Days>1</Days></Expiration>`)), '400 MalformedXML'],
    ['filter and prefix', doc(rule(`<Prefix>a</Prefix><Filter/>${exp()}`)), '400 MalformedXML'],
    ['neither filter nor prefix', doc(rule(exp())), '400 MalformedXML'],
    ['two conditions without And', doc(rule(`<Filter><Prefix>a</Prefix><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan></Filter>${exp()}`)), '400 MalformedXML'],
    ['empty And', doc(rule(`<Filter><And/></Filter>${exp()}`)), '400 MalformedXML'],
    ['tag without value', doc(rule(`<Filter><Tag><Key>a</Key></Tag></Filter>${exp()}`)), '400 MalformedXML'],
    ['days and date', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration><Days>1</Days><Date>2030-01-01</Date></Expiration>`)), '400 MalformedXML'],
    ['empty expiration', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration/>`)), '400 MalformedXML'],
    ['days not a number', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration><Days>one</Days></Expiration>`)), '400 MalformedXML'],
    ['negative days', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration><Days>-1</Days></Expiration>`)), '400 MalformedXML'],
    ['marker not boolean', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>yes</ExpiredObjectDeleteMarker></Expiration>`)), '400 MalformedXML'],
    ['two expirations', doc(rule(`<Prefix>a</Prefix>${exp()}<Expiration><Days>2</Days></Expiration>`)), '400 MalformedXML'],
    ['noncurrent without days', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><NoncurrentVersionExpiration/>`)), '400 MalformedXML'],
    ['days 0', doc(rule(`<Prefix>a</Prefix>${exp(0)}`)), '400 InvalidArgument'],
    ['noncurrent days 0', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays></NoncurrentVersionExpiration>`)), '400 InvalidArgument'],
    ['newer noncurrent 101', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions></NoncurrentVersionExpiration>`)), '400 InvalidArgument'],
    ['abort days 0', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>0</DaysAfterInitiation></AbortIncompleteMultipartUpload>`)), '400 InvalidArgument'],
    ['date not at midnight', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration><Date>2030-01-01T10:00:00Z</Date></Expiration>`)), '400 InvalidArgument'],
    ['date from epoch seconds (botocore "20200101")', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration><Date>1970-08-23T03:28:21Z</Date></Expiration>`)), '400 InvalidArgument'],
    ['date not a date', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration><Date>20200101</Date></Expiration>`)), '400 InvalidArgument'],
    ['ID too long', doc(rule(`<Prefix>a</Prefix>${exp()}`, 'a'.repeat(256))), '400 InvalidArgument'],
    ['same ID twice', doc(rule(`<Prefix>a</Prefix>${exp()}`, 'x') + rule(`<Prefix>b</Prefix>${exp()}`, 'x')), '400 InvalidArgument'],
    ['size bounds crossed', doc(rule(`<Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter>${exp()}`)), '400 InvalidArgument'],
    ['size less than 0', doc(rule(`<Filter><ObjectSizeLessThan>0</ObjectSizeLessThan></Filter>${exp()}`)), '400 InvalidArgument'],
    ['duplicate tag keys', doc(rule(`<Filter><And><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></And></Filter>${exp()}`)), '400 InvalidArgument'],
    ['empty tag key', doc(rule(`<Filter><Tag><Key></Key><Value>1</Value></Tag></Filter>${exp()}`)), '400 InvalidArgument'],
    ['prefix longer than a key', doc(rule(`<Prefix>${'p'.repeat(1025)}</Prefix>${exp()}`)), '400 InvalidArgument'],
    ['no action', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status>`)), '400 InvalidRequest'],
    ['abort with a tag filter', doc(rule(`<Filter><Tag><Key>a</Key><Value>1</Value></Tag></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>`)), '400 InvalidRequest'],
    ['marker with a size filter', doc(rule(`<Filter><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`)), '400 InvalidRequest'],
    ['too many rules', doc(Array.from({ length: 1001 }, (_, i) => rule(`<Prefix>${i}</Prefix>${exp()}`, `r${i}`)).join('')), '400 InvalidRequest'],
    ['a transition', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition>`)), '501 NotImplemented'],
    ['a noncurrent transition', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><NoncurrentVersionTransition><NoncurrentDays>1</NoncurrentDays><StorageClass>GLACIER</StorageClass></NoncurrentVersionTransition>`)), '501 NotImplemented'],
    ['a malformed transition is a 400 first', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Expiration><Date>2023-09-27</Date></Expiration><Transition><Date>1970-08-23T03:28:21Z</Date><StorageClass>GLACIER</StorageClass></Transition>`)), '400 InvalidArgument'],
    ['a transition without storage class', doc(rule(`<Prefix>a</Prefix><Status>Enabled</Status><Transition><Days>1</Days></Transition>`)), '400 MalformedXML'],
    ['DOCTYPE entity', `<!DOCTYPE x [<!ENTITY e "boom">]>${doc(rule(`<Prefix>&e;</Prefix>${exp()}`))}`, '400 MalformedXML'],
    ['undefined entity', doc(rule(`<Prefix>&boom;</Prefix>${exp()}`)), '400 MalformedXML'],
    ['deep nesting', doc(`<Rule>${'<Filter>'.repeat(40)}${'</Filter>'.repeat(40)}</Rule>`), '400 MalformedXML'],
    ['not UTF-8', Buffer.concat([Buffer.from(doc(rule(`<Prefix>`))), Buffer.from([0xff, 0xfe]), Buffer.from(`</Prefix>${exp()}</Rule></LifecycleConfiguration>`)]), '400 MalformedXML'],
    ['oversized', doc(rule(`<Prefix>a</Prefix>${exp()}`) + `<!--${'x'.repeat(1024 * 1024)}-->`), '400 MaxMessageLengthExceeded'],
  ])('%s -> %s', (_name, body, want) => {
    expect(codeOf(body)).toBe(want);
  });

  it('element flood is refused by the parser bound, not by memory', () => {
    const flood = doc(rule(`<Prefix>a</Prefix>${exp()}`) + '<Rule/>'.repeat(40_000));
    expect(codeOf(flood)).toMatch(/^400 /);
  });
});

describe('stored form', () => {
  it.each([
    ['not JSON', 'nope'],
    ['unknown version', JSON.stringify({ v: 2, rules: [] })],
    ['bad rule', JSON.stringify({ v: 1, rules: [{ id: 1 }] })],
    ['bad days', JSON.stringify({ v: 1, rules: [{ id: 'a', enabled: true, form: 'empty', filter: { prefix: '', tags: [] }, expiration: { days: -1 } }] })],
    ['bad tags', JSON.stringify({ v: 1, rules: [{ id: 'a', enabled: true, form: 'empty', filter: { prefix: '', tags: [{ key: 1 }] } }] })],
  ])('%s fails closed (Corrupt)', (_n, raw) => {
    expect(() => decodeLifecycle(Buffer.from(raw))).toThrow(StoreError);
  });
});

describe('rule arithmetic', () => {
  const v = (over: Partial<ObjectVersion> = {}): ObjectVersion => ({
    versionId: 'null',
    deleteMarker: false,
    size: 50,
    md5: new Uint8Array(16),
    partCount: 0,
    lastModified: Date.UTC(2026, 0, 15, 10, 30),
    system: {},
    userMetadata: {},
    tags: { a: '1' },
    location: { kind: 'empty' },
    ...over,
  });
  const r = (over: Partial<LifecycleRule>): LifecycleRule => ({ id: 'x', enabled: true, form: 'empty', filter: { prefix: '', tags: [] }, ...over });

  it('rounds up to the next day boundary (S3: midnight UTC)', () => {
    expect(afterDays(Date.UTC(2026, 0, 15, 10, 30), 3, DAY)).toBe(Date.UTC(2026, 0, 19));
    expect(afterDays(Date.UTC(2026, 0, 15), 1, DAY)).toBe(Date.UTC(2026, 0, 16));
    expect(afterDays(25_000, 1, 10_000)).toBe(40_000);
  });

  it('filters by prefix, every tag, and strict size bounds', () => {
    expect(ruleMatches(r({ filter: { prefix: 'k', tags: [{ key: 'a', value: '1' }] } }), 'key', v())).toBe(true);
    expect(ruleMatches(r({ filter: { prefix: 'x', tags: [] } }), 'key', v())).toBe(false);
    expect(ruleMatches(r({ filter: { prefix: '', tags: [{ key: 'a', value: '2' }] } }), 'key', v())).toBe(false);
    expect(ruleMatches(r({ filter: { prefix: '', tags: [], sizeGreaterThan: 50 } }), 'key', v())).toBe(false);
    expect(ruleMatches(r({ filter: { prefix: '', tags: [], sizeLessThan: 51 } }), 'key', v())).toBe(true);
  });

  it('x-amz-expiration names the earliest enabled rule; markers, disabled rules and non-expiring actions never', () => {
    const config = {
      rules: [
        r({ id: 'late', expiration: { days: 30 } }),
        r({ id: 'early', expiration: { days: 2 } }),
        r({ id: 'off', enabled: false, expiration: { days: 1 } }),
        r({ id: 'nc', noncurrentExpiration: { days: 1 } }),
        r({ id: 'dm', expiration: { expiredObjectDeleteMarker: true } }),
      ],
    };
    expect(currentExpiry(config, 'k', v(), DAY)).toEqual({ at: Date.UTC(2026, 0, 18), ruleId: 'early' });
    expect(currentExpiry(config, 'k', v({ deleteMarker: true }), DAY)).toBeUndefined();
    expect(currentExpiry({ rules: [r({ id: 'd', expiration: { date: Date.UTC(2027, 0, 1) } })] }, 'k', v(), DAY)).toEqual({ at: Date.UTC(2027, 0, 1), ruleId: 'd' });
  });

  it('STRATA_LIFECYCLE_DAY_MS: a positive integer or a real day', () => {
    expect(lifecycleDayMs({})).toBe(DAY);
    expect(lifecycleDayMs({ STRATA_LIFECYCLE_DAY_MS: '10000' })).toBe(10_000);
    expect(() => lifecycleDayMs({ STRATA_LIFECYCLE_DAY_MS: '0' })).toThrow(RangeError);
    expect(() => lifecycleDayMs({ STRATA_LIFECYCLE_DAY_MS: '1.5' })).toThrow(RangeError);
  });
});

describe('routing', () => {
  const r = (method: string, target: string) => route({ method, rawTarget: target, host: 'localhost', headers: {} });
  it('?lifecycle on a bucket is the lifecycle configuration; POST is not allowed', () => {
    expect(r('GET', '/bkt?lifecycle')).toEqual({ op: 'GetBucketLifecycle', bucket: 'bkt' });
    expect(r('PUT', '/bkt?lifecycle')).toEqual({ op: 'PutBucketLifecycle', bucket: 'bkt' });
    expect(r('DELETE', '/bkt?lifecycle')).toEqual({ op: 'DeleteBucketLifecycle', bucket: 'bkt' });
    expect(() => r('POST', '/bkt?lifecycle')).toThrow(S3Error);
  });
});
