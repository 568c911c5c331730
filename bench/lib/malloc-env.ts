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
 * script again (same node flags and arguments) with them, forwards SIGINT, SIGTERM and SIGHUP
 * to it, and exits with its exit status. Call before measuring anything.
 */
export async function withServerMalloc(): Promise<void> {
  if (missingNodeEnv(process.env).length === 0) return;
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, ...NODE_ENV },
  });
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => child.kill(s));
  const status = await new Promise<number>((resolve) => {
    child.once('error', (e) => {
      process.stderr.write(`could not run ${process.argv[1]} again with the servers' malloc settings: ${e.message}\n`);
      resolve(1);
    });
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
  process.exit(status);
}
