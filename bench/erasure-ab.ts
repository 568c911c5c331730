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
 * With --small, 4 KiB GETs instead, closed-loop on 16 connections over 16 x 1024 keys (what
 * bench:erasure's small lane reads: more bodies than the body cache holds, so the GETs read
 * the provider), in rounds of --seconds alternating as above; reported: medians of GET/s and of
 * server CPU per GET, and the median of the per-round ratios of CPU per GET (base / this
 * build). --ec=fs compares the plain fs provider (with --small or --healthy).
 *
 * Flags: --base=<dist dir of the other build> (required), --ec=k+m|fs (default 10+4),
 *        --n=<timed GETs, or --small rounds, per build> (default 12; 8 with --small),
 *        --healthy, --mib=<object size> (default 64), --small, --seconds=<per round> (default
 *        2.5), --keys=<keys per connection> (default 1024)
 */
import { randomFillSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'undici';
import { bigGetsOnce, bigPuts, createBucket, fillSmall, smallGets, SMALL_KEYS_PER_WORKER } from './erasure-measure.js';
import { pool } from './http-load.js';
import { startTarget, type Target } from './http-targets.js';
import { CLI } from './erasure-lanes.js';
import { fmt, median, medianRange } from './lib/stats.js';
import { withServerMalloc } from './lib/malloc-env.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const base = flag('base');
if (!base) throw new Error('--base=<dist dir of the build to compare with> is required');
const fsLane = flag('ec') === 'fs';
const [k, m] = fsLane ? [0, 0] : ((flag('ec') ?? '10+4').split('+').map(Number) as [number, number]);
if (!fsLane && !(k >= 1 && m >= 1)) throw new Error('--ec=k+m or --ec=fs');
const small = args.includes('--small');
const n = Number(flag('n') ?? (small ? 8 : 12));
const degraded = !small && !args.includes('--healthy');
if (fsLane && degraded) throw new Error('--ec=fs: with --small or --healthy (an fs directory has no domain to lose)');
const MIB = 2 ** 20;
const SIZE = Number(flag('mib') ?? 64) * MIB;
/** --small: connections, keys per connection, seconds per round. */
const CONNS = 16;
const KEYS = Number(flag('keys') ?? SMALL_KEYS_PER_WORKER);
const SECONDS = Number(flag('seconds') ?? 2.5);
const lane = fsLane ? 'fs' : `ec ${k}+${m}`;

interface Side {
  label: string;
  cli: string;
  root: string;
  target: Target;
  pool: Pool;
  ms: number[];
  cpuMs: number[];
  /** --small: keys written per connection; per round GET/s and server CPU ms per GET. */
  written: number[];
  ops: number[];
  cpuPerGet: number[];
}

const log = (s: string) => process.stderr.write(`[erasure-ab] ${s}\n`);

async function side(label: string, cli: string, body: Uint8Array): Promise<Side> {
  const root = mkdtempSync(join(tmpdir(), `bench-erasure-ab-${label.replace(/ /g, '-')}-`));
  for (let i = 1; i <= k + m; i++) mkdirSync(join(root, `disk${i}`));
  const data = fsLane ? join(root, 'data') : join(root, `disk{1...${k + m}}`);
  const start = () => startTarget('strata', { dataDir: data, args: fsLane ? [] : ['--erasure', `${k}+${m}`], cli });
  let target = await start();
  let p = pool(target, small ? CONNS : 1);
  await createBucket(p, target);
  if (small) {
    const written = await fillSmall(p, target, body, CONNS, KEYS);
    await smallGets(p, target, written, CONNS, 1000); // untimed: warms the process up
    log(`${label}: ${cli} on ${data}`);
    return { label, cli, root, target, pool: p, ms: [], cpuMs: [], written, ops: [], cpuPerGet: [] };
  }
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
  return { label, cli, root, target, pool: p, ms: [], cpuMs: [], written: [], ops: [], cpuPerGet: [] };
}

await withServerMalloc();
const body = randomFillSync(new Uint8Array(small ? 4096 : SIZE));
const sides = [await side('base', join(base, 'src/cli/main.js'), body), await side('this build', CLI, body)];
try {
  for (let round = 1; round <= n; round++) {
    for (const s of round % 2 ? sides : [...sides].reverse()) {
      if (small) {
        const r = await smallGets(s.pool, s.target, s.written, CONNS, SECONDS * 1000);
        if (r.errors > 0) throw new Error(`${s.label}: ${r.errors} failed GETs (${r.firstError})`);
        s.ops.push(r.n / r.seconds);
        s.cpuPerGet.push((r.serverCpuSeconds * 1000) / r.n);
        continue;
      }
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
if (small) {
  const cpuRatios = t.cpuPerGet.map((x, i) => b.cpuPerGet[i]! / x);
  const opsRatios = t.ops.map((x, i) => x / b.ops[i]!);
  process.stdout.write(
    [
      `### 4 KiB GET, ${CONNS} connections over ${CONNS} x ${KEYS} keys, ${lane}: this build against \`${base}\`, ${n} rounds of ${SECONDS} s each, alternating`,
      '',
      '| build | GET/s (median, min–max) | server CPU ms per GET (median, min–max) |',
      '| --- | --: | --: |',
      ...sides.map((s) => `| ${s.label} | ${medianRange(s.ops)} | ${medianRange(s.cpuPerGet, 3)} |`),
      '',
      `Per round, base CPU per GET / this build's: median ${medianRange(cpuRatios, 3)}; this build's GET/s / base's: median ${medianRange(opsRatios, 3)}.`,
      '',
    ].join('\n')
  );
} else {
  const ratios = t.ms.map((x, i) => b.ms[i]! / x);
  const what = `${SIZE / MIB} MiB ${degraded ? `degraded GET (m = ${m} domains emptied, each GET a new object)` : 'GET (one object)'}, ${lane}`;
  process.stdout.write(
    [
      `### ${what}: this build against \`${base}\`, ${n} GETs each, alternating`,
      '',
      '| build | MiB/s (median) | ms per GET (median, min–max) | server CPU ms per GET (median) |',
      '| --- | --: | --: | --: |',
      ...sides.map((s) => `| ${s.label} | ${fmt(SIZE / MIB / (median(s.ms) / 1000))} | ${medianRange(s.ms)} | ${fmt(median(s.cpuMs))} |`),
      '',
      `Per round, base time / this build's time: median ${medianRange(ratios, 3)}.`,
      '',
    ].join('\n')
  );
}
