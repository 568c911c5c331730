/**
 * The server's history expiry worker (src/server/expiry-worker.ts) on a real repository (the
 * memory provider): interval 0 schedules nothing, a short interval runs again and again with
 * a log line per run, runs asked for while one is in progress wait for it (never overlap),
 * a failed run is logged, counted and kept as the last outcome, and stop() waits for a run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { Logger } from '../../src/server/log.js';
import { ExpiryWorker } from '../../src/server/expiry-worker.js';
import { stream } from '../store/helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function setup(intervalMs: number) {
  const store = await Store.open(await createMemoryProvider(), { retentionMs: 0 });
  stores.push(store);
  await store.createBucket('work');
  for (let i = 0; i < 30; i++) await store.putObject('work', 'k', stream(Buffer.from(`v${i}`)), { size: `v${i}`.length });
  const lines: { msg: string; [k: string]: unknown }[] = [];
  const log = new Logger('info', (l) => lines.push(JSON.parse(l)));
  return { store, lines, worker: new ExpiryWorker(store, log, { intervalMs }) };
}

describe('the history expiry worker', () => {
  it('schedules nothing with interval 0, but runs when asked', async () => {
    const { worker, lines } = await setup(0);
    worker.start();
    await sleep(150);
    expect(worker.stats.runs).toBe(0);
    const r = await worker.runNow();
    expect(r.expired).toBe(29);
    expect(worker.stats).toMatchObject({ runs: 1, failures: 0, expired: 29, examined: 30 });
    expect(lines.find((l) => l.msg === 'history.expired')).toMatchObject({ expired: 29, buckets: 1 });
    expect(worker.status()).toMatchObject({ running: false, last: { report: { expired: 29 } } });
    await worker.stop();
  });

  it('runs every interval and stops cleanly', async () => {
    const { worker, store } = await setup(40);
    worker.start();
    const deadline = Date.now() + 10_000;
    while (worker.stats.runs < 3 && Date.now() < deadline) await sleep(20);
    expect(worker.stats.runs).toBeGreaterThanOrEqual(3);
    expect(worker.stats.expired).toBe(29);
    await worker.stop();
    const runs = worker.stats.runs;
    await sleep(150);
    expect(worker.stats.runs).toBe(runs);
    expect((await store.listVersions('work')).versions).toHaveLength(1);
  });

  it('never overlaps runs: a trigger during a run reports it running and starts nothing', async () => {
    const { worker } = await setup(0);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = worker.runNow({ onProgress: () => gate });
    await sleep(20);
    expect(worker.status().running).toBe(true);
    expect(worker.trigger()).toMatchObject({ running: true, current: { examined: 30 } });
    const second = worker.runNow();
    release();
    await first;
    expect((await second).expired).toBe(0);
    expect(worker.stats.runs).toBe(2);
  });

  it('logs, counts and keeps a failed run', async () => {
    const { worker, lines } = await setup(0);
    await expect(worker.runNow({ bucket: 'nope' })).rejects.toMatchObject({ code: 'NoSuchBucket' });
    expect(worker.stats.failures).toBe(1);
    expect(lines.find((l) => l.msg === 'history.expiry_failed')?.error).toMatch(/does not exist/);
    expect(worker.status()).toMatchObject({ running: false, last: { error: { code: 'NoSuchBucket' } } });
  });
});
