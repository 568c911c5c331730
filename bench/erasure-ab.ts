/**
 * @module `node dist/bench/erasure-ab.js --base=<dist dir>`: this build against another one on
 * the same erasure GETs, paired in time, for a change whose effect is smaller than what this
 * shared machine's load does to a run (bench:erasure's lanes run minutes apart).
 *
 * Two `strata serve --erasure k+m` processes, one per build, each over its own directory
 * domains, each holding n + 1 objects of 64 MiB (--mib). With --degraded (the default) both are
 * restarted with the directories of m domains emptied, so every GET rebuilds from parity, and
 * each timed GET reads an object of its own (as bench:erasure's degraded row); with --healthy
 * one object is read again and again. After one untimed GET each, the GETs alternate between
 * the builds (base first in odd rounds, this build first in even ones), so both see the same
 * moments of the machine. Reported: medians of MiB/s and of server CPU per GET (from /proc),
 * and the median of the per-round ratios (base time / this build's time). Bytes are checked
 * (length) on every GET. Prints markdown; writes nothing.
 *
 * Flags: --base=<dist dir of the other build> (required), --ec=k+m (default 10+4),
 *        --n=<timed GETs per build> (default 12), --healthy, --mib=<object size> (default 64)
 */
import { randomFillSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'undici';
import { bigGetsOnce, bigPuts, createBucket } from './erasure-measure.js';
import { pool } from './http-load.js';
import { startTarget, type Target } from './http-targets.js';
import { CLI } from './erasure-lanes.js';
import { fmt, median } from './lib/stats.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const base = flag('base');
if (!base) throw new Error('--base=<dist dir of the build to compare with> is required');
const [k, m] = (flag('ec') ?? '10+4').split('+').map(Number) as [number, number];
if (!(k >= 1 && m >= 1)) throw new Error('--ec=k+m');
const n = Number(flag('n') ?? 12);
const degraded = !args.includes('--healthy');
const MIB = 2 ** 20;
const SIZE = Number(flag('mib') ?? 64) * MIB;

interface Side {
  label: string;
  cli: string;
  root: string;
  target: Target;
  pool: Pool;
  ms: number[];
  cpuMs: number[];
}

const log = (s: string) => process.stderr.write(`[erasure-ab] ${s}\n`);

async function side(label: string, cli: string, body: Uint8Array): Promise<Side> {
  const root = mkdtempSync(join(tmpdir(), `bench-erasure-ab-${label}-`));
  for (let i = 1; i <= k + m; i++) mkdirSync(join(root, `disk${i}`));
  const data = join(root, `disk{1...${k + m}}`);
  const start = () => startTarget('strata', { dataDir: data, args: ['--erasure', `${k}+${m}`], cli });
  let target = await start();
  let p = pool(target, 1);
  await createBucket(p, target);
  for (let i = 0; i <= n; i++) await bigPuts(p, target, body, 1, `o${i}`, 1);
  await p.close();
  await target.stop();
  if (degraded) {
    for (let i = 1; i <= m; i++) {
      rmSync(join(root, `disk${i}`), { recursive: true, force: true });
      mkdirSync(join(root, `disk${i}`));
    }
  }
  target = await start();
  p = pool(target, 1);
  await bigGetsOnce(p, target, ['o0-0'], SIZE); // untimed: warms the process up
  log(`${label}: ${cli} on ${data}`);
  return { label, cli, root, target, pool: p, ms: [], cpuMs: [] };
}

const body = randomFillSync(new Uint8Array(SIZE));
const sides = [await side('base', join(base, 'src/cli/main.js'), body), await side('this build', CLI, body)];
try {
  for (let round = 1; round <= n; round++) {
    for (const s of round % 2 ? sides : [...sides].reverse()) {
      const r = await bigGetsOnce(s.pool, s.target, [degraded ? `o${round}-0` : 'o0-0'], SIZE);
      s.ms.push(r.seconds * 1000);
      s.cpuMs.push(r.serverCpuSeconds * 1000);
    }
  }
} finally {
  for (const s of sides) {
    await s.pool.close();
    await s.target.stop();
    rmSync(s.root, { recursive: true, force: true });
  }
}
const [b, t] = sides as [Side, Side];
const ratios = t.ms.map((x, i) => b.ms[i]! / x);
const what = `${SIZE / MIB} MiB ${degraded ? `degraded GET (m = ${m} domains emptied, each GET a new object)` : 'GET (one object)'}, ec ${k}+${m}`;
process.stdout.write(
  [
    `### ${what}: this build against \`${base}\`, ${n} GETs each, alternating`,
    '',
    '| build | MiB/s (median) | ms per GET (min–max) | server CPU ms per GET (median) |',
    '| --- | --: | --: | --: |',
    ...sides.map((s) => `| ${s.label} | ${fmt(SIZE / MIB / (median(s.ms) / 1000))} | ${fmt(median(s.ms))} (${fmt(Math.min(...s.ms))}–${fmt(Math.max(...s.ms))}) | ${fmt(median(s.cpuMs))} |`),
    '',
    `Per round, base time / this build's time: median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}).`,
    '',
  ].join('\n')
);
