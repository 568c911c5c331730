/**
 * @module Page-cache residency of a file, for tests that check what a read leaves cached:
 * util-linux's `fincore` counts a file's resident pages, and GNU dd's `iflag=nocache` with
 * `count=0` asks the kernel to drop a file's clean cached pages (POSIX_FADV_DONTNEED). Both
 * come with Debian's essential packages; `available` says whether this machine has them.
 */
import { spawnSync } from 'node:child_process';

/** Whether fincore and a dd that takes iflag=nocache are here. */
export const pageCacheToolsAvailable: boolean =
  spawnSync('fincore', ['--version'], { stdio: 'ignore' }).status === 0 &&
  spawnSync('dd', ['if=/dev/null', 'iflag=nocache', 'count=0', 'status=none'], { stdio: 'ignore' }).status === 0;

/** Pages of `path` resident in the page cache now. Throws when fincore fails. */
export function residentPages(path: string): number {
  const r = spawnSync('fincore', ['--noheadings', '--output', 'PAGES', path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fincore ${path}: ${r.stderr}`);
  return Number(r.stdout.trim());
}

/** Drops `path`'s clean pages from the page cache (a file just written and fsynced is clean). */
export function dropFromPageCache(path: string): void {
  const r = spawnSync('dd', [`if=${path}`, 'iflag=nocache', 'count=0', 'status=none'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`dd nocache ${path}: ${r.stderr}`);
}
