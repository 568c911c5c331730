/**
 * @module The Reed-Solomon targets of `npm run bench:codec` (issue 12), each with PASS or MISS:
 * RS(10,4) encode at 1 MiB shards >= 0.75x ISA-L's 128-bit SSE build in the same run, and
 * reconstruct (m data shards lost) within 20% of encode, both on the resident API: shards in
 * wasm memory, encoded in place, as ISA-L works on its caller's buffers in place.
 */
import type { Flavor } from '../src/wasm/loader.js';
import { pick, type RsMeasurement } from './codec-rs.js';
import { median, fmt } from './lib/stats.js';
import { table } from './lib/markdown.js';

/** The configuration the targets are set at: RS(10,4), 1 MiB shards. */
const K = 10;
const M = 4;
const SHARD = 1024 * 1024;
/** Strata resident encode / ISA-L sse encode, medians of the same run. */
const MIN_VS_ISAL_SSE = 0.75;
/** Strata reconstruct / Strata encode: "within 20%". */
const MIN_RECONSTRUCT_VS_ENCODE = 0.8;

const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');

/** Markdown table of the targets for Strata's `strata` flavor (the runtime's default), judged
 * on its resident API row (shards in wasm memory, in place: the same work as ISA-L's rows);
 * the copying API's figures follow for reference. */
export function renderRsTargets(measured: RsMeasurement, strata: Flavor): string {
  const { results } = measured;
  const resident = `${strata}-resident` as const;
  const enc = pick(results, resident, 'encode', K, M, SHARD);
  const rec = pick(results, resident, 'reconstruct', K, M, SHARD);
  const sse = pick(results, 'isal-sse', 'encode', K, M, SHARD);
  const rows: string[][] = [];
  const shape = `RS(${K},${M}) ${SHARD >> 20} MiB shards`;
  const label = `${shape}, Strata ${strata} resident API`;
  const ratio = (a: number[], b: number[]) => `${fmt(median(a))} / ${fmt(median(b))} MB/s = ${fmt(median(a) / median(b), 2)}x`;
  if (enc && sse) {
    const r = median(enc.mbps) / median(sse.mbps);
    rows.push([`${label}: encode >= ${MIN_VS_ISAL_SSE}x ISA-L sse`, ratio(enc.mbps, sse.mbps), verdict(r >= MIN_VS_ISAL_SSE)]);
  } else {
    rows.push([`${label}: encode >= ${MIN_VS_ISAL_SSE}x ISA-L sse`, measured.isalSkipped ?? 'not measured', 'MISS']);
  }
  if (enc && rec) {
    const r = median(rec.mbps) / median(enc.mbps);
    rows.push([`${label}: reconstruct (m data shards lost, in place) within 20% of encode`, ratio(rec.mbps, enc.mbps), verdict(r >= MIN_RECONSTRUCT_VS_ENCODE)]);
  } else {
    rows.push([`${label}: reconstruct within 20% of encode`, 'not measured', 'MISS']);
  }
  if (strata !== 'simd') {
    // Where the runtime refuses relaxed SIMD (Node 20 without the flag), the plain SIMD build runs.
    const plain = pick(results, 'simd-resident', 'encode', K, M, SHARD);
    if (plain && sse) rows.push([`${shape}, Strata simd resident API (the build where relaxed SIMD is refused): encode against ISA-L sse (no target; for reference)`, ratio(plain.mbps, sse.mbps), '—']);
  }
  const copying = `${shape}, Strata ${strata} copying API`;
  const cenc = pick(results, strata, 'encode', K, M, SHARD);
  const crec = pick(results, strata, 'reconstruct', K, M, SHARD);
  const alloc = pick(results, strata, 'reconstruct-alloc', K, M, SHARD);
  if (cenc && sse) rows.push([`${copying}: encode against ISA-L sse (no target; for reference)`, ratio(cenc.mbps, sse.mbps), '—']);
  if (cenc && crec) rows.push([`${copying}: reconstruct into reused buffers, against its encode (for reference)`, ratio(crec.mbps, cenc.mbps), '—']);
  if (cenc && alloc) rows.push([`${copying}: reconstruct allocating new arrays, against its encode (for reference)`, ratio(alloc.mbps, cenc.mbps), '—']);
  return '### Reed-Solomon targets\n\n' + table(['target', 'measured (medians)', 'result'], rows, ['l', 'l', 'l']);
}
