/**
 * @module Reed-Solomon benchmark: encode and worst-case reconstruct MB/s (of data bytes),
 * per kernel flavor, through the public API (copies into and out of wasm memory included).
 */
import { createEncoder } from '../src/codec/reed-solomon.js';
import { availableFlavors, type Flavor } from '../src/wasm/loader.js';
import { rates } from './lib/timing.js';
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

export interface RsResult {
  flavor: Flavor;
  k: number;
  m: number;
  shard: number;
  op: 'encode' | 'reconstruct';
  mbps: number[];
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

/** Measures every (flavor, k, m, shard size, op); `quick` shortens each run. */
export function measureRs(opts: { quick?: boolean; flavors?: Flavor[] } = {}): RsResult[] {
  const flavors = opts.flavors ?? availableFlavors('gf256');
  const runs = opts.quick ? 2 : 5;
  const minMs = opts.quick ? 30 : 250;
  const out: RsResult[] = [];
  for (const [k, m] of RS_CONFIGS) {
    for (const shard of RS_SHARD_SIZES) {
      const shards = randomShards(k + m, shard, k * 31 + shard);
      for (const flavor of flavors) {
        const rs = createEncoder(k, m, { flavor });
        const dataBytes = k * shard;
        const enc = rates(() => rs.encode(shards), dataBytes / 1e6, runs, minMs);
        out.push({ flavor, k, m, shard, op: 'encode', mbps: enc });
        // Worst case: the first m data shards are lost; the decode matrix is cached after
        // the warm-up run, as it is for a repeated erasure pattern.
        const work = shards.slice();
        const rec = rates(
          () => {
            for (let i = 0; i < m; i++) work[i] = null as unknown as Uint8Array;
            rs.reconstructData(work);
          },
          dataBytes / 1e6,
          runs,
          minMs
        );
        out.push({ flavor, k, m, shard, op: 'reconstruct', mbps: rec });
      }
    }
  }
  return out;
}

const sizeLabel = (n: number) => (n >= 1 << 20 ? `${n >> 20} MiB` : `${n >> 10} KiB`);

/** Markdown: one row per (op, k+m, flavor), one column per shard size, plus SIMD/scalar ratio. */
export function renderRs(results: RsResult[]): string {
  const flavors = [...new Set(results.map((r) => r.flavor))];
  const rows: string[][] = [];
  for (const op of ['encode', 'reconstruct'] as const) {
    for (const [k, m] of RS_CONFIGS) {
      for (const flavor of flavors) {
        const cells = RS_SHARD_SIZES.map((shard) => {
          const r = results.find((x) => x.op === op && x.k === k && x.m === m && x.shard === shard && x.flavor === flavor);
          return r ? medianRange(r.mbps) : '';
        });
        rows.push([op, `${k}+${m}`, flavor, ...cells]);
      }
    }
  }
  const ratioRows: string[][] = [];
  if (flavors.includes('simd') && flavors.includes('scalar')) {
    for (const op of ['encode', 'reconstruct'] as const) {
      for (const [k, m] of RS_CONFIGS) {
        const cells = RS_SHARD_SIZES.map((shard) => {
          const pick = (f: Flavor) =>
            results.find((x) => x.op === op && x.k === k && x.m === m && x.shard === shard && x.flavor === f);
          const s = pick('simd');
          const c = pick('scalar');
          return s && c ? `${fmt(median(s.mbps) / median(c.mbps), 1)}x` : '';
        });
        ratioRows.push([op, `${k}+${m}`, ...cells]);
      }
    }
  }
  const sizes = RS_SHARD_SIZES.map(sizeLabel);
  let md =
    '### Reed-Solomon, MB/s of data (median (min–max)), single thread, through the API\n\n' +
    table(['op', 'k+m', 'flavor', ...sizes], rows, ['l', 'l', 'l']);
  if (ratioRows.length) {
    md += '\n\n### SIMD / scalar speed-up (medians)\n\n' + table(['op', 'k+m', ...sizes], ratioRows, ['l', 'l']);
  }
  return md;
}
