/**
 * @module The exclusive lock one writer process takes on a repository directory.
 *
 * `<dir>/LOCK` holds the owner record (see lock-file.ts). A second opener, in this
 * process or another, is refused with ProviderError 'Locked'. A lock left by a
 * process that died on this machine is recovered automatically; a lock held from
 * another host is never broken (its pid cannot be checked) and must be removed by
 * an operator once that host is known to be down.
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ProviderError } from '../provider.js';
import { syncDirectoryIfReadable } from './fd-io.js';
import {
  breakStaleLock,
  isStale,
  readLockOwner,
  releaseLock,
  tryCreateLock,
  type LockOwner,
} from './lock-file.js';

/** File name of the repository lock inside the directory. */
export const DIRECTORY_LOCK_NAME = 'LOCK';

/** Attempts to create-or-break before giving up; a stale lock needs two, a race a few more. */
const ACQUIRE_ATTEMPTS = 5;

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

/**
 * Creates `dir` and its missing parents, one mkdir(2) each, without retrying: Node's
 * `mkdir(recursive)` loops forever where mkdir answers ENOENT under an existing parent
 * (e.g. `/proc/x`: issue 8 §7). Each one's entry is synced in its parent before the next is
 * made, so a repository created here does not vanish with a power loss. Throws the fs error
 * (ENOTDIR naming the file in the way).
 */
export async function makeDirectory(dir: string): Promise<void> {
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    try {
      const st = await stat(at);
      if (!st.isDirectory())
        throw Object.assign(new Error(`${at} is not a directory`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
      missing.push(at);
      const up = dirname(at);
      if (up === at) break;
      at = up;
    }
  }
  for (const d of missing.reverse()) {
    try {
      await mkdir(d);
    } catch (err) {
      if (errno(err) !== 'EEXIST' || !(await stat(d)).isDirectory()) throw err;
    }
    // Its entry lives in its parent: durable before anything is created under it. (A parent
    // that existed before may not be open to reading: then its owner's sync is what there is.)
    await syncDirectoryIfReadable(dirname(d));
  }
}

export interface DirectoryLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Removes the lock if this acquisition still holds it. Idempotent. */
  release(): Promise<void>;
}

/**
 * Takes the exclusive lock on `dir` (created if missing). Mutates `<dir>/LOCK` only.
 * Throws ProviderError 'Locked' (naming the holder) if a live process holds it, and
 * 'Io' on file-system errors.
 */
export async function acquireDirectoryLock(dir: string): Promise<DirectoryLock> {
  const path = join(dir, DIRECTORY_LOCK_NAME);
  try {
    await makeDirectory(dir);
    for (let attempt = 0; attempt < ACQUIRE_ATTEMPTS; attempt++) {
      const owner = await tryCreateLock(path);
      if (owner) {
        let released = false;
        return {
          path,
          owner,
          async release() {
            if (released) return;
            released = true;
            await releaseLock(path, owner);
          },
        };
      }
      const holder = await readLockOwner(path);
      if (holder === undefined) continue; // released meanwhile
      if (!isStale(holder)) {
        throw new ProviderError(
          'Locked',
          `${dir} is locked by pid ${holder?.pid} on ${holder?.host} since ${new Date(holder!.time).toISOString()}`
        );
      }
      await breakStaleLock(path, holder);
    }
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderError(
      'Io',
      `${dir}: cannot take the directory lock: ${(err as Error).message}`,
      { cause: err }
    );
  }
  throw new ProviderError(
    'Locked',
    `${dir}: lock contended, gave up after ${ACQUIRE_ATTEMPTS} attempts`
  );
}
