/**
 * @module Servers under test, each in its own child process (so its CPU time can be read
 * from /proc): Strata, s3rver (the npm S3 mock), and a trivial Hono server (the ceiling).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

export type TargetName = 'strata' | 's3rver' | 'trivial-hono';

export interface Target {
  name: TargetName;
  url: string;
  pid: number;
  accessKeyId: string;
  secretAccessKey: string;
  dataDir?: string;
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

function waitForLine(child: ChildProcess, test: (line: string) => string | undefined, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${buf.slice(-2000)}`)), 60_000);
    // Either stream may carry the line (Strata prints it on stderr, s3rver on stdout).
    const onData = (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        const hit = test(line);
        if (hit) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          child.stderr!.off('data', onData);
          child.stdout!.resume();
          child.stderr!.resume();
          resolve(hit);
          return;
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${buf.slice(-2000)}`)));
  });
}

function stopper(child: ChildProcess, dataDir?: string): () => Promise<void> {
  return async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
}

const STRATA_KEY = 'BENCHACCESSKEY000001';
const STRATA_SECRET = 'bench-secret-key-0123456789abcdefghij';

/**
 * Starts `name` on 127.0.0.1 with a fresh data directory (or `dataDir` for Strata, which may
 * be an erasure domain pattern such as `D/disk{1...6}`); `args` are further `serve` options
 * for Strata (e.g. `['--erasure', '4+2']`).
 */
export async function startTarget(name: TargetName, opts: { dataDir?: string; args?: readonly string[] } = {}): Promise<Target> {
  if (name === 'strata') {
    const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'bench-strata-'));
    const cli = join(here, '../src/cli/main.js');
    const child = spawn(process.execPath, [cli, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dataDir, '--log', 'warn', ...(opts.args ?? [])], {
      env: { ...process.env, STRATA_ACCESS_KEY: STRATA_KEY, STRATA_SECRET_KEY: STRATA_SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await waitForLine(child, (l) => /Strata S3 server on (\S+)/.exec(l)?.[1], 'strata');
    return { name, url, pid: child.pid!, accessKeyId: STRATA_KEY, secretAccessKey: STRATA_SECRET, dataDir, stop: stopper(child, opts.dataDir ? undefined : dataDir) };
  }
  if (name === 's3rver') {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-s3rver-'));
    const bin = join(dirname(require.resolve('s3rver/package.json')), 'bin/s3rver.js');
    // s3rver's list tokens need the legacy OpenSSL provider on Node 20.
    const child = spawn(process.execPath, ['--openssl-legacy-provider', bin, '-d', dataDir, '-a', '127.0.0.1', '-p', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await waitForLine(child, (l) => /listening on (http:\/\/[^\s]+)/i.exec(l)?.[1] ?? (/S3rver listening on [^:]+:(\d+)/.exec(l) ? `http://127.0.0.1:${/:(\d+)/.exec(l)![1]}` : undefined), 's3rver');
    return { name, url: url.replace('localhost', '127.0.0.1'), pid: child.pid!, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', dataDir, stop: stopper(child, dataDir) };
  }
  const child = spawn(process.execPath, [join(here, 'peers/trivial-hono.js'), '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await waitForLine(child, (l) => (l.includes('"listening"') ? (JSON.parse(l) as { url: string }).url : undefined), 'trivial-hono');
  return { name, url, pid: child.pid!, accessKeyId: 'x', secretAccessKey: 'x', stop: stopper(child) };
}
