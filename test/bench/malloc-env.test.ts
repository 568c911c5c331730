/**
 * bench/lib/malloc-env.ts: a benchmark started without the servers' malloc settings runs itself
 * again with them, passes its arguments and exit status through, and a signal to it reaches the
 * run that measures (no orphan left running). Uses dist/ as built by `npm test`'s pretest.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../integration/harness.js';
import { NODE_ENV } from '../../src/cli/node-flags.js';

const dir = mkdtempSync(join(tmpdir(), 'malloc-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A script that calls withServerMalloc, prints its pid, tunables and arguments, then runs `tail`. */
function script(name: string, tail: string): string {
  const path = join(dir, name);
  const lib = join(ROOT, 'dist/bench/lib/malloc-env.js');
  writeFileSync(
    path,
    `import { withServerMalloc } from ${JSON.stringify(lib)};\n` +
      `await withServerMalloc();\n` +
      `console.log(JSON.stringify({ pid: process.pid, tunables: process.env.GLIBC_TUNABLES ?? null, args: process.argv.slice(2), gc: typeof globalThis.gc }));\n` +
      tail
  );
  return path;
}

function run(path: string, env: NodeJS.ProcessEnv, onLine?: (child: ReturnType<typeof spawn>, line: string) => void): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', path, 'a', '--b=c'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (onLine && out.includes('\n')) onLine(child, out);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, out }));
  });
}

const withoutTunables = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.GLIBC_TUNABLES;
  return env;
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('withServerMalloc', () => {
  it('runs the script again with the tunables, its node flags and arguments, and passes the exit status on', async () => {
    const r = await run(script('exit.mjs', 'process.exit(3);\n'), withoutTunables());
    expect(r.code).toBe(3);
    const lines = r.out.trim().split('\n');
    expect(lines).toHaveLength(1); // only the run with the tunables got past the call
    const seen = JSON.parse(lines[0]!) as { pid: number; tunables: string; args: string[]; gc: string };
    expect(seen.tunables).toBe(NODE_ENV.GLIBC_TUNABLES);
    expect(seen.args).toEqual(['a', '--b=c']);
    expect(seen.gc).toBe('function');
  });

  it('returns at once when the tunables are set (one process)', async () => {
    const parent = await run(script('same.mjs', ''), { ...process.env, ...NODE_ENV });
    expect(parent.code).toBe(0);
    const seen = JSON.parse(parent.out.trim()) as { tunables: string };
    expect(seen.tunables).toBe(NODE_ENV.GLIBC_TUNABLES);
  });

  it('forwards SIGTERM to the run it started, which does not outlive it', async () => {
    let inner = 0;
    const r = await run(script('hang.mjs', 'setInterval(() => {}, 1000);\n'), withoutTunables(), (child, out) => {
      if (inner) return;
      inner = (JSON.parse(out.split('\n')[0]!) as { pid: number }).pid;
      expect(inner).not.toBe(child.pid);
      child.kill('SIGTERM');
    });
    expect(r.signal).toBe('SIGTERM'); // ended by the signal that ended the run it started
    expect(r.code).toBeNull();
    expect(inner).toBeGreaterThan(0);
    expect(alive(inner)).toBe(false);
  });
});
