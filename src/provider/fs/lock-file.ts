/**
 * @module Lock files: exclusive creation, owner records, stale detection.
 *
 * A lock is a file whose content names its owner `{pid, host, nonce, time}`. It is
 * created complete and atomically: the record is written to a private file that is
 * then hard-linked to the lock path (link(2) fails with EEXIST if the lock exists).
 *
 * A lock is stale when its owner is known dead (same host, and its pid is gone, a zombie,
 * reused by a process started at another time, or from an earlier boot: see
 * process-identity.ts) or, when the caller allows it, older than a maximum age (other
 * hosts, hung owners). Breaking a
 * stale lock renames it aside and checks that what was moved is the stale record
 * observed; if a live lock took its place meanwhile, it is linked back. A third
 * process acquiring in that instant could still overlap the restored owner: holders
 * narrow this further by re-checking ownership (isHeldBy) right before acting.
 */
import { randomBytes } from 'node:crypto';
import { link, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive, ownStamp } from './process-identity.js';

export interface LockOwner {
  pid: number;
  host: string;
  /** Unique per acquisition: tells two holders with one pid apart. */
  nonce: string;
  /** Acquisition time, ms since the epoch. */
  time: number;
  /** The owner's start time in clock ticks after boot (Linux): tells a reused pid apart. */
  start?: string;
  /** The owner's kernel boot id (Linux): a lock from an earlier boot is dead. */
  boot?: string;
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

function isOwner(value: unknown): value is LockOwner {
  const v = value as LockOwner;
  return (
    typeof v === 'object' &&
    v !== null &&
    Number.isInteger(v.pid) &&
    typeof v.host === 'string' &&
    typeof v.nonce === 'string' &&
    typeof v.time === 'number' &&
    (v.start === undefined || typeof v.start === 'string') &&
    (v.boot === undefined || typeof v.boot === 'string')
  );
}

/**
 * Creates the lock at `path` if absent. Returns the owner record on success and
 * undefined if a lock already exists. Mutates only `path` (and a private temp file
 * beside it, removed before returning). Throws the fs error on other failures.
 */
export async function tryCreateLock(path: string): Promise<LockOwner | undefined> {
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    nonce: randomBytes(12).toString('hex'),
    time: Date.now(),
    ...ownStamp(),
  };
  const temp = `${path}.${owner.pid}.${owner.nonce}.new`;
  await writeFile(temp, JSON.stringify(owner), { flag: 'wx' });
  try {
    await link(temp, path);
    return owner;
  } catch (err) {
    if (errno(err) === 'EEXIST') return undefined;
    throw err;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** The owner of the lock at `path`: undefined if there is no lock, null if its content is unreadable. */
export async function readLockOwner(path: string): Promise<LockOwner | null | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return isOwner(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * True unless `pid` is known not to be a live process on this machine: gone, a zombie, or
 * (given the owner's stamp) a reused pid. See process-identity.ts.
 */
export function isPidAlive(pid: number, stamp?: Pick<LockOwner, 'start' | 'boot'>): boolean {
  return isProcessAlive(pid, stamp);
}

/**
 * Whether `owner` no longer holds its lock legitimately: its process is gone (same
 * host only: a pid means nothing elsewhere), or the lock is older than `maxAgeMs`.
 * A null owner (unreadable record; cannot happen with tryCreateLock) is stale.
 */
export function isStale(owner: LockOwner | null, maxAgeMs = Infinity): boolean {
  if (owner === null) return true;
  if (owner.host === hostname() && !isPidAlive(owner.pid, owner)) return true;
  return Date.now() - owner.time > maxAgeMs;
}

/** True while the lock at `path` is the acquisition described by `owner`. */
export async function isHeldBy(path: string, owner: LockOwner): Promise<boolean> {
  const current = await readLockOwner(path);
  return current?.nonce === owner.nonce;
}

/**
 * Removes the lock at `path` if it is still the stale acquisition `observed` (null:
 * an unreadable one). Safe against a concurrent breaker or a new owner (see module
 * doc). Returns when the stale lock is gone or was replaced; throws fs errors.
 */
export async function breakStaleLock(path: string, observed: LockOwner | null): Promise<void> {
  const aside = `${path}.${process.pid}.${randomBytes(8).toString('hex')}.stale`;
  try {
    await rename(path, aside);
  } catch (err) {
    if (errno(err) === 'ENOENT') return; // someone else broke it
    throw err;
  }
  const moved = await readLockOwner(aside);
  const same = observed === null ? moved === null : moved?.nonce === observed.nonce;
  if (!same) {
    // A live lock replaced the stale one before our rename: give it back.
    await link(aside, path).catch(() => {});
  }
  await unlink(aside).catch(() => {});
}

/** Removes the lock at `path` if `owner` still holds it; a lock taken over by someone else is left alone. */
export async function releaseLock(path: string, owner: LockOwner): Promise<void> {
  if (!(await isHeldBy(path, owner))) return;
  await unlink(path).catch((err) => {
    if (errno(err) !== 'ENOENT') throw err;
  });
}

/** Private files of tryCreateLock / breakStaleLock: `<lock>.<pid>.<hex>.new|stale`. */
const DEBRIS = /\.(\d+)\.[0-9a-f]+\.(new|stale)$/;

/**
 * Tidies a directory of lock files after crashes: removes the private files of dead
 * processes and breaks `*.lock` files whose owner is dead. Locks of live owners and
 * unrelated files are left alone. Returns how many entries were removed.
 */
export async function cleanLockDir(dir: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const debris = DEBRIS.exec(name);
    if (debris) {
      if (
        !isPidAlive(Number(debris[1])) &&
        (await unlink(path).then(
          () => true,
          () => false
        ))
      )
        removed++;
    } else if (name.endsWith('.lock')) {
      const owner = await readLockOwner(path);
      if (
        owner !== undefined &&
        owner !== null &&
        owner.host === hostname() &&
        !isPidAlive(owner.pid, owner)
      ) {
        await breakStaleLock(path, owner);
        removed++;
      }
    }
  }
  return removed;
}
