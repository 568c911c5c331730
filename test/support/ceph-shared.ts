/**
 * @module One Ceph cluster per vitest run, shared by every test/ceph file (each in its own
 * bucket): starting a cluster takes minutes on a busy machine, so the lane pays it once.
 *
 * The run owns a directory under the OS temp dir (ceph-global-setup.ts makes it and provides
 * its path and the vitest main process's pid). Test files run in separate worker processes,
 * so they coordinate through files there:
 *   lock/         mkdir'ed by the one worker that starts the cluster (lock/pid names it);
 *   cluster.json  written when the cluster is up: endpoint, keys and the cluster's directory;
 *   failed.txt    written when starting failed: the error, so the other files fail with it
 *                 at once instead of each trying again;
 *   watchdog.pid  a detached shell that stops the cluster if the vitest main process dies
 *                 without its teardown (SIGKILL, a crash).
 * The cluster is started lazily, by the first file whose suite runs (never when no test/ceph
 * file is selected or the packages are missing), and stopped by the run's teardown
 * ({@link stopSharedCeph}), also when tests fail.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import {
  CEPH_START_TIMEOUT_MS,
  CEPH_STOP_SCRIPT,
  startCephCluster,
  stopCephDir,
  type CephCluster,
} from '../../bench/providers-ceph.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's shared-cluster directory and the pid that owns it (the vitest main process). */
    cephRun: { dir: string; ownerPid: number };
  }
}

/** What the run's directory records of the started cluster. */
export type SharedInfo = Pick<CephCluster, 'endpoint' | 'accessKeyId' | 'secretAccessKey' | 'dir'>;

/** How often a waiting file looks for the starter's result, ms (a start takes minutes). */
const POLL_MS = 250;
/** How often the watchdog checks that the vitest main process lives, s. */
const WATCHDOG_PERIOD_S = 2;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes `text` to `path` atomically (readers never see half a file). */
function writeAtomic(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

function readResult(runDir: string): SharedInfo | Error | undefined {
  const failed = join(runDir, 'failed.txt');
  if (existsSync(failed)) {
    return new Error(`the shared Ceph cluster failed to start:\n${readFileSync(failed, 'utf8')}`);
  }
  const info = join(runDir, 'cluster.json');
  if (existsSync(info)) return JSON.parse(readFileSync(info, 'utf8')) as SharedInfo;
  return undefined;
}

/** Takes the start lock; false when another live process holds it. Clears a dead holder's. */
function tryLock(runDir: string): boolean {
  const lock = join(runDir, 'lock');
  try {
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let holder = NaN;
  try {
    holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    return false; // the holder is between mkdir and writing its pid
  }
  if (Number.isInteger(holder) && !alive(holder)) {
    rmSync(lock, { recursive: true, force: true }); // its worker died mid-start; take over
    return tryLock(runDir);
  }
  return false;
}

/** A detached shell that stops the cluster in `dir` once `ownerPid` is gone. */
function startWatchdog(runDir: string, dir: string, ownerPid: number): void {
  const script =
    `while kill -0 ${ownerPid} 2>/dev/null; do sleep ${WATCHDOG_PERIOD_S}; done; ` +
    `bash "$0" "$1" --purge >/dev/null 2>&1; rm -rf "$2"`;
  const child = spawn('bash', ['-c', script, CEPH_STOP_SCRIPT, dir, runDir], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  if (child.pid !== undefined) writeAtomic(join(runDir, 'watchdog.pid'), String(child.pid));
}

/**
 * The run's cluster: reuses it when another file started it, waits while another starts it,
 * and otherwise starts it (this file then owns the start, not the lifetime: the run's teardown
 * stops it). `ownerPid` is the vitest main process; `start` starts a cluster (tests of this
 * module pass a stand-in).
 * @throws Error when the cluster cannot be started (the same error in every file of the run)
 *   or did not come up within CEPH_START_TIMEOUT_MS.
 */
export async function sharedCephCluster(
  runDir: string,
  ownerPid: number,
  start: () => Promise<SharedInfo> = startCephCluster
): Promise<SharedInfo> {
  mkdirSync(runDir, { recursive: true });
  const deadline = Date.now() + CEPH_START_TIMEOUT_MS + 60_000;
  for (;;) {
    const found = readResult(runDir);
    if (found instanceof Error) throw found;
    if (found) return found;
    if (tryLock(runDir)) {
      const again = readResult(runDir); // finished between our read and the lock
      if (again instanceof Error) throw again;
      if (again) return again;
      try {
        const c = await start();
        const info: SharedInfo = {
          endpoint: c.endpoint,
          accessKeyId: c.accessKeyId,
          secretAccessKey: c.secretAccessKey,
          dir: c.dir,
        };
        writeAtomic(join(runDir, 'cluster.json'), JSON.stringify(info));
        startWatchdog(runDir, c.dir, ownerPid);
        return info;
      } catch (err) {
        writeAtomic(join(runDir, 'failed.txt'), (err as Error).message);
        throw err;
      }
    }
    if (Date.now() > deadline) throw new Error(`no shared Ceph cluster in ${runDir} after waiting`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * The run's teardown: stops the cluster started in `runDir` (if any file started one), ends
 * its watchdog and removes `runDir`. Never throws.
 */
export async function stopSharedCeph(runDir: string): Promise<void> {
  try {
    const found = readResult(runDir);
    if (found && !(found instanceof Error)) await stopCephDir(found.dir);
    const wd = join(runDir, 'watchdog.pid');
    if (existsSync(wd)) {
      const pid = Number(readFileSync(wd, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) process.kill(pid, 'SIGTERM');
    }
  } catch {
    // best effort: the watchdog still stops the cluster when this process exits
  }
  rmSync(runDir, { recursive: true, force: true });
}
