/**
 * @module The maintenance `bench:lifecycle` drives: expiry (src/store/expiry.ts expireHistory)
 * and GC (src/store/gc.ts runGc), as issue 10's CONTRACT.md names them, and `strata verify`
 * run as the CLI in its own process, as an operator runs it.
 */
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';

export { expireHistory, type ExpiryReport } from '../src/store/expiry.js';
export { runGc, type GcReport } from '../src/store/gc.js';

/** What `strata verify --json DIR` said. */
export interface VerifyCliResult {
  ok: boolean;
  exitCode: number;
  ms: number;
  /** One line: the report's counts, or the problems / the error text. */
  summary: string;
}

/** Longest `strata verify` may take before the bench calls it a failure (ms): 30 min. */
const VERIFY_TIMEOUT_MS = 30 * 60_000;

/**
 * Runs `strata verify --json DIR` (the built CLI, dist/src/cli/main.js) in its own process
 * and reports its verdict. Read-only. Never throws for a verdict; throws when the CLI cannot
 * be started.
 */
export function runVerifyCli(dir: string): Promise<VerifyCliResult> {
  const main = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, 'verify', '--json', dir], { stdio: ['ignore', 'pipe', 'pipe'], timeout: VERIFY_TIMEOUT_MS });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4096)));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      try {
        const r = JSON.parse(out) as { ok: boolean; blobs: number; runs: number; bytes: number; commitsInChain: number; problems: { blob: string; code: string; message: string }[] };
        const summary = r.ok
          ? `sound: ${r.blobs} pack blobs, ${r.runs} runs, ${r.commitsInChain} commits replayed, ${(r.bytes / 2 ** 20).toFixed(1)} MiB read`
          : `${r.problems.length} problem(s): ${r.problems.slice(0, 3).map((p) => `${p.blob} ${p.code} ${p.message}`).join('; ')}`;
        resolve({ ok: r.ok && code === 0, exitCode: code ?? -1, ms, summary });
      } catch {
        resolve({ ok: false, exitCode: code ?? -1, ms, summary: `no report (exit ${code}): ${err.trim().split('\n').slice(-3).join(' / ')}` });
      }
    });
  });
}
