/**
 * @module Listing the fs provider's blob tree in key byte order.
 *
 * A depth-first walk over directory entries sorted by name (see key-path.ts for why
 * that is byte order), pruning every directory that cannot hold a key with the
 * prefix or after `startAfter`. Unknown names (a crashed tool's debris, editor
 * files) are skipped; temp and lock files live outside the tree.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dirNameHex, leafNameHex } from './key-path.js';

export interface WalkEntry {
  /** Hex of the key's UTF-8 bytes. */
  keyHex: string;
  /** Absolute path of the blob file. */
  path: string;
}

async function sortedNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return []; // removed by a concurrent delete
    throw err;
  }
}

/**
 * Yields blob files under `root` whose key hex starts with `prefixHex` and is
 * strictly greater than `afterHex` ('' for none), in ascending order. Reads
 * directories lazily: a consumer that stops early stops the walk.
 */
export async function* walkKeys(
  root: string,
  prefixHex: string,
  afterHex: string
): AsyncGenerator<WalkEntry> {
  yield* visit(root, '', prefixHex, afterHex);
}

async function* visit(
  dir: string,
  dirHex: string,
  prefixHex: string,
  afterHex: string
): AsyncGenerator<WalkEntry> {
  for (const name of await sortedNames(dir)) {
    const leafHex = leafNameHex(name);
    if (leafHex !== undefined) {
      const keyHex = dirHex + leafHex;
      if (keyHex.startsWith(prefixHex) && keyHex > afterHex)
        yield { keyHex, path: join(dir, name) };
      continue;
    }
    const segment = dirNameHex(name);
    if (segment === undefined) continue;
    const subHex = dirHex + segment;
    // Every key below holds subHex as a proper prefix.
    if (!subHex.startsWith(prefixHex) && !prefixHex.startsWith(subHex)) continue;
    if (subHex < afterHex && !afterHex.startsWith(subHex)) continue; // all of them sort before afterHex
    yield* visit(join(dir, name), subHex, prefixHex, afterHex);
  }
}
