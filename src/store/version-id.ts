/**
 * @module Version ids and the keys of the version log.
 *
 * Every write of an object (a new version, a delete marker, an unversioned delete) has a
 * *position*: the sequence of the commit that made it and the index of its mutation in that
 * commit. Positions are unique in a repository, totally ordered, and known when the write is
 * staged (the batch knows its sequence and how many mutations precede this one).
 *
 *   versionId   = <seq: 12 hex digits> <index: 6 hex digits>            (18 characters)
 *   log key     = escapeKey(object key) <~seq: 12 hex> <~index: 6 hex>
 *
 * where ~x is the bitwise complement within its width, so a key's log entries sort newest
 * first and keys sort as in the object namespace (escapeKey is order preserving and ends in
 * NUL NUL, below every escaped character). A versionId is opaque to clients, yet parses back
 * into a seek position in the log. The literal `null` is S3's null version: it has no
 * position of its own in the id (its log entry carries one, see records.ts `logId`).
 *
 * Position (0, 0) is never a commit's (sequence 0 is the genesis root): it is where an
 * object written before the version log existed is placed when first touched (its entry then
 * sorts after every other entry of its key).
 */
import { escapeKey } from './upload-keys.js';

export { escapeKey };

/** Where a write sits in the commit chain. */
export interface Position {
  /** Sequence of the commit (1..MAX_SEQ; 0 only for pre-log objects). */
  seq: number;
  /** Index of the mutation inside that commit (0..MAX_INDEX). */
  index: number;
}

/** S3's id of the null version (unversioned and Suspended writes). */
export const NULL_VERSION_ID = 'null';
/** Hex digits of the sequence: 48 bits, as commit blob names (layout.ts). */
const SEQ_DIGITS = 12;
/** Hex digits of the mutation index: 24 bits, far above a batch's mutations (BATCH_MAX_OPS
 * operations of at most 1000 deletes each is about 2^20). */
const INDEX_DIGITS = 6;
export const MAX_SEQ = 2 ** (4 * SEQ_DIGITS) - 1;
export const MAX_INDEX = 2 ** (4 * INDEX_DIGITS) - 1;
/** Characters of a version id (and of a log key's suffix). */
export const VERSION_ID_LENGTH = SEQ_DIGITS + INDEX_DIGITS;
/** The position given to an object written before the version log existed. */
export const LEGACY_POSITION: Position = Object.freeze({ seq: 0, index: 0 });

const ID_RE = /^[0-9a-f]{18}$/;
const hex = (v: number, digits: number) => v.toString(16).padStart(digits, '0');

function check(p: Position): void {
  if (!Number.isSafeInteger(p.seq) || p.seq < 0 || p.seq > MAX_SEQ || !Number.isInteger(p.index) || p.index < 0 || p.index > MAX_INDEX) {
    throw new RangeError(`no version position (${p.seq}, ${p.index})`);
  }
}

/** The version id of position `p`. Throws RangeError outside the representable range. */
export function formatVersionId(p: Position): string {
  check(p);
  return hex(p.seq, SEQ_DIGITS) + hex(p.index, INDEX_DIGITS);
}

/**
 * The position a version id names, or undefined when `id` is not one (`null`, an id of the
 * pre-log format, or anything a client made up). Pure; never throws.
 */
export function parseVersionId(id: string): Position | undefined {
  if (id.length !== VERSION_ID_LENGTH || !ID_RE.test(id)) return undefined;
  return { seq: parseInt(id.slice(0, SEQ_DIGITS), 16), index: parseInt(id.slice(SEQ_DIGITS), 16) };
}

/** True if `id` could name a version: `null` or a well-formed id (it may still not exist). */
export function isVersionId(id: string): boolean {
  return id === NULL_VERSION_ID || parseVersionId(id) !== undefined;
}

/** The inverted suffix of position `p`: later positions sort first. */
function suffix(p: Position): string {
  check(p);
  return hex(MAX_SEQ - p.seq, SEQ_DIGITS) + hex(MAX_INDEX - p.index, INDEX_DIGITS);
}

/** The log key of `key`'s write at `p`. */
export function logKey(key: string, p: Position): string {
  return escapeKey(key) + suffix(p);
}

/** The first log key of `key` (its newest entry is at or after it). */
export function logKeyStart(key: string): string {
  return escapeKey(key);
}

/** The first log key after every entry of `key`. */
export function logKeyEnd(key: string): string {
  // Suffixes are hex digits; 'g' sorts after all of them and before nothing else of the key.
  return `${escapeKey(key)}g`;
}

/**
 * Splits a log key into its object key and position; undefined if it is not one (callers
 * treat that as corruption). Pure.
 */
export function parseLogKey(k: string): { key: string; position: Position } | undefined {
  const end = k.length - VERSION_ID_LENGTH;
  if (end < 3 || k.charCodeAt(end - 1) !== 0 || k.charCodeAt(end - 2) !== 0) return undefined;
  const tail = k.slice(end);
  if (!ID_RE.test(tail)) return undefined;
  const key = unescapeKey(k.slice(0, end - 2));
  if (key === undefined || key.length === 0) return undefined;
  return {
    key,
    position: { seq: MAX_SEQ - parseInt(tail.slice(0, SEQ_DIGITS), 16), index: MAX_INDEX - parseInt(tail.slice(SEQ_DIGITS), 16) },
  };
}

/** Inverse of escapeKey without its terminator; undefined for a malformed escape. */
function unescapeKey(escaped: string): string | undefined {
  let out = '';
  let i = 0;
  for (;;) {
    const nul = escaped.indexOf('\0', i);
    if (nul < 0) return out + escaped.slice(i);
    if (escaped.charCodeAt(nul + 1) !== 1) return undefined;
    out += `${escaped.slice(i, nul)}\0`;
    i = nul + 2;
  }
}

/**
 * The smallest object key whose log entries can sort at or after the log position `from`
 * (a log key, an escaped prefix, or anything between): the escaped text before the first
 * terminator or malformed escape, unescaped. Used to start a namespace scan in step with a
 * log scan. Pure.
 */
export function objectKeyFloor(from: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const nul = from.indexOf('\0', i);
    if (nul < 0) return out + from.slice(i);
    out += from.slice(i, nul);
    if (from.charCodeAt(nul + 1) !== 1) return out;
    out += '\0';
    i = nul + 2;
  }
}

/**
 * The position of log key `k` from its suffix alone, when `k` is known to be a log key of a
 * key whose escaped form it starts with (a scan stepping inside one key); undefined if the
 * suffix is not one. Cheaper than parseLogKey (no unescaping). Pure.
 */
export function logKeyPosition(k: string): Position | undefined {
  const tail = k.slice(k.length - VERSION_ID_LENGTH);
  if (!ID_RE.test(tail)) return undefined;
  return { seq: MAX_SEQ - parseInt(tail.slice(0, SEQ_DIGITS), 16), index: MAX_INDEX - parseInt(tail.slice(SEQ_DIGITS), 16) };
}

/** Order of two positions: negative if `a` is older. */
export function comparePositions(a: Position, b: Position): number {
  return a.seq - b.seq || a.index - b.index;
}
