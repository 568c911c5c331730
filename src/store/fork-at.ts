/**
 * @module Forks as of a past time (`SRC@<RFC 3339 time>`, `strata fork --at`): the time
 * syntax, checked now, and the HOOK that stages such a fork once point-in-time reads exist.
 *
 * INTEGRATION HOOK — `stageForkAt`: today it refuses with 'NotImplemented' (S3 501). The
 * version log exists (version-log.ts) and already forks with its bucket (a Keyspace shared by
 * forkKeyspace), but a fork AS OF time T also needs the source's object namespace as it was
 * at T, and that in O(1), which needs an as-of view no one has built yet. What wiring it takes:
 *   1. map T to the newest commit sequence S whose time is <= T (commit time never goes
 *      backwards) and refuse a T outside the source's retention window (never a silent "now");
 *   2. stage a new mutation (appended to OPS), e.g. `forkBucketAt {bucket, source, id,
 *      created, seq: S}`, with the fork's settings as forkBucket does, in this transaction
 *      (it runs alone in its batch, see Tx.forkBucket);
 *   3. apply it in state.ts: the fork's version log = forkKeyspace of the source's log with
 *      the entries positioned after S hidden (a SortedSource filter over the shared layers
 *      and runs), and its namespace = "newest visible entry <= S per key" derived from that
 *      log (the as-of LIST/GET view of point-in-time reads), below the fork's own overlays;
 *   4. encode S per bucket in roots until a compaction has written the fork's own runs.
 * Keep the refusals below: a future time, a malformed time (parseForkTime).
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
 * `at` (ms), in transaction `tx` (a batch of its own, see Tx.forkBucket). Until it is wired
 * it throws StoreError 'NotImplemented' (see the module note for what replaces it), after
 * refusing a time in the future ('InvalidArgument').
 */
export function stageForkAt(tx: Tx, source: BucketView, name: string, _id: string, at: number): void {
  checkForkTime(at, tx.time);
  throw new StoreError(
    'NotImplemented',
    `forking ${source.name} as of ${new Date(at).toISOString()} into ${name} is not implemented yet (it needs point-in-time reads of the version log); fork as of now (no @time)`
  );
}
