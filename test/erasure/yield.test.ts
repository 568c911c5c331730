/**
 * Background maintenance lets requests go first: yieldToRequests waits while the server is
 * busy, for a bounded time; the repair worker and a scrub pass wait before each blob and still
 * get through a server that is never quiet; Metrics.busy says whether requests are being served
 * or one ended moments ago. The server wiring: scrub-server.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { RepairWorker } from '../../src/provider/erasure/repair-worker.js';
import { runScrub } from '../../src/provider/erasure/scrub.js';
import { QUIET_POLL_MS, yieldToRequests, type RateClock } from '../../src/provider/erasure/scrub-rate.js';
import { ProviderError } from '../../src/provider/provider.js';
import { Metrics } from '../../src/server/metrics.js';
import { fakeWith } from './scrub-fake.js';

/** A clock whose sleeps advance it without waiting, once what is ready to run has run (so work
 * in flight ends before the time jumps), running `onSleep` after each. */
function fakeClock(onSleep: (c: { t: number }) => void = () => undefined): RateClock & { t: number; slept: number[] } {
  const c = {
    t: 5_000,
    slept: [] as number[],
    now: () => c.t,
    sleep: async (ms: number, signal?: AbortSignal) => {
      await new Promise((r) => setImmediate(r));
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
  const load = (busy: () => boolean, maxWaitMs = 1000) => ({ busy, waitPerWork: 4, maxWaitMs });

  it('returns at once when the server is quiet, or when no work was done since the last wait', async () => {
    const c = fakeClock();
    expect(await yieldToRequests(load(() => false), 100, c)).toBe(0);
    expect(await yieldToRequests(load(() => true), 0, c)).toBe(0);
    expect(c.slept).toEqual([]);
  });

  it('waits while busy, in short looks, and goes on when the requests stop', async () => {
    const c = fakeClock();
    const waited = await yieldToRequests(load(() => c.t < 5_130), 100, c);
    expect(waited).toBe(150); // six looks of QUIET_POLL_MS
    expect(c.slept.every((ms) => ms <= QUIET_POLL_MS)).toBe(true);
  });

  it('on a server never quiet, waits waitPerWork times the work done, at most maxWaitMs', async () => {
    const c = fakeClock();
    expect(await yieldToRequests(load(() => true), 30, c)).toBe(120);
    expect(c.slept.at(-1)).toBe(20); // the last look is shortened to end on time
    expect(await yieldToRequests(load(() => true), 10_000, c)).toBe(1000);
    expect(await yieldToRequests(load(() => true, 300), 10_000, c)).toBe(300);
  });

  it('rejects with Aborted when its signal fires', async () => {
    const ac = new AbortController();
    const c = fakeClock((x) => x.t > 5_100 && ac.abort());
    await expect(yieldToRequests(load(() => true), 10_000, c, ac.signal)).rejects.toMatchObject({ code: 'Aborted' });
  });
});

describe('maintenance under load', () => {
  it('the repair worker waits after each key for a pause, in proportion to its work, and counts the wait', async () => {
    const p = await fakeWith(6);
    const keys = ['b/00001', 'b/00002', 'b/00003'];
    for (const key of keys) p.damage.set(key, ['missing', 'ok', 'ok', 'ok', 'ok', 'ok']);
    // Each repair takes 60 ms of this clock: up to 240 ms of waiting after it.
    const c = fakeClock();
    const real = p.checkBlob.bind(p);
    const at: number[] = [];
    p.checkBlob = async (key, o) => (at.push(c.t), (c.t += 60), real(key, o));
    p.queue.push(...keys);
    let quietFrom = Infinity;
    const load = { busy: () => c.t < quietFrom, waitPerWork: 4, maxWaitMs: 1000 };
    const w = new RepairWorker(p, quiet, { rateBytesPerSec: 1e9, load, clock: c });
    // Never quiet: the first key goes at once, each next one after four times the last's work.
    await w.drain();
    expect(p.checked).toEqual(keys);
    expect([at[1]! - at[0]!, at[2]! - at[1]!]).toEqual([60 + 240, 60 + 240]);
    expect(w.stats.yieldedMs).toBe(480);
    // The requests stop 50 ms into a wait: the worker goes on at its next look.
    for (const key of ['b/00004', 'b/00005']) p.damage.set(key, ['ok', 'missing', 'ok', 'ok', 'ok', 'ok']);
    p.queue.push('b/00004', 'b/00005');
    quietFrom = c.t + 60 + 50;
    await w.drain();
    expect(p.checked.slice(-2)).toEqual(['b/00004', 'b/00005']);
    expect(w.stats.yieldedMs).toBe(480 + 50);
    // Quiet from the start: no waiting at all.
    p.damage.set('b/00000', ['ok', 'ok', 'missing', 'ok', 'ok', 'ok']);
    p.damage.set('b/00001', ['ok', 'ok', 'missing', 'ok', 'ok', 'ok']);
    p.queue.push('b/00000', 'b/00001');
    await w.drain();
    expect(w.stats.yieldedMs).toBe(530);
    await w.stop();
  });

  it('stopping the repair worker while it waits leaves the key pending', async () => {
    const p = await fakeWith(2);
    for (const key of ['b/00000', 'b/00001']) p.damage.set(key, ['missing', 'ok', 'ok', 'ok', 'ok', 'ok']);
    p.delay = () => 20;
    p.queue.push('b/00000', 'b/00001');
    const w = new RepairWorker(p, quiet, { rateBytesPerSec: 1e9, load: { busy: () => true, waitPerWork: 1000, maxWaitMs: 60_000 } });
    const drained = w.drain();
    await vi.waitFor(() => expect(p.checked).toEqual(['b/00000']));
    await w.stop();
    await drained;
    expect(p.checked).toEqual(['b/00000']);
    expect(w.pending).toBe(1);
  });

  it('a scrub pass waits between blobs in proportion to its work, less its rate-limit waits, and completes on a server never quiet', async () => {
    const p = await fakeWith(6);
    p.damage.set('b/00002', ['ok', 'ok', 'corrupt', 'ok', 'ok', 'ok']);
    // Each check "takes" 10 ms of this clock (the fake provider answers at once).
    const c = fakeClock();
    const real = p.checkBlob.bind(p);
    p.checkBlob = async (key, o) => ((c.t += 10), real(key, o));
    const r = await runScrub(p, { repair: true, clock: c, concurrency: 1, load: { busy: () => true, waitPerWork: 3, maxWaitMs: 1000 } });
    expect(r.complete).toBe(true);
    expect(r.blobs).toBe(6);
    expect(r.repairedFragments).toBe(1);
    // Before each blob but the first: three times the 10 ms the one before it took.
    expect(c.slept.reduce((a, b) => a + b, 0)).toBe(5 * 30);
    // A rate limit's own waits are not work: under a tight limit the pass waits no longer.
    const c2 = fakeClock();
    p.checkBlob = async (key, o) => ((c2.t += 10), real(key, o));
    // 100-byte blobs at 50 bytes/s: the limiter waits ~2 s per blob once its burst is spent.
    const r2 = await runScrub(p, { repair: true, clock: c2, concurrency: 1, resume: false, rateBytesPerSec: 50, load: { busy: () => true, waitPerWork: 3, maxWaitMs: 1000 } });
    expect(r2.complete).toBe(true);
    expect(c2.slept.filter((ms) => ms > QUIET_POLL_MS).length).toBeGreaterThan(2);
    const yields = c2.slept.filter((ms) => ms <= QUIET_POLL_MS).reduce((a, b) => a + b, 0);
    expect(yields).toBe(5 * 30);
    const c3 = fakeClock();
    p.checkBlob = real;
    await runScrub(p, { repair: true, clock: c3, concurrency: 1, resume: false, load: { busy: () => false, waitPerWork: 3, maxWaitMs: 1000 } });
    expect(c3.slept).toEqual([]);
  });
});

describe('a scrub pass running several checks at once', () => {
  it('counts as work the time its checks are in flight, also during the rate limit waits', async () => {
    const p = await fakeWith(12, 2 ** 20);
    const c = fakeClock();
    const real = p.checkBlob.bind(p);
    // A check lasts 40 ms of this clock, or until the clock has moved that far: the pass
    // meanwhile sleeps in its rate limit (1 MiB blobs at 4 MiB/s) with checks in flight.
    p.checkBlob = async (key, o) => {
      const end = c.t + 40;
      for (let i = 0; i < 20 && c.t < end; i++) await new Promise((r) => setImmediate(r));
      c.t = Math.max(c.t, end);
      return real(key, o);
    };
    const r = await runScrub(p, { clock: c, concurrency: 4, rateBytesPerSec: 4 * 2 ** 20, load: { busy: () => true, waitPerWork: 10, maxWaitMs: 1000 } });
    expect(r.complete).toBe(true);
    expect(r.blobs).toBe(12);
    const yielded = c.slept.filter((ms) => ms <= QUIET_POLL_MS).reduce((a, b) => a + b, 0);
    expect(yielded).toBeGreaterThanOrEqual(1000);
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
