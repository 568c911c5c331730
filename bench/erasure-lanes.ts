/**
 * @module The lanes of `npm run bench:erasure`: one Strata server process each, over the plain
 * fs provider (one directory) or the erasure provider (k+m over N directory domains, all under
 * one temporary root on this machine), started as `strata serve --data 'D/disk{1...N}'
 * --erasure k+m`. A lane can be stopped, have domains wiped (their directories emptied, as a
 * lost disk replaced by a new one) and be restarted on the same data; scrub and repair run as
 * `strata scrub` child processes while the server is stopped (each domain is locked by the
 * process that opens it).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, startTarget, type Target } from './http-targets.js';
import { NODE_ENV, NODE_FLAGS } from '../src/cli/node-flags.js';
import { treeFiles } from './disk-floor.js';
import { METRICS_TOKEN } from './erasure-measure.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The built CLI (dist/src/cli/main.js), beside dist/bench/. */
export const CLI = join(here, '../src/cli/main.js');

export interface LaneSpec {
  /** Label in the tables: 'fs', 'ec 4+2', 'ec 10+4'. */
  name: string;
  /** Erasure parameters; absent for the plain fs lane. */
  k?: number;
  m?: number;
}

export const FS_LANE: LaneSpec = { name: 'fs' };
export const EC42: LaneSpec = { name: 'ec 4+2', k: 4, m: 2 };
export const EC104: LaneSpec = { name: 'ec 10+4', k: 10, m: 4 };

/** What `strata scrub --json` prints (ScrubReport, src/provider/erasure/scrub.ts). */
export interface ScrubReport {
  blobs: number;
  bytes: number;
  damagedByDomain: Record<string, number>;
  repairedFragments: number;
  repairBytes: number;
  /** Fragments a missing-only repair did not verify (absent: none). */
  fragments?: { verified: number; unchecked?: number };
  lost: string[];
  ms: number;
}

export interface ScrubRun {
  report: ScrubReport;
  /** Wall-clock seconds of the whole `strata scrub` process (start-up included). */
  wallSeconds: number;
  /** Its exit code (0 full redundancy, 1 blobs lost, 3 damage left). */
  code: number;
  /** CPU seconds (user + system, every thread) of the process, from /proc (sampled every
   * CPU_POLL_MS: the last sample before it exits, so up to that much short). */
  cpuSeconds: number;
}

/** Sum of the sizes of every file under `dir` (0 if it does not exist); files renamed or
 * removed while it walks are skipped. */
export function treeBytes(dir: string): number {
  return treeFiles(dir).reduce((total, [, size]) => total + size, 0);
}

export class Lane {
  readonly spec: LaneSpec;
  /** This lane's directory under the bench's temporary root. */
  readonly root: string;
  target: Target | undefined;

  constructor(spec: LaneSpec, parent: string) {
    this.spec = spec;
    this.root = join(parent, spec.name.replace(/[^a-z0-9]+/gi, '-'));
    mkdirSync(this.root, { recursive: true });
  }

  get erasure(): boolean {
    return this.spec.k !== undefined;
  }

  /** Number of failure domains: k+m for an erasure lane (every blob touches all of them). */
  get domainCount(): number {
    return this.erasure ? this.spec.k! + this.spec.m! : 1;
  }

  /** The `--data` value: the directory, or the `{1...N}` domain pattern. */
  get data(): string {
    return this.erasure ? join(this.root, `disk{1...${this.domainCount}}`) : join(this.root, 'data');
  }

  /** Directory of domain i (1-based). */
  domainDir(i: number): string {
    return join(this.root, `disk${i}`);
  }

  /** The CLI verbs get k+m from the environment (STRATA_ERASURE), as an operator's shell would. */
  private get env(): Record<string, string> {
    return this.erasure ? { STRATA_ERASURE: `${this.spec.k}+${this.spec.m}` } : {};
  }

  private get erasureArgs(): string[] {
    return this.erasure ? ['--erasure', `${this.spec.k}+${this.spec.m}`] : [];
  }

  /** Starts the server on this lane's data (a no-op when running). */
  async start(): Promise<Target> {
    if (!this.target) {
      if (this.erasure) for (let i = 1; i <= this.domainCount; i++) mkdirSync(this.domainDir(i), { recursive: true });
      // The token lets the bench read the lane's commit counters (erasure-measure.ts).
      this.target = await startTarget('strata', { dataDir: this.data, args: [...this.erasureArgs, '--metrics-token', METRICS_TOKEN] });
    }
    return this.target;
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s); the data stays. */
  async stop(): Promise<void> {
    await this.target?.stop();
    this.target = undefined;
  }

  /**
   * Empties the directories of domains `indices` (1-based), as a lost disk replaced by a new
   * empty one. The server must be stopped (it caches open file handles). Returns the bytes
   * removed.
   */
  wipeDomains(indices: readonly number[]): number {
    if (this.target) throw new Error('wipeDomains: stop the server first');
    let removed = 0;
    for (const i of indices) {
      const dir = this.domainDir(i);
      removed += treeBytes(dir);
      for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
    }
    return removed;
  }

  /** `strata scrub --json [--repair [--missing-only]]` over this lane's domains (server
   * stopped): `missingOnly` is what an operator runs after replacing a disk by an empty one. */
  async scrub(repair: boolean, missingOnly = false): Promise<ScrubRun> {
    if (this.target) throw new Error('scrub: stop the server first');
    const args = ['scrub', '--data', this.data, '--json', ...(repair ? ['--repair'] : []), ...(repair && missingOnly ? ['--missing-only'] : [])];
    const t0 = performance.now();
    const { code, stdout, stderr, cpuSeconds } = await runCli(args, this.env);
    const wallSeconds = (performance.now() - t0) / 1000;
    // Exit 0: full redundancy; 1: blobs lost; 3: damage left (a scrub without --repair).
    if (code !== 0 && code !== 1 && code !== 3) throw new Error(`strata ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`);
    return { report: parseJsonOutput<ScrubReport>(stdout, 'strata scrub'), wallSeconds, code, cpuSeconds };
  }

  /** `strata verify`: resolves with its exit code (0 sound) and summary. */
  async verify(): Promise<{ code: number; stdout: string; stderr: string }> {
    if (this.target) throw new Error('verify: stop the server first');
    return runCli(['verify', '--data', this.data], this.env);
  }

  /** Stops the server and removes the lane's data. */
  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** How often runCli samples the child's CPU time, ms (its last sample before exit is kept). */
const CPU_POLL_MS = 50;

/** Runs the CLI to completion (with `env` added to this process's) and collects its output and
 * its CPU seconds (sampled from /proc: the steadiest figure on a loaded machine; 0 where there
 * is no /proc). */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; cpuSeconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...NODE_ENV, ...env } });
    let stdout = '';
    let stderr = '';
    let cpu = 0;
    const sample = () => {
      try {
        if (child.pid !== undefined) cpu = cpuSeconds(child.pid);
      } catch {
        // exited between samples (or no /proc): the last sample stands
      }
    };
    const poll = setInterval(sample, CPU_POLL_MS);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
    // The streams end just before the process does: one more sample then.
    child.stdout.on('end', sample);
    child.on('error', (err) => {
      clearInterval(poll);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr, cpuSeconds: cpu });
    });
  });
}

/** The JSON document a `--json` CLI run printed (the whole of stdout, or its last `{…}` block). */
export function parseJsonOutput<T>(stdout: string, what: string): T {
  const text = stdout.trim();
  try {
    return JSON.parse(text) as T;
  } catch {
    const i = text.lastIndexOf('\n{');
    if (i >= 0) return JSON.parse(text.slice(i + 1)) as T;
    throw new Error(`${what}: no JSON on stdout: ${text.slice(-500)}`);
  }
}
