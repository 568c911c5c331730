/**
 * @module The gf256 kernel alone, for bench:codec: RS(k, m) encode with the sources already in
 * wasm memory, no copies in or out. It runs the slices the public API would run (the same
 * slice size) over one resident arena, so the gap between this row and the API row is the
 * cost of moving shards into and out of wasm memory; the gap between this row and ISA-L is
 * the arithmetic. Its own instance: the shared kernel of src/wasm/gf256.ts is not touched.
 */
import { instantiate, type Flavor } from '../src/wasm/loader.js';
import { cauchyParity } from '../src/codec/matrix.js';
import { cpuRates as rates } from './codec-rs-timing.js';

interface KernelExports {
  memory: WebAssembly.Memory;
  coefPtr(): number;
  arenaPtr(): number;
  arenaSize(): number;
  prepare(rows: number, cols: number): number;
  mulRows(rows: number, cols: number, src: number, srcStride: number, dst: number, dstStride: number, len: number, acc: number): void;
}

/** Mirrors src/wasm/gf256.ts: the slice budget and bounds, alignment and lane skew (bytes), and
 * its equal-slice rule below. */
const SLICE_BUDGET = 768 * 1024;
const SLICE_MIN = 16 * 1024;
const SLICE_MAX = 128 * 1024;
const ALIGN = 64;
const LANE_SKEW = 5 * 64;

/** MB/s of data bytes (k * shard) per run of the kernel on resident slices. */
export function kernelResidentRates(flavor: Flavor, k: number, m: number, shard: number, runs: number, minMs: number): number[] {
  const x = instantiate('gf256', flavor).exports as unknown as KernelExports;
  const mem = new Uint8Array(x.memory.buffer);
  mem.set(cauchyParity(k, m), x.coefPtr());
  if (!x.prepare(m, k)) throw new Error(`gf256 prepare(${m}, ${k}) refused`);
  const lanes = k + m;
  const fit = Math.floor((x.arenaSize() - lanes * LANE_SKEW) / lanes / ALIGN) * ALIGN;
  const want = Math.max(SLICE_MIN, Math.min(SLICE_MAX, Math.floor(SLICE_BUDGET / lanes / ALIGN) * ALIGN));
  const cap = Math.min(want, fit);
  const slice = Math.min(cap, Math.ceil(Math.ceil(shard / Math.ceil(shard / cap)) / ALIGN) * ALIGN);
  const stride = slice + LANE_SKEW;
  const src = x.arenaPtr();
  const dst = src + k * stride;
  let seed = 0x9e3779b9;
  for (let i = src; i < dst; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    mem[i] = seed >>> 24;
  }
  return rates(
    () => {
      for (let off = 0; off < shard; off += slice) {
        const n = Math.min(slice, shard - off);
        x.mulRows(m, k, src, stride, dst, stride, Math.ceil(n / 16) * 16, 0);
      }
    },
    (k * shard) / 1e6,
    runs,
    minMs
  );
}
