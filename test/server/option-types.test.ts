/**
 * Option value types: every parser accepts exactly its valid spellings and refuses garbage,
 * boundaries, hostile lengths and wrong JSON types with a message naming the origin.
 */
import { describe, expect, it } from 'vitest';
import {
  OptionError,
  booleanType,
  durationType,
  enumType,
  formatDuration,
  formatSize,
  integerType,
  parseDuration,
  parseSize,
  pathType,
  sizeType,
  stringType,
} from '../../src/server/option-types.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

function refuses(fn: () => unknown, re: RegExp = /./): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, 'should have thrown').toBeInstanceOf(OptionError);
  expect((caught as Error).message).toMatch(re);
}

describe('sizes', () => {
  it('parses bytes and binary/decimal units', () => {
    const cases: [string | number, number][] = [
      ['1', 1],
      ['1048576', MiB],
      ['512KiB', 512 * KiB],
      ['64MiB', 64 * MiB],
      ['64mib', 64 * MiB],
      ['64 MiB', 64 * MiB],
      ['1GiB', GiB],
      ['1.5GiB', 1.5 * GiB],
      ['4k', 4 * KiB],
      ['4K', 4 * KiB],
      ['2M', 2 * MiB],
      ['1T', 2 ** 40],
      ['10MB', 10_000_000],
      ['1kb', 1000],
      ['7B', 7],
      [' 8MiB ', 8 * MiB],
      [65536, 65536],
    ];
    for (const [raw, want] of cases) expect(parseSize(raw, 't'), String(raw)).toBe(want);
  });

  it('refuses garbage, fractions of bytes, unknown units and hostile lengths', () => {
    for (const bad of [
      '',
      'abc',
      '64XiB',
      '1e3',
      '0x10',
      '1.5',
      '1.5B',
      '--5',
      '5 5',
      'MiB',
      '1,000',
      '١٢',
      'x'.repeat(100_000),
      '9'.repeat(17),
    ]) {
      refuses(() => parseSize(bad, '--pending-bytes'), /--pending-bytes/);
    }
    for (const bad of [1.5, Number.NaN, Infinity, 2 ** 60, true, null, {}, []])
      refuses(() => parseSize(bad as never, 'f'));
  });

  it('a size type refuses 0, negatives and values outside its range, naming the limits', () => {
    const t = sizeType({ min: MiB, max: GiB });
    expect(t.parse('1MiB', 'x')).toBe(MiB);
    expect(t.parse('1GiB', 'x')).toBe(GiB);
    refuses(
      () => t.parse('0', '--pending-bytes'),
      /--pending-bytes: 0 is out of range \(between 1MiB and 1GiB\)/
    );
    refuses(() => t.parse('-5', 'x'), /out of range/);
    refuses(() => t.parse('-64MiB', 'x'), /out of range/);
    refuses(() => t.parse('1023KiB', 'x'), /out of range/);
    refuses(() => t.parse('1025MiB', 'x'), /out of range/);
    refuses(() => sizeType().parse('0', 'x'), /at least 1/);
  });

  it('formats in the largest exact binary unit and round-trips', () => {
    expect(formatSize(256 * MiB)).toBe('256MiB');
    expect(formatSize(1536)).toBe('1536');
    expect(formatSize(1.5 * GiB)).toBe('1536MiB');
    for (const n of [1, 1000, KiB, 3 * MiB, 5 * GiB, 2 ** 40])
      expect(parseSize(formatSize(n), 'x')).toBe(n);
  });
});

describe('durations', () => {
  it('parses units and compound durations into milliseconds', () => {
    const cases: [string, number][] = [
      ['0', 0],
      ['250ms', 250],
      ['30s', 30_000],
      ['5m', 300_000],
      ['12h', 12 * 3_600_000],
      ['7d', 7 * 86_400_000],
      ['1h30m', 5_400_000],
      ['1.5s', 1500],
    ];
    for (const [raw, want] of cases) expect(parseDuration(raw, 't'), raw).toBe(want);
  });

  it('refuses bare numbers (unit unknown), garbage and JSON numbers', () => {
    for (const bad of [
      '',
      '30',
      '5 m',
      '5min',
      's',
      '-5s',
      '1y',
      '1h 30m',
      '3e2s',
      'x'.repeat(50_000),
    ]) {
      refuses(() => parseDuration(bad, '--idle'), /--idle/);
    }
    refuses(() => parseDuration(30 as never, 'cfg: idle'), /expected a duration/);
  });

  it('applies its range and formats back', () => {
    const t = durationType({ min: 1000, max: 86_400_000 });
    refuses(() => t.parse('999ms', 'x'), /between 1s and 1d/);
    refuses(() => t.parse('2d', 'x'), /out of range/);
    expect(t.parse('1d', 'x')).toBe(86_400_000);
    expect(formatDuration(90_000)).toBe('90s');
    expect(formatDuration(7 * 86_400_000)).toBe('7d');
    expect(formatDuration(1500)).toBe('1500ms');
  });
});

describe('integers, enums, booleans, strings, paths', () => {
  it('integers: decimal digits only, within range', () => {
    const port = integerType({ min: 0, max: 65535 });
    expect(port.parse('0', 'x')).toBe(0);
    expect(port.parse('65535', 'x')).toBe(65535);
    expect(port.parse(9000, 'x')).toBe(9000);
    for (const bad of [
      '65536',
      '-1',
      '9001x',
      'prot',
      '1e3',
      '0x10',
      '90.0',
      '',
      ' ',
      '99999999999999999999',
    ])
      refuses(() => port.parse(bad, '--port'), /--port/);
    for (const bad of [1.5, true, null, '9000'.repeat(10)])
      refuses(() => port.parse(bad as never, 'x'));
  });

  it('enums match exactly', () => {
    const t = enumType(['info', 'warn', 'off'] as const);
    expect(t.parse('warn', 'x')).toBe('warn');
    for (const bad of ['WARN', 'debug', '', ' info', 1])
      refuses(() => t.parse(bad as never, '--log'), /--log/);
  });

  it('booleans: the usual words or JSON booleans', () => {
    const t = booleanType();
    for (const w of ['true', 'TRUE', '1', 'yes', 'on', true]) expect(t.parse(w, 'x')).toBe(true);
    for (const w of ['false', '0', 'no', 'off', false]) expect(t.parse(w, 'x')).toBe(false);
    for (const bad of ['', 'maybe', 2, null]) refuses(() => t.parse(bad as never, 'x'));
  });

  it('strings and paths: non-empty, bounded, no control characters, custom checks', () => {
    const t = stringType({
      maxLength: 8,
      check: (v) => (v.includes('/') ? 'has a slash' : undefined),
    });
    expect(t.parse('abc', 'x')).toBe('abc');
    for (const bad of ['', 'a\0b', 'a\nb', '123456789', 'a/b', 5, {}])
      refuses(() => t.parse(bad as never, 'x'));
    const p = pathType();
    expect(p.parse('/srv/strata data', 'x')).toBe('/srv/strata data');
    refuses(() => p.parse('/srv/\0', 'x'), /control/);
    refuses(() => p.parse('x'.repeat(5000), 'x'));
  });
});
