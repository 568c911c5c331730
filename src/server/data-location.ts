/**
 * @module Checks the `--data` location before anything is created: a local repository must
 * be an existing directory or a path whose nearest existing ancestor is a directory. Catches
 * a file in the way or a mistyped mount point while the start has touched nothing.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { localDirectory } from '../store/open.js';
import { OptionError } from './option-types.js';

/** Ancestors looked at: deeper than any real path; bounds a pathological one. */
const MAX_DEPTH = 256;

/**
 * Throws OptionError if `location` names a local path that cannot hold a repository: a
 * non-directory, or a missing path under a non-directory. URLs are not checked here (their
 * provider reports its own errors). Reads metadata only.
 */
export function checkDataLocation(location: string): void {
  const dir = localDirectory(location);
  if (dir === undefined) return;
  let at = dir;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        throw new OptionError(`--data: cannot use ${dir}: ${(err as Error).message}`);
      const up = dirname(at);
      if (up === at) return;
      at = up;
      continue;
    }
    if (!isDir)
      throw new OptionError(
        at === dir
          ? `--data: ${dir} is not a directory`
          : `--data: cannot create ${dir}: ${at} is not a directory`
      );
    return;
  }
  throw new OptionError(`--data: ${dir} is nested too deeply`);
}

/**
 * checkDataLocation for every directory domain of an erasure set. A set rides out up to m
 * failed domains, so up to m bad ones are returned (the caller logs them; opening marks them
 * failed) instead of refusing the start; more than m throws OptionError naming each.
 */
export function checkErasureDomains(domains: readonly { id: string; url: string }[], m: number): string[] {
  const bad: string[] = [];
  for (const d of domains) {
    try {
      checkDataLocation(d.url);
    } catch (err) {
      if (!(err instanceof OptionError)) throw err;
      bad.push(`domain ${d.id}: ${err.message}`);
    }
  }
  if (bad.length > m) throw new OptionError(`${bad.length} erasure domains cannot be used, more than m = ${m}:\n${bad.join('\n')}`);
  return bad;
}
