/**
 * A restore killed midway (SIGKILL, restore-kill-worker.ts, checkpoints every 4 commits) and
 * run again gives exactly the state at the time asked: three kills on one directory, each
 * after a few of the restore's commits (later runs start from what earlier ones did), then a
 * run to the end. After every kill the repository opens and verifies clean, every key is
 * either still as it was before the restore or already as it was at the time, and the final
 * state equals the state at the time for every key, bodies included.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../soak/bundle.js';
import { openStore } from '../../src/store/open.js';
import { verifyRepository } from '../../src/store/verify.js';
import { runKillable } from './kill-run.js';
import { collect, tempDir } from './helpers.js';
import { putText } from './history-model.js';
import type { Store } from '../../src/store/store.js';

const BUCKET = 'killed-restore';
const KEYS = 240;

let worker: Awaited<ReturnType<typeof bundleEntry>>;
const temps: (() => void)[] = [];
beforeAll(async () => {
  worker = await bundleEntry(fileURLToPath(new URL('./restore-kill-worker.ts', import.meta.url)), 'restore-kill');
});
afterAll(async () => {
  for (const c of temps.splice(0)) c();
  await worker?.remove();
});

interface Line {
  t: string;
  commits?: number;
  message?: string;
}

/** Runs the worker; SIGKILLs it once it reports `killAfterCommits` commits (never, if undefined). */
function run(dir: string, time: number, killAfterCommits: number | undefined): Promise<{ lines: Line[]; killed: boolean }> {
  return runKillable<Line>(worker.path, [dir, BUCKET, String(time), '6'], (line, kill) => {
    if (killAfterCommits !== undefined && line.t === 'progress' && (line.commits ?? 0) >= killAfterCommits) kill();
  });
}

const sameMap = (a: Map<string, string>, b: Map<string, string>) => a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const key = (i: number) => `k/${String(i).padStart(4, '0')}`;

async function state(store: Store): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let token: string | undefined;
  do {
    const page = await store.listObjects(BUCKET, { maxKeys: 1000, ...(token ? { continuationToken: token } : {}) });
    for (const c of page.contents) out.set(c.key, Buffer.from(await collect((await store.getObject(BUCKET, c.key)).body)).toString());
    token = page.nextContinuationToken;
  } while (token);
  return out;
}

describe('kill -9 during a restore', () => {
  it('re-running the restore after each kill converges to exactly the state at the time', async () => {
    const { dir, cleanup } = tempDir('restore-kill');
    temps.push(cleanup);
    const repo = `${dir}/repo`;
    let store = await openStore(repo);
    await store.createBucket(BUCKET);
    await store.putVersioning(BUCKET, 'Enabled');
    for (let i = 0; i < KEYS; i++) await putText(store, BUCKET, key(i), `then ${i}`);
    // Commit times run ahead of the clock in a burst (each is at least 1 ms after the last).
    const time = Math.max(Date.now(), store.repo.lastCommitTime);
    while (Date.now() <= time + 5) await sleep(5);
    for (let i = 0; i < KEYS; i++) {
      if (i % 4 === 0) await store.deleteObject(BUCKET, key(i));
      else if (i % 4 !== 3) await putText(store, BUCKET, key(i), `later ${i}`);
    }
    for (let i = KEYS; i < KEYS + 40; i++) await putText(store, BUCKET, key(i), `new ${i}`);
    const then = new Map(Array.from({ length: KEYS }, (_, i) => [key(i), `then ${i}`]));
    const before = await state(store);
    await store.close();

    let midway = 0;
    for (const killAt of [3, 5, 4]) {
      const { lines, killed } = await run(repo, time, killAt);
      expect(lines.find((l) => l.t === 'fatal')?.message).toBeUndefined();
      expect(killed).toBe(true);
      store = await openStore(repo, { create: false });
      const report = await verifyRepository(store.repo.provider);
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      const mid = await state(store);
      // Every key is as before the restore or as at the time, nothing else.
      for (const k of new Set([...before.keys(), ...then.keys()])) {
        const now = mid.get(k);
        expect([before.get(k), then.get(k)], k).toContain(now);
      }
      expect(mid).not.toEqual(before);
      if (!sameMap(mid, then)) midway++;
      await store.close();
    }
    // The kills landed inside the restore (not after it), at least once (a loaded machine may let one finish).
    expect(midway).toBeGreaterThan(0);
    const last = await run(repo, time, undefined);
    expect(last.lines.at(-1)).toMatchObject({ t: 'done' });
    store = await openStore(repo, { create: false });
    expect(await state(store)).toEqual(then);
    // A further run finds nothing to do.
    const again = await store.restore(BUCKET, { to: time });
    expect(again).toMatchObject({ restored: 0, deleted: 0, commits: 0 });
    await store.close();
  }, 120_000);
});
