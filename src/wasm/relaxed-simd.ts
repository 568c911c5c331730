/**
 * @module Turns on WebAssembly relaxed SIMD in a Node whose V8 has it only behind a flag, so
 * the Reed-Solomon kernels run their relaxed build (loader.ts picks it once `validate` takes
 * it). Node-only, and imported for its effect first thing by the `strata` command (and the
 * benchmarks that measure what the command runs), never by the library or the browser bundle:
 * changing a process's V8 flags is the program's call, not a library's.
 *
 * Why: plain `i8x16.swizzle` must give 0 for an index of 16 or more, so V8 on x64 emits a
 * saturating add before every `pshufb`; `i8x16.relaxed_swizzle` leaves out-of-range indices
 * to the hardware, which is a bare `pshufb`. The GF(256) kernels only ever look up nibbles
 * (0..15), so both give the same bytes, and the relaxed build is the same arithmetic with
 * one instruction fewer per lookup: RS(10,4) encode of 1 MiB shards ran 1.3-1.6x as fast on the
 * AMD EPYC host of 2026-12-05 (resident API, bench:codec: 6,064 against 4,528 MB/s in a full
 * run, 6,414 against 3,997 in a run of that configuration alone).
 *
 * V8 shipped relaxed SIMD on by default in 11.4; Node 20 carries 11.3, where
 * `--experimental-wasm-relaxed-simd` enables it. The flag is set at run time, before any
 * module is compiled, and only where the V8 version needs it: V8 drops a shipped feature's
 * flag some releases later (Node 20 already refuses `--experimental-wasm-simd` as a bad
 * option), so it must never be on a command line or shebang. `STRATA_RELAXED_SIMD=0` leaves
 * the flag unset (on Node 20 the plain SIMD build then runs: A/B runs of the Reed-Solomon build
 * alone); `STRATA_WASM_FLAVOR=simd` picks the plain SIMD build in any runtime, through the loader,
 * but also keeps the CRC32C on the wasm kernel (native-crc32c.ts), so it is no clean A/B.
 */
import { setFlagsFromString } from 'node:v8';

/** The V8 flag that enables relaxed SIMD before V8 11.4. */
export const RELAXED_SIMD_FLAG = '--experimental-wasm-relaxed-simd';

/** Whether a V8 of this version (`process.versions.v8`, e.g. "11.3.244.8-node.38") has relaxed
 * SIMD only behind {@link RELAXED_SIMD_FLAG}: 11.3 and earlier. An unparsable version says no
 * (nothing is set). Pure. */
export function needsRelaxedSimdFlag(v8Version: string): boolean {
  const m = /^(\d+)\.(\d+)\./.exec(v8Version);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major < 11 || (major === 11 && minor < 4);
}

/** What {@link enableRelaxedSimd} did: set the flag, found relaxed SIMD on by default in this
 * V8, was told not to, or could not (a runtime that is not V8, or whose setFlagsFromString
 * throws: its own wasm engine decides, and the loader takes whatever it validates). */
export type RelaxedSimdState = 'flag' | 'default' | 'off' | 'unavailable';

/** Sets {@link RELAXED_SIMD_FLAG} when this V8 needs it and the environment does not say
 * `STRATA_RELAXED_SIMD=0`. Never throws (a command must start whatever the runtime).
 * Idempotent. */
export function enableRelaxedSimd(
  env: NodeJS.ProcessEnv = process.env,
  v8Version = process.versions.v8,
  runtime: Readonly<Record<string, string | undefined>> = process.versions
): RelaxedSimdState {
  if (env.STRATA_RELAXED_SIMD === '0') return 'off';
  // Bun reports a V8 version but runs JavaScriptCore, and its setFlagsFromString throws.
  if (runtime['bun'] !== undefined) return 'unavailable';
  if (!needsRelaxedSimdFlag(v8Version ?? '')) return 'default';
  try {
    setFlagsFromString(RELAXED_SIMD_FLAG);
  } catch {
    return 'unavailable';
  }
  return 'flag';
}

/** What this process did at import. */
export const relaxedSimdState: RelaxedSimdState = enableRelaxedSimd();
