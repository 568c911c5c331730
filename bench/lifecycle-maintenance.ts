/**
 * @module The maintenance `bench:lifecycle` drives, reached the way an operator reaches it:
 * expiry (src/store/expiry.ts expireHistory) and GC (src/store/gc.ts runGc), with the shapes
 * issue 10's CONTRACT.md gives them, and `strata verify` run as the CLI in its own process.
 *
 * Expiry and GC are loaded at run time so that the bench builds and runs on a tree where either
 * has not landed yet: the phase then reports "not available" and why (never a made-up figure).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import type { Repository } from '../src/store/repository.js';

/** expiry.ts's report (CONTRACT.md). */
export interface ExpiryReport {
  buckets: number;
  examined: number;
  expired: number;
  bytes: number;
  ms: number;
}

/** gc.ts's report (CONTRACT.md). */
export interface GcReport {
  examinedBlobs: number;
  examinedBytes: number;
  unreachableBlobs: number;
  unreachableBytes: number;
  freedBlobs: number;
  freedBytes: number;
  cleanedPacks: number;
  movedBytes: number;
  ms: number;
}

export interface ExpiryModule {
  expireHistory(repo: Repository, opts?: { now?: number; bucket?: string; onProgress?: (p: unknown) => void }): Promise<ExpiryReport>;
}

export interface GcModule {
  runGc(repo: Repository, opts?: { dryRun?: boolean; graceMs?: number; cleanBelow?: number; onProgress?: (p: unknown) => void }): Promise<GcReport>;
}

/** The module at `rel` (from this file, built or not) exporting `fn`, or why it is not available. */
async function optionalModule<T>(rel: string, fn: string): Promise<T | string> {
  const url = new URL(rel, import.meta.url);
  if (!existsSync(fileURLToPath(url))) return `${rel.replace(/^\.\.\//, '').replace(/\.js$/, '.ts')} is not in this tree`;
  const mod = (await import(url.href)) as Record<string, unknown>;
  if (typeof mod[fn] !== 'function') return `${rel} does not export ${fn}`;
  return mod as T;
}

/** expiry.ts, or the reason it is not available. */
export const loadExpiry = (): Promise<ExpiryModule | string> => optionalModule<ExpiryModule>('../src/store/expiry.js', 'expireHistory');

/** gc.ts, or the reason it is not available. */
export const loadGc = (): Promise<GcModule | string> => optionalModule<GcModule>('../src/store/gc.js', 'runGc');

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
