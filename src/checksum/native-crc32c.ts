/**
 * @module Node-only: installs a hardware CRC32C (`@node-rs/crc32`: SSE4.2 on x86-64, the CRC
 * instructions on ARMv8, through N-API) as the CRC32C of every flavorless caller
 * (./accelerator.js), on import. It runs about 4x the SIMD wasm kernel here
 * (bench/RESULTS.md, codec section), and CRC32C is on every stored byte's path: pack entries,
 * erasure cells, log records, the stored segments of large bodies.
 *
 * The native function is taken only when it loads and agrees with the wasm kernel on a set of
 * inputs (lengths 0 to 300 KiB + 3, past the sizes where a CRC implementation switches to its
 * multi-stream path, as the 256 KiB segments and 2 MiB spans take; unaligned views, chained
 * calls); otherwise the wasm kernel stays. `STRATA_NATIVE_CRC32C=0` keeps the wasm kernel (for
 * A/B runs and the fallback tests), and so does STRATA_WASM_FLAVOR (a run that forces a wasm
 * flavor is there to exercise that flavor's kernels).
 */
import { createRequire } from 'node:module';
import { checksumKernel } from '../wasm/checksum.js';
import { installCrc32c, type Crc32cFn } from './accelerator.js';

/** Why the native CRC32C is not used, or undefined when it is. */
export let nativeCrc32cUnavailable: string | undefined;

function load(): Crc32cFn | undefined {
  if (process.env.STRATA_NATIVE_CRC32C === '0') {
    nativeCrc32cUnavailable = 'disabled by STRATA_NATIVE_CRC32C=0';
    return undefined;
  }
  if (process.env.STRATA_WASM_FLAVOR) {
    nativeCrc32cUnavailable = `STRATA_WASM_FLAVOR=${process.env.STRATA_WASM_FLAVOR} forces the wasm kernels`;
    return undefined;
  }
  let native: (input: Uint8Array, initialState?: number) => number;
  try {
    native = (createRequire(import.meta.url)('@node-rs/crc32') as { crc32c: typeof native }).crc32c;
    if (typeof native !== 'function') throw new Error('no crc32c export');
  } catch (e) {
    nativeCrc32cUnavailable = `@node-rs/crc32 did not load: ${(e as Error).message.split('\n')[0]}`;
    return undefined;
  }
  const fn: Crc32cFn = (data, crc) => native(data, crc) >>> 0;
  const wasm = checksumKernel();
  const probe = new Uint8Array(300 * 1024 + 16);
  for (let i = 0; i < probe.length; i++) probe[i] = (i * 2654435761) >>> 24;
  for (const n of [0, 1, 3, 15, 16, 17, 63, 64, 255, 1024, 4096 + 7, 24 * 1024 + 1, 64 * 1024 + 7, 300 * 1024 + 3]) {
    for (const off of [0, 1, 7]) {
      const v = probe.subarray(off, off + n);
      const half = n >> 1;
      const expect = wasm.crc32c(v, 0);
      if (fn(v, 0) !== expect || fn(v.subarray(half), fn(v.subarray(0, half), 0)) !== expect) {
        nativeCrc32cUnavailable = `@node-rs/crc32 disagrees with the wasm kernel at ${n} bytes`;
        return undefined;
      }
    }
  }
  return fn;
}

const loaded = load();
if (loaded) installCrc32c(loaded, 'native');

/** The CRC32C flavorless callers get: the native one when installed, else the wasm kernel's. */
export const fastCrc32c: Crc32cFn = loaded ?? wasmCrc32c();

function wasmCrc32c(): Crc32cFn {
  const kernel = checksumKernel();
  return (data, crc) => kernel.crc32c(data, crc);
}

export { crc32cImplementation } from './accelerator.js';
