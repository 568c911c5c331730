/**
 * @module `npm run bench:engine`: the storage engine on the fs provider (issue 3). Write
 * amplification of small workloads, a million-object scale run (writer and readers in
 * their own processes), cold reads, and small durable puts; every figure next to its
 * target and rs3's. Prints markdown and rewrites the `bench:engine` section of
 * bench/RESULTS.md.
 *
 * Flags: --quick (small N, under a minute, for smoke tests), --no-write (print only),
 * --only=amp,scale,cold,durable (a subset; implies nothing is written). Temp
 * repositories go under BENCH_TMPDIR (default: the OS temp dir) and are removed.
 */
import { benchAmplification } from './engine-amplification.js';
import { benchColdRead } from './engine-cold-read.js';
import { benchDurable } from './engine-durable.js';
import { argValue } from './engine-fixture.js';
import { benchScale } from './engine-scale.js';
import { machineLine } from './lib/machine.js';
import { writeSection } from './lib/results.js';

const quick = process.argv.includes('--quick');
const only = argValue('only')?.split(',');
const write = !process.argv.includes('--no-write') && !only;

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

const body = [
  '## Storage engine (`npm run bench:engine`)',
  '',
  machineLine(),
  quick ? '\n**Quick run: small N, not for publication.**' : '',
  '',
  'Targets are from issue 3; rs3 figures from its performance evidence (Small-write budgets; Local scale and path-length costs).',
  '',
  parts.join('\n\n'),
  '',
  `Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
].join('\n');

console.log(body);
if (write) {
  writeSection('bench:engine', body);
  log('wrote bench/RESULTS.md');
}
