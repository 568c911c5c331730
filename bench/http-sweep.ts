/**
 * @module The PUT/GET sweep: the selected sweep lanes (bench/http-lanes.ts), every target in
 * the same run, runs interleaved across targets so that machine noise hits all of them.
 *
 * Equal work: each lane cycles through `lane.keys` distinct keys, each with its own body,
 * round-robin from one shared cursor (so GETs read many keys, not one warm key); before a
 * lane's first GET every key is PUT once. Every response is checked: a PUT's ETag against the
 * body's MD5, a GET's length always, and its bytes against the key's body (chunk by chunk as
 * they arrive, inside the timed loop) on every GET up to 1 MiB and on every 4th key above.
 * The trivial server stores nothing, so only its GET lengths are checked. Each run also counts the lines the server logged.
 */
import { createHash, randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import type { Pool } from 'undici';
import { closedLoop, pool, send, sendChecked, type Expect, type RunResult } from './http-load.js';
import { logLinesSince, logMark, type Target } from './http-targets.js';
import { QUICK_RUN_MS, type CellSummary, type LaneStamp, type RunSummary, type SweepLane } from './http-lanes.js';
import { fmt, percentile } from './lib/stats.js';

const BUCKET = 'bench';
/**
 * GET bodies up to 1 MiB are compared byte for byte on every request; larger ones on every
 * key whose index is a multiple of FULL_CHECK_EVERY (and by length on the others), because a
 * full compare costs the client ~0.5-1.5 ms per 8 MiB here, 5-15% of a GET at 1,000 MiB/s.
 */
const FULL_CHECK_MAX_BYTES = 1 << 20;
const FULL_CHECK_EVERY = 4;
/** Wait after a run before counting the server's log lines, ms (outside the measured time). */
const LOG_SETTLE_MS = 100;

export const sizeLabel = (n: number) => (n >= 1 << 20 ? `${n >> 20} MiB` : `${n >> 10} KiB`);

/** The bodies of one size: one per key, distinct (key index stamped at both ends). */
interface Corpus {
  size: number;
  bodies: Buffer[];
  etags: string[];
}

function corpus(size: number, keys: number): Corpus {
  const base = randomBytes(size);
  const bodies: Buffer[] = [];
  const etags: string[] = [];
  for (let k = 0; k < keys; k++) {
    const b = Buffer.from(base);
    if (size >= 8) {
      b.writeUInt32LE(k, 0);
      b.writeUInt32LE(k, size - 4);
    }
    bodies.push(b);
    etags.push(`"${createHash('md5').update(b).digest('hex')}"`);
  }
  return { size, bodies, etags };
}

/** Keys end in -<size> so that the trivial server knows what to answer. */
const keyPath = (size: number, k: number) => `/${BUCKET}/o${k}-${size}`;

function summarise(r: RunResult, checkedBytes: number, logLines: number): RunSummary {
  const s: RunSummary = {
    n: r.n,
    seconds: r.seconds,
    errors: r.errors,
    wrong: r.wrong,
    bytes: r.bytes,
    checkedBytes,
    p50: percentile(r.latenciesMs, 50),
    serverCpuSeconds: r.serverCpuSeconds,
    clientCpuSeconds: r.clientCpuSeconds,
    logLines,
  };
  if (r.firstError) s.firstError = r.firstError;
  return s;
}

/**
 * Runs `lanes` against `targets` (`runs` interleaved runs per cell) and returns each lane's
 * cells and stamp. Creates the bucket on every storing target first; leaves the objects.
 */
export async function sweep(
  targets: Target[],
  lanes: readonly SweepLane[],
  opts: { runs: number; quick: boolean; log: (m: string) => void }
): Promise<Record<string, LaneStamp & { cells: CellSummary[] }>> {
  const out: Record<string, LaneStamp & { cells: CellSummary[] }> = {};
  // A cell at `conc` connections gets a pool of exactly that many: through a larger one, a
  // request sent before the last one's connection reported itself free went to another
  // (sequential requests alternate between two connections), and 8 MiB GETs at one connection
  // measured 37-46 ops/s that way against 41-136 through a pool of one (alternating runs).
  const cellPools = new Map<string, Pool>();
  const poolFor = (t: Target, conc: number): Pool => {
    const id = `${t.name} ${conc}`;
    let p = cellPools.get(id);
    if (!p) cellPools.set(id, (p = pool(t, conc)));
    return p;
  };
  const populated = new Set<string>();
  try {
    for (const t of targets) {
      if (t.name !== 'trivial-hono') await send(poolFor(t, 1), t, 'PUT', `/${BUCKET}`);
    }
    for (const lane of lanes) {
      const bodies = corpus(lane.size, lane.keys);
      const ms = opts.quick ? Math.min(lane.ms, QUICK_RUN_MS) : lane.ms;
      const cells: CellSummary[] = [];
      for (const conc of lane.conc) {
        const samples = new Map<string, number[]>(targets.map((t) => [t.name, []]));
        const runs = new Map<string, RunSummary[]>(targets.map((t) => [t.name, []]));
        for (let run = 0; run < opts.runs; run++) {
          for (const t of targets) {
            const p = poolFor(t, conc);
            const stores = t.name !== 'trivial-hono';
            if (lane.op === 'GET' && !populated.has(`${t.name} ${lane.size}`)) {
              await populate(p, t, bodies, stores);
              populated.add(`${t.name} ${lane.size}`);
            }
            let cursor = 0;
            let checked = 0;
            const mark = logMark(t.logPath);
            const r = await closedLoop(t, conc, ms, async () => {
              const k = cursor++ % lane.keys;
              const body = bodies.bodies[k]!;
              const full = stores && (lane.op === 'PUT' || lane.size <= FULL_CHECK_MAX_BYTES || k % FULL_CHECK_EVERY === 0);
              const expect: Expect =
                lane.op === 'PUT' ? (stores ? { etag: bodies.etags[k]! } : {}) : full ? { body } : { length: lane.size };
              const n = await sendChecked(p, t, lane.op, keyPath(lane.size, k), lane.op === 'PUT' ? body : undefined, expect);
              if (full) checked += lane.size;
              return lane.op === 'PUT' ? lane.size : n;
            });
            // A server may log a request just after the client has its response (the peers log
            // when the response has finished): let the last lines land before counting.
            await new Promise((res) => setTimeout(res, LOG_SETTLE_MS));
            const summary = summarise(r, checked, logLinesSince(t.logPath, mark));
            runs.get(t.name)!.push(summary);
            samples.get(t.name)!.push(...r.latenciesMs);
            opts.log(
              `${t.name} ${lane.op} ${sizeLabel(lane.size)} x${conc} run ${run + 1}: ${fmt(r.n / r.seconds)} ops/s, ` +
                `${r.errors} errors${r.firstError ? ` (${r.firstError})` : ''}, ${summary.logLines} log lines`
            );
          }
        }
        for (const t of targets) {
          const all = samples.get(t.name)!;
          cells.push({ target: t.name, size: lane.size, conc, op: lane.op, runs: runs.get(t.name)!, p95: percentile(all, 95), p99: percentile(all, 99) });
        }
      }
      out[lane.name] = { at: new Date().toISOString(), load: loadavg().map((x) => Math.round(x * 100) / 100), quick: opts.quick, runs: opts.runs, ms, targets: targets.map((t) => t.name), cells };
    }
  } finally {
    await Promise.all([...cellPools.values()].map((p) => p.close()));
  }
  return out;
}

/** PUTs every key of `bodies` once (16 at a time), checking each ETag. */
async function populate(p: ReturnType<typeof pool>, t: Target, bodies: Corpus, stores: boolean): Promise<void> {
  const WIDTH = 16;
  let next = 0;
  await Promise.all(
    Array.from({ length: WIDTH }, async () => {
      for (let k = next++; k < bodies.bodies.length; k = next++) {
        await sendChecked(p, t, 'PUT', keyPath(bodies.size, k), bodies.bodies[k]!, stores ? { etag: bodies.etags[k]! } : {});
      }
    })
  );
}
