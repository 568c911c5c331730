/**
 * @module Listing the fs provider's blob tree in key byte order.
 *
 * A depth-first walk over directory entries sorted by name (see key-path.ts for why
 * that is byte order), pruning every directory that cannot hold a key with the
 * prefix or after `startAfter`. Unknown names (a crashed tool's debris, editor
 * files) are skipped; temp and lock files live outside the tree.
 *
 * A prefix that spells out the next directory level whole goes straight into that directory
 * without reading its parent: listing one key's names (the erasure provider's lookup does this
 * for every cold read) costs the depth of the tree, not the size of a directory shared with
 * thousands of siblings (commits/, chunks/).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dirNameHex, leafNameHex, SEGMENT_HEX_CHARS } from './key-path.js';

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
  if (prefixHex.length >= dirHex.length + SEGMENT_HEX_CHARS) {
    // Only one subdirectory can hold keys with this prefix, and no file here can (a file's
    // key is shorter than the prefix).
    const segment = prefixHex.slice(dirHex.length, dirHex.length + SEGMENT_HEX_CHARS);
    const subHex = dirHex + segment;
    if (subHex < afterHex && !afterHex.startsWith(subHex)) return;
    yield* visit(join(dir, segment), subHex, prefixHex, afterHex);
    return;
  }
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
