/**
 * @module Node-only: installs a hardware CRC32C as the CRC32C of every flavorless caller
 * (./accelerator.js), on import. CRC32C is on every stored byte's path: pack entries, erasure
 * cells, log records, the stored segments of large bodies. Tried in order:
 *
 *   1. `aws-crt` (the AWS Common Runtime's aws-checksums, which the AWS SDK's own CRC64NVME
 *      support loads too): SSE4.2 with three streams folded by carry-less multiplies
 *      (`aws_checksums_crc32c_clmul_sse42` in profiles here). Here 14 GiB/s per 4 KiB call and
 *      22-25 GiB/s from 16 KiB up.
 *      An optional dependency: its prebuilt binding is loaded by path (its package index
 *      would load MQTT, HTTP and a child process to tell glibc from musl); where no binding of
 *      this platform loads, the next one is used.
 *   2. `@node-rs/crc32`: SSE4.2 / ARMv8 CRC instructions, one stream: 4.7 GiB/s per 4 KiB call,
 *      5.8 GiB/s for large buffers here.
 *   3. the SIMD wasm kernel (~4x below the second).
 *
 * A native function is taken only when it loads and agrees with the wasm kernel on a set of
 * inputs (lengths 0 to 300 KiB + 3, past the sizes where a CRC implementation switches to its
 * multi-stream path, as the 256 KiB segments and 2 MiB spans take; unaligned views, chained
 * calls); otherwise the next one is tried. `STRATA_NATIVE_CRC32C=0` keeps the wasm kernel (for
 * A/B runs and the fallback tests), `STRATA_NATIVE_CRC32C=node-rs` skips aws-crt, and
 * STRATA_WASM_FLAVOR keeps the wasm kernel too (a run that forces a wasm flavor is there to
 * exercise that flavor's kernels).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { checksumKernel } from '../wasm/checksum.js';
import { installCrc32c, type Crc32cFn } from './accelerator.js';

/** Why the native CRC32C is not used, or undefined when it is. */
export let nativeCrc32cUnavailable: string | undefined;

/** Which native library computes CRC32C ('aws-crt' or '@node-rs/crc32'), undefined when none. */
export let nativeCrc32cLibrary: 'aws-crt' | '@node-rs/crc32' | undefined;

type RawCrc32c = (input: Uint8Array, initial?: number) => number;

/** aws-crt's binding for this platform, loaded by path (see the module note); throws when
 * there is none or it does not load. */
function awsCrt(require: NodeJS.Require): RawCrc32c {
  const root = dirname(require.resolve('aws-crt/package.json'));
  const libcs = process.platform === 'linux' ? ['glibc', 'musl'] : ['cruntime'];
  let last: unknown = new Error(`no binding for ${process.platform}-${process.arch}`);
  for (const libc of libcs) {
    const path = join(root, 'dist', 'bin', `${process.platform}-${process.arch}-${libc}`, 'aws-crt-nodejs.node');
    if (!existsSync(path)) continue;
    try {
      const binding = require(path) as { checksums_crc32c?: (input: Uint8Array, previous: number | undefined) => number };
      const raw = binding.checksums_crc32c;
      if (typeof raw !== 'function') throw new Error('no checksums_crc32c in the binding');
      return (input, initial) => raw(input, initial);
    } catch (err) {
      last = err; // a binding for the other C library does not load: try the next
    }
  }
  throw last;
}

function nodeRs(require: NodeJS.Require): RawCrc32c {
  const native = (require('@node-rs/crc32') as { crc32c: RawCrc32c }).crc32c;
  if (typeof native !== 'function') throw new Error('no crc32c export');
  return native;
}

/** Whether `fn` agrees with the wasm kernel on the probe inputs (see the module note). */
function agrees(fn: Crc32cFn): boolean {
  const wasm = checksumKernel();
  const probe = new Uint8Array(300 * 1024 + 16);
  for (let i = 0; i < probe.length; i++) probe[i] = (i * 2654435761) >>> 24;
  for (const n of [0, 1, 3, 15, 16, 17, 63, 64, 255, 1024, 4096 + 7, 24 * 1024 + 1, 64 * 1024 + 7, 300 * 1024 + 3]) {
    for (const off of [0, 1, 7]) {
      const v = probe.subarray(off, off + n);
      const half = n >> 1;
      const expect = wasm.crc32c(v, 0);
      if (fn(v, 0) !== expect || fn(v.subarray(half), fn(v.subarray(0, half), 0)) !== expect) return false;
    }
  }
  return true;
}

function load(): Crc32cFn | undefined {
  const choice = process.env.STRATA_NATIVE_CRC32C;
  if (choice === '0') {
    nativeCrc32cUnavailable = 'disabled by STRATA_NATIVE_CRC32C=0';
    return undefined;
  }
  if (process.env.STRATA_WASM_FLAVOR) {
    nativeCrc32cUnavailable = `STRATA_WASM_FLAVOR=${process.env.STRATA_WASM_FLAVOR} forces the wasm kernels`;
    return undefined;
  }
  const require = createRequire(import.meta.url);
  const why: string[] = [];
  const candidates: ['aws-crt' | '@node-rs/crc32', (r: NodeJS.Require) => RawCrc32c][] = [
    ['aws-crt', awsCrt],
    ['@node-rs/crc32', nodeRs],
  ];
  for (const [name, open] of candidates) {
    if (name === 'aws-crt' && choice === 'node-rs') continue;
    let raw: RawCrc32c;
    try {
      raw = open(require);
    } catch (e) {
      why.push(`${name} did not load: ${(e as Error).message.split('\n')[0]}`);
      continue;
    }
    const fn: Crc32cFn = (data, crc) => raw(data, crc) >>> 0;
    if (!agrees(fn)) {
      why.push(`${name} disagrees with the wasm kernel`);
      continue;
    }
    nativeCrc32cLibrary = name;
    return fn;
  }
  nativeCrc32cUnavailable = why.join('; ');
  return undefined;
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
