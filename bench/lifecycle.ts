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
 * at the price of lanes competing for disk and CPU; the report says so), --save=FILE (append
 * each lane's raw result to FILE as one JSON line as soon as it is done, so a long run that is
 * stopped keeps its finished lanes), --from=FILE,... (run nothing: report the lanes saved in
 * those files, the last result of each workload winning; written to RESULTS.md unless --no-write).
 * Temp repositories go under BENCH_TMPDIR (default: the OS temp dir) and are removed.
 * Exits 1 when a lane did not complete its lifecycle.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { argValue } from './engine-fixture.js';
import { runLane, type LaneRun } from './lifecycle-lane.js';
import { renderLifecycle } from './lifecycle-report.js';
import { workloads } from './lifecycle-workload.js';
import { machineLine, packageVersion } from './lib/machine.js';
import { writeSection } from './lib/results.js';

const quick = process.argv.includes('--quick');
const only = argValue('only')?.split(',');
const from = argValue('from')?.split(',');
const save = argValue('save');
const write = !process.argv.includes('--no-write') && ((!only && !quick) || from !== undefined);

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
const order = (l: LaneRun) => [l.workload.writes, l.workload.mode === 'overwrite' ? 0 : 1];
let lanes: LaneRun[];
if (from) {
  // Saved lanes: the last line of each workload wins (a rerun replaces an earlier one).
  const byName = new Map<string, LaneRun>();
  for (const file of from) {
    for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
      const lane = JSON.parse(line) as LaneRun;
      byName.set(`${lane.workload.writes}-${lane.workload.mode}`, lane);
    }
  }
  lanes = [...byName.values()].sort((a, b) => order(a)[0]! - order(b)[0]! || order(a)[1]! - order(b)[1]!);
} else {
  const chosen = workloads(quick).filter((w) => !only || only.includes(`${w.writes}-${w.mode}`));
  lanes = new Array<LaneRun>(chosen.length);
  // Largest first, so the longest lanes start at once; results keep the workload order.
  const queue = chosen.map((w, i) => ({ w, i })).sort((a, b) => b.w.writes - a.w.writes);
  await Promise.all(
    Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const lane = await runLane(next.w, log);
        lanes[next.i] = lane;
        if (save) appendFileSync(save, `${JSON.stringify({ ...lane, jobs, revision: revision(), finishedAt: new Date().toISOString() })}\n`);
      }
    })
  );
}
type SavedLane = LaneRun & { jobs?: number; revision?: string; finishedAt?: string };
const ranTogether = Math.max(jobs, ...lanes.map((l) => (l as SavedLane).jobs ?? 1));
/** Where the lanes ran: this run, or (from saved lanes) each lane's revision and end time. */
const provenance = from
  ? `lanes run at ${[...new Set(lanes.map((l) => `${(l as SavedLane).revision ?? 'unknown revision'}`))].join(', ')}, finished ${lanes.map((l) => (l as SavedLane).finishedAt ?? '?').join(', ')}; report rendered at ${revision()}`
  : `at ${revision()}`;

const body = [
  '## Retained-history lifecycle (`npm run bench:lifecycle`)',
  '',
  `${machineLine()} · strata ${packageVersion('strata-s3')} ${provenance}`,
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
    'sees them. After each phase a further fresh process opens the repository and measures the bytes a full history ' +
    'walk reads (every version-log entry of the bucket merged from overlay and runs, each record decoded: what a ' +
    'ListObjectVersions hiding nothing reads, from a cold open) and the accounted history metadata ' +
    '(`repo.state.historyBytes`), then closes it and measures it at rest, as a stopped server leaves it: stored bytes (the ' +
    'sum of blob sizes the provider lists, and `du -s -B1` of the directory). Until 2026-12-04 every commit log segment a ' +
    'phase left stayed at its sparse 4 MiB preallocation here (the counting wrapper did not pass the segment\'s seal on), ' +
    'which the stored bytes counted. GC runs with its default `cleanBelow` (0.6).',
  '',
  ranTogether > 1 ? `Lanes ran up to ${ranTogether} at a time (\`--jobs=${ranTogether}\`): elapsed times and PUT latencies include their competition for the disk and the ${cpus().length} cores.\n` : '',
  renderLifecycle(lanes, quick),
  from ? `Longest lane: ${(Math.max(...lanes.map((l) => l.elapsedMs)) / 1000).toFixed(0)} s.` : `Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
].join('\n');

console.log(body);
if (write) {
  writeSection('bench:lifecycle', body);
  log('wrote bench/RESULTS.md');
}
if (lanes.some((l) => !l.complete)) process.exitCode = 1;
