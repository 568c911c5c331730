/**
 * @module `npm run bench:http`: the HTTP sweep (4 KiB .. 64 MiB PUT/GET at 1 and 16
 * connections) against Strata, s3rver, the `fs` peer (a naive durable Hono file server) and a
 * trivial Hono server in the same run, then LIST on 100,000- and 1,000,000-object buckets.
 * Prints the markdown section and rewrites the `bench:http` section of bench/RESULTS.md.
 *
 * Flags:
 *   --only=<lanes>  run only these lanes (put4k, get4k, ... get64m, list100k, list1m, list10k;
 *                   groups sweep, put, get, list), merging them into the stored figures
 *                   (bench/RESULTS-http.json): a re-run lane replaces that lane for every
 *                   target, other lanes stay as stored, and the section is rendered from all
 *   --quick         one short run per cell (400 ms), LIST on 10,000 objects; lanes are marked quick
 *   --fresh         forget the stored lanes: the section shows only the lanes of this run
 *   --no-write      print only; neither RESULTS.md nor the stored figures change
 *   --targets=strata,s3rver,fs,trivial-hono
 *   --base=<dist dir> adds target strata-base: the Strata of another build, measured in the
 *                   same run (use with --no-write; its cells are not a stored target)
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startTarget, TARGET_NAMES, type Target, type TargetName } from './http-targets.js';
import { sweep } from './http-sweep.js';
import { listBench } from './http-list.js';
import { LIST_LANES, loadStored, mergeStored, saveStored, selectLanes, type StoredHttp } from './http-lanes.js';
import { renderSection } from './http-report.js';
import { writeSection } from './lib/results.js';
import { withServerMalloc } from './lib/malloc-env.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = args.includes('--quick');
const write = !args.includes('--no-write');
const names = (flag('targets')?.split(',') ?? [...TARGET_NAMES]) as TargetName[];
for (const n of names) if (!TARGET_NAMES.includes(n)) throw new Error(`unknown target '${n}'; targets: ${TARGET_NAMES.join(', ')}`);
const lanes = selectLanes(flag('only'), quick);
const started = Date.now();
const log = (m: string) => process.stderr.write(`[bench:http +${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);

async function main(): Promise<void> {
  const fresh: StoredHttp = { sweep: {}, lists: {} };
  if (lanes.sweep.length) {
    const targets: Target[] = [];
    try {
      const base = flag('base');
      if (base) targets.push({ ...(await startTarget('strata', { cli: join(base, 'src/cli/main.js') })), name: 'strata-base' as TargetName });
      for (const n of names) targets.push(await startTarget(n));
      log(`targets: ${targets.map((t) => `${t.name} ${t.url}`).join(', ')}; lanes: ${lanes.sweep.map((l) => l.name).join(', ')}`);
      fresh.sweep = await sweep(targets, lanes.sweep, { runs: quick ? 1 : 3, quick, log });
    } finally {
      for (const t of targets) await t.stop();
    }
  }
  for (const lane of lanes.lists) {
    const n = LIST_LANES[lane]!;
    log(`LIST bench with ${n} objects`);
    const stats = await listBench(n, { samples: quick ? 5 : 100, log });
    fresh.lists[lane] = { at: new Date().toISOString(), load: loadavg().map((x) => Math.round(x * 100) / 100), quick, runs: 1, targets: ['strata'], stats };
  }
  const stored = args.includes('--fresh') ? fresh : mergeStored(loadStored(), fresh);
  const body = renderSection(stored, quick);
  console.log(body);
  if (write) {
    saveStored(stored);
    writeSection('bench:http', body);
    log('wrote bench/RESULTS.md and bench/RESULTS-http.json');
  }
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

if (process.argv[1]?.endsWith('http.js')) {
  await withServerMalloc();
  await main();
}
