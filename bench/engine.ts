/**
 * @module `npm run bench:engine`: the storage engine on the fs provider (issue 3). Write
 * amplification of small workloads, a million-object scale run (writer and readers in
 * their own processes), cold reads, and small durable puts; every figure next to its
 * target and rs3's. Prints markdown and rewrites the `bench:engine` section of
 * bench/RESULTS.md.
 *
 * Flags: --quick (small N, under a minute, for smoke tests), --no-write (print only),
 * --only=amp,scale,cold,durable,checkpoint (a subset; the engine section is then not written).
 * The checkpoint lane (PUT latency while checkpoints and compactions run, issue 10) keeps its
 * own section, `bench:engine-checkpoint`, written whenever it runs (unless --no-write or
 * --quick), so `--only=checkpoint` refreshes it alone. Temp
 * repositories go under BENCH_TMPDIR (default: the OS temp dir) and are removed.
 */
import { benchAmplification } from './engine-amplification.js';
import { benchColdRead } from './engine-cold-read.js';
import { benchDurable } from './engine-durable.js';
import { benchCheckpoint } from './engine-checkpoint.js';
import { argValue } from './engine-fixture.js';
import { benchScale } from './engine-scale.js';
import { machineLine } from './lib/machine.js';
import { writeSection } from './lib/results.js';

const quick = process.argv.includes('--quick');
const only = argValue('only')?.split(',');
const noWrite = process.argv.includes('--no-write');
const write = !noWrite && !only;

const started = Date.now();
const log = (msg: string) => process.stderr.write(`[bench:engine +${((Date.now() - started) / 1000).toFixed(0)}s] ${msg}\n`);

const SECTIONS: [string, () => Promise<string>][] = [
  ['amp', () => benchAmplification({ quick, log })],
  ['scale', () => benchScale({ quick, log })],
  ['cold', () => benchColdRead({ log })],
  ['durable', () => benchDurable({ quick, log })],
];

const parts: string[] = [];
for (const [name, run] of SECTIONS) {
  if (!only || only.includes(name)) parts.push(await run());
}

/** Where the rs3 columns come from: quoted from rs3's own report, never measured here. */
const RS3_QUOTE =
  'Targets are from issue 3. The "rs3 (quoted)" columns are quoted, not measured here: from rs3\'s historical performance evidence (`shared/reference/seeds/rs3-performance-evidence.txt`, records of 2026-09-08), "Small-write budgets" (candidate 43c6914, 3 samples, 64 objects, 32 B paths, counters after genesis) and "Local scale and path-length costs" (repository-level Dev-profile workloads without HTTP, 512 B values, 4,096-object batches at 1M; measured processes on CPUs 4-7 of a shared host, 16 GiB limit). Different machine, build and batch shapes: read them as context, not as a same-run comparison.';

const body = [
  '## Storage engine (`npm run bench:engine`)',
  '',
  machineLine(),
  quick ? '\n**Quick run: small N, not for publication.**' : '',
  '',
  RS3_QUOTE,
  '',
  parts.join('\n\n'),
  '',
  `Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
].join('\n');

if (parts.length > 0) console.log(body);
if (write) {
  writeSection('bench:engine', body);
  log('wrote bench/RESULTS.md');
}

if (!only || only.includes('checkpoint')) {
  const t = Date.now();
  const lane = await benchCheckpoint({ quick, log });
  const section = [
    '## Storage engine: checkpoints off the write path (`npm run bench:engine -- --only=checkpoint`)',
    '',
    machineLine(),
    quick ? '\n**Quick run: small N, not for publication.**' : '',
    '',
    'Target from issue 10: p99.9 PUT latency ≤ 50 ms while checkpoints and compactions run on a 1,000,000-object bucket.',
    '',
    lane,
    '',
    `Whole lane: ${((Date.now() - t) / 1000).toFixed(0)} s.`,
  ].join('\n');
  console.log(section);
  if (!noWrite && !quick) {
    writeSection('bench:engine-checkpoint', section);
    log('wrote the bench:engine-checkpoint section of bench/RESULTS.md');
  }
}
