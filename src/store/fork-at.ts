/**
 * @module The time of a fork as of a past time (`SRC@<RFC 3339 time>`, `strata fork --at`,
 * the admin API's `at`): its syntax, checked before anything else. What such a fork is and
 * how it is made: fork-at-time.ts (the time must also be inside the source's history window,
 * checked there: never a silent "now").
 */
import { StoreError } from './errors.js';
import { MAX_TIME_CHARS, parseTimeText } from './time-text.js';

/**
 * Parses an RFC 3339 date-time with an explicit offset (`2026-03-01T12:00:00Z`,
 * `2026-03-01T13:00:00.5+01:00`) into ms since the epoch (fractions below 1 ms dropped;
 * time-text.ts). Pure. Throws StoreError 'InvalidArgument' for anything else: no offset,
 * out-of-range fields (month 13, February 30, hour 24, leap second 60), more than 9 fraction
 * digits, before 1970.
 */
export function parseForkTime(text: string): number {
  const at = parseTimeText(text);
  if (typeof at === 'number') return at;
  throw new StoreError('InvalidArgument', `${JSON.stringify(text.slice(0, MAX_TIME_CHARS))} is not a fork time: ${at}`, {
    detail: { ArgumentName: 'fork time', ArgumentValue: text.slice(0, MAX_TIME_CHARS) },
  });
}
