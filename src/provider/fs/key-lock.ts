/**
 * @module Per-key mutual exclusion between processes sharing one fs directory.
 *
 * Every mutation of a key (put, delete) runs its final check-and-publish step
 * (precondition check, rename or unlink, directory fsync) while holding
 * `locks/<sha256 of the key>.lock`, so conditional puts are atomic across processes.
 * The critical section is milliseconds, so waiters poll with a short backoff.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProviderError } from '../provider.js';
import {
  breakStaleLock,
  isHeldBy,
  isStale,
  readLockOwner,
  releaseLock,
  tryCreateLock,
} from './lock-file.js';

/** How long a writer waits for a key lock before giving up with 'Unavailable'. */
export const KEY_LOCK_WAIT_MS = 30_000;

/**
 * A key lock older than this is stale even if its pid looks alive: the section it
 * guards takes milliseconds, so a minute means a hung or recycled-pid owner.
 */
export const KEY_LOCK_MAX_AGE_MS = 60_000;

/** First and longest pause between attempts; short because holders finish in ms. */
const POLL_MIN_MS = 1;
const POLL_MAX_MS = 25;

/** Lock file path for a key. */
export function keyLockPath(locksDir: string, keyUtf8: Uint8Array): string {
  return join(locksDir, createHash('sha256').update(keyUtf8).digest('hex') + '.lock');
}

/**
 * Runs `fn` while holding the key's lock, then releases it (also on error).
 * `fn` receives `stillHeld()`, to re-check ownership right before publishing.
 * Throws ProviderError 'Unavailable' (retryable) after KEY_LOCK_WAIT_MS of contention.
 */
export async function withKeyLock<T>(
  locksDir: string,
  keyUtf8: Uint8Array,
  fn: (stillHeld: () => Promise<boolean>) => Promise<T>
): Promise<T> {
  const path = keyLockPath(locksDir, keyUtf8);
  const deadline = Date.now() + KEY_LOCK_WAIT_MS;
  let pause = POLL_MIN_MS;
  for (;;) {
    const owner = await tryCreateLock(path);
    if (owner) {
      try {
        return await fn(() => isHeldBy(path, owner));
      } finally {
        await releaseLock(path, owner);
      }
    }
    const holder = await readLockOwner(path);
    if (holder !== undefined && isStale(holder, KEY_LOCK_MAX_AGE_MS)) {
      await breakStaleLock(path, holder);
      continue;
    }
    if (Date.now() > deadline) {
      throw new ProviderError(
        'Unavailable',
        `key lock ${path} still held after ${KEY_LOCK_WAIT_MS} ms`
      );
    }
    await sleep(pause * (0.5 + Math.random()));
    pause = Math.min(pause * 2, POLL_MAX_MS);
  }
}
