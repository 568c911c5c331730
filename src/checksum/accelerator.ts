/**
 * @module A faster CRC32C than the wasm kernel, when the runtime has one. Browser-safe: this
 * module only holds the function; Node-only code (./native-crc32c.js) installs a hardware
 * CRC32C (SSE4.2 / ARMv8 CRC instructions through N-API) after checking it against the wasm
 * kernel. Callers that do not name a kernel flavor use it when installed; a caller that names
 * a flavor (the codec tests, the benchmarks) always gets that wasm kernel.
 */

/** CRC32C of `data` continued from `crc` (zlib chaining), as an unsigned 32-bit number. */
export type Crc32cFn = (data: Uint8Array, crc: number) => number;

let installed: Crc32cFn | undefined;
let installedName = 'wasm';

/** Makes `fn` (named `name` in logs and metrics) the CRC32C of flavorless callers; undefined
 * goes back to the wasm kernel. */
export function installCrc32c(fn: Crc32cFn | undefined, name = 'wasm'): void {
  installed = fn;
  installedName = fn ? name : 'wasm';
}

/** The installed CRC32C, or undefined when flavorless callers use the wasm kernel. */
export function acceleratedCrc32c(): Crc32cFn | undefined {
  return installed;
}

/**
 * CRC32C of `data` from 0 for a caller holding a wasm `kernel` of the flavor it was asked for:
 * the installed CRC32C when no flavor was named (`flavor` undefined), else the kernel's.
 */
export function crc32cOf(kernel: { crc32c(data: Uint8Array, crc: number): number }, data: Uint8Array, flavor: unknown): number {
  const fast = flavor === undefined ? installed : undefined;
  return fast ? fast(data, 0) : kernel.crc32c(data, 0);
}

/** What computes a flavorless CRC32C: 'wasm' or the installed implementation's name. */
export function crc32cImplementation(): string {
  return installedName;
}
