/**
 * @module The markdown of `npm run bench:erasure`: the targets of issue 11 with PASS/MISS on
 * every row, the large-object, small-object and scrub/repair tables (medians with ranges,
 * server CPU per request), and the GFS federation figures, quoted with their source.
 */
import { availableParallelism } from 'node:os';
import type { RunResult } from './http-load.js';
import type { SmallRun } from './erasure-measure.js';
import type { BigRun } from './erasure-measure.js';
import { mibPerSecond } from './erasure-measure.js';
import type { ScrubRun } from './erasure-lanes.js';
import type { FloorRun } from './disk-floor.js';
import { table } from './lib/markdown.js';
import { fmt, median, medianRange, pairedRatios, percentile } from './lib/stats.js';

/** Every figure the bench collected, by lane name ('fs', 'ec 4+2', 'ec 10+4'). */
export interface ErasureResults {
  bigSize: number;
  bigPut: Map<string, BigRun[]>;
  bigGet: Map<string, BigRun[]>;
  degradedGet: Map<string, BigRun[]>;
  smallPut: Map<string, SmallRun[]>;
  smallGet: Map<string, SmallRun[]>;
  /** Per erasure lane: the maintenance runs and what they covered. */
  maintenance: Map<string, Maintenance>;
  /** Byte-exact checks done (label → ok). */
  checks: { label: string; ok: boolean }[];
}

export interface Maintenance {
  /** Bytes the m domains wiped for the degraded GET held. */
  wipedForDegraded?: number;
  /** Repair of the m domains wiped for the degraded GET. */
  repairM?: ScrubRun & { wipedBytes: number };
  /** Scrub (verify only) of the populated, healthy set. */
  scrub?: ScrubRun;
  /** Repair of one wiped domain, and the bytes that domain held: the run of median wall time
   * among `repairOneRuns` (the same domain wiped and repaired again each run). */
  repairOne?: RepairRun & { restoredBytes: number };
  /** Every repair of one wiped domain, in order (repairOne is their median). */
  repairOneRuns?: RepairRun[];
  /** Scrub after the repair: damage it still found (0 expected). */
  afterDamage?: number;
  /** `strata verify` exit code after the repair (0 = clean). */
  verifyCode?: number;
}

/** A repair of one wiped domain: the bytes the domain held, and the disk floor measured right
 * after it (disk-floor.ts: its bytes read and written, nothing else). */
export type RepairRun = ScrubRun & { wipedBytes: number; floor?: FloorRun };

export const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
const MIB = 2 ** 20;

const bigMiB = (runs: BigRun[] | undefined) => (runs?.length ? median(runs.map(mibPerSecond)) : NaN);
const loopOps = (runs: RunResult[] | undefined) => (runs?.length ? median(runs.map((r) => r.n / r.seconds)) : NaN);
/** Per-run shares of `runs` against `base`, run i with run i (lib/stats.ts pairedRatios). */
export function pairedShares(runs: readonly RunResult[], base: readonly RunResult[]): number[] {
  const rate = (r: RunResult) => r.n / r.seconds;
  return pairedRatios(runs.map(rate), base.map(rate));
}
/** Rate of a repair: bytes the wiped domain held over the wall time of `strata scrub --repair`. */
export const repairMiB = (r: Maintenance['repairOne']) => (r ? r.wipedBytes / MIB / r.wallSeconds : NaN);

/** The erasure lanes every target table has rows for, measured in this run or not. */
const EC_LANES = ['ec 4+2', 'ec 10+4'];
/** Measured cell and verdict of a row whose figure this run did not take. */
const NOT_RUN = ['not run', 'n/a'];

/** The issue's targets, one row each — every row present in every run, with what was
 * measured and PASS/MISS, or "not run" when the lane or phase was left out (--only). */
export function targetsTable(res: ErasureResults): string {
  const rows: string[][] = [];
  const big = `${fmt(res.bigSize / MIB)} MiB`;
  const put104 = bigMiB(res.bigPut.get('ec 10+4'));
  const get104 = bigMiB(res.bigGet.get('ec 10+4'));
  const measured = (ok: boolean, text: string, pass: boolean) => (ok ? [text, verdict(pass)] : NOT_RUN);
  rows.push([`${big} PUT, (10,4), 1 client`, '>= 300 MiB/s', ...measured(res.bigPut.has('ec 10+4'), `${fmt(put104)} MiB/s`, put104 >= 300)]);
  rows.push([`${big} GET, (10,4), 1 client`, '>= 400 MiB/s', ...measured(res.bigGet.has('ec 10+4'), `${fmt(get104)} MiB/s`, get104 >= 400)]);
  for (const lane of EC_LANES) {
    const d = bigMiB(res.degradedGet.get(lane));
    rows.push([`${big} degraded GET, ${lane}, m domains wiped`, '>= 250 MiB/s', ...measured(res.degradedGet.has(lane), `${fmt(d)} MiB/s`, d >= 250)]);
  }
  for (const lane of EC_LANES) {
    const r = res.maintenance.get(lane)?.repairOne;
    const rate = repairMiB(r);
    rows.push([
      r ? `repair one lost domain (${fmt(r.wipedBytes / MIB)} MiB), ${lane}` : `repair one lost domain, ${lane}`,
      '>= 200 MiB/s',
      ...measured(!!r, r ? `${fmt(rate)} MiB/s (${fmt(r.wallSeconds, 1)} s)${runsRange(res.maintenance.get(lane)?.repairOneRuns)}` : '', rate >= 200),
    ]);
    const floors = (res.maintenance.get(lane)?.repairOneRuns ?? []).filter((x) => x.floor);
    if (floors.length)
      rows.push([
        `reference: disk floor of that repair, ${lane} (its bytes read and written, O_DIRECT, nothing else; right after each run)`,
        'none',
        `${medianRange(floors.map((x) => x.wipedBytes / MIB / x.floor!.seconds))} MiB/s of the domain's bytes; the repair ran at ${medianRange(floors.map((x) => (100 * x.floor!.seconds) / x.wallSeconds))}% of it (per run)`,
        'reference',
      ]);
  }
  for (const lane of EC_LANES) {
    for (const [op, base, runs] of [
      ['PUT', res.smallPut.get('fs'), res.smallPut.get(lane)],
      ['GET', res.smallGet.get('fs'), res.smallGet.get(lane)],
    ] as const) {
      const ops = loopOps(runs);
      const fsOps = loopOps(base);
      const shares = runs && base ? pairedShares(runs, base).map((x) => 100 * x) : [];
      const share = shares.length ? median(shares) / 100 : NaN;
      const text = `${medianRange(shares)}% (median of ${shares.length} paired runs; medians ${fmt(ops)} vs ${fmt(fsOps)} ops/s = ${fmt((100 * ops) / fsOps)}%)`;
      rows.push([`4 KiB ${op}, ${lane} vs fs, 16 conn`, '>= 80% of fs', ...measured(shares.length > 0, text, share >= 0.8)]);
    }
  }
  for (const lane of EC_LANES) {
    const m = res.maintenance.get(lane);
    const done = m !== undefined && (m.verifyCode !== undefined || m.afterDamage !== undefined);
    const ok = m?.verifyCode === 0 && m?.afterDamage === 0;
    rows.push([
      `after repair, ${lane}: verify clean, scrub finds no damage`,
      'clean',
      ...measured(done, `verify exit ${m?.verifyCode ?? 'n/a'}, ${m?.afterDamage ?? 'n/a'} damaged`, ok),
    ]);
  }
  for (const c of res.checks) rows.push([`byte-exact: ${c.label}`, 'equal', c.ok ? 'equal' : 'DIFFERENT', verdict(c.ok)]);
  return table(['Target', 'Goal', 'Measured (medians)', ''], rows, ['l', 'l', 'l', 'l']);
}

/** Large-object table: MiB/s per run (median, range) and server CPU per request. */
export function bigTable(res: ErasureResults): string {
  const rows: string[][] = [];
  for (const [op, map] of [
    ['PUT', res.bigPut],
    ['GET', res.bigGet],
    ['degraded GET', res.degradedGet],
  ] as const) {
    for (const [lane, runs] of map) {
      const n = runs.reduce((a, r) => a + r.n, 0);
      const cpu = runs.reduce((a, r) => a + r.serverCpuSeconds, 0);
      const secs = runs.reduce((a, r) => a + r.seconds, 0);
      rows.push([
        lane,
        op,
        String(runs.length),
        String(n),
        medianRange(runs.map(mibPerSecond)),
        medianRange(runs.map((r) => (1000 * r.seconds) / r.n)),
        n ? fmt((cpu * 1000) / n) : 'n/a',
        secs ? fmt((100 * cpu) / secs) : 'n/a',
      ]);
    }
  }
  return table(['Lane', `${fmt(res.bigSize / MIB)} MiB op`, 'runs', 'n', 'MiB/s', 'ms/request', 'server CPU ms/request', 'server CPU %'], rows, ['l', 'l']);
}

/** Small-object table: ops/s per run (median, range), latency, errors, server CPU per op. */
export function smallTable(res: ErasureResults): string {
  const rows: string[][] = [];
  for (const [op, map] of [
    ['PUT', res.smallPut],
    ['GET', res.smallGet],
  ] as const) {
    for (const [lane, runs] of map) {
      const all = runs.flatMap((r) => r.latenciesMs);
      const n = runs.reduce((a, r) => a + r.n, 0);
      const cpu = runs.reduce((a, r) => a + r.serverCpuSeconds, 0);
      // Commit counters over every run of the row (a run without them leaves the row n/a).
      const counted = runs.every((r) => r.commits) ? runs.map((r) => r.commits!) : [];
      const sum = (f: (c: NonNullable<SmallRun['commits']>) => number) => counted.reduce((a, c) => a + f(c), 0);
      const commits = sum((c) => c.commits);
      const appends = sum((c) => c.appends);
      rows.push([
        lane,
        op,
        String(runs.length),
        String(n),
        medianRange(runs.map((r) => r.n / r.seconds)),
        fmt(percentile(all, 50), 2),
        fmt(percentile(all, 99), 2),
        String(runs.reduce((a, r) => a + r.errors, 0)),
        n ? fmt((cpu * 1000) / n, 3) : 'n/a',
        n ? fmt(runs.reduce((a, r) => a + r.serverSwitches, 0) / n, 2) : 'n/a',
        commits ? fmt(sum((c) => c.operations) / commits, 1) : 'n/a',
        appends ? fmt((sum((c) => c.appendSeconds) * 1000) / appends, 2) : 'n/a',
      ]);
    }
  }
  return table(
    ['Lane', '4 KiB op, 16 conn', 'runs', 'n', 'ops/s', 'p50 ms', 'p99 ms', 'errors', 'server CPU ms/op', 'server context switches/op', 'ops/commit', 'commit log append, mean ms'],
    rows,
    ['l', 'l']
  );
}

/** Scrub and repair table, one row per maintenance run. */
export function maintenanceTable(res: ErasureResults): string {
  const rows: string[][] = [];
  const row = (lane: string, what: string, r: ScrubRun, bytes: number, extra: string) =>
    rows.push([
      lane,
      what,
      fmt(r.report.blobs),
      fmt(bytes / MIB),
      fmt(r.wallSeconds, 2),
      fmt(r.report.ms / 1000, 2),
      fmt(bytes / MIB / r.wallSeconds),
      fmt(r.report.repairedFragments),
      fmt(r.report.repairBytes / MIB),
      String(r.report.lost.length),
      extra,
    ]);
  const floorRow = (lane: string, i: number, r: RepairRun, f: FloorRun) =>
    rows.push([
      lane,
      `disk floor after run ${i + 1}: its bytes read and written, O_DIRECT, nothing else`,
      '',
      fmt(r.wipedBytes / MIB),
      fmt(f.seconds, 2),
      '',
      fmt(r.wipedBytes / MIB / f.seconds),
      '',
      '',
      '',
      `read ${fmt(f.readBytes / MIB)} MiB (${fmt(f.readBytes / MIB / f.seconds)} MiB/s) while writing ${fmt(f.writeBytes / MIB)} MiB; the repair took ${fmt(r.wallSeconds / f.seconds, 2)}x as long`,
    ]);
  for (const [lane, m] of res.maintenance) {
    if (m.repairM) row(lane, 'repair after m domains wiped', m.repairM, m.repairM.wipedBytes, `${fmt(m.repairM.wipedBytes / MIB)} MiB wiped`);
    if (m.scrub) row(lane, 'scrub (verify only), healthy', m.scrub, m.scrub.report.bytes, damageText(m.scrub.report.damagedByDomain));
    for (const [i, r] of (m.repairOneRuns ?? (m.repairOne ? [m.repairOne] : [])).entries()) {
      const last = i === (m.repairOneRuns?.length ?? 1) - 1;
      const after = last && m.repairOne ? `, holds ${fmt(m.repairOne.restoredBytes / MIB)} MiB after` : '';
      const median = m.repairOneRuns && m.repairOneRuns.length > 1 && r.wallSeconds === m.repairOne?.wallSeconds ? ' (the median run)' : '';
      row(lane, `repair one wiped domain (--missing-only)${m.repairOneRuns && m.repairOneRuns.length > 1 ? `, run ${i + 1}` : ''}${median}`, r, r.wipedBytes, `domain held ${fmt(r.wipedBytes / MIB)} MiB${after}; ${cpuText(r, r.wipedBytes)}`);
      if (r.floor) floorRow(lane, i, r, r.floor);
    }
  }
  return table(
    ['Lane', 'Run', 'blobs', 'MiB', 'wall s', 'report s', 'MiB/s (wall)', 'fragments rebuilt', 'MiB rebuilt', 'lost', 'notes'],
    rows,
    ['l', 'l']
  );
}

/** ", median of N runs: min–max MiB/s" when a repair ran more than once. */
function runsRange(runs: Maintenance['repairOneRuns']): string {
  if (!runs || runs.length < 2) return '';
  const rates = runs.map((r) => r.wipedBytes / MIB / r.wallSeconds);
  return `, median of ${runs.length} runs: ${fmt(Math.min(...rates))}–${fmt(Math.max(...rates))} MiB/s`;
}

/** The repair's CPU per MiB rebuilt and the rate that CPU alone allows on this machine's cores
 * (the ceiling the wall-clock rate can approach on an idle machine). */
function cpuText(r: ScrubRun, bytes: number): string {
  if (!(r.cpuSeconds > 0)) return 'CPU not measured';
  const msPerMiB = (r.cpuSeconds * 1000) / (bytes / MIB);
  const cores = availableParallelism();
  return `CPU ${fmt(r.cpuSeconds, 1)} s = ${fmt(msPerMiB, 1)} ms/MiB: at most ${fmt((cores * 1000) / msPerMiB)} MiB/s on ${cores} cores`;
}

function damageText(byDomain: Record<string, number>): string {
  const hit = Object.entries(byDomain).filter(([, n]) => n > 0);
  return hit.length ? `damage: ${hit.map(([d, n]) => `${d} ${n}`).join(', ')}` : 'no damage';
}

/** The GFS federation figures the issue cites, quoted (not measured here). */
export function gfsQuote(): string {
  return [
    '### Reference: GFS federation (quoted, not measured here)',
    '',
    'Quoted from the GFS federation prototype results (`shared/reference/seeds/gfs-erasure-federation-results.txt`, cited by issue 11; a 14-core Apple-silicon host, JVM, all nodes on loopback; different machine and software, so not comparable figure for figure):',
    '',
    '> datapath_encode_1thread  k=10, m=4, block=512 KiB  mb_s=308.5',
    '>',
    '> Durability data path: encode 233–291 MB/s, restore 254–393 MB/s for 256 MiB–1 GiB objects',
    '>',
    '> 256 MiB (10,4) 512 KiB: encode 248.5 MB/s, restore 277.7 MB/s, detect+repair 2.11 s (job 1.852 s)',
  ].join('\n');
}
