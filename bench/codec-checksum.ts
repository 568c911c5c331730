/**
 * @module Checksum throughput: Strata's wasm kernels beside hash-wasm, node:crypto and
 * node:zlib, single-threaded, at 4 KiB / 64 KiB / 1 MiB. Every implementation is measured
 * in every round, interleaved, so ratios compare samples taken under the same machine load
 * (the benchmark machine is shared); each figure is the median over rounds, and each ratio
 * the median of the per-round ratios to hash-wasm.
 *
 * One operation = hash one buffer from a fresh state to its digest (reset/init, update,
 * digest), on seeded random bytes. `bench/codec.ts` calls {@link runChecksumBench}; run
 * this file directly to print the tables alone.
 */
import * as crypto from 'node:crypto';
import * as zlib from 'node:zlib';
import * as hashWasm from 'hash-wasm';
import { createHasher, type ChecksumAlgorithm } from '../src/checksum/index.js';
import { FAST_IMPLEMENTATIONS, createFastHasher } from '../src/checksum/native.js';
import { availableFlavors } from '../src/wasm/loader.js';
import { table } from './lib/markdown.js';
import { fmt, median } from './lib/stats.js';

const SIZES = [4 << 10, 64 << 10, 1 << 20];
const SIZE_LABELS = ['4 KiB', '64 KiB', '1 MiB'];

/** Targets of issue 2: minimum ratio to hash-wasm per algorithm (at 64 KiB and 1 MiB). */
const TARGETS: Partial<Record<ChecksumAlgorithm, number>> = {
  sha256: 1.0,
  md5: 1.0,
  crc32c: 1.3,
  crc64nvme: 1.0,
};

interface Candidate {
  name: string;
  /** Hashes `data` once, from a fresh state to the digest. */
  op: (data: Uint8Array) => unknown;
}

type Crc32Fn = (data: Uint8Array, value?: number) => number;
const zlibCrc32 = (zlib as { crc32?: Crc32Fn }).crc32;
type OneShot = (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer;
const cryptoHash = (crypto as { hash?: OneShot }).hash;

async function hashWasmHasher(alg: ChecksumAlgorithm): Promise<hashWasm.IHasher> {
  switch (alg) {
    case 'sha256':
      return hashWasm.createSHA256();
    case 'md5':
      return hashWasm.createMD5();
    case 'sha1':
      return hashWasm.createSHA1();
    case 'crc32':
      return hashWasm.createCRC32();
    case 'crc32c':
      return hashWasm.createCRC32(0x82f63b78);
    case 'crc64nvme':
      return hashWasm.createCRC64('9a6c9329ac4bc9b5');
  }
}

async function candidates(alg: ChecksumAlgorithm): Promise<Candidate[]> {
  const out: Candidate[] = [];
  const flavors = availableFlavors('checksum');
  // The scalar build differs from the SIMD build only in SHA-256's message schedule.
  for (const flavor of flavors.filter(
    (f) => f === 'simd' || (f === 'scalar' && alg === 'sha256')
  )) {
    const h = createHasher(alg, { flavor: flavor as 'simd' | 'scalar' });
    out.push({ name: `Strata wasm (${flavor})`, op: (d) => h.reset().update(d).digest() });
  }
  const hw = await hashWasmHasher(alg);
  out.push({ name: 'hash-wasm', op: (d) => (hw.init(), hw.update(d), hw.digest('binary')) });
  if (alg === 'sha256' || alg === 'md5' || alg === 'sha1') {
    out.push({
      name: 'node:crypto createHash',
      op: (d) => crypto.createHash(alg).update(d).digest(),
    });
    if (cryptoHash)
      out.push({ name: 'node:crypto hash (one-shot)', op: (d) => cryptoHash(alg, d, 'buffer') });
  }
  if (alg === 'crc32' && zlibCrc32) out.push({ name: 'node:zlib crc32', op: (d) => zlibCrc32(d) });
  const fast = createFastHasher(alg);
  out.push({
    name: `Strata createFastHasher (${FAST_IMPLEMENTATIONS[alg]})`,
    op: (d) => fast.reset().update(d).digest(),
  });
  return out;
}

/** Bytes per second of `op` on `data`, run for at least `ms`. */
function rate(op: Candidate['op'], data: Uint8Array, ms: number): number {
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  do {
    op(data);
    n++;
    t = performance.now();
  } while (t - t0 < ms);
  return (n * data.length) / ((t - t0) / 1000);
}

interface Measured {
  name: string;
  /** Per size: median MB/s, median per-round ratio to hash-wasm. */
  mbps: number[];
  ratio: number[];
}

async function measure(alg: ChecksumAlgorithm, rounds: number, ms: number): Promise<Measured[]> {
  const cands = await candidates(alg);
  const hw = cands.findIndex((c) => c.name === 'hash-wasm');
  const data = SIZES.map((n, i) => {
    const d = new Uint8Array(n);
    crypto.randomFillSync(d); // contents do not matter to any of these; sizes do
    return d.fill(i, 0, 1);
  });
  // warm-up: V8 tiers wasm and JS up to optimized code only after some runs
  for (const c of cands) for (const d of data) rate(c.op, d, Math.max(ms, 60));
  const samples = cands.map(() => SIZES.map(() => [] as number[]));
  const ratios = cands.map(() => SIZES.map(() => [] as number[]));
  for (let r = 0; r < rounds; r++) {
    for (let s = 0; s < SIZES.length; s++) {
      const round = cands.map((c) => rate(c.op, data[s]!, ms));
      round.forEach((v, i) => {
        samples[i]![s]!.push(v / 1e6);
        ratios[i]![s]!.push(v / round[hw]!);
      });
    }
  }
  return cands.map((c, i) => ({
    name: c.name,
    mbps: samples[i]!.map(median),
    ratio: ratios[i]!.map(median),
  }));
}

function render(alg: ChecksumAlgorithm, rows: Measured[]): string {
  const headers = ['implementation', ...SIZE_LABELS.flatMap((l) => [`${l} MB/s`, '× hash-wasm'])];
  const body = rows.map((r) => [
    r.name,
    ...r.mbps.flatMap((v, s) => [fmt(v), `${fmt(r.ratio[s]!, 2)}×`]),
  ]);
  return [`#### ${alg}`, '', table(headers, body, ['l']), ''].join('\n');
}

function renderTargets(results: Map<ChecksumAlgorithm, Measured[]>): string {
  const rows: string[][] = [];
  for (const [alg, target] of Object.entries(TARGETS) as [ChecksumAlgorithm, number][]) {
    const ours = results.get(alg)?.find((r) => r.name === 'Strata wasm (simd)');
    if (!ours) continue;
    const got = ours.ratio.map((x) => `${fmt(x, 2)}×`);
    const met = ours.ratio.slice(1).every((x) => x >= target) ? 'met' : 'missed';
    rows.push([alg, `≥ ${fmt(target, 1)}×`, ...got, met]);
  }
  const headers = ['algorithm', 'target vs hash-wasm', ...SIZE_LABELS, 'at 64 KiB and 1 MiB'];
  return table(headers, rows, ['l', 'l']);
}

/**
 * Measures every algorithm and returns the markdown: a targets summary, then one table per
 * algorithm. `quick` shortens the runs (smoke tests; figures not for publication).
 */
export async function runChecksumBench(opts: { quick?: boolean } = {}): Promise<string> {
  const rounds = opts.quick ? 3 : 9;
  const ms = opts.quick ? 15 : 120;
  const algs: ChecksumAlgorithm[] = ['sha256', 'md5', 'sha1', 'crc32', 'crc32c', 'crc64nvme'];
  const results = new Map<ChecksumAlgorithm, Measured[]>();
  for (const alg of algs) results.set(alg, await measure(alg, rounds, ms));
  return [
    '### Checksums',
    '',
    `Single thread; MB/s = 10^6 bytes/s; median of ${rounds} interleaved rounds of ≥ ${ms} ms per ` +
      'implementation and size; ratios are medians of per-round ratios to hash-wasm. One op = ' +
      'fresh state → update(buffer) → digest. Strata rows go through the public hasher API ' +
      '(copy into wasm memory included). CRC32C is hash-wasm `createCRC32(0x82f63b78)`, ' +
      "CRC64NVME `createCRC64('9a6c9329ac4bc9b5')`.",
    '',
    renderTargets(results),
    '',
    ...algs.map((a) => render(a, results.get(a)!)),
  ].join('\n');
}

if (process.argv[1] && /codec-checksum\.(ts|js|mjs)$/.test(process.argv[1])) {
  console.log(await runChecksumBench({ quick: process.argv.includes('--quick') }));
}
