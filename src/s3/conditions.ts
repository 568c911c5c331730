/**
 * @module Reading request headers into store conditions and ranges.
 */
import type { ReadConditions, WriteConditions } from '../store/conditions.js';
import type { RangeRequest } from '../store/objects-read.js';

function httpDate(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t; // an invalid date is ignored, as HTTP says
}

/** If-Match / If-None-Match / If-(Un)Modified-Since, under an optional header prefix. */
export function readConditions(h: Record<string, string | undefined>, prefix = ''): ReadConditions | undefined {
  const c: ReadConditions = {};
  const im = h[`${prefix}if-match`];
  const inm = h[`${prefix}if-none-match`];
  const ims = httpDate(h[`${prefix}if-modified-since`]);
  const ius = httpDate(h[`${prefix}if-unmodified-since`]);
  if (im !== undefined) c.ifMatch = im;
  if (inm !== undefined) c.ifNoneMatch = inm;
  if (ims !== undefined) c.ifModifiedSince = ims;
  if (ius !== undefined) c.ifUnmodifiedSince = ius;
  return Object.keys(c).length ? c : undefined;
}

/** If-None-Match: * and If-Match on writes. */
export function writeConditions(h: Record<string, string | undefined>): WriteConditions | undefined {
  const c: WriteConditions = {};
  if (h['if-none-match'] !== undefined) c.ifNoneMatch = h['if-none-match'];
  if (h['if-match'] !== undefined) c.ifMatch = h['if-match'];
  return Object.keys(c).length ? c : undefined;
}

/**
 * A single-range `Range: bytes=...` header, or undefined for none — and for syntax S3
 * ignores (another unit, several ranges, garbage), which then serves the whole object.
 */
export function readRange(v: string | undefined): RangeRequest | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(v);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') return { suffix: Number(m[2]) };
  const start = Number(m[1]);
  if (m[2] === '') return { start };
  const end = Number(m[2]);
  return end < start ? undefined : { start, end };
}
