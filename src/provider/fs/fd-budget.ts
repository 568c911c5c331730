/**
 * @module How many file descriptors the fs providers of one process may keep open in their
 * caches (read handles of blobs, directory handles kept for fsync), from the process's limit
 * on open files.
 *
 * Each fs provider in exclusive mode keeps up to MAX_CACHED_HANDLES blob handles and
 * MAX_DIR_HANDLES directory handles. One provider fits any limit, but an erasure set has one
 * per domain: at (10,4) that was 14 x 320 = 4,480 descriptors, and under the common soft limit
 * of 1,024 a server that had read a few hundred objects failed every open (EMFILE): GETs and
 * then PUTs answered 500. So the caches of all the providers of a process share a quarter of
 * the limit (the rest is for client connections, log segments, temporary files and the
 * runtime), split evenly, each cache never above its own default nor below a small floor.
 */
import { readFileSync } from 'node:fs';
import { MAX_CACHED_HANDLES } from './handle-cache.js';

/** Directory handles one provider keeps open for fsync (fs/index.ts), at most. */
export const MAX_DIR_HANDLES = 64;
/** The limit assumed when the system does not say (a conservative soft limit). */
export const DEFAULT_OPEN_FILES = 1024;
/** Share of the open-files limit that the caches of all fs providers may hold together. */
export const CACHE_SHARE = 0.25;
/** Fewest blob and directory handles a cache keeps (below this it would reopen on each read). */
const MIN_BLOB_HANDLES = 4;
const MIN_DIR_HANDLES = 2;

export interface HandleBudget {
  /** Blob read handles one provider caches. */
  blobHandles: number;
  /** Directory handles one provider caches. */
  dirHandles: number;
}

/**
 * The soft "Max open files" limit in the text of /proc/self/limits: a positive whole number,
 * Infinity for "unlimited", undefined when the line is absent or unreadable.
 */
export function parseOpenFilesLimit(text: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith('Max open files'));
  if (!line) return undefined;
  const soft = line.slice('Max open files'.length).trim().split(/\s+/)[0];
  if (soft === 'unlimited') return Infinity;
  if (!soft || !/^\d{1,12}$/.test(soft)) return undefined;
  const n = Number(soft);
  return n > 0 ? n : undefined;
}

/** This process's soft limit on open files (Linux: /proc/self/limits), else DEFAULT_OPEN_FILES. */
export function openFilesLimit(): number {
  try {
    return parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8')) ?? DEFAULT_OPEN_FILES;
  } catch {
    return DEFAULT_OPEN_FILES;
  }
}

/**
 * What each of `providers` fs providers in one process may cache, under an open-files limit of
 * `limit`: CACHE_SHARE of it split evenly, four fifths to blob handles and the rest to directory
 * handles, each between its floor and its default. Throws RangeError for a count that is not a
 * positive whole number.
 */
export function handleBudget(providers: number, limit: number = openFilesLimit()): HandleBudget {
  if (!Number.isInteger(providers) || providers < 1) throw new RangeError(`handleBudget: ${providers} providers`);
  const per = Number.isFinite(limit) ? Math.floor((Math.max(0, limit) * CACHE_SHARE) / providers) : Infinity;
  const clamp = (n: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, n));
  const blobHandles = clamp(Math.floor(per * 0.8), MIN_BLOB_HANDLES, MAX_CACHED_HANDLES);
  const dirHandles = clamp(Number.isFinite(per) ? per - blobHandles : Infinity, MIN_DIR_HANDLES, MAX_DIR_HANDLES);
  return { blobHandles, dirHandles };
}
