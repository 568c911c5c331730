/**
 * @module Names of fragments on the child providers (failure domains).
 *
 * A fragment of logical blob `key` is stored on its domain under
 *
 *   esc(key) + '!' + meta
 *
 *   meta (striped)    s.<k>.<m>.<cellSize>.<length>.<generation>.<index>
 *   meta (replicated) r.<cellSize>.<length>.<generation>
 *   meta (log)        l.<preallocated>.<generation>   (an append-log copy, log-copy.ts)
 *
 * with the numbers in base 36 and `length` `_` when the writer did not know it yet (a stream
 * without contentLength: the trailer holds it). The name carries everything a reader or a
 * listing needs (layout, geometry, logical length, write generation, fragment index), so
 * list() gets exact logical sizes without reading a byte, and a warm read goes straight to
 * the cells.
 *
 * esc() keeps listing order: bytes 0x00..0x22 become '"' followed by 0x23 + byte, so every
 * byte of an escaped key is above '!' (the separator), and for logical keys a < b (UTF-8
 * byte order) every child key of a sorts before every child key of b. A child listing is
 * therefore already in logical order, and a logical prefix P maps to the child prefix
 * esc(P). Escaped bytes are printable ASCII, so S3 children that refuse control characters
 * still accept every name.
 */
import { keyBytes } from '../key.js';
import { MAX_KEY_BYTES, ProviderError } from '../provider.js';

/** Separator between the escaped key and the meta: below every byte of an escaped key. */
const SEP = 0x21; // '!'
/** Escape byte: the lowest byte an escaped key holds. */
const ESC = 0x22; // '"'
/** Escaped bytes are ESC followed by ESC_BASE + byte. */
const ESC_BASE = 0x23;

/** Longest meta suffix, separator included, in bytes: 's' + 6 numbers in base 36 + dots. */
export const META_MAX_BYTES = 48;

/** Longest logical key the erasure provider accepts, in UTF-8 bytes (before escaping). */
export const MAX_LOGICAL_KEY_BYTES = MAX_KEY_BYTES - META_MAX_BYTES;

/** A listing bound after every meta of one key: '~' is above every meta character. */
export const AFTER_ALL_META = '!~';

export type Layout = 'striped' | 'replicated' | 'log';

/** What a child key says about its fragment. */
export interface FragmentName {
  key: string;
  layout: Layout;
  k: number;
  m: number;
  cellSize: number;
  /** Logical length of the blob; undefined when written from a stream of unknown length.
   * Log copies: the bytes preallocated at creation (appends may run past it). */
  length: number | undefined;
  generation: number;
  /** Fragment index (striped), 0 for replicas. */
  index: number;
}

/** esc(key) as a string (the escape is ASCII, so string and byte forms agree). */
export function escapeKey(key: string): string {
  const bytes = Buffer.from(key, 'utf8');
  let extra = 0;
  for (const b of bytes) if (b <= ESC) extra++;
  if (extra === 0) return key;
  const out = Buffer.allocUnsafe(bytes.length + extra);
  let o = 0;
  for (const b of bytes) {
    if (b <= ESC) {
      out[o++] = ESC;
      out[o++] = ESC_BASE + b;
    } else out[o++] = b;
  }
  return out.toString('utf8');
}

/** Inverse of escapeKey; undefined when `escaped` is not an escaped key. */
export function unescapeKey(escaped: string): string | undefined {
  const bytes = Buffer.from(escaped, 'utf8');
  if (!bytes.includes(ESC)) {
    for (const b of bytes) if (b <= ESC) return undefined;
    return escaped;
  }
  const out = Buffer.allocUnsafe(bytes.length);
  let o = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < ESC) return undefined;
    if (b === ESC) {
      const next = bytes[++i];
      if (next === undefined || next < ESC_BASE || next > ESC_BASE + ESC) return undefined;
      out[o++] = next - ESC_BASE;
    } else out[o++] = b;
  }
  return out.subarray(0, o).toString('utf8');
}

/**
 * Checks a logical key for the erasure provider: a valid provider key (keyBytes) whose
 * child names fit the children's key limit. Throws ProviderError 'InvalidKey'.
 */
export function checkLogicalKey(key: string): void {
  keyBytes(key);
  const escaped = Buffer.byteLength(escapeKey(key));
  if (escaped + META_MAX_BYTES > MAX_KEY_BYTES) {
    throw new ProviderError(
      'InvalidKey',
      `key is ${Buffer.byteLength(key)} UTF-8 bytes (${escaped} escaped); the erasure provider ` +
        `keeps ${META_MAX_BYTES} of the ${MAX_KEY_BYTES} for fragment names`
    );
  }
}

const b36 = (n: number): string => n.toString(36);

/** The child key of one fragment. */
export function childKey(name: FragmentName): string {
  const len = name.length === undefined ? '_' : b36(name.length);
  const meta =
    name.layout === 'striped'
      ? `s.${b36(name.k)}.${b36(name.m)}.${b36(name.cellSize)}.${len}.${b36(name.generation)}.${b36(name.index)}`
      : name.layout === 'log'
        ? `l.${len}.${b36(name.generation)}`
        : `r.${b36(name.cellSize)}.${len}.${b36(name.generation)}`;
  return `${escapeKey(name.key)}!${meta}`;
}

/** The child-key prefix under which every fragment of `key` lives. */
export function fragmentPrefix(key: string): string {
  return `${escapeKey(key)}!`;
}

const NUM = /^[0-9a-z]{1,11}$/;

function num(s: string | undefined, max: number): number | undefined {
  if (s === undefined || !NUM.test(s)) return undefined;
  const n = parseInt(s, 36);
  return Number.isSafeInteger(n) && n <= max ? n : undefined;
}

/**
 * Parses a child key; undefined for anything that is not a well-formed fragment name
 * (foreign objects on a shared child are skipped, never misread).
 */
export function parseChildKey(child: string): FragmentName | undefined {
  const at = child.lastIndexOf('!');
  if (at <= 0) return undefined;
  const key = unescapeKey(child.slice(0, at));
  if (key === undefined) return undefined;
  const parts = child.slice(at + 1).split('.');
  const lengthOf = (s: string | undefined): number | undefined | null =>
    s === '_' ? undefined : (num(s, Number.MAX_SAFE_INTEGER) ?? null);
  if (parts[0] === 's' && parts.length === 7) {
    const [k, m, cellSize, generation, index] = [
      num(parts[1], 256),
      num(parts[2], 255),
      num(parts[3], 0xffffffff),
      num(parts[5], Number.MAX_SAFE_INTEGER),
      num(parts[6], 255),
    ];
    const length = lengthOf(parts[4]);
    if (k === undefined || m === undefined || cellSize === undefined) return undefined;
    if (generation === undefined || index === undefined || length === null) return undefined;
    if (k < 1 || k + m > 256 || index >= k + m || cellSize < 1) return undefined;
    return { key, layout: 'striped', k, m, cellSize, length, generation, index };
  }
  if (parts[0] === 'r' && parts.length === 4) {
    const cellSize = num(parts[1], 0xffffffff);
    const length = lengthOf(parts[2]);
    const generation = num(parts[3], Number.MAX_SAFE_INTEGER);
    if (cellSize === undefined || cellSize < 1 || generation === undefined || length === null)
      return undefined;
    return { key, layout: 'replicated', k: 1, m: 0, cellSize, length, generation, index: 0 };
  }
  if (parts[0] === 'l' && parts.length === 3) {
    const length = num(parts[1], Number.MAX_SAFE_INTEGER);
    const generation = num(parts[2], Number.MAX_SAFE_INTEGER);
    if (length === undefined || generation === undefined) return undefined;
    return { key, layout: 'log', k: 1, m: 0, cellSize: 1, length, generation, index: 0 };
  }
  return undefined;
}

/** Byte value of the separator, for tests. */
export const SEPARATOR = String.fromCharCode(SEP);
