/**
 * The model-based history test across kills: a real server in a child process (tiny
 * checkpoint and compaction thresholds, fs repository) runs a seeded sequence of versioned
 * operations checked against the model of S3 (test/store/history/); after the last
 * acknowledged operation a few more writes are sent on distinct keys without waiting and the
 * process is SIGKILLed a random few milliseconds later. The directory is reopened by a
 * server in this process and everything is compared with the model: every acknowledged
 * version, marker and removal is there, each in-flight write happened whole or not at all
 * (pending.ts), and listings and reads agree, also as of past moments of every earlier
 * iteration (history survives the kills). The sequences fork, restore and delete buckets too.
 * Three kills on one directory, so later ones land on state recovered from earlier ones; the
 * model and its timeline carry over.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../soak/bundle.js';
import { startTestServer } from '../integration/harness.js';
import { prng, randInt } from '../support/random.js';
import { tempDir } from './helpers.js';
import { Probe } from './history/client.js';
import { checkAll, walkVersions } from './history/check.js';
import { KEYS } from './history/ops.js';
import { fire, pendingOps, resolvePending } from './history/pending.js';
import { checkPast, runSequence } from './history/runner.js';
import type { Timeline } from './history/timeline.js';
import { TINY_STORE } from './history/tiny.js';
import type { ListedEntry, World } from './history/model.js';

const SEED = Number(process.env.MODEL_HISTORY_KILL_SEED ?? 77);
const ITERATIONS = Number(process.env.MODEL_HISTORY_KILLS ?? 3);
/** Reads as of past moments after each reopen (point-in-time, issue 9). */
const AS_OF = true;
/** Forks (x-strata-fork-source) and whole-bucket deletions among the steps (issue 9). */
const FORKS = true;

let worker: Awaited<ReturnType<typeof bundleEntry>>;
const temps: (() => void)[] = [];
beforeAll(async () => {
  worker = await bundleEntry(fileURLToPath(new URL('./history/server-worker.ts', import.meta.url)), 'history-server');
});
afterAll(async () => {
  for (const c of temps.splice(0)) c();
  await worker?.remove();
});

/** Starts the server worker on `dir`; resolves with its URL. */
function startWorker(dir: string): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [worker.path, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${err}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      resolve({ child, url: (JSON.parse(line) as { url: string }).url, stderr: () => err });
    });
    child.once('exit', (code, signal) => reject(new Error(`worker exited (${code ?? signal}): ${err}`)));
  });
}

async function kill(child: ChildProcess): Promise<string | null> {
  if (child.exitCode !== null) return `exit ${child.exitCode}`;
  const gone = new Promise<string | null>((r) => child.once('exit', (_c, s) => r(s)));
  child.kill('SIGKILL');
  return gone;
}

describe('model-based history across kill -9', () => {
  it('keeps every acknowledged version, marker and removal; in-flight writes whole or absent (3 kills, one directory)', async () => {
    const { dir, cleanup } = tempDir('model-kill');
    temps.push(cleanup);
    const data = `${dir}/data`;
    const next = prng(SEED);
    let world: World | undefined;
    let timeline: Timeline | undefined;
    let applied = 0;
    let asOfChecks = 0;
    let absent = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const w = await startWorker(data);
      const probe = new Probe(w.url);
      const run = await runSequence(probe, {
        seed: SEED * 1000 + i,
        ops: randInt(next, 40, 90),
        checkEvery: 0,
        asOf: AS_OF,
        forks: FORKS,
        prefix: 'killed-history',
        ...(world ? { world } : {}),
        ...(timeline ? { timeline } : {}),
      });
      world = run.world;
      timeline = run.timeline;
      const pending = pendingOps(next, world, KEYS, randInt(next, 1, 4), i);
      await timeline.beforeWrite();
      for (const op of pending) void fire(probe, op);
      await sleep(randInt(next, 0, 12));
      expect(await kill(w.child)).toBe('SIGKILL');
      probe.destroy();

      const reopened = await startTestServer({ dataDir: data, config: { log: 'off' }, store: TINY_STORE });
      const check = new Probe(reopened.url);
      try {
        for (const op of pending) {
          const listed = (await walkVersions(check, op.bucket, 1000)) as ListedEntry[];
          if (resolvePending(world.get(op.bucket)!, op, listed)) applied++;
          else absent++;
        }
        timeline.afterWrite(world);
        for (const m of world.values()) await checkAll(check, m, KEYS, prng(SEED + i));
        // History survived too: reads as of moments before this kill and earlier ones.
        if (AS_OF) asOfChecks += await checkPast(check, world, timeline, KEYS, prng(SEED * 7 + i));
      } catch (err) {
        throw new Error(`kill ${i} (seed ${SEED}): ${(err as Error).message}`, { cause: err });
      } finally {
        check.destroy();
        await reopened.stop();
      }
    }
    // The kills landed among writes: some in-flight writes made it, the history grew.
    expect(applied + absent).toBeGreaterThan(0);
    if (AS_OF) expect(asOfChecks).toBeGreaterThan(0);
    expect([...world!.values()].reduce((n, m) => n + m.listVersions().length, 0)).toBeGreaterThan(10);
  });
});
