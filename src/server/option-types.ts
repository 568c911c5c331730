/**
 * @module Value types of configuration options: how a flag, environment or config-file value
 * is parsed and validated, and how a value is written back for help and docs.
 *
 * Every parser is strict: it accepts one spelling of a valid value and throws
 * {@link OptionError} for anything else (empty, garbage, out of range, a fraction where an
 * integer is meant, a size of `0` where zero means nothing). Nothing falls back to a default.
 *
 *   integer   `8`, `-1` (if the range allows)          JSON: a number
 *   size      `1048576`, `512KiB`, `64MiB`, `1.5GiB`,  JSON: a number of bytes or the string
 *             `10MB` (decimal), `4k`/`4K` (binary)
 *   duration  `250ms`, `30s`, `5m`, `12h`, `7d`, `1h30m` JSON: the string (a bare number is refused:
 *                                                       seconds or milliseconds would be a guess)
 *   boolean   `true|false|1|0|yes|no|on|off`           JSON: true / false
 */

/** A value that cannot be accepted; the message names where it came from and what is expected. */
export class OptionError extends Error {
  override readonly name = 'OptionError';
}

/** Where a raw value came from, for messages: `--port`, `STRATA_PORT`, `config.json: port`. */
export type Origin = string;

/** Raw input: a string from argv or the environment, or a JSON value from a config file. */
export type RawValue = string | number | boolean | null | object;

export interface OptionType<T> {
  /** Placeholder in help: `<size>`, `<info|warn|off>`. */
  readonly placeholder: string;
  /** True for flags that take no value (`--json`); `--flag=false` still works. */
  readonly isSwitch?: boolean;
  /** Parses and validates; throws OptionError naming `origin`. Pure. */
  parse(raw: RawValue, origin: Origin): T;
  /** The value written back in the flag's own syntax (help, README). */
  format(value: T): string;
}

/** Largest size or duration accepted anywhere: beyond it arithmetic stops being exact. */
const MAX_EXACT = Number.MAX_SAFE_INTEGER;

/** Longest raw text looked at; anything longer is not a value of any of these types. */
const MAX_RAW_CHARS = 4096;

function text(raw: RawValue, origin: Origin, what: string): string {
  if (typeof raw !== 'string')
    throw new OptionError(`${origin}: expected ${what}, got ${describe(raw)}`);
  if (raw.length > MAX_RAW_CHARS)
    throw new OptionError(`${origin}: value too long (${raw.length} characters)`);
  return raw;
}

function describe(raw: RawValue): string {
  if (raw === null) return 'null';
  if (Array.isArray(raw)) return 'a list';
  if (typeof raw === 'object') return 'an object';
  if (typeof raw === 'string') return `'${raw.length > 40 ? `${raw.slice(0, 40)}…` : raw}'`;
  return `${typeof raw} ${String(raw)}`;
}

function quoted(s: string): string {
  return `'${s.length > 40 ? `${s.slice(0, 40)}…` : s}'`.replace(/[\x00-\x1f\x7f]/g, '?');
}

function checkRange(
  n: number,
  origin: Origin,
  min: number,
  max: number,
  fmt: (v: number) => string
): number {
  if (n < min || n > max) {
    const range = max >= MAX_EXACT ? `at least ${fmt(min)}` : `between ${fmt(min)} and ${fmt(max)}`;
    throw new OptionError(`${origin}: ${fmt(n)} is out of range (${range})`);
  }
  return n;
}

export interface StringOptions {
  /** Maximum length in characters (default 1024). */
  maxLength?: number;
  /** Extra validation: returns an error message, or undefined when the value is fine. */
  check?: (value: string) => string | undefined;
  placeholder?: string;
}

/** A non-empty string without control characters. */
export function stringType(opts: StringOptions = {}): OptionType<string> {
  const max = opts.maxLength ?? 1024;
  return {
    placeholder: opts.placeholder ?? '<text>',
    parse(raw, origin) {
      const s = text(raw, origin, 'a string');
      if (s === '') throw new OptionError(`${origin}: must not be empty`);
      if (s.length > max) throw new OptionError(`${origin}: longer than ${max} characters`);
      if (/[\x00-\x1f\x7f]/.test(s))
        throw new OptionError(`${origin}: contains control characters`);
      const bad = opts.check?.(s);
      if (bad) throw new OptionError(`${origin}: ${quoted(s)} ${bad}`);
      return s;
    },
    format: (v) => v,
  };
}

/** A file-system path (or, where the option says so, a URL): non-empty, no NUL or control characters. */
export function pathType(placeholder = '<path>'): OptionType<string> {
  return stringType({ maxLength: 4096, placeholder });
}

/** One of a fixed set of words, matched exactly. */
export function enumType<T extends string>(choices: readonly T[]): OptionType<T> {
  return {
    placeholder: `<${choices.join('|')}>`,
    parse(raw, origin) {
      const s = text(raw, origin, `one of ${choices.join(', ')}`);
      if (!(choices as readonly string[]).includes(s)) {
        throw new OptionError(`${origin}: ${quoted(s)} is not one of ${choices.join(', ')}`);
      }
      return s as T;
    },
    format: (v) => v,
  };
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/** A switch: `--flag` alone means true. */
export function booleanType(): OptionType<boolean> {
  return {
    placeholder: '',
    isSwitch: true,
    parse(raw, origin) {
      if (typeof raw === 'boolean') return raw;
      const s = text(raw, origin, 'true or false').toLowerCase();
      if (TRUE.has(s)) return true;
      if (FALSE.has(s)) return false;
      throw new OptionError(`${origin}: ${quoted(s)} is not a boolean (true or false)`);
    },
    format: (v) => String(v),
  };
}

export interface RangeOptions {
  min?: number;
  max?: number;
}

/** A whole number in [min, max]; decimal digits only (no `1e3`, `0x10`, `1.0`). */
export function integerType(range: RangeOptions = {}, placeholder = '<n>'): OptionType<number> {
  const min = range.min ?? 0;
  const max = range.max ?? MAX_EXACT;
  return {
    placeholder,
    parse(raw, origin) {
      let n: number;
      if (typeof raw === 'number') {
        if (!Number.isSafeInteger(raw))
          throw new OptionError(`${origin}: ${raw} is not a whole number`);
        n = raw;
      } else {
        const s = text(raw, origin, 'a whole number').trim();
        if (!/^[+-]?\d{1,16}$/.test(s))
          throw new OptionError(`${origin}: ${quoted(s)} is not a whole number`);
        n = Number(s);
        if (!Number.isSafeInteger(n)) throw new OptionError(`${origin}: ${quoted(s)} is too large`);
      }
      return checkRange(n, origin, min, max, String);
    },
    format: String,
  };
}

/** Size units, in bytes. Binary units are spelled KiB..TiB or K..T; KB..TB are decimal. */
const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 2 ** 10,
  kib: 2 ** 10,
  m: 2 ** 20,
  mib: 2 ** 20,
  g: 2 ** 30,
  gib: 2 ** 30,
  t: 2 ** 40,
  tib: 2 ** 40,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};

/** Writes a byte count in the largest binary unit that divides it exactly (`64MiB`, `1536`). */
export function formatSize(bytes: number): string {
  for (const [unit, scale] of [
    ['TiB', 2 ** 40],
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= scale && bytes % scale === 0) return `${bytes / scale}${unit}`;
  }
  return String(bytes);
}

/** Parses a size (see module doc); throws OptionError for anything else. No range check. */
export function parseSize(raw: RawValue, origin: Origin): number {
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw))
      throw new OptionError(`${origin}: ${raw} is not a whole number of bytes`);
    return raw;
  }
  const s = text(raw, origin, 'a size such as 64MiB').trim();
  const m = /^([+-]?)(\d{1,16})(?:\.(\d{1,9}))?\s?([a-zA-Z]{0,3})$/.exec(s);
  const scale = m ? SIZE_UNITS[m[4]!.toLowerCase()] : undefined;
  if (!m || scale === undefined) {
    throw new OptionError(
      `${origin}: ${quoted(s)} is not a size (bytes, or with a unit: 512KiB, 64MiB, 1GiB)`
    );
  }
  const whole = Number(m[2]) * scale;
  const frac = m[3] === undefined ? 0 : Number(`0.${m[3]}`) * scale;
  if (m[3] !== undefined && scale === 1)
    throw new OptionError(`${origin}: ${quoted(s)}: bytes are whole numbers`);
  const n = Math.floor(whole + frac);
  if (!Number.isSafeInteger(n)) throw new OptionError(`${origin}: ${quoted(s)} is too large`);
  return m[1] === '-' ? -n : n;
}

/** A byte count in [min, max] (min defaults to 1: a size of zero means nothing). */
export function sizeType(range: RangeOptions = {}): OptionType<number> {
  const min = range.min ?? 1;
  const max = range.max ?? MAX_EXACT;
  return {
    placeholder: '<size>',
    parse: (raw, origin) => checkRange(parseSize(raw, origin), origin, min, max, formatSize),
    format: formatSize,
  };
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Writes milliseconds in the largest unit that divides them exactly (`7d`, `90s`, `250ms`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  for (const [unit, scale] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % scale === 0) return `${ms / scale}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * Parses a duration into milliseconds: one or more `<number><unit>` groups (`1h30m`), units
 * ms, s, m, h, d; `0` alone is zero. Throws OptionError otherwise. No range check.
 */
export function parseDuration(raw: RawValue, origin: Origin): number {
  const s = text(raw, origin, 'a duration such as 30s').trim();
  if (s === '0') return 0;
  if (!/^(\d{1,12}(?:\.\d{1,6})?(ms|s|m|h|d))+$/.test(s)) {
    throw new OptionError(
      `${origin}: ${quoted(s)} is not a duration (a number with a unit: 250ms, 30s, 5m, 12h, 7d)`
    );
  }
  let total = 0;
  for (const g of s.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g))
    total += Number(g[1]) * DURATION_UNITS[g[2]!]!;
  total = Math.round(total);
  if (!Number.isSafeInteger(total)) throw new OptionError(`${origin}: ${quoted(s)} is too long`);
  return total;
}

/** A duration in milliseconds within [min, max] (given in ms; min defaults to 0). */
export function durationType(range: RangeOptions = {}): OptionType<number> {
  const min = range.min ?? 0;
  const max = range.max ?? MAX_EXACT;
  return {
    placeholder: '<duration>',
    parse: (raw, origin) =>
      checkRange(parseDuration(raw, origin), origin, min, max, formatDuration),
    format: formatDuration,
  };
}
