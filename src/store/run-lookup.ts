/**
 * @module Point lookups in an LSM keyspace: the overlay first, then the runs newest first.
 * Used by keyspace.ts below the overlay and frozen layers.
 */
import type { SortedMap } from './index/sorted-map.js';
import type { RunHandle } from './state.js';
import { blobError } from './body-reader.js';

/**
 * The newest value of `key` in an overlay and its runs (newest first), or undefined. A run
 * that cannot be read fails with the blob named (blobError).
 */
export async function newestValue(overlay: SortedMap, runs: readonly RunHandle[], key: string): Promise<Uint8Array | undefined> {
  const hit = overlay.get(key);
  if (hit) return hit;
  for (const run of runs) {
    let v: Uint8Array | undefined;
    try {
      v = await run.reader.get(key);
    } catch (err) {
      throw blobError(err, run.key);
    }
    if (v) return v;
  }
  return undefined;
}

