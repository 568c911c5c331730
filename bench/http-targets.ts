/**
 * @module Servers under test, each in its own child process (so its CPU time can be read
 * from /proc): Strata, s3rver (the npm S3 mock), the `fs` peer (a naive durable Hono file
 * server) and a trivial Hono server (the HTTP ceiling).
 *
 * Equal logging: every server runs with its default request logging — Strata's one JSON line
 * per request (`--log info`, its default), s3rver's one line per response, and the peers' one
 * JSON line per request (bench/peers/request-log.ts) — and every child's stdout goes to the
 * same kind of sink, a file of its own in a temp directory, which the benchmark reads to
 * count log lines per request. stderr is a pipe, read only for the start-up line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { NODE_ENV, NODE_FLAGS } from '../src/cli/node-flags.js';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

export type TargetName = 'strata' | 's3rver' | 'fs' | 'trivial-hono';
export const TARGET_NAMES: readonly TargetName[] = ['strata', 's3rver', 'fs', 'trivial-hono'];

export interface Target {
  name: TargetName;
  url: string;
  pid: number;
  accessKeyId: string;
  secretAccessKey: string;
  dataDir?: string;
  /** The file the server's stdout (its request log) goes to. */
  logPath: string;
  stop(): Promise<void>;
}

/** Clock ticks per second for /proc/<pid>/stat (Linux USER_HZ). */
const USER_HZ = 100;

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}

/** Context switches (voluntary and not) of every thread of a process so far; threads that ended
 * meanwhile are not counted, so only the difference over a run of a long-lived server means
 * anything. */
export function contextSwitches(pid: number): number {
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) n += Number(m[1]);
  }
  return n;
}

/** The size of a file in bytes (0 if it cannot be read): a mark for `logLinesSince`. */
export function logMark(path: string): number {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    return fstatSync(fd).size;
  } catch {
    return 0;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Lines (newlines) written to the file at `path` after byte `mark` (see `logMark`). */
export function logLinesSince(path: string, mark: number): number {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const end = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(1 << 20);
    let lines = 0;
    for (let pos = mark; pos < end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
      if (n <= 0) break;
      for (let i = buf.indexOf(10, 0); i >= 0 && i < n; i = buf.indexOf(10, i + 1)) lines++;
      pos += n;
    }
    return lines;
  } catch {
    return 0;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Start-up polling of the stdout log file, ms. */
const LOG_POLL_MS = 50;
/** How long a server may take to print its listening line, ms. */
const START_TIMEOUT_MS = 60_000;

/** Waits for the first line of stderr or of the stdout log file that `test` accepts. */
function waitForLine(child: ChildProcess, logPath: string, test: (line: string) => string | undefined, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let err = '';
    const done = (fn: () => void) => {
      clearTimeout(timer);
      clearInterval(poll);
      child.stderr!.off('data', onData);
      child.stderr!.resume();
      child.off('exit', onExit);
      fn();
    };
    const scan = (text: string) => {
      for (const line of text.split('\n')) {
        const hit = test(line);
        if (hit) return hit;
      }
      return undefined;
    };
    const onData = (d: Buffer) => {
      err += d.toString();
      const hit = scan(err);
      if (hit) done(() => resolve(hit));
    };
    const poll = setInterval(() => {
      let out = '';
      try {
        out = readFileSync(logPath, 'utf8');
      } catch {
        return;
      }
      const hit = scan(out);
      if (hit) done(() => resolve(hit));
    }, LOG_POLL_MS);
    const onExit = (code: number | null) => done(() => reject(new Error(`${what} exited with ${code}: ${err.slice(-2000)}`)));
    const timer = setTimeout(() => done(() => reject(new Error(`${what} did not start: ${err.slice(-2000)}`))), START_TIMEOUT_MS);
    child.stderr!.on('data', onData);
    child.once('exit', onExit);
  });
}

function stopper(child: ChildProcess, dirs: (string | undefined)[]): () => Promise<void> {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    for (const d of dirs) if (d) rmSync(d, { recursive: true, force: true });
  };
}

const STRATA_KEY = 'BENCHACCESSKEY000001';
const STRATA_SECRET = 'bench-secret-key-0123456789abcdefghij';

/**
 * Spawns `node args` with stdout to a fresh log file and stderr piped. Every target, peers
 * too, runs with the strata command's malloc tunables (NODE_ENV), so none pays page faults
 * the others are spared.
 */
function spawnLogged(args: string[], env?: NodeJS.ProcessEnv): { child: ChildProcess; logPath: string; logDir: string } {
  const logDir = mkdtempSync(join(tmpdir(), 'bench-log-'));
  const logPath = join(logDir, 'stdout.log');
  const fd = openSync(logPath, 'a');
  try {
    const child = spawn(process.execPath, args, { env: { ...(env ?? process.env), ...NODE_ENV }, stdio: ['ignore', fd, 'pipe'] });
    return { child, logPath, logDir };
  } finally {
    closeSync(fd);
  }
}

const jsonListening = (l: string) => (l.includes('"listening"') ? (JSON.parse(l) as { url: string }).url : undefined);

/**
 * Starts `name` on 127.0.0.1 with a fresh data directory (or `dataDir` for Strata, which may
 * be an erasure domain pattern such as `D/disk{1...6}`); `args` are further `serve` options
 * for Strata (e.g. `['--erasure', '4+2']`). Strata runs with its default request logging
 * unless `args` says otherwise, and with the node flags the `strata` command runs with
 * (src/cli/node-flags.ts) before any `nodeArgs`.
 */
export async function startTarget(name: TargetName, opts: { dataDir?: string; args?: readonly string[]; cli?: string; nodeArgs?: readonly string[] } = {}): Promise<Target> {
  if (name === 'strata') {
    const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'bench-strata-'));
    // `cli`: another build's dist/src/cli/main.js, to measure it side by side with this one.
    const cli = opts.cli ?? join(here, '../src/cli/main.js');
    const { child, logPath, logDir } = spawnLogged([...NODE_FLAGS, ...(opts.nodeArgs ?? []), cli, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dataDir, ...(opts.args ?? [])], {
      ...process.env,
      STRATA_ACCESS_KEY: STRATA_KEY,
      STRATA_SECRET_KEY: STRATA_SECRET,
    });
    // A local repository's master key defaults to a file beside it (<data>.master-key).
    const stop = stopper(child, opts.dataDir ? [logDir] : [logDir, dataDir, `${dataDir}.master-key`]);
    const url = await waitForLine(child, logPath, (l) => /Strata S3 server on (\S+)/.exec(l)?.[1], 'strata').catch(async (e) => {
      await stop();
      throw e;
    });
    return { name, url, pid: child.pid!, accessKeyId: STRATA_KEY, secretAccessKey: STRATA_SECRET, dataDir, logPath, stop };
  }
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  let spawned: ReturnType<typeof spawnLogged>;
  let test: (l: string) => string | undefined;
  let key = 'x';
  if (name === 's3rver') {
    const bin = join(dirname(require.resolve('s3rver/package.json')), 'bin/s3rver.js');
    // s3rver's list tokens need the legacy OpenSSL provider on Node 20.
    spawned = spawnLogged(['--openssl-legacy-provider', bin, '-d', dataDir, '-a', '127.0.0.1', '-p', '0']);
    test = (l) => /listening on (http:\/\/[^\s]+)/i.exec(l)?.[1] ?? (/S3rver listening on [^:]+:(\d+)/.exec(l) ? `http://127.0.0.1:${/:(\d+)/.exec(l)![1]}` : undefined);
    key = 'S3RVER';
  } else if (name === 'fs') {
    spawned = spawnLogged([join(here, 'peers/fs-hono.js'), '0', dataDir]);
    test = jsonListening;
  } else {
    spawned = spawnLogged([join(here, 'peers/trivial-hono.js'), '0']);
    test = jsonListening;
  }
  const stop = stopper(spawned.child, [spawned.logDir, dataDir]);
  const url = await waitForLine(spawned.child, spawned.logPath, test, name).catch(async (e) => {
    await stop();
    throw e;
  });
  return { name, url: url.replace('localhost', '127.0.0.1'), pid: spawned.child.pid!, accessKeyId: key, secretAccessKey: key, dataDir, logPath: spawned.logPath, stop };
}
