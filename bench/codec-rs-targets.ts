/**
 * @module The Reed-Solomon targets of `npm run bench:codec` (issue 12), each with PASS or MISS:
 * RS(10,4) encode at 1 MiB shards >= 0.75x ISA-L's 128-bit SSE build in the same run, and
 * reconstruct (m data shards lost, into reused buffers as encode reuses its parity) within 20%
 * of encode.
 */
import type { Flavor } from '../src/wasm/loader.js';
import { pick, type RsMeasurement } from './codec-rs.js';
import { median, fmt } from './lib/stats.js';
import { table } from './lib/markdown.js';

/** The configuration the targets are set at: RS(10,4), 1 MiB shards. */
const K = 10;
const M = 4;
const SHARD = 1024 * 1024;
/** Strata encode / ISA-L sse encode, medians of the same run. */
const MIN_VS_ISAL_SSE = 0.75;
/** Strata reconstruct / Strata encode: "within 20%". */
const MIN_RECONSTRUCT_VS_ENCODE = 0.8;

const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');

/** Markdown table of the targets for Strata's `strata` flavor (the runtime's default). */
export function renderRsTargets(measured: RsMeasurement, strata: Flavor): string {
  const { results } = measured;
  const enc = pick(results, strata, 'encode', K, M, SHARD);
  const rec = pick(results, strata, 'reconstruct', K, M, SHARD);
  const sse = pick(results, 'isal-sse', 'encode', K, M, SHARD);
  const rows: string[][] = [];
  const label = `RS(${K},${M}) ${SHARD >> 20} MiB shards, Strata ${strata}`;
  if (enc && sse) {
    const r = median(enc.mbps) / median(sse.mbps);
    rows.push([
      `${label}: encode >= ${MIN_VS_ISAL_SSE}x ISA-L sse`,
      `${fmt(median(enc.mbps))} / ${fmt(median(sse.mbps))} MB/s = ${fmt(r, 2)}x`,
      verdict(r >= MIN_VS_ISAL_SSE),
    ]);
  } else {
    rows.push([`${label}: encode >= ${MIN_VS_ISAL_SSE}x ISA-L sse`, measured.isalSkipped ?? 'not measured', 'MISS']);
  }
  if (enc && rec) {
    const r = median(rec.mbps) / median(enc.mbps);
    rows.push([
      `${label}: reconstruct (into reused buffers) within 20% of encode`,
      `${fmt(median(rec.mbps))} / ${fmt(median(enc.mbps))} MB/s = ${fmt(r, 2)}x`,
      verdict(r >= MIN_RECONSTRUCT_VS_ENCODE),
    ]);
  } else {
    rows.push([`${label}: reconstruct within 20% of encode`, 'not measured', 'MISS']);
  }
  const alloc = pick(results, strata, 'reconstruct-alloc', K, M, SHARD);
  if (enc && alloc) {
    rows.push([
      `${label}: reconstruct allocating new arrays, against encode (no target; for reference)`,
      `${fmt(median(alloc.mbps))} / ${fmt(median(enc.mbps))} MB/s = ${fmt(median(alloc.mbps) / median(enc.mbps), 2)}x`,
      '—',
    ]);
  }
  return '### Reed-Solomon targets\n\n' + table(['target', 'measured (medians)', 'result'], rows, ['l', 'l', 'l']);
}
