/**
 * @module Slab copies of small index values: the bytes an overlay keeps until a checkpoint
 * flushes it, packed side by side in shared slabs instead of one allocation each.
 *
 * Why: a Uint8Array of more than 64 bytes gets its own malloc'd backing store (plus V8's
 * bookkeeping for it). An overlay holds two such values per object written (its namespace
 * value and its version log entry, ~100-200 bytes each) for a whole checkpoint interval, in
 * between the many short-lived buffers of the put path. Scattered that way, the live values
 * pin the malloc heap's pages: a 1M-object writer's glibc heap held ~130 MiB of RSS for
 * ~30 MiB of overlay values. Copied into slabs, values written together live and die together
 * (a frozen overlay is dropped whole), and the put path's garbage no longer fragments around
 * them.
 *
 * A slab is freed once no view into it is left (the overlay that held its values was flushed
 * and dropped, and no reader holds one of them). The views are ordinary Uint8Arrays with a
 * byteOffset: callers never mutate index values, and every decoder reads through
 * `byteOffset` (binary.ts, run-format.ts).
 */

/**
 * Bytes per slab: large against the values (hundreds of values each, so one allocation per
 * hundreds of puts), small against an overlay (32 MiB by default), so a slab kept alive by a
 * few late values holds little.
 */
export const SLAB_BYTES = 64 * 1024;
/** Values longer than this keep their own array (a slab's tail is not wasted on them). */
export const SLAB_MAX_VALUE = 2048;

let slab = new Uint8Array(0);
let used = 0;

/** Counters for tests and benchmarks: slabs allocated and values placed in slabs. */
export const slabStats = { slabs: 0, values: 0 };

/**
 * `n` fresh bytes (zeroed) for a value an index keeps: a view into the current slab, or a
 * new array when `n` > SLAB_MAX_VALUE. The caller fills them before handing them on and
 * never writes them again.
 */
export function slabAlloc(n: number): Uint8Array {
  if (n > SLAB_MAX_VALUE) return new Uint8Array(n);
  if (used + n > slab.length) {
    slab = new Uint8Array(SLAB_BYTES);
    used = 0;
    slabStats.slabs++;
  }
  const out = slab.subarray(used, used + n);
  used += n;
  slabStats.values++;
  return out;
}

/**
 * A slab copy of `bytes` (see slabAlloc), or `bytes` itself when it is longer than
 * SLAB_MAX_VALUE; `bytes` is left as it was.
 */
export function slabCopy(bytes: Uint8Array): Uint8Array {
  if (bytes.length > SLAB_MAX_VALUE) return bytes;
  const out = slabAlloc(bytes.length);
  out.set(bytes);
  return out;
}
