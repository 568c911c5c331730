/**
 * Kill -9 while checkpoints run beside the commit loop.
 *
 * The kill-test worker (test/soak/worker.ts) runs mixed concurrent load with tiny checkpoint
 * thresholds and every root write delayed by 200 ms: a checkpoint is due every few commits
 * and spends at least 200 ms between its freeze and its anchor move, while writes keep being
 * acknowledged, so the seeded kills land while one is in flight (frozen layers in memory, runs
 * written, root not yet named). Reopening must show every acknowledged write byte-exact —
 * those acknowledged after the freeze live only in the commits after the old root — no
 * half-applied write, and a clean verifyRepository (the same checks as kill.test.ts).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../soak/bundle.js';
import { runKillSoak } from '../soak/harness.js';
import { tempDir } from './helpers.js';

let worker: Awaited<ReturnType<typeof bundleEntry>>;
const temps: (() => void)[] = [];
beforeAll(async () => {
  worker = await bundleEntry(fileURLToPath(new URL('../soak/worker.ts', import.meta.url)), 'worker-ckpt');
});
afterAll(async () => {
  for (const c of temps.splice(0)) c();
  await worker?.remove();
});

describe('kill -9 during a background checkpoint', () => {
  it('loses no acknowledged write and shows no half-applied one (3 kills, one directory)', async () => {
    const { dir, cleanup } = tempDir('kill-ckpt');
    temps.push(cleanup);
    const killed: boolean[] = [];
    const tally = await runKillSoak({
      workDir: dir,
      workerPath: worker.path,
      seed: 1010,
      iterations: 3,
      // Each kill comes 300–1200 ms after the worker's first finished checkpoint (a timer from
      // `ready` let a slow CI host kill all three before any checkpoint ran).
      killAfterMs: [300, 1200],
      killAfterFirstCheckpoint: true,
      earlyKillShare: 0,
      store: { checkpointEvery: 6, overlayBytes: 8 * 1024, maxRuns: 3, rootDelayMs: 200, commitLog: true },
      onIteration: (r) => killed.push(r.killed),
    });
    expect(tally.failures).toEqual([]);
    expect(killed).toEqual([true, true, true]);
    expect(tally.ackedWrites).toBeGreaterThan(10);
    // Every iteration saw a checkpoint finish before its kill (so later ones were in flight
    // when it came).
    expect(tally.checkpoints).toBeGreaterThanOrEqual(3);
    expect(tally.verifyClean).toBe(3);
  });
});
