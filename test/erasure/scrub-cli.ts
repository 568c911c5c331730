/**
 * Shared by the tests that drive `strata scrub` as operators run it (the built CLI, a child
 * process): run it and collect its output, and see whether a pass has saved its cursor yet.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createFsProvider } from '../../src/provider/fs/index.js';

export const CLI = resolve('dist/src/cli/main.js');

export interface CliRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with `args`; `onStart` gets a function that SIGKILLs it. */
export function runCli(args: string[], onStart?: (kill: () => void) => void): Promise<CliRun> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', rej);
    child.on('exit', (code, signal) => res({ code, signal, stdout, stderr }));
    onStart?.(() => void child.kill('SIGKILL'));
  });
}

/** Does any of the directory domains `root`/d1..d`n` hold a scrub cursor yet? (Listing needs no lock.) */
export async function cursorSaved(root: string, n: number): Promise<boolean> {
  for (let i = 1; i <= n; i++) {
    const p = await createFsProvider({ dir: join(root, `d${i}`) });
    const page = await p.list({ prefix: 'maintenance/scrub-cursor' });
    await p.close();
    if (page.items.length) return true;
  }
  return false;
}
