/**
 * @module Forks as of a past time (`SRC@<RFC 3339 time>`, `strata fork --at`): the time
 * syntax, checked now, and the HOOK that stages such a fork once the version log exists.
 *
 * INTEGRATION HOOK — `stageForkAt`: today it refuses with 'NotImplemented' (S3 501). A fork
 * at time T needs, for every keyspace that forks, the source's state as of T (the newest
 * commit at or before T, inside the bucket's retention window): with the version log that is
 * the version log itself (shared, as forkKeyspace shares it) plus an object namespace that
 * reads "newest version with sequence <= seq(T)" from it. Whoever builds that replaces the
 * body of `stageForkAt` (staging its own mutation, applied deterministically like
 * `forkBucket`) and keeps the refusals: a time after the last commit is "now" only if the
 * caller asked for now; a time outside the window is an error, never a silent "now".
 */
import { StoreError } from './errors.js';
import type { BucketView, Tx } from './tx.js';

/** Longest time text accepted: `YYYY-MM-DDTHH:MM:SS.fffffffff+HH:MM` is 35 characters. */
const MAX_TIME_CHARS = 40;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const invalid = (text: string, why: string) =>
  new StoreError('InvalidArgument', `${JSON.stringify(text.slice(0, MAX_TIME_CHARS))} is not a fork time: ${why}`, {
    detail: { ArgumentName: 'fork time', ArgumentValue: text.slice(0, MAX_TIME_CHARS) },
  });

/**
 * Parses an RFC 3339 date-time with an explicit offset (`2026-03-01T12:00:00Z`,
 * `2026-03-01T13:00:00.5+01:00`) into ms since the epoch (fractions below 1 ms dropped).
 * Pure. Throws StoreError 'InvalidArgument' for anything else: no offset, out-of-range
 * fields (month 13, February 30, hour 24, leap second 60), more than 9 fraction digits.
 */
export function parseForkTime(text: string): number {
  if (text.length > MAX_TIME_CHARS) throw invalid(text, 'too long');
  const m = RFC3339.exec(text);
  if (!m) throw invalid(text, 'expected an RFC 3339 time such as 2026-03-01T12:00:00Z');
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) throw invalid(text, 'a field is out of range');
  const local = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const d = new Date(local);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) throw invalid(text, 'no such day');
  let offset = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) throw invalid(text, 'the offset is out of range');
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return local - offset;
}

/**
 * Throws StoreError 'InvalidArgument' unless `at` (ms) is a time a fork may name: not after
 * `now` (a fork of the future cannot be taken).
 */
export function checkForkTime(at: number, now: number): void {
  if (!Number.isFinite(at)) throw new StoreError('InvalidArgument', 'the fork time is not a time');
  if (at > now) throw new StoreError('InvalidArgument', `the fork time ${new Date(at).toISOString()} is in the future`);
}

/**
 * HOOK: stages the creation of bucket `name` (new `id`) as a fork of `source` as it was at
 * `at` (ms), in transaction `tx` (a batch of its own, see Tx.forkBucket). Until the version
 * log lands it throws StoreError 'NotImplemented' (see the module note for what replaces it).
 */
export function stageForkAt(tx: Tx, source: BucketView, name: string, _id: string, at: number): void {
  checkForkTime(at, tx.time);
  throw new StoreError(
    'NotImplemented',
    `forking ${source.name} as of ${new Date(at).toISOString()} into ${name} needs the version log, which this server does not have yet; fork as of now (no @time)`
  );
}
