/**
 * @module `npm run bench:http`: the HTTP sweep (4 KiB .. 64 MiB PUT/GET at 1 and 16
 * connections) against Strata, s3rver and a trivial Hono server in the same run, then
 * LIST on 100,000- and 1,000,000-object buckets. Prints markdown and rewrites the
 * `bench:http` section of bench/RESULTS.md.
 *
 * Flags: --quick (short runs, small buckets), --no-write, --skip-list, --skip-sweep,
 *        --targets=strata,s3rver,trivial-hono
 */
import { startTarget, type Target, type TargetName } from './http-targets.js';
import { cellOf, medianMiB, medianOps, medianP50, renderSweep, sweep, type CellResult } from './http-sweep.js';
import { listBench, renderList, type ListStats } from './http-list.js';
import { machineLine } from './lib/machine.js';
import { writeSection } from './lib/results.js';
import { table } from './lib/markdown.js';
import { fmt, percentile } from './lib/stats.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const write = !args.includes('--no-write');
const names = (args.find((a) => a.startsWith('--targets='))?.slice(10).split(',') ?? ['strata', 's3rver', 'trivial-hono']) as TargetName[];
const started = Date.now();
const log = (m: string) => process.stderr.write(`[bench:http +${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);

function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}

function targetsTable(results: CellResult[], lists: ListStats[]): string {
  const K4 = 4096;
  const M8 = 8 << 20;
  const sGet16 = medianOps(cellOf(results, 'strata', K4, 16, 'GET'));
  const rGet16 = medianOps(cellOf(results, 's3rver', K4, 16, 'GET'));
  const tGet16 = medianOps(cellOf(results, 'trivial-hono', K4, 16, 'GET'));
  const p50 = medianP50(cellOf(results, 'strata', K4, 1, 'GET'));
  const put16 = medianOps(cellOf(results, 'strata', K4, 16, 'PUT'));
  const put8 = medianMiB(cellOf(results, 'strata', M8, 1, 'PUT'));
  const get8 = medianMiB(cellOf(results, 'strata', M8, 1, 'GET'));
  const rows: string[][] = [
    ['4 KiB GET, 16 conn, vs s3rver', '>= 10x', `${fmt(sGet16)} vs ${fmt(rGet16)} ops/s = ${fmt(sGet16 / rGet16, 1)}x`, verdict(sGet16 / rGet16 >= 10)],
    ['4 KiB GET, 16 conn, vs trivial Hono', '>= 50%', `${fmt(sGet16)} vs ${fmt(tGet16)} ops/s = ${fmt((100 * sGet16) / tGet16)}%`, verdict(sGet16 / tGet16 >= 0.5)],
    ['4 KiB GET p50, 1 conn', '<= 0.5 ms', `${fmt(p50, 3)} ms`, verdict(p50 <= 0.5)],
    ['4 KiB PUT (durable), 16 conn', '>= 5,000/s', `${fmt(put16)} ops/s`, verdict(put16 >= 5000)],
    ['8 MiB PUT, 1 conn', '>= 250 MiB/s', `${fmt(put8)} MiB/s`, verdict(put8 >= 250)],
    ['8 MiB GET, 1 conn', '>= 500 MiB/s', `${fmt(get8)} MiB/s`, verdict(get8 >= 500)],
  ];
  // The issue's LIST targets are for a 100,000-object bucket, plus a clean full pass over
  // 1,000,000; the other bucket sizes are reported as information ('—').
  for (const l of lists) {
    const targeted = l.objects === 100_000 || l.objects < 100_000;
    const p50 = (i: number) => percentile(l.cases[i]!.ms, 50);
    const page = p50(0);
    const delim = Math.max(p50(2), p50(3));
    rows.push([`LIST page of 1000, ${fmt(l.objects)} objects`, targeted ? '<= 5 ms' : '—', `${fmt(page, 2)} ms`, targeted ? verdict(page <= 5) : '']);
    rows.push([`delimiter LIST, ${fmt(l.objects)} objects`, targeted ? '<= 10 ms' : '—', `${fmt(delim, 2)} ms (worst of root / prefix)`, targeted ? verdict(delim <= 10) : '']);
    rows.push([
      `full pass, ${fmt(l.objects)} objects`,
      '0 dup, 0 missing',
      `${fmt(l.pass.keys)} keys, ${l.pass.dup} dup, ${l.pass.missing} missing`,
      verdict(l.pass.dup === 0 && l.pass.missing === 0 && l.pass.keys === l.objects),
    ]);
  }
  return table(['Target', 'Goal', 'Measured (medians)', ''], rows, ['l', 'l', 'l', 'l']);
}

async function main(): Promise<void> {
  let results: CellResult[] = [];
  if (!args.includes('--skip-sweep')) {
    const targets: Target[] = [];
    try {
      for (const n of names) targets.push(await startTarget(n));
      log(`targets: ${targets.map((t) => `${t.name} ${t.url}`).join(', ')}`);
      results = await sweep(targets, { runs: quick ? 1 : 3, quick, log });
    } finally {
      for (const t of targets) await t.stop();
    }
  }
  const lists: ListStats[] = [];
  if (!args.includes('--skip-list')) {
    for (const n of quick ? [10_000] : [100_000, 1_000_000]) {
      log(`LIST bench with ${n} objects`);
      lists.push(await listBench(n, { samples: quick ? 5 : 100, log }));
    }
  }
  const body = [
    '## HTTP (`npm run bench:http`)',
    '',
    machineLine(['hono', '@hono/node-server', 'undici', 's3rver']),
    '',
    'Load generator: undici Pool, keep-alive, SigV4 with UNSIGNED-PAYLOAD, one closed-loop worker per connection, in the same 2-core machine as the server (so the generator takes CPU from it). Each server runs in its own process; server CPU is read from /proc. Runs are interleaved across targets. p50 shows the median of the per-run p50s (min–max); p95/p99 are over all samples.',
    quick ? '\n**Quick run: short samples, not for publication.**' : '',
    '',
    results.length ? renderTargetsIntro() : '',
    results.length || lists.length ? targetsTable(results, lists) : '',
    '',
    results.length ? `### PUT/GET sweep\n\n${renderSweep(results)}` : '',
    '',
    ...lists.map((l) => `### LIST, ${fmt(l.objects)} objects\n\n${renderList(l)}\n`),
  ].join('\n');
  console.log(body);
  if (write) {
    writeSection('bench:http', body);
    log('wrote bench/RESULTS.md');
  }
}

function renderTargetsIntro(): string {
  return '### Targets\n';
}

await main();
