/**
 * Kill tests (CI size; `npm run soak:kill` runs the same harness for 50+ iterations).
 *
 * A worker process runs mixed concurrent load on an fs repository (puts of 0 B to 8 MiB,
 * overwrites, deletes, batch deletes, copies, multipart uploads, checked reads) with tiny
 * checkpoint/compaction thresholds, and is SIGKILLed at a seeded random moment. Reopening
 * the directory must then show every acknowledged write byte-exact (unless its in-flight
 * successor is there, whole), no unacknowledged write half-visible, a listing that agrees,
 * multipart uploads open exactly when they must be, and a clean `verifyRepository`. The
 * iterations share one directory, so later kills land on checkpoints, compactions and
 * state recovered from earlier kills.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../soak/bundle.js';
import { runKillSoak } from '../soak/harness.js';
import { tempDir } from './helpers.js';

let worker: Awaited<ReturnType<typeof bundleEntry>>;
const temps: (() => void)[] = [];
beforeAll(async () => {
  worker = await bundleEntry(fileURLToPath(new URL('../soak/worker.ts', import.meta.url)), 'worker');
});
afterAll(async () => {
  for (const c of temps.splice(0)) c();
  await worker?.remove();
});

describe('kill -9 during mixed load', () => {
  it('keeps every acknowledged write and never shows a half-applied one (3 kills, one directory)', async () => {
    const { dir, cleanup } = tempDir('kill');
    temps.push(cleanup);
    const killed: boolean[] = [];
    const tally = await runKillSoak({
      workDir: dir,
      workerPath: worker.path,
      seed: 4242,
      iterations: 3,
      // Timed from the first finished checkpoint, so a slow host still kills mid-load.
      killAfterMs: [300, 1200],
      killAfterFirstCheckpoint: true,
      earlyKillShare: 0,
      onIteration: (r) => killed.push(r.killed),
    });
    expect(tally.failures).toEqual([]);
    expect(killed).toEqual([true, true, true]);
    // The load really ran: writes were acknowledged and checkpoints were crossed.
    expect(tally.ackedWrites).toBeGreaterThan(10);
    expect(tally.checkpoints).toBeGreaterThanOrEqual(3);
    expect(tally.verifyClean).toBe(3);
  });
});
