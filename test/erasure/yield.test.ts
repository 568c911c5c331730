/**
 * Background maintenance lets requests go first: yieldToRequests waits while the server is
 * busy, for a bounded time; the repair worker and a scrub pass wait before each blob and still
 * get through a server that is never quiet; Metrics.busy says whether requests are being served
 * or one ended moments ago. The server wiring: scrub-server.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { RepairWorker } from '../../src/provider/erasure/repair-worker.js';
import { runScrub } from '../../src/provider/erasure/scrub.js';
import { QUIET_POLL_MS, yieldToRequests, type RateClock } from '../../src/provider/erasure/scrub-rate.js';
import { ProviderError } from '../../src/provider/provider.js';
import { Metrics } from '../../src/server/metrics.js';
import { fakeWith } from './scrub-fake.js';

/** A clock whose sleeps advance it at once, running `onSleep` after each. */
function fakeClock(onSleep: (c: { t: number }) => void = () => undefined): RateClock & { t: number; slept: number[] } {
  const c = {
    t: 5_000,
    slept: [] as number[],
    now: () => c.t,
    sleep: async (ms: number, signal?: AbortSignal) => {
      if (signal?.aborted) throw new ProviderError('Aborted', 'aborted');
      c.slept.push(ms);
      c.t += ms;
      onSleep(c);
    },
  };
  return c;
}

const quiet = { log: () => undefined, info: () => undefined, warn: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('yieldToRequests', () => {
  it('returns at once when the server is quiet', async () => {
    const c = fakeClock();
    expect(await yieldToRequests({ busy: () => false, maxWaitMs: 1000 }, c)).toBe(0);
    expect(c.slept).toEqual([]);
  });

  it('waits while busy, in short looks, and goes on when the requests stop', async () => {
    const c = fakeClock();
    const waited = await yieldToRequests({ busy: () => c.t < 5_130, maxWaitMs: 1000 }, c);
    expect(waited).toBe(150); // six looks of QUIET_POLL_MS
    expect(c.slept.every((ms) => ms <= QUIET_POLL_MS)).toBe(true);
  });

  it('gives up waiting after maxWaitMs on a server that is never quiet', async () => {
    const c = fakeClock();
    const waited = await yieldToRequests({ busy: () => true, maxWaitMs: 1010 }, c);
    expect(waited).toBe(1010); // the last look is shortened to end on time
    expect(c.slept.at(-1)).toBe(10);
  });

  it('rejects with Aborted when its signal fires', async () => {
    const ac = new AbortController();
    const c = fakeClock((x) => x.t > 5_100 && ac.abort());
    await expect(yieldToRequests({ busy: () => true, maxWaitMs: 10_000 }, c, ac.signal)).rejects.toMatchObject({ code: 'Aborted' });
  });
});

describe('maintenance under load', () => {
  it('the repair worker waits for a pause before each key, up to its bound, and counts the wait', async () => {
    const p = await fakeWith(4);
    for (const key of ['b/00001', 'b/00002']) p.damage.set(key, ['missing', 'ok', 'ok', 'ok', 'ok', 'ok']);
    p.queue.push('b/00001', 'b/00002');
    let busy = true;
    const w = new RepairWorker(p, quiet, { rateBytesPerSec: 1e9, load: { busy: () => busy, maxWaitMs: 400 } });
    const t0 = performance.now();
    const drained = w.drain();
    await sleep(150);
    expect(p.checked).toEqual([]); // still waiting for the requests to stop
    busy = false;
    await drained;
    const ms = performance.now() - t0;
    expect(p.checked).toEqual(['b/00001', 'b/00002']);
    expect(ms).toBeLessThan(400 + 150); // went on once quiet, not after the bound
    expect(w.stats.yieldedMs).toBeGreaterThanOrEqual(140);
    // Never quiet: each key still goes, after the bound.
    p.damage.set('b/00003', ['ok', 'missing', 'ok', 'ok', 'ok', 'ok']);
    p.queue.push('b/00003');
    busy = true;
    const t1 = performance.now();
    await w.drain();
    expect(p.checked.at(-1)).toBe('b/00003');
    expect(performance.now() - t1).toBeGreaterThanOrEqual(390);
    expect(p.damage.has('b/00003')).toBe(false);
    await w.stop();
  });

  it('stopping the repair worker while it waits leaves the key pending', async () => {
    const p = await fakeWith(2);
    p.damage.set('b/00001', ['missing', 'ok', 'ok', 'ok', 'ok', 'ok']);
    p.queue.push('b/00001');
    const w = new RepairWorker(p, quiet, { rateBytesPerSec: 1e9, load: { busy: () => true, maxWaitMs: 60_000 } });
    const drained = w.drain();
    await sleep(50);
    await w.stop();
    await drained;
    expect(p.checked).toEqual([]);
    expect(w.pending).toBe(1);
  });

  it('a scrub pass waits before each blob and completes on a server that is never quiet', async () => {
    const p = await fakeWith(6);
    p.damage.set('b/00002', ['ok', 'ok', 'corrupt', 'ok', 'ok', 'ok']);
    const c = fakeClock();
    const r = await runScrub(p, { repair: true, clock: c, concurrency: 1, load: { busy: () => true, maxWaitMs: 200 } });
    expect(r.complete).toBe(true);
    expect(r.blobs).toBe(6);
    expect(r.repairedFragments).toBe(1);
    expect(c.slept.reduce((a, b) => a + b, 0)).toBe(6 * 200);
    const c2 = fakeClock();
    await runScrub(p, { repair: true, clock: c2, concurrency: 1, resume: false, load: { busy: () => false, maxWaitMs: 200 } });
    expect(c2.slept).toEqual([]);
  });
});

describe('Metrics.busy', () => {
  it('is true while a request is in flight and for quietMs after one ends', async () => {
    const m = new Metrics();
    expect(m.busy(50)).toBe(false);
    m.inFlight++;
    expect(m.busy(50)).toBe(true);
    m.inFlight--;
    m.observe('GetObject', 200, 0.001, 0, 10);
    expect(m.busy(50)).toBe(true);
    await sleep(70);
    expect(m.busy(50)).toBe(false);
  });
});
