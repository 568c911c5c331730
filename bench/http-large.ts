/**
 * @module `node dist/bench/http-large.js`: large-body PUT and GET at one connection against
 * Strata started with its default logging (one JSON line per request), the measurement the
 * issue's 8 MiB targets are about. Each PUT writes a new key; GETs read the keys written,
 * round-robin (not one key from a warm cache). Reports MiB/s and the server's CPU ms per
 * request (from /proc), with the fs peer (the naive durable file server) and the trivial Hono
 * server (the HTTP ceiling) alongside.
 *
 * Flags: --sizes=8,64 (MiB) --ms=3000 (per cell) --rounds=1 (interleaved across targets)
 *        --targets=strata,strata-inline,fs,trivial-hono (strata-inline: STRATA_HASH_THREADS=0,
 *        every body hashed on the main thread, as before the hash workers)
 *        --base=<dist dir> adds target strata-base: the Strata of another build (e.g. the
 *        commit before a change, built into its own dist), measured alongside in the same run
 *        --prof=<dir> runs the Strata targets with --cpu-prof, profiles written to <dir>
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { closedLoop, pool, send } from './http-load.js';
import { startTarget, type Target, type TargetName } from './http-targets.js';
import { fmt } from './lib/stats.js';

const args = process.argv.slice(2);
const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const sizes = (arg('sizes') ?? '8,64').split(',').map((s) => Number(s) * 2 ** 20);
const ms = Number(arg('ms') ?? 3000);
const names = (arg('targets') ?? 'strata,strata-inline,fs,trivial-hono').split(',') as TargetName[];
const rounds = Number(arg('rounds') ?? 1);
const base = arg('base');
const prof = arg('prof');
const nodeArgs = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];
if (base && !names.includes('strata-base' as TargetName)) names.unshift('strata-base' as TargetName);

/** CPU seconds of the process's main thread (its task with the pid as id); USER_HZ = 100. */
function mainThreadCpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Strata (as bench:http starts it: default logging, to a file) with `env` added. */
async function startStrata(env: Record<string, string> = {}, cli?: string): Promise<Target> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return await startTarget('strata', { nodeArgs, ...(cli ? { cli } : {}) });
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

type Name = TargetName | 'strata-inline' | 'strata-base';
const rows: string[] = [];
const targets = new Map<Name, Target>();
for (const name of names as Name[]) {
  targets.set(name, name === 'strata-base' ? await startStrata({}, join(base!, 'src/cli/main.js')) : name === 'strata' ? await startStrata() : name === 'strata-inline' ? await startStrata({ STRATA_HASH_THREADS: '0' }) : await startTarget(name));
}
const pools = new Map([...targets].map(([n, t]) => [n, pool(t, 1)]));
for (const [n, t] of targets) if (n !== 'trivial-hono') await send(pools.get(n)!, t, 'PUT', '/bench');
const loads: number[] = [];
for (const size of sizes) {
  const body = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) body.writeUInt32LE((i * 2654435761) >>> 0, i);
  // Rounds interleave the targets, so that machine noise hits all of them alike.
  const cells = new Map<string, { n: number; seconds: number; cpu: number; main: number; errors: number; firstError?: string }>();
  for (let round = 0; round < rounds; round++) {
    for (const [name, t] of targets) {
      const p = pools.get(name)!;
      const keys: string[] = [];
      const m0 = mainThreadCpu(t.pid);
      const put = await closedLoop(t, 1, ms, async (_w, i) => {
        const k = `/bench/large-${round}-${i}-${size}`;
        const n = await send(p, t, 'PUT', k, body);
        keys.push(k);
        return n;
      });
      const m1 = mainThreadCpu(t.pid);
      const get = await closedLoop(t, 1, ms, (_w, i) => send(p, t, 'GET', keys[i % keys.length]!));
      const mains = { PUT: m1 - m0, GET: mainThreadCpu(t.pid) - m1 };
      loads.push(loadavg()[0]!);
      for (const [op, r] of [['PUT', put], ['GET', get]] as const) {
        const id = `${name}|${op}`;
        const c = cells.get(id) ?? { n: 0, seconds: 0, cpu: 0, main: 0, errors: 0 };
        c.main += mains[op];
        c.n += r.n;
        c.seconds += r.seconds;
        c.cpu += r.serverCpuSeconds;
        c.errors += r.errors;
        if (r.firstError) c.firstError ??= r.firstError;
        cells.set(id, c);
        process.stderr.write(`${name} ${size >> 20} MiB ${op} round ${round + 1}: ${fmt((r.n * size) / r.seconds / 2 ** 20, 1)} MiB/s\n`);
      }
    }
  }
  for (const [id, c] of cells) {
    const [name, op] = id.split('|');
    const mib = (c.n * size) / c.seconds / 2 ** 20;
    const cpu = c.n ? (c.cpu * 1000) / c.n : NaN;
    const main = c.n ? (c.main * 1000) / c.n : NaN;
    rows.push(`| ${name} | ${size >> 20} MiB | ${op} | ${c.n} | ${fmt(mib, 1)} | ${fmt(cpu, 2)} | ${fmt(main, 2)} | ${c.errors}${c.firstError ? ` ${c.firstError}` : ''} |`);
  }
}
for (const p of pools.values()) await p.close();
if (process.env.BENCH_THREADS_DUMP) {
  const { execFileSync } = await import('node:child_process');
  for (const [n, t] of targets) process.stderr.write(`${n}:\n${execFileSync(process.execPath, [process.env.BENCH_THREADS_DUMP, String(t.pid)]).toString()}`);
}
for (const t of targets.values()) await t.stop();
process.stdout.write(`load average (1 min) during the cells: ${loads.map((x) => x.toFixed(1)).join(' ')}\n`);
process.stdout.write(`| target | size | op | n | MiB/s | server CPU ms/op | main thread ms/op | errors |\n|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`);
