/**
 * @module The PUT/GET sweep: sizes 4 KiB .. 64 MiB, 1 and 16 connections, every target in
 * the same run, runs interleaved across targets so that machine noise hits all of them.
 */
import { closedLoop, pool, send, type RunResult } from './http-load.js';
import type { Target, TargetName } from './http-targets.js';
import { fmt, median, medianRange, percentile } from './lib/stats.js';
import { table } from './lib/markdown.js';

export interface SweepCell {
  size: number;
  conc: number;
  op: 'PUT' | 'GET';
}

export interface CellResult extends SweepCell {
  target: TargetName;
  runs: RunResult[];
}

export const SIZES: { size: number; conc: number[]; ms: number }[] = [
  { size: 4 * 1024, conc: [1, 16], ms: 2500 },
  { size: 64 * 1024, conc: [1, 16], ms: 2000 },
  { size: 1024 * 1024, conc: [1, 16], ms: 2000 },
  { size: 8 * 1024 * 1024, conc: [1], ms: 3000 },
  { size: 64 * 1024 * 1024, conc: [1], ms: 4000 },
];

export const sizeLabel = (n: number) => (n >= 1 << 20 ? `${n >> 20} MiB` : `${n >> 10} KiB`);
const BUCKET = 'bench';

export async function sweep(targets: Target[], opts: { runs: number; quick: boolean; log: (m: string) => void }): Promise<CellResult[]> {
  const results: CellResult[] = [];
  const pools = new Map(targets.map((t) => [t.name, pool(t, 16)]));
  for (const t of targets) {
    if (t.name !== 'trivial-hono') await send(pools.get(t.name)!, t, 'PUT', `/${BUCKET}`);
  }
  for (const { size, conc: concs, ms } of SIZES) {
    const body = Buffer.alloc(size, 0x5a);
    for (const conc of concs) {
      for (const op of ['PUT', 'GET'] as const) {
        const cells = new Map(targets.map((t) => [t.name, { target: t.name, size, conc, op, runs: [] as RunResult[] }]));
        for (let run = 0; run < opts.runs; run++) {
          for (const t of targets) {
            const p = pools.get(t.name)!;
            // Keys end in -<size> so that the trivial server knows what to answer.
            const key = (w: number, i: number) => `/${BUCKET}/obj-${w}-${op === 'PUT' ? i % 4 : 0}-${size}`;
            if (op === 'GET' && run === 0) {
              for (let w = 0; w < conc; w++) await send(p, t, 'PUT', key(w, 0), body);
            }
            const r = await closedLoop(t, conc, opts.quick ? Math.min(ms, 400) : ms, (w, i) =>
              op === 'PUT' ? send(p, t, 'PUT', key(w, i), body) : send(p, t, 'GET', key(w, i))
            );
            cells.get(t.name)!.runs.push(r);
            opts.log(`${t.name} ${op} ${sizeLabel(size)} x${conc} run ${run + 1}: ${fmt(r.n / r.seconds)} ops/s, ${r.errors} errors${r.firstError ? ` (${r.firstError})` : ''}`);
          }
        }
        results.push(...cells.values());
      }
    }
  }
  await Promise.all([...pools.values()].map((p) => p.close()));
  return results;
}

export function renderSweep(results: CellResult[]): string {
  const rows = results.map((c) => {
    const all = c.runs.flatMap((r) => r.latenciesMs);
    const n = c.runs.reduce((a, r) => a + r.n, 0);
    const opsPerRun = c.runs.map((r) => r.n / r.seconds);
    const mibPerRun = c.runs.map((r) => (r.n * c.size) / r.seconds / 2 ** 20);
    const cpu = c.runs.reduce((a, r) => a + r.serverCpuSeconds, 0);
    const errors = c.runs.reduce((a, r) => a + r.errors, 0);
    return [
      c.target,
      String(c.conc),
      sizeLabel(c.size),
      c.op,
      String(c.runs.length),
      String(n),
      medianRange(c.runs.map((r) => percentile(r.latenciesMs, 50)), 2),
      fmt(percentile(all, 95), 2),
      fmt(percentile(all, 99), 2),
      medianRange(opsPerRun),
      fmt(median(mibPerRun), 1),
      String(errors),
      n ? fmt((cpu * 1000) / n, 3) : 'n/a',
    ];
  });
  return table(
    ['Target', 'Conc', 'Size', 'Op', 'runs', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'ops/s', 'MiB/s', 'errors', 'server CPU ms/op'],
    rows,
    ['l', 'r', 'l', 'l']
  );
}

/** The cell of `target` for (size, conc, op), if measured. */
export function cellOf(results: CellResult[], target: TargetName, size: number, conc: number, op: 'PUT' | 'GET'): CellResult | undefined {
  return results.find((c) => c.target === target && c.size === size && c.conc === conc && c.op === op);
}

export const medianOps = (c: CellResult | undefined) => (c ? median(c.runs.map((r) => r.n / r.seconds)) : NaN);
export const medianP50 = (c: CellResult | undefined) => (c ? median(c.runs.map((r) => percentile(r.latenciesMs, 50))) : NaN);
export const medianMiB = (c: CellResult | undefined) => (c ? median(c.runs.map((r) => (r.n * c.size) / r.seconds / 2 ** 20)) : NaN);
