/**
 * Runs a kill-test worker (a bundled script printing one JSON line per event on stdout) and
 * lets the test SIGKILL it from what it reports: `onLine` gets each parsed line and a `kill`
 * function. Resolves with every line and whether the worker was killed; rejects when it exits
 * any other way than by SIGKILL or with code 0 (its stderr and last lines in the message). A
 * worker still running after 60 s is killed.
 */
import { spawn } from 'node:child_process';

export function runKillable<L>(workerPath: string, args: string[], onLine: (line: L, kill: () => void) => void): Promise<{ lines: L[]; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [workerPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const kill = () => void child.kill('SIGKILL');
    const lines: L[] = [];
    let buf = '';
    let stderr = '';
    const guard = setTimeout(kill, 60_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      const parts = (buf + d.toString()).split('\n');
      buf = parts.pop()!;
      for (const raw of parts) {
        if (!raw) continue;
        const line = JSON.parse(raw) as L;
        lines.push(line);
        onLine(line, kill);
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal === 'SIGKILL' || code === 0) resolve({ lines, killed: signal === 'SIGKILL' });
      else reject(new Error(`worker failed (${code}): ${stderr} ${JSON.stringify(lines.slice(-2))}`));
    });
  });
}
