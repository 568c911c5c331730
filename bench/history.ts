/**
 * @module `npm run bench:history`: versions, time and forks (issue 9), on the fs provider.
 * Each concern is a section (a function returning its markdown); a new measurement is a new
 * entry of SECTIONS. Prints markdown and rewrites the `bench:history` section of
 * bench/RESULTS.md.
 *
 * Flags: --quick (small buckets, for smoke tests; implies nothing is written), --no-write
 * (print only), --only=fork,... (a subset; implies nothing is written). Temp repositories go
 * under BENCH_TMPDIR (default: the OS temp dir) and are removed.
 */
import { argValue } from './engine-fixture.js';
import { benchFork } from './history-fork.js';
import { benchAsOf } from './history-as-of.js';
import { benchVersions } from './history-versions.js';
import { benchAmplification } from './history-amplification.js';
import { machineLine } from './lib/machine.js';
import { writeSection } from './lib/results.js';

const quick = process.argv.includes('--quick');
const only = argValue('only')?.split(',');
const write = !process.argv.includes('--no-write') && !only && !quick;

const started = Date.now();
const log = (msg: string) => process.stderr.write(`[bench:history +${((Date.now() - started) / 1000).toFixed(0)}s] ${msg}\n`);

/** The sections, in report order: [name for --only, what produces its markdown]. */
const SECTIONS: [string, () => Promise<string>][] = [
  ['fork', () => benchFork({ quick, log })],
  ['asof', () => benchAsOf({ quick, log })],
  ['versions', () => benchVersions({ quick, log })],
  ['amplification', () => benchAmplification({ quick, log })],
];

const parts: string[] = [];
for (const [name, run] of SECTIONS) {
  if (!only || only.includes(name)) parts.push(await run());
}

const body = [
  '## Versions, history and forks (`npm run bench:history`)',
  '',
  machineLine(),
  quick ? '\n**Quick run: small buckets, not for publication.**' : '',
  '',
  'Targets are from issue 9.',
  '',
  parts.join('\n\n'),
  '',
  `Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
].join('\n');

console.log(body);
if (write) {
  writeSection('bench:history', body);
  log('wrote bench/RESULTS.md');
}
