/**
 * @module The load generator runs with the malloc settings every server it measures runs with.
 *
 * The servers (Strata and the peers, http-targets.ts spawnLogged) start with the strata
 * command's glibc tunables (src/cli/node-flags.ts NODE_ENV): keep freed memory instead of
 * handing it back to the system, where every page handed back is a page fault when used again
 * (~11 µs each in this nested VM). The load generator runs in the benchmark's own process, and
 * without them it was the bottleneck of every large GET: undici hands each 64 KiB socket read
 * over in a fresh malloc'd buffer, and measured here the generator took 14,000-37,000 page
 * faults per eight 64 MiB GETs without the tunables against 140-670 with them; the (10,4)
 * erasure GET read ~450 MiB/s against 645-733, the fs one 450 against 840-1,130 MiB/s (same
 * server build, same objects, runs back to back). glibc reads the tunables when the process
 * starts, so a benchmark started without them runs itself again with them.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { missingNodeEnv, NODE_ENV } from '../../src/cli/node-flags.js';

/**
 * Returns at once when this process has the servers' malloc settings; otherwise runs this
 * script again (same node flags and arguments) with them (saying so on stderr when it replaces a
 * value of the caller's), forwards SIGINT, SIGTERM and SIGHUP to it, and ends as it ended: with
 * its exit status, or by the signal that ended it. Call before measuring anything.
 */
export async function withServerMalloc(): Promise<void> {
  const missing = missingNodeEnv(process.env);
  if (missing.length === 0) return;
  for (const m of missing) {
    const name = m.slice(0, m.indexOf('='));
    if (process.env[name] !== undefined) process.stderr.write(`${process.argv[1]}: ${name}=${process.env[name]} replaced by the servers' ${m}\n`);
  }
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, ...NODE_ENV },
  });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const forward = (s: NodeJS.Signals) => void child.kill(s);
  for (const s of signals) process.on(s, forward);
  const end = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', (e) => {
      process.stderr.write(`could not run ${process.argv[1]} again with the servers' malloc settings: ${e.message}\n`);
      resolve({ code: 1, signal: null });
    });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  for (const s of signals) process.off(s, forward);
  // Ended by a signal: end by the same one, so that a shell sees the benchmark interrupted
  // (and a loop of them stops at Ctrl-C) rather than a status it might take as handled.
  if (end.signal) process.kill(process.pid, end.signal);
  process.exit(end.code ?? 128 + (end.signal ? constants.signals[end.signal] : 0));
}
