/**
 * @module `npm run bench:lifecycle`: rs3's retained-history lanes (issue 10) on the fs provider.
 * Four workloads — 10,000 and 100,000 serial PUTs of 512 B, overwrite mode (one key) and append
 * mode (distinct keys) — each taken through write, delete the latest value, reopen in a fresh
 * process, restore three sampled points, expire everything, GC and verify (lifecycle-lane.ts),
 * every phase in its own process. Prints markdown and rewrites the `bench:lifecycle` section of
 * bench/RESULTS.md.
 *
 * Flags: --quick (300 and 600 writes: a smoke run; nothing is written to RESULTS.md),
 * --no-write (print only), --only=10000-append,... (a subset of lanes; nothing is written),
 * --jobs=N (run N lanes at once, largest first: shorter wall time on a machine with idle cores,
 * at the price of lanes competing for disk and CPU; the report says so).
 * Temp repositories go under BENCH_TMPDIR (default: the OS temp dir) and are removed.
 * Exits 1 when a lane did not complete its lifecycle.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { argValue } from './engine-fixture.js';
import { runLane, type LaneRun } from './lifecycle-lane.js';
import { renderLifecycle } from './lifecycle-report.js';
import { workloads } from './lifecycle-workload.js';
import { machineLine, packageVersion } from './lib/machine.js';
import { writeSection } from './lib/results.js';

const quick = process.argv.includes('--quick');
const only = argValue('only')?.split(',');
const write = !process.argv.includes('--no-write') && !only && !quick;

const started = Date.now();
const log = (msg: string) => process.stderr.write(`[bench:lifecycle +${((Date.now() - started) / 1000).toFixed(0)}s] ${msg}\n`);

/** The commit the bench ran on (and whether the tree had changes), for the results. */
function revision(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown revision';
  }
}

const jobs = Math.max(1, Number(argValue('jobs') ?? 1) || 1);
const chosen = workloads(quick).filter((w) => !only || only.includes(`${w.writes}-${w.mode}`));
const lanes: LaneRun[] = new Array<LaneRun>(chosen.length);
// Largest first, so the longest lanes start at once; results keep the workload order.
const queue = chosen.map((w, i) => ({ w, i })).sort((a, b) => b.w.writes - a.w.writes);
await Promise.all(
  Array.from({ length: Math.min(jobs, queue.length) }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) lanes[next.i] = await runLane(next.w, log);
  })
);

const body = [
  '## Retained-history lifecycle (`npm run bench:lifecycle`)',
  '',
  `${machineLine()} · strata ${packageVersion('strata-s3')} at ${revision()}`,
  quick ? '\n**Quick run: small workloads, not for publication.**' : '',
  '',
  'Targets are from issue 10. Each workload runs in a new fs repository: serial PUTs of 512 B into one bucket that never ' +
    'enables versioning (every write is history all the same), then: delete the latest value and checkpoint; reopen in a ' +
    'fresh process; restore the bucket to three sampled points (after a third of the writes, after two thirds, and just ' +
    'before the delete — so the last restore undoes the delete and every write\'s result is live at the end); expire every ' +
    'point (retention 0, `expireHistory`); GC (`runGc`, grace 0); verify (`strata verify` as a CLI process, and every ' +
    'live value read back byte-exact, with no other key listed). Every phase runs in its own process: its peak RSS, ' +
    'elapsed time and provider traffic are its own (opening the repository excluded, except in the reopen row). ' +
    '"Body bytes" are what the provider stored (puts) and returned (gets), as a counting wrapper around the fs provider ' +
    'sees them. After each phase a further fresh process measures the repository at rest: stored bytes (the sum of blob ' +
    'sizes the provider lists, and `du -s -B1` of the directory), the bytes a full history walk reads (every version-log ' +
    'entry of the bucket merged from overlay and runs, each record decoded: what a ListObjectVersions hiding nothing ' +
    'reads, from a cold open), and the accounted history metadata (`repo.state.historyBytes`).',
  '',
  jobs > 1 ? `Lanes ran ${jobs} at a time (\`--jobs=${jobs}\`): elapsed times and PUT latencies include their competition for the disk and the ${cpus().length} cores.\n` : '',
  renderLifecycle(lanes, quick),
  `Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
].join('\n');

console.log(body);
if (write) {
  writeSection('bench:lifecycle', body);
  log('wrote bench/RESULTS.md');
}
if (lanes.some((l) => !l.complete)) process.exitCode = 1;
