/**
 * @module A bucket's history window: how far back its state can be read (as-of reads),
 * restored, forked or listed as history — the bucket configuration `history`.
 *
 *   value   UTF-8 JSON `{"windowMs": <integer ms>}`; absent = DEFAULT_HISTORY_WINDOW_MS
 *           (other fields are ignored, for settings later versions may add beside it)
 *
 * The readable times of a bucket at `now` are [max(created, now - window), now]: a time
 * before the bucket existed, older than the window, or in the future is refused with a clear
 * error (StoreError 'InvalidArgument', S3 400) naming the window and the readable range —
 * never silently read as "now". A window of 0 keeps only the current state.
 *
 * Nothing expires yet (issue 10 trims history by this window); until then a window made
 * longer again brings older history back into reach. A bucket deleted and created again is a
 * new bucket: its history starts at its creation.
 */
import type { Repository } from './repository.js';
import type { BucketState } from './state.js';
import { StoreError } from './errors.js';
import { requireBucketState } from './versions-read.js';
import { formatTime } from './time-text.js';

/** The bucket configuration name. */
export const HISTORY_CONFIG = 'history';

const DAY_MS = 86_400_000;
/**
 * "Now" for history: the wall clock, or the newest commit's time when commits ran ahead of it
 * (commit times strictly increase by at least 1 ms, so a burst of commits can get ahead of
 * the clock): every committed write is readable as of now, and a time after now is the future.
 */
export function historyNow(repo: Repository): number {
  return Math.max(repo.now(), repo.lastCommitTime);
}

/** The window of a bucket that never set one: 30 days, as issue 9 specifies. */
export const DEFAULT_HISTORY_WINDOW_MS = 30 * DAY_MS;
/**
 * Longest window accepted: 100 years (36,500 days). Longer would only mean "forever", which
 * the history budget (issue 10) must still be able to bound; it also keeps now - window far
 * from the edges of Date arithmetic.
 */
export const MAX_HISTORY_WINDOW_MS = 36_500 * DAY_MS;

/** Bytes of a stored value looked at (a few dozen in practice). */
const MAX_CONFIG_BYTES = 4096;

/** The stored form of a window of `ms`. Throws RangeError outside 0..MAX_HISTORY_WINDOW_MS. */
export function encodeHistoryWindow(ms: number): Uint8Array {
  checkWindow(ms);
  return new TextEncoder().encode(JSON.stringify({ windowMs: ms }));
}

/** The window stored in `value` (undefined: the default). Throws StoreError 'Corrupt' for bytes no server wrote. */
export function decodeHistoryWindow(value: Uint8Array | undefined): number {
  if (value === undefined) return DEFAULT_HISTORY_WINDOW_MS;
  let parsed: unknown;
  try {
    if (value.length > MAX_CONFIG_BYTES) throw new Error('too long');
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(value));
  } catch {
    throw new StoreError('Corrupt', 'bucket history config is not UTF-8 JSON');
  }
  const ms = (parsed as { windowMs?: unknown } | null)?.windowMs;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0 || ms > MAX_HISTORY_WINDOW_MS) {
    throw new StoreError('Corrupt', `bucket history config: windowMs ${JSON.stringify(ms)}`);
  }
  return ms;
}

function checkWindow(ms: number): void {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_HISTORY_WINDOW_MS) {
    throw new RangeError(`a history window is 0 to ${MAX_HISTORY_WINDOW_MS} ms, not ${ms}`);
  }
}

/** The history window of bucket state `b` (ms). Throws StoreError 'Corrupt' (decodeHistoryWindow). */
export function windowOf(b: BucketState): number {
  return decodeHistoryWindow(b.configs.get(HISTORY_CONFIG));
}

/** The times (ms, inclusive) at which bucket `b` can be read at `now`. */
export function readableRange(b: BucketState, now: number): { from: number; to: number } {
  return { from: Math.max(b.created, now - windowOf(b)), to: now };
}

/**
 * Throws StoreError 'InvalidArgument' unless `at` (ms) is inside bucket `b`'s readable
 * range at `now` (see the module note); the message names the window, the range and what
 * was asked, and `what` names the parameter in the error detail (`x-strata-as-of`).
 */
export function checkReadableTime(b: BucketState, at: number, now: number, what = 'time'): void {
  const window = windowOf(b);
  const { from, to } = readableRange(b, now);
  if (Number.isFinite(at) && at >= from && at <= to) return;
  const asked = Number.isFinite(at) ? formatTime(at) : String(at);
  const why = !Number.isFinite(at)
    ? 'is not a time'
    : at > to
      ? 'is in the future'
      : at < b.created
        ? `is before bucket ${b.name} was created (${formatTime(b.created)})`
        : `is older than bucket ${b.name}'s history window of ${describeWindow(window)}`;
  throw new StoreError('InvalidArgument', `${what} ${asked} ${why}: bucket ${b.name} can be read as of ${formatTime(from)} to ${formatTime(to)} (history window ${describeWindow(window)})`, {
    detail: { ArgumentName: what, ArgumentValue: asked },
  });
}

/** A window for messages: `30 days`, `12 hours`, `0 (current state only)`. */
export function describeWindow(ms: number): string {
  if (ms === 0) return '0 (current state only)';
  for (const [unit, scale] of [
    ['day', DAY_MS],
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1000],
  ] as const) {
    if (ms % scale === 0) return `${ms / scale} ${unit}${ms === scale ? '' : 's'}`;
  }
  return `${ms} ms`;
}

/** The committed history window of `bucket` (ms). Throws StoreError 'NoSuchBucket'. */
export function getHistoryWindow(repo: Repository, bucket: string): number {
  return windowOf(requireBucketState(repo, bucket));
}

/**
 * Sets `bucket`'s history window to `ms` in one commit. Throws StoreError 'NoSuchBucket',
 * and 'InvalidArgument' outside 0..MAX_HISTORY_WINDOW_MS.
 */
export async function putHistoryWindow(repo: Repository, bucket: string, ms: number): Promise<void> {
  try {
    checkWindow(ms);
  } catch (err) {
    throw new StoreError('InvalidArgument', (err as Error).message, { detail: { ArgumentName: 'history window', ArgumentValue: String(ms) } });
  }
  await repo.run(async (tx) => {
    tx.requireBucket(bucket);
    tx.setConfig(bucket, HISTORY_CONFIG, encodeHistoryWindow(ms));
  });
}
