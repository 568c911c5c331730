/**
 * Runs a built benchmark script (dist/bench/<name>.js) as a child process, for the tests that
 * keep the benchmarks working; resolves with its exit code and output.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../integration/harness.js';

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runBenchScript(script: string, args: string[], timeoutMs: number): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/bench', script), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
