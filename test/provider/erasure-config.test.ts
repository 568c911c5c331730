/**
 * Erasure configuration (src/provider/erasure/config.ts): brace expansion, domain lists,
 * `k+m`, the config file's section, and hostile input (bad braces, huge ranges, duplicate or
 * nested directories, sizes that do not parse, policies the domains cannot satisfy).
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ERASURE_DEFAULTS,
  ErasureConfigError,
  expandBraces,
  looksLikeDomainList,
  MAX_DOMAINS,
  parseDomainList,
  parseErasureSpec,
  resolveErasureConfig,
} from '../../src/provider/erasure/config.js';

function refused(fn: () => unknown, re: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ErasureConfigError);
  expect(caught).toBeInstanceOf(RangeError);
  expect((caught as Error).message).toMatch(re);
}

describe('expandBraces', () => {
  it('expands one range, several ranges (first slowest) and zero padding', () => {
    expect(expandBraces('/mnt/disk{1...6}')).toEqual(['/mnt/disk1', '/mnt/disk2', '/mnt/disk3', '/mnt/disk4', '/mnt/disk5', '/mnt/disk6']);
    expect(expandBraces('/h{1...2}/d{3...4}x')).toEqual(['/h1/d3x', '/h1/d4x', '/h2/d3x', '/h2/d4x']);
    expect(expandBraces('/d{08...11}')).toEqual(['/d08', '/d09', '/d10', '/d11']);
    expect(expandBraces('/d{0...2}')).toEqual(['/d0', '/d1', '/d2']);
    expect(expandBraces('/plain/dir')).toEqual(['/plain/dir']);
    expect(expandBraces('/d{5...5}')).toEqual(['/d5']);
    expect(expandBraces('http://host{1...2}:9000/bkt')).toEqual(['http://host1:9000/bkt', 'http://host2:9000/bkt']);
  });

  it('refuses malformed braces with a reason', () => {
    refused(() => expandBraces('/d{1...6'), /'\{' without '\}'/);
    refused(() => expandBraces('/d1...6}'), /'\}' without '\{'/);
    refused(() => expandBraces('/d}{1...2}'), /'\}' without '\{'/);
    refused(() => expandBraces('/d{1..6}'), /three dots/);
    refused(() => expandBraces('/d{a,b}'), /comma list goes without braces/);
    refused(() => expandBraces('/d{}'), /\{\} is not a range/);
    refused(() => expandBraces('/d{a...f}'), /not a range like \{1\.\.\.6\}/);
    refused(() => expandBraces('/d{-1...3}'), /not a range/);
    refused(() => expandBraces('/d{1...{2...3}}'), /nested braces/);
    refused(() => expandBraces('/d{6...1}'), /counts down; write \{1\.\.\.6\}/);
    refused(() => expandBraces('/d{1.5...3}'), /not a range/);
  });

  it('refuses huge ranges before building anything', () => {
    refused(() => expandBraces('/d{1...100000}'), /names 100000 domains; at most 1024/);
    refused(() => expandBraces('/d{1...999999999}'), /at most 1024/);
    refused(() => expandBraces('/d{1...1000000000000}'), /not a range/);
    // Each group small, the product large: 40 x 40 = 1600.
    refused(() => expandBraces('/h{1...40}/d{1...40}'), /more than 1024 domains/);
    // A product that would overflow if built: 1000^6.
    refused(() => expandBraces('/a{1...1000}{1...1000}{1...1000}{1...1000}{1...1000}{1...1000}'), /more than 1024/);
    expect(expandBraces(`/d{1...${MAX_DOMAINS}}`)).toHaveLength(MAX_DOMAINS);
    refused(() => expandBraces(`/${'x'.repeat(5000)}`), /too long/);
  });
});

describe('parseDomainList', () => {
  it('accepts comma lists mixing patterns, relative directories and URLs', () => {
    expect(parseDomainList('/a,/b{1...2}, s3://bkt/p?endpoint=http://h:9000,rel/dir')).toEqual([
      '/a',
      '/b1',
      '/b2',
      's3://bkt/p?endpoint=http://h:9000',
      resolve('rel/dir'),
    ]);
    expect(parseDomainList('file:///srv/a,file:///srv/b')).toEqual(['/srv/a', '/srv/b']);
  });

  it('refuses duplicates (also spelled differently), nesting, empty entries and too many', () => {
    refused(() => parseDomainList('/a,/b,/a'), /"\/a" is given twice/);
    refused(() => parseDomainList('/a/,/b,/a'), /"\/a" is given twice/);
    refused(() => parseDomainList('/x/./a,/x/a'), /"\/x\/a" is given twice/);
    refused(() => parseDomainList('/d{1...3},/d2'), /"\/d2" is given twice/);
    refused(() => parseDomainList('/srv/a,/srv/a-b,/srv/a/c'), /"\/srv\/a\/c" is inside domain "\/srv\/a"/);
    refused(() => parseDomainList('/a,,/b'), /an empty entry/);
    refused(() => parseDomainList('/a,/b,'), /an empty entry/);
    refused(() => parseDomainList('/a{1...600},/b{1...600}'), /more than 1024 domains/);
  });

  it('tells a domain list from a single directory', () => {
    expect(looksLikeDomainList('/mnt/disk{1...6}')).toBe(true);
    expect(looksLikeDomainList('/mnt/disk{1..6}')).toBe(true);
    expect(looksLikeDomainList('/a,/b')).toBe(true);
    expect(looksLikeDomainList('http://h1/b,http://h2/b')).toBe(true);
    expect(looksLikeDomainList('./data')).toBe(false);
    expect(looksLikeDomainList('/srv/my,dir')).toBe(false);
    expect(looksLikeDomainList('s3://bkt/repo?endpoint=http://h:9000')).toBe(false);
  });
});

describe('parseErasureSpec', () => {
  it('parses k+m', () => {
    expect(parseErasureSpec('4+2')).toEqual({ k: 4, m: 2 });
    expect(parseErasureSpec(' 10 + 4 ')).toEqual({ k: 10, m: 4 });
    expect(parseErasureSpec('1+0')).toEqual({ k: 1, m: 0 });
    expect(parseErasureSpec('200+56')).toEqual({ k: 200, m: 56 });
  });

  it('refuses anything else with the expected form', () => {
    for (const bad of ['', '4', '4+', '+2', '4-2', '4+2+1', '4:2', 'four+two', '4.5+2', '-4+2', '4+-2', '0x4+2', '1e1+2', '4+2\n', '4+2 extra', '1234+1'])
      refused(() => parseErasureSpec(bad), /is not an erasure spec: give k\+m, e\.g\. 4\+2/);
    refused(() => parseErasureSpec('0+2'), /k \(data fragments\) must be at least 1/);
    refused(() => parseErasureSpec('250+7'), /257 is more than 256 fragments/);
  });
});

describe('resolveErasureConfig', () => {
  it('builds the (4,2) six-directory set from --data and --erasure with the defaults', () => {
    const c = resolveErasureConfig({ data: '/mnt/disk{1...6}', erasure: '4+2' });
    expect(c).toEqual({
      k: 4,
      m: 2,
      domains: [1, 2, 3, 4, 5, 6].map((i) => ({ id: `d${i}`, url: `/mnt/disk${i}`, labels: {} })),
      policy: {},
      ...ERASURE_DEFAULTS,
    });
    expect(ERASURE_DEFAULTS).toEqual({ cellSize: 262144, stripeThreshold: 1048576, degradedWrites: false, domainTimeoutMs: 10_000, writeMemory: 268435456 });
  });

  it('takes labels, policy and sizes from the config file section; --erasure overrides its k+m', () => {
    const file = {
      k: 2,
      m: 1,
      cellSize: '64KiB',
      stripeThreshold: 65536,
      degradedWrites: true,
      domainTimeout: '2s',
      writeMemory: '64MiB',
      domains: [1, 2, 3, 4, 5, 6].map((i) => ({ id: `disk${i}`, url: `/mnt/disk${i}`, labels: { zone: `z${(i - 1) >> 1}`, host: `h${i}` } })),
      policy: { spread: [{ label: 'zone', max: 2 }], deny: [] },
    };
    const c = resolveErasureConfig({ file, fileName: 'strata.json' });
    expect(c.k).toBe(2);
    expect(c.m).toBe(1);
    expect(c.cellSize).toBe(65536);
    expect(c.stripeThreshold).toBe(65536);
    expect(c.degradedWrites).toBe(true);
    expect(c.domainTimeoutMs).toBe(2000);
    expect(c.writeMemory).toBe(64 * 1024 * 1024);
    expect(c.domains[3]).toEqual({ id: 'disk4', url: '/mnt/disk4', labels: { zone: 'z1', host: 'h4' } });
    expect(c.policy).toEqual({ spread: [{ label: 'zone', max: 2 }], deny: [] });
    const over = resolveErasureConfig({ file, erasure: '4+2', data: '/mnt/disk{1...6}' });
    expect([over.k, over.m]).toEqual([4, 2]);
    expect(over.domains[0]!.id).toBe('disk1');
  });

  it('refuses a set-up the domains cannot satisfy, saying why', () => {
    refused(() => resolveErasureConfig({ data: '/d{1...5}', erasure: '4+2' }), /erasure 4\+2: 6 fragments need 6 distinct eligible domains, have 5 of 5/);
    const zoned = [1, 2, 3, 4, 5, 6].map((i) => ({ url: `/d${i}`, labels: { zone: `z${i % 3}` } }));
    refused(
      () => resolveErasureConfig({ erasure: '4+2', file: { domains: zoned, policy: { spread: [{ label: 'zone', max: 1 }] } } }),
      /spread zone max 1 needs 6 zones, have 3/
    );
    refused(() => resolveErasureConfig({ erasure: '4+2', file: { domains: zoned, policy: { deny: ['d7'] } } }), /deny names d7/);
    refused(() => resolveErasureConfig({ erasure: '2+1', file: { domains: zoned, policy: { allow: ['d1', 'd2'] } } }), /3 fragments need 3 distinct eligible domains, have 2 of 6 \(4 not in the allow list\)/);
  });

  it('refuses --erasure without several domains, and k+m from nowhere', () => {
    refused(() => resolveErasureConfig({ data: './data', erasure: '4+2' }), /erasure 4\+2 needs several domains: --data '\/mnt\/disk\{1\.\.\.6\}'/);
    refused(() => resolveErasureConfig({ erasure: '4+2' }), /needs several domains/);
    refused(() => resolveErasureConfig({ data: '/d{1...6}' }), /no k\+m: give --erasure k\+m/);
  });

  it('refuses domains given in two different places', () => {
    const file = { k: 2, m: 1, domains: [{ url: '/a' }, { url: '/b' }, { url: '/c' }] };
    refused(() => resolveErasureConfig({ file, data: '/x{1...3}' }), /--data names 3 domains and config file: erasure\.domains lists 3 others/);
    expect(resolveErasureConfig({ file, data: '/a,/b,/c' }).domains.map((d) => d.id)).toEqual(['d1', 'd2', 'd3']);
  });

  it('refuses hostile or malformed config sections', () => {
    const d3 = [{ url: '/a' }, { url: '/b' }, { url: '/c' }];
    const base = { k: 2, m: 1, domains: d3 };
    const bad: [unknown, RegExp][] = [
      [[], /expected an object/],
      ['4+2', /expected an object/],
      [{ ...base, extra: 1 }, /unknown key "extra"/],
      [{ ...base, k: '2' }, /erasure\.k: expected a whole number from 1 to 256/],
      [{ ...base, k: 2.5 }, /erasure\.k: expected a whole number/],
      [{ ...base, m: -1 }, /erasure\.m: expected a whole number from 0/],
      [{ ...base, cellSize: 'lots' }, /cellSize: 'lots' is not a size/],
      [{ ...base, cellSize: '1KiB' }, /cellSize: 1024 bytes; give a multiple of 64 from 4KiB to 64MiB/],
      [{ ...base, cellSize: 65537 }, /multiple of 64/],
      [{ ...base, cellSize: '1TiB' }, /from 4KiB to 64MiB/],
      [{ ...base, cellSize: 1.5 }, /not a whole number of bytes/],
      [{ ...base, stripeThreshold: '-1MiB' }, /stripeThreshold: -1048576 is out of range/],
      [{ ...base, stripeThreshold: '9999999999999999 TiB' }, /not a size|too large/],
      [{ ...base, domainTimeout: 10 }, /domainTimeout: expected a duration/],
      [{ ...base, domainTimeout: '1ms' }, /from 100ms to 10m/],
      [{ ...base, domainTimeout: '1d' }, /from 100ms to 10m/],
      [{ ...base, degradedWrites: 'yes' }, /degradedWrites: expected true or false/],
      [{ ...base, writeMemory: 'plenty' }, /writeMemory: 'plenty' is not a size/],
      [{ ...base, writeMemory: '512KiB' }, /writeMemory: 524288 bytes; give a size from 1MiB to 1TiB/],
      [{ ...base, writeMemory: '2TiB' }, /from 1MiB to 1TiB/],
      [{ ...base, writeMemory: -1 }, /writeMemory/],
      [{ ...base, domains: [] }, /domains: expected a list/],
      [{ ...base, domains: {} }, /domains: expected a list/],
      [{ ...base, domains: ['/a', '/b', '/c'] }, /domains\[0\]: expected an object/],
      [{ ...base, domains: [{ url: '' }, ...d3] }, /domains\[0\]\.url: expected a non-empty string/],
      [{ ...base, domains: [{ url: '/d{1...6}' }, ...d3] }, /one domain per entry/],
      [{ ...base, domains: [{ url: '/a', path: '/x' }, ...d3] }, /unknown key "path"/],
      [{ ...base, domains: [...d3, { url: '/a/' }] }, /"\/a" is given twice/],
      [{ ...base, domains: [...d3, { url: '/a/inner' }] }, /"\/a\/inner" is inside domain "\/a"/],
      [{ ...base, domains: [{ url: '/a', id: 'x' }, { url: '/b', id: 'x' }, { url: '/c' }] }, /domain id x is given twice/],
      [{ ...base, domains: [{ url: '/a', id: 'has space' }, ...d3.slice(1)] }, /may hold only/],
      [{ ...base, domains: [{ url: '/a', labels: { zone: 1 } }, ...d3.slice(1)] }, /labels\.zone: expected a non-empty string/],
      [{ ...base, domains: [{ url: '/a', labels: ['z'] }, ...d3.slice(1)] }, /labels: expected an object of strings/],
      [{ ...base, domains: [{ url: '/a\u0000b' }, ...d3.slice(1)] }, /control characters/],
      [{ ...base, domains: Array.from({ length: 2000 }, (_, i) => ({ url: `/d${i}` })) }, /2000 domains; at most 1024/],
      [{ ...base, policy: [] }, /policy: expected \{ "spread"/],
      [{ ...base, policy: { spread: [{ label: 'zone' }] } }, /spread\[0\]\.max: expected a whole number/],
      [{ ...base, policy: { spread: [{ label: 'zone', max: 1, min: 2 }] } }, /unknown key "min"/],
      [{ ...base, policy: { spread: 'zone' } }, /spread: expected a list/],
      [{ ...base, policy: { allow: 'd1' } }, /allow: expected a list of domain ids/],
      [{ ...base, policy: { allow: [1] } }, /allow\[0\]: expected a non-empty string/],
      [{ ...base, policy: { spread: [{ label: 'zone', max: 1 }] } }, /spread zone: domain d1 has no zone label/],
    ];
    for (const [file, re] of bad) refused(() => resolveErasureConfig({ file, fileName: 'c.json' }), re);
  });
});
