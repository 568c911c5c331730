/**
 * @module Reed-Solomon benchmark: encode and worst-case reconstruct MB/s (of data bytes),
 * per kernel flavor, through the resident API (shards in wasm memory, in place: the work
 * ISA-L does) and through the copying API (copies into and out of wasm memory included),
 * with ISA-L (bench/isal/) run on the same configuration right after each Strata run.
 */
import { createEncoder, type ReedSolomon } from '../src/codec/reed-solomon.js';
import { availableFlavors, type Flavor } from '../src/wasm/loader.js';
import { buildIsalHarness, runIsal, type IsalHarness } from './isal/isal.js';
import { kernelResidentRates } from './codec-rs-kernel.js';
import { cpuRates as rates } from './codec-rs-timing.js';
import { medianRange, median, fmt } from './lib/stats.js';
import { table } from './lib/markdown.js';

export const RS_CONFIGS: [number, number][] = [
  [3, 2],
  [4, 2],
  [6, 3],
  [10, 4],
  [20, 6],
];
export const RS_SHARD_SIZES = [64 * 1024, 256 * 1024, 1024 * 1024];

/** A Strata kernel flavor through the copying API, through the resident API (shards in wasm
 * memory, encoded in place: ISA-L's shape), a flavor's kernel alone on cache-resident slices
 * (bench/codec-rs-kernel.ts), or an ISA-L entry point timed by bench/isal/isal-rs.c. */
export type RsImpl = Flavor | `${Flavor}-resident` | `${Flavor}-kernel` | 'isal-sse' | 'isal-dispatch';

export const RS_OPS = ['encode', 'reconstruct', 'reconstruct-alloc'] as const;
export type RsOp = (typeof RS_OPS)[number];

export interface RsResult {
  impl: RsImpl;
  k: number;
  m: number;
  shard: number;
  /** reconstruct: into reused buffers (options.into), the same work as encode and ISA-L;
   * reconstruct-alloc: new arrays per call, the API's default. */
  op: RsOp;
  mbps: number[];
}

export interface RsMeasurement {
  results: RsResult[];
  /** Why ISA-L is absent from `results` (no compiler or no libisal-dev), if it is. */
  isalSkipped?: string;
}

function randomShards(n: number, size: number, seed: number): Uint8Array[] {
  let x = seed >>> 0 || 1;
  return Array.from({ length: n }, () => {
    const s = new Uint8Array(size);
    for (let i = 0; i < size; i += 4) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      s[i] = x;
      s[i + 1] = x >>> 8;
      s[i + 2] = x >>> 16;
      s[i + 3] = x >>> 24;
    }
    return s;
  });
}

/**
 * Measures every (k, m, shard size): each Strata flavor's encode and reconstruct, then ISA-L's
 * (when its harness builds), so each pair of rows shares one stretch of machine load.
 * `quick` shortens each run; `isal: false` leaves ISA-L out; `configs` and `sizes` narrow the
 * grid (default RS_CONFIGS x RS_SHARD_SIZES).
 */
export function measureRs(
  opts: { quick?: boolean; flavors?: Flavor[]; isal?: boolean; configs?: [number, number][]; sizes?: number[] } = {}
): RsMeasurement {
  const flavors = opts.flavors ?? availableFlavors('gf256');
  const runs = opts.quick ? 3 : 5;
  const minMs = opts.quick ? 30 : 250;
  const harness: IsalHarness = opts.isal === false ? { skipped: 'skipped: not requested' } : buildIsalHarness();
  const out: RsResult[] = [];
  for (const [k, m] of opts.configs ?? RS_CONFIGS) {
    for (const shard of opts.sizes ?? RS_SHARD_SIZES) {
      const shards = randomShards(k + m, shard, k * 31 + shard);
      for (const flavor of flavors) {
        const rs = createEncoder(k, m, { flavor });
        const dataBytes = k * shard;
        const enc = rates(() => rs.encode(shards), dataBytes / 1e6, runs, minMs);
        out.push({ impl: flavor, k, m, shard, op: 'encode', mbps: enc });
        // Worst case: the first m data shards are lost; the decode matrix is cached after
        // the warm-up run, as it is for a repeated erasure pattern. First into buffers that
        // are reused (as encode reuses its parity arrays), then new arrays per call.
        const work = shards.slice();
        const into: Uint8Array[] = shards.map(() => new Uint8Array(shard));
        const lose = () => {
          for (let i = 0; i < m; i++) work[i] = null as unknown as Uint8Array;
        };
        const rec = rates(() => (lose(), rs.reconstructData(work, { into })), dataBytes / 1e6, runs, minMs);
        out.push({ impl: flavor, k, m, shard, op: 'reconstruct', mbps: rec });
        if (flavor !== 'scalar') {
          for (const row of residentRates(rs, shards, runs, minMs)) {
            out.push({ impl: `${flavor}-resident`, k, m, shard, op: row.op, mbps: row.mbps });
          }
          const kern = kernelResidentRates(flavor, k, m, shard, runs, minMs);
          out.push({ impl: `${flavor}-kernel`, k, m, shard, op: 'encode', mbps: kern });
        }
        // Last: its garbage (m new arrays per call) is collected before the next row starts.
        const alloc = rates(() => (lose(), rs.reconstructData(work)), dataBytes / 1e6, runs, minMs);
        out.push({ impl: flavor, k, m, shard, op: 'reconstruct-alloc', mbps: alloc });
      }
      if ('path' in harness) {
        for (const row of runIsal(harness.path, k, m, shard, runs, minMs, 'cpu')) {
          out.push({ impl: `isal-${row.impl}`, k, m, shard, op: row.op, mbps: row.mbps });
        }
      }
    }
  }
  return 'skipped' in harness ? { results: out, isalSkipped: harness.skipped } : { results: out };
}

/**
 * The resident API on one stripe: the data shards copied into it once (as the erasure write
 * path reads a body into it), then encode in place, and reconstruct in place of the first m
 * data shards (decode matrix cached after the warm-up run), the same work ISA-L's rows do.
 */
function residentRates(rs: ReedSolomon, shards: Uint8Array[], runs: number, minMs: number): { op: RsOp; mbps: number[] }[] {
  const { dataShards: k, parityShards: m } = rs;
  const size = shards[0]!.length;
  const st = rs.allocStripe(size);
  try {
    for (let i = 0; i < k; i++) st.shard(i).set(shards[i]!);
    const enc = rates(() => rs.encodeResident(st), (k * size) / 1e6, runs, minMs);
    const present = Array.from({ length: k + m }, (_, i) => i >= m);
    const rec = rates(() => rs.reconstructResident(st, present, { dataOnly: true }), (k * size) / 1e6, runs, minMs);
    return [
      { op: 'encode', mbps: enc },
      { op: 'reconstruct', mbps: rec },
    ];
  } finally {
    st.release();
  }
}

const sizeLabel = (n: number) => (n >= 1 << 20 ? `${n >> 20} MiB` : `${n >> 10} KiB`);

const IMPL_LABEL: Record<RsImpl, string> = {
  simd: 'Strata simd (copying API)',
  relaxed: 'Strata relaxed (copying API)',
  scalar: 'Strata scalar',
  'simd-resident': 'Strata simd resident API',
  'relaxed-resident': 'Strata relaxed resident API',
  'scalar-resident': 'Strata scalar resident API',
  'simd-kernel': 'Strata simd kernel alone (cache-resident slices, no copies)',
  'relaxed-kernel': 'Strata relaxed kernel alone (cache-resident slices, no copies)',
  'scalar-kernel': 'Strata scalar kernel alone (cache-resident slices, no copies)',
  'isal-sse': 'ISA-L sse (ec_encode_data_sse)',
  'isal-dispatch': 'ISA-L dispatch (ec_encode_data)',
};

/** The result for one cell, if measured. */
export function pick(results: RsResult[], impl: RsImpl, op: RsOp, k: number, m: number, shard: number): RsResult | undefined {
  return results.find((x) => x.impl === impl && x.op === op && x.k === k && x.m === m && x.shard === shard);
}

/** Markdown table of median ratios a/b per (op, k+m) and shard size. */
function ratioTable(results: RsResult[], a: RsImpl, b: RsImpl): string {
  const rows: string[][] = [];
  for (const op of RS_OPS) {
    for (const [k, m] of RS_CONFIGS) {
      const cells = RS_SHARD_SIZES.map((shard) => {
        const x = pick(results, a, op, k, m, shard);
        const y = pick(results, b, op, k, m, shard);
        return x && y ? `${fmt(median(x.mbps) / median(y.mbps), 2)}x` : '';
      });
      if (cells.some((c) => c !== '')) rows.push([op, `${k}+${m}`, ...cells]);
    }
  }
  return table(['op', 'k+m', ...RS_SHARD_SIZES.map(sizeLabel)], rows, ['l', 'l']);
}

/** Markdown: one row per (op, k+m, implementation), one column per shard size, plus ratios. */
export function renderRs(measured: RsMeasurement, strata: Flavor): string {
  const { results } = measured;
  const impls = [...new Set(results.map((r) => r.impl))];
  const rows: string[][] = [];
  for (const op of RS_OPS) {
    for (const [k, m] of RS_CONFIGS) {
      for (const impl of impls) {
        const cells = RS_SHARD_SIZES.map((shard) => {
          const r = pick(results, impl, op, k, m, shard);
          return r ? medianRange(r.mbps) : '';
        });
        if (cells.some((c) => c !== '')) rows.push([op, `${k}+${m}`, IMPL_LABEL[impl], ...cells]);
      }
    }
  }
  const sizes = RS_SHARD_SIZES.map(sizeLabel);
  let md =
    '### Reed-Solomon, MB/s of data (median (min–max)) per CPU-second, single thread\n\n' +
    'Every row is timed by the CPU time of its process (bench/codec-rs-timing.ts; the ISA-L harness ' +
    'by CLOCK_PROCESS_CPUTIME_ID), not the wall clock, so time spent descheduled on this shared ' +
    'machine does not count; it still shares caches and cores with whatever else runs. A process\'s ' +
    'CPU time also counts V8\'s garbage-collection threads, so every row starts after a full ' +
    'collection (node --expose-gc) and the allocating row (reconstruct-alloc) runs last of its ' +
    'flavor: no row is charged for the garbage of the rows before it. ' +
    '"Strata … resident API" rows are the equal-work rows and the ones the targets are judged on: ' +
    'the shards live in wasm memory (ReedSolomon.allocStripe, filled once before timing, as the erasure ' +
    'write path reads a body straight into them) and encodeResident / reconstructResident compute in ' +
    'place, as ISA-L computes on its caller\'s buffers in place (bench/isal/isal-rs.c, built with cc -O2 ' +
    'at bench time, run right after the Strata rows of the same configuration). "Strata … (copying API)" ' +
    'rows take ordinary Uint8Arrays (encode / reconstructData) and so also copy every source into wasm ' +
    'memory and every output out of it, slice by slice: that is what differs from the resident rows. ' +
    'Reconstruct loses the first m data shards; every row reuses the decode matrix (Strata from its ' +
    'cache) and rebuilds into buffers reused from call to call (copying API: `options.into`; resident: ' +
    'in place), as encode reuses its parity. "Kernel alone" runs the copying API\'s slices with the ' +
    'data already in wasm memory and cache-resident (no copies): its gap to the copying row is the ' +
    'copying. `reconstruct-alloc` is the copying API without `into`: m new arrays per call, whose ' +
    'first-touch page faults cost about as much as the arithmetic at 1 MiB shards.\n\n' +
    table(['op', 'k+m', 'implementation', ...sizes], rows, ['l', 'l', 'l']);
  if (measured.isalSkipped) md += `\n\nISA-L: ${measured.isalSkipped}`;
  if (impls.includes('isal-sse')) {
    if (impls.includes(`${strata}-resident`)) {
      md +=
        `\n\n### Strata ${strata} resident API / ISA-L sse (medians; equal work)\n\n` +
        ratioTable(results, `${strata}-resident`, 'isal-sse');
    }
    md += `\n\n### Strata ${strata} copying API / ISA-L sse (medians)\n\n` + ratioTable(results, strata, 'isal-sse');
    if (impls.includes(`${strata}-kernel`)) {
      md +=
        `\n\n### Strata ${strata} kernel alone (cache-resident slices, no copies) / ISA-L sse (medians)\n\n` +
        ratioTable(results, `${strata}-kernel`, 'isal-sse');
    }
  }
  if (impls.includes('simd') && impls.includes('scalar')) {
    md += '\n\n### SIMD / scalar speed-up (medians)\n\n' + ratioTable(results, 'simd', 'scalar');
  }
  return md;
}
