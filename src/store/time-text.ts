/**
 * @module Times as text: the RFC 3339 date-times that name a point in a bucket's history
 * (`x-strata-as-of`, `strata restore --to`, the admin API), parsed strictly, and written
 * back the one way responses and tools show them.
 */

/** Longest time text looked at: `YYYY-MM-DDTHH:MM:SS.fffffffff+HH:MM` is 35 characters. */
export const MAX_TIME_CHARS = 40;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Earliest and latest times accepted (ms): years 1970 to 9999, where Date is exact. */
const MIN_MS = 0;
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Parses an RFC 3339 date-time with an explicit offset (`2026-03-01T12:00:00Z`,
 * `2026-03-01T13:00:00.5+01:00`) into ms since the epoch; a fraction below 1 ms is dropped.
 * Returns a reason (a string) for anything else: no offset, a field out of range (month 13,
 * February 30, hour 24, a leap second), more than 9 fraction digits, before 1970, too long.
 * Pure; never throws.
 */
export function parseTimeText(text: string): number | string {
  if (text.length > MAX_TIME_CHARS) return 'too long';
  const m = RFC3339.exec(text);
  if (!m) return 'expected an RFC 3339 time such as 2026-03-01T12:00:00Z';
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return 'a field is out of range';
  const local = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const d = new Date(local);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return 'no such day';
  let offset = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return 'the offset is out of range';
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const at = local - offset;
  if (at < MIN_MS || at > MAX_MS) return 'outside the years 1970 to 9999';
  return at;
}

/** `ms` as an RFC 3339 UTC time with milliseconds (`2026-03-01T12:00:00.000Z`). Pure. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString();
}
