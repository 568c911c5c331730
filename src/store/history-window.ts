/**
 * @module A bucket's history window: how far back its state can be read (as-of reads),
 * restored, forked or listed as history — the bucket configuration `history`, else the
 * server-wide default (repository option `retentionMs`, server flag `--retention`).
 *
 *   history          UTF-8 JSON `{"windowMs": <integer ms>}`; absent = the server default
 *                    (other fields are ignored, for settings later versions may add beside it)
 *   history-expired  UTF-8 JSON `{"throughMs": <integer ms>}`, written by expiry (expiry.ts):
 *                    history before this time was dropped, so it stays unreadable even when
 *                    the window is made longer later
 *
 * The readable times of a bucket at `now` are [max(created, now - window, expired), now]: a
 * time before the bucket existed, older than the window (or than what expiry dropped), or in
 * the future is refused with a clear error (StoreError 'InvalidArgument', S3 400) naming the
 * window and the readable range — never silently read as "now". A window of 0 keeps only the
 * current state.
 *
 * A window made longer brings older history back into reach only as far as expiry has not
 * dropped it yet. A bucket deleted and created again is a new bucket: its history starts at
 * its creation.
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

/** The server-wide default window when none is configured: 30 days, as issue 9 specifies. */
export const DEFAULT_HISTORY_WINDOW_MS = 30 * DAY_MS;

/** The bucket configuration expiry writes (see the module note). */
export const EXPIRED_CONFIG = 'history-expired';
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

/**
 * The window stored in `value` (undefined: `fallback`, the server default). Throws StoreError
 * 'Corrupt' for bytes no server wrote.
 */
export function decodeHistoryWindow(value: Uint8Array | undefined, fallback = DEFAULT_HISTORY_WINDOW_MS): number {
  if (value === undefined) return fallback;
  return decodeMsField(value, 'windowMs', 'history', MAX_HISTORY_WINDOW_MS);
}

/** The time through which history was dropped, stored in `value` (undefined: none, 0). Throws StoreError 'Corrupt'. */
export function decodeExpiredThrough(value: Uint8Array | undefined): number {
  if (value === undefined) return 0;
  return decodeMsField(value, 'throughMs', EXPIRED_CONFIG, Number.MAX_SAFE_INTEGER);
}

/** The stored form of "history dropped through `ms`". */
export function encodeExpiredThrough(ms: number): Uint8Array {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`an expiry time is a non-negative integer, not ${ms}`);
  return new TextEncoder().encode(JSON.stringify({ throughMs: ms }));
}

function decodeMsField(value: Uint8Array, field: string, config: string, max: number): number {
  let parsed: unknown;
  try {
    if (value.length > MAX_CONFIG_BYTES) throw new Error('too long');
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(value));
  } catch {
    throw new StoreError('Corrupt', `bucket ${config} config is not UTF-8 JSON`);
  }
  const ms = (parsed as Record<string, unknown> | null)?.[field];
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0 || ms > max) {
    throw new StoreError('Corrupt', `bucket ${config} config: ${field} ${JSON.stringify(ms)}`);
  }
  return ms;
}

function checkWindow(ms: number): void {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_HISTORY_WINDOW_MS) {
    throw new RangeError(`a history window is 0 to ${MAX_HISTORY_WINDOW_MS} ms, not ${ms}`);
  }
}

/**
 * The history window of bucket state `b` (ms): its own `history` config, else `fallback` (the
 * server default, Repository.retentionMs). Throws StoreError 'Corrupt' (decodeHistoryWindow).
 */
export function windowOf(b: BucketState, fallback = DEFAULT_HISTORY_WINDOW_MS): number {
  return decodeHistoryWindow(b.configs.get(HISTORY_CONFIG), fallback);
}

/** The history window of bucket `b` in `repo` (its own, else the server default). */
export function bucketWindow(repo: Repository, b: BucketState): number {
  return windowOf(b, repo.retentionMs);
}

/** Whether bucket `b` has a window of its own (false: it follows the server default). */
export function hasOwnWindow(b: BucketState): boolean {
  return b.configs.has(HISTORY_CONFIG);
}

/** The time through which expiry dropped `b`'s history (0: never). Throws StoreError 'Corrupt'. */
export function expiredThrough(b: BucketState): number {
  return decodeExpiredThrough(b.configs.get(EXPIRED_CONFIG));
}

/** The times (ms, inclusive) at which bucket `b` of `repo` can be read now (historyNow). */
export function readableRange(repo: Repository, b: BucketState): { from: number; to: number } {
  const now = historyNow(repo);
  return { from: Math.max(b.created, now - bucketWindow(repo, b), expiredThrough(b)), to: now };
}

/**
 * Throws StoreError 'InvalidArgument' unless `at` (ms) is inside bucket `b`'s readable
 * range now (see the module note); the message names the window, the range and what
 * was asked, and `what` names the parameter in the error detail (`x-strata-as-of`).
 */
export function checkReadableTime(repo: Repository, b: BucketState, at: number, what = 'time'): void {
  const window = bucketWindow(repo, b);
  const { from, to } = readableRange(repo, b);
  if (Number.isFinite(at) && at >= from && at <= to) return;
  const asked = Number.isFinite(at) ? formatTime(at) : String(at);
  const why = !Number.isFinite(at)
    ? 'is not a time'
    : at > to
      ? 'is in the future'
      : at < b.created
        ? `is before bucket ${b.name} was created (${formatTime(b.created)})`
        : at < expiredThrough(b) && at >= to - window
          ? `is before bucket ${b.name}'s expired history (dropped through ${formatTime(expiredThrough(b))})`
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

/** The committed history window of `bucket` (ms): its own, else the server default. Throws StoreError 'NoSuchBucket'. */
export function getHistoryWindow(repo: Repository, bucket: string): number {
  return bucketWindow(repo, requireBucketState(repo, bucket));
}

/** Whether `bucket` has a window of its own (false: it follows the server default). Throws StoreError 'NoSuchBucket'. */
export function hasOwnHistoryWindow(repo: Repository, bucket: string): boolean {
  return hasOwnWindow(requireBucketState(repo, bucket));
}

/**
 * Makes `bucket` follow the server-wide default window again (removes its `history` config)
 * in one commit. History already expired stays expired. Throws StoreError 'NoSuchBucket'.
 */
export async function clearHistoryWindow(repo: Repository, bucket: string): Promise<void> {
  await repo.run(async (tx) => {
    tx.requireBucket(bucket);
    tx.setConfig(bucket, HISTORY_CONFIG, null);
  });
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
