/**
 * @module The kill harness: run a worker on a directory, SIGKILL it at a seeded random
 * moment, check the directory against the worker's log (check.ts), carry the resolved
 * state into the next iteration on the same directory, and keep a tally.
 *
 * Most kills land a random time after the worker reported `ready` (mid-load: in commits,
 * carrier writes, checkpoints, compactions); some land at a random time after spawn,
 * often while the worker is still opening (recovering) the directory.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prng, randInt } from '../support/random.js';
import { checkAfterKill, openDirectory, type ChainMark } from './check.js';
import { WorkerLog } from './model.js';
import { BUCKET, type Content, type WorkerConfig, type WorkerStoreOptions } from './protocol.js';

export interface KillSoakOptions {
  /** Working directory: the repository goes in `<workDir>/repo`. */
  workDir: string;
  /** The bundled worker (worker.ts built by esbuild). */
  workerPath: string;
  seed: number;
  iterations: number;
  /** Kill this many ms after `ready`: uniform in [min, max]. */
  killAfterMs?: [number, number];
  /**
   * Time the (non-early) kill from the worker's first finished checkpoint instead of from
   * `ready`, so a slow host cannot let every kill land before any checkpoint ran.
   */
  killAfterFirstCheckpoint?: boolean;
  /** Share of kills timed from spawn instead, uniform in [0, earlyKillMs]. */
  earlyKillShare?: number;
  earlyKillMs?: number;
  lanes?: number;
  store?: WorkerStoreOptions;
  keys?: string[];
  /** Called after every iteration (progress lines). */
  onIteration?: (r: IterationResult, t: Tally) => void;
}

export interface IterationResult {
  iteration: number;
  killed: boolean;
  /** The kill was timed from spawn rather than from ready. */
  early: boolean;
  /** The worker died before it reported ready (while starting or recovering). */
  beforeReady: boolean;
  killAtMs: number;
  started: number;
  ackedWrites: number;
  ackedReads: number;
  inflightWhole: number;
  inflightAbsent: number;
  inflightSame: number;
  checkpoints: number;
  compactions: number;
  verifyClean: boolean;
  failures: string[];
  ms: number;
}

export interface Tally {
  iterations: number;
  kills: number;
  killsBeforeReady: number;
  ackedWrites: number;
  ackedReads: number;
  inflightWhole: number;
  inflightAbsent: number;
  inflightSame: number;
  checkpoints: number;
  compactions: number;
  verifyClean: number;
  failures: string[];
}

export const DEFAULT_KEYS = [
  ...Array.from({ length: 14 }, (_, i) => `k/${String(i).padStart(2, '0')}`),
  'odd/a b+c',
  'odd/%2F..//x',
  'odd/ü€',
  'odd/😀',
  'odd/\u0001ctl',
  'deep/a/b/c/d/e',
];

/** Small enough that a few seconds of load cross many checkpoints and some compactions. */
/** The kill tests run on the fs commit log (each worker's open rolls to a fresh segment). */
export const DEFAULT_STORE: WorkerStoreOptions = { checkpointEvery: 6, overlayBytes: 8 * 1024, maxRuns: 3, commitLog: true };

/** Longest a worker may run before the harness gives up on its schedule. */
const WORKER_LIMIT_MS = 60_000;

interface Run {
  killed: boolean;
  early: boolean;
  beforeReady: boolean;
  killAtMs: number;
  /** Killed by the safety limit, not by the schedule. */
  stuck: boolean;
  exit: string;
  stderr: string;
}

/** Spawns a worker, feeds its stdout to `log`, kills it on schedule; resolves when it is gone. */
function runWorker(opts: KillSoakOptions, configPath: string, log: WorkerLog, next: () => number): Promise<Run> {
  const early = next() % 1000 < (opts.earlyKillShare ?? 0.15) * 1000;
  const [lo, hi] = opts.killAfterMs ?? [100, 1500];
  const killAtMs = early ? randInt(next, 0, opts.earlyKillMs ?? 150) : randInt(next, lo, hi);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [opts.workerPath, configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    let killed = false;
    let stuck = false;
    let stderr = '';
    const kill = () => {
      if (killed || child.exitCode !== null) return;
      killed = child.kill('SIGKILL');
    };
    let timer = early ? setTimeout(kill, killAtMs) : undefined;
    // A worker that never gets ready (or hangs) is a failure; do not wait for it forever.
    const limit = setTimeout(() => {
      stuck = true;
      kill();
    }, WORKER_LIMIT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      for (const line of log.feed(text)) {
        if (timer) continue;
        const arm = opts.killAfterFirstCheckpoint ? line.t === 'event' && line.event === 'checkpoint' : line.t === 'ready';
        if (arm) timer = setTimeout(kill, killAtMs);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (t: string) => (stderr = (stderr + t).slice(-4000)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(limit);
      resolve({ killed: killed && signal === 'SIGKILL', early, beforeReady: !log.ready, killAtMs, stuck, exit: signal ?? `code ${code}`, stderr });
    });
  });
}

/** Creates the repository and its bucket if this is the first iteration on `dir`. */
async function prepare(dir: string): Promise<void> {
  const store = await openDirectory(dir);
  try {
    if (!store.listBuckets().some((b) => b.name === BUCKET)) await store.createBucket(BUCKET);
  } finally {
    await store.close();
  }
}

export async function runKillSoak(opts: KillSoakOptions): Promise<Tally> {
  const dir = join(opts.workDir, 'repo');
  mkdirSync(dir, { recursive: true });
  await prepare(dir);
  const keys = opts.keys ?? DEFAULT_KEYS;
  const next = prng(opts.seed);
  let state = new Map<string, Content>(keys.map((k) => [k, null]));
  let head: ChainMark = { seq: 0, time: 0 };
  const t: Tally = { iterations: 0, kills: 0, killsBeforeReady: 0, ackedWrites: 0, ackedReads: 0, inflightWhole: 0, inflightAbsent: 0, inflightSame: 0, checkpoints: 0, compactions: 0, verifyClean: 0, failures: [] };
  for (let i = 0; i < opts.iterations; i++) {
    const started = Date.now();
    const config: WorkerConfig = {
      dir,
      seed: opts.seed + i,
      iteration: i,
      keys,
      state: Object.fromEntries(state),
      store: opts.store ?? DEFAULT_STORE,
      lanes: opts.lanes ?? 6,
    };
    const configPath = join(opts.workDir, `worker-${i}.json`);
    writeFileSync(configPath, JSON.stringify(config));
    const log = new WorkerLog(state);
    const run = await runWorker(opts, configPath, log, next);
    const failures = [...log.problems];
    if (!run.killed) failures.push(`worker was not killed (exit ${run.exit}): ${run.stderr.trim()}`);
    if (run.stuck) failures.push(`worker was still running after ${WORKER_LIMIT_MS} ms (ready: ${log.ready})`);
    const check = await checkAfterKill(dir, keys, log, head).catch((err: unknown) => {
      failures.push(`reopen/check failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      return undefined;
    });
    if (check) {
      failures.push(...check.failures);
      state = check.state;
      head = check.head;
    }
    const r: IterationResult = {
      iteration: i,
      killed: run.killed,
      early: run.early,
      beforeReady: run.beforeReady,
      killAtMs: run.killAtMs,
      started: log.stats.started,
      ackedWrites: log.stats.ackedWrites,
      ackedReads: log.stats.ackedReads,
      inflightWhole: check?.inflightWhole ?? 0,
      inflightAbsent: check?.inflightAbsent ?? 0,
      inflightSame: check?.inflightSame ?? 0,
      checkpoints: log.stats.checkpoints,
      compactions: log.stats.compactions,
      verifyClean: check?.verifyClean ?? false,
      failures: failures.map((f) => `iteration ${i}: ${f}`),
      ms: Date.now() - started,
    };
    t.iterations++;
    if (r.killed) t.kills++;
    if (r.beforeReady) t.killsBeforeReady++;
    t.ackedWrites += r.ackedWrites;
    t.ackedReads += r.ackedReads;
    t.inflightWhole += r.inflightWhole;
    t.inflightAbsent += r.inflightAbsent;
    t.inflightSame += r.inflightSame;
    t.checkpoints += r.checkpoints;
    t.compactions += r.compactions;
    if (r.verifyClean) t.verifyClean++;
    t.failures.push(...r.failures);
    opts.onIteration?.(r, t);
  }
  return t;
}
