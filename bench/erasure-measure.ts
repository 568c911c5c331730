/**
 * @module The measurements of `npm run bench:erasure`, each against one running lane: large
 * PUT and GET (one connection, back to back, MiB/s), a byte-exact check of a GET, and the
 * small-object closed loop (16 connections, many keys, ops/s). Every run records the server's
 * CPU time from /proc, so the tables can show CPU per request.
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'undici';
import { closedLoop, send, signed, type RunResult } from './http-load.js';
import { contextSwitches, cpuSeconds, type Target } from './http-targets.js';

export const BUCKET = 'bench';

/** One run of `n` sequential large requests on one connection. */
export interface BigRun {
  n: number;
  bytes: number;
  seconds: number;
  serverCpuSeconds: number;
}

export const mibPerSecond = (r: { bytes: number; seconds: number }) => r.bytes / r.seconds / 2 ** 20;

/** Creates the bench bucket (idempotent enough: a lane is fresh when this runs). */
export async function createBucket(p: Pool, t: Target): Promise<void> {
  await send(p, t, 'PUT', `/${BUCKET}`);
}

/**
 * PUTs `body` `n` times, one after the other, to keys `${prefix}-0 .. -(slots-1)` in turn;
 * throws on any failed request (a benchmark of failing requests measures nothing).
 */
export async function bigPuts(p: Pool, t: Target, body: Uint8Array, n: number, prefix: string, slots = 2): Promise<BigRun> {
  const cpu0 = cpuSeconds(t.pid);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await send(p, t, 'PUT', `/${BUCKET}/${prefix}-${i % slots}`, body);
  return { n, bytes: n * body.length, seconds: (performance.now() - t0) / 1000, serverCpuSeconds: cpuSeconds(t.pid) - cpu0 };
}

/** GETs `key` `n` times, one after the other; throws on a failed request or a short body. */
export async function bigGets(p: Pool, t: Target, key: string, size: number, n: number): Promise<BigRun> {
  const cpu0 = cpuSeconds(t.pid);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const got = await send(p, t, 'GET', `/${BUCKET}/${key}`);
    if (got !== size) throw new Error(`GET ${key}: ${got} bytes, expected ${size}`);
  }
  return { n, bytes: n * size, seconds: (performance.now() - t0) / 1000, serverCpuSeconds: cpuSeconds(t.pid) - cpu0 };
}

/** GETs each of `keys` once, one after the other (a degraded run: every GET is the first read of
 * its object since the wipe, so none is served after heal on read has repaired it). */
export async function bigGetsOnce(p: Pool, t: Target, keys: string[], size: number): Promise<BigRun> {
  const cpu0 = cpuSeconds(t.pid);
  const t0 = performance.now();
  for (const key of keys) {
    const got = await send(p, t, 'GET', `/${BUCKET}/${key}`);
    if (got !== size) throw new Error(`GET ${key}: ${got} bytes, expected ${size}`);
  }
  const n = keys.length;
  return { n, bytes: n * size, seconds: (performance.now() - t0) / 1000, serverCpuSeconds: cpuSeconds(t.pid) - cpu0 };
}

/** SHA-256 (hex) of the body a GET of `key` returns; throws on a non-2xx status. */
export async function getDigest(p: Pool, t: Target, key: string): Promise<string> {
  const req = signed(t, 'GET', `/${BUCKET}/${key}`);
  const res = await p.request({ method: 'GET', path: req.path, headers: req.headers });
  const h = createHash('sha256');
  for await (const chunk of res.body) h.update(chunk as Buffer);
  if (res.statusCode >= 300) throw new Error(`GET ${key}: HTTP ${res.statusCode}`);
  return h.digest('hex');
}

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The bearer token the lanes' servers take for /metrics (erasure-lanes.ts). */
export const METRICS_TOKEN = 'bench-erasure-metrics-token-0123456789';

/** The server's commit counters (its /metrics): commits, the operations they carried, and its
 * commit log appends (how many, and their total time from start until durable on every copy). */
export interface CommitCounters {
  commits: number;
  operations: number;
  appends: number;
  appendSeconds: number;
}

/** How long a scrape of a lane's /metrics may take before the run goes on without it, ms. */
const SCRAPE_TIMEOUT_MS = 5000;

/** Reads `t`'s commit counters from its /metrics (undefined when it does not answer them in
 * SCRAPE_TIMEOUT_MS, or answers something else). */
export async function commitCounters(t: Target): Promise<CommitCounters | undefined> {
  let text: string;
  try {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` }, signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
    if (!res.ok) return undefined;
    text = await res.text();
  } catch {
    return undefined;
  }
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  const c = {
    commits: value('strata_commits_total'),
    operations: value('strata_committed_operations_total'),
    appends: value('strata_commit_log_append_seconds_count'),
    appendSeconds: value('strata_commit_log_append_seconds_sum'),
  };
  return Object.values(c).every(Number.isFinite) ? c : undefined;
}

/** A small-object run, with the server's context switches over it (every thread's): each
 * synchronous log write on the thread pool costs a handful (a worker woken, its waits for the
 * write and the flush, the main thread woken by its completion), so they show what a lane's
 * commits cost beyond its CPU time; and its commit counters over the run (read before and
 * after it, outside the timed loop), when the server answers them. */
export interface SmallRun extends RunResult {
  serverSwitches: number;
  commits?: CommitCounters;
}

async function withServerCounts(t: Target, run: () => Promise<RunResult>): Promise<SmallRun> {
  const counters = await commitCounters(t);
  const before = contextSwitches(t.pid);
  const r = await run();
  const out: SmallRun = { ...r, serverSwitches: contextSwitches(t.pid) - before };
  const after = counters && (await commitCounters(t));
  if (counters && after) {
    out.commits = {
      commits: after.commits - counters.commits,
      operations: after.operations - counters.operations,
      appends: after.appends - counters.appends,
      appendSeconds: after.appendSeconds - counters.appendSeconds,
    };
  }
  return out;
}

/** Keys each small-object PUT worker cycles through (16 workers: 16,384 distinct keys). */
export const SMALL_KEYS_PER_WORKER = 1024;
const smallKey = (w: number, i: number) => `/${BUCKET}/small/${w}/${i % SMALL_KEYS_PER_WORKER}`;

/**
 * Closed loop of 4 KiB PUTs on `conc` connections for `ms`: worker w writes its own keys in
 * turn, so the run writes many distinct keys. Returns the run (errors counted, not thrown).
 */
export function smallPuts(p: Pool, t: Target, body: Uint8Array, conc: number, ms: number): Promise<SmallRun> {
  return withServerCounts(t, () => closedLoop(t, conc, ms, (w, i) => send(p, t, 'PUT', smallKey(w, i), body)));
}

/**
 * Closed loop of GETs of the small keys written before (`written[w]` keys of worker w),
 * picked pseudo-randomly so reads do not walk the keys in write order.
 */
export function smallGets(p: Pool, t: Target, written: readonly number[], conc: number, ms: number): Promise<SmallRun> {
  return withServerCounts(t, () =>
    closedLoop(t, conc, ms, (w, i) => {
      const have = Math.max(1, Math.min(SMALL_KEYS_PER_WORKER, written[w] ?? 1));
      return send(p, t, 'GET', smallKey(w, (i * 7919 + w * 104_729) % have));
    })
  );
}

/** Writes `count` small keys per worker (so a GET run finds them all), `conc` at a time. */
export async function fillSmall(p: Pool, t: Target, body: Uint8Array, conc: number, count: number): Promise<number[]> {
  await Promise.all(
    Array.from({ length: conc }, async (_, w) => {
      for (let i = 0; i < count; i++) await send(p, t, 'PUT', smallKey(w, i), body);
    })
  );
  return Array.from({ length: conc }, () => count);
}
