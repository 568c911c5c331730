/**
 * The scrub's own logic against a stand-in maintenance surface (scrub-fake.ts): accounting by
 * domain, lost and failed blobs, the resumable cursor (with completions out of key order), the
 * rate limit, and hostile cursor blobs. The real provider is tested in scrub-real*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ETA_AFTER_MS, runScrub, SCRUB_CURSOR_KEY, SCRUB_LAST_KEY, type ScrubProgress } from '../../src/provider/erasure/scrub.js';
import { loadCursor, parseCursor, saveCursor, emptyTotals, loadLastPass, loadPassSize, SCRUB_SIZE_KEY } from '../../src/provider/erasure/scrub-cursor.js';
import { ByteRateLimiter, type RateClock } from '../../src/provider/erasure/scrub-rate.js';
import { ProviderError } from '../../src/provider/provider.js';
import { fakeWith } from './scrub-fake.js';

/** A clock whose sleeps advance it at once (no real waiting). */
function fakeClock(): RateClock & { t: number; slept: number[] } {
  const c = {
    t: 1_000_000,
    slept: [] as number[],
    now: () => c.t,
    sleep: async (ms: number) => {
      c.slept.push(ms);
      c.t += ms;
    },
  };
  return c;
}

describe('scrub accounting', () => {
  it('reports damage by domain, lost blobs by key, and repairs what parity covers', async () => {
    const p = await fakeWith(40);
    p.damage.set('b/00003', ['ok', 'missing', 'ok', 'ok', 'ok', 'ok']);
    p.damage.set('b/00010', ['corrupt', 'ok', 'ok', 'ok', 'ok', 'missing']);
    p.damage.set('b/00020', ['missing', 'missing', 'corrupt', 'ok', 'ok', 'ok']); // 3 > m: lost
    const r = await runScrub(p);
    expect(r.complete).toBe(true);
    expect(r.blobs).toBe(40);
    expect(r.bytes).toBe(4000);
    expect(r.damagedBlobs).toBe(3);
    expect(r.damagedByDomain).toEqual({ d1: 2, d2: 2, d3: 1, d6: 1 });
    expect(r.fragments).toEqual({ verified: 240, missing: 4, corrupt: 2, unreachable: 0 });
    expect(r.lost).toEqual(['b/00020']);
    expect(r.lostCount).toBe(1);
    expect(r.unrepairedBlobs).toBe(2);
    expect(r.repairedFragments).toBe(0);
    expect(new Set(p.checked).size).toBe(40);

    const fixed = await runScrub(p, { repair: true });
    expect(fixed.repairedFragments).toBe(3);
    expect(fixed.unrepairedBlobs).toBe(0);
    expect(fixed.lost).toEqual(['b/00020']);
    const again = await runScrub(p);
    expect(again.damagedBlobs).toBe(1); // only the lost one is left
    expect(again.damagedByDomain).toEqual({ d1: 1, d2: 1, d3: 1 });
  });

  it('skips maintenance/ keys, counts vanished blobs, and goes on past a failing blob', async () => {
    const p = await fakeWith(10);
    await p.put('maintenance/other', new Uint8Array(5));
    p.failures.set('b/00004', new ProviderError('Io', 'disk on fire'));
    p.failures.set('b/00006', new ProviderError('NotFound', 'gone'));
    const r = await runScrub(p);
    expect(p.checked).not.toContain('maintenance/other');
    expect(r.blobs).toBe(8);
    expect(r.vanished).toBe(1);
    expect(r.errorCount).toBe(1);
    expect(r.errors).toEqual([{ key: 'b/00004', error: 'disk on fire' }]);
    expect(r.complete).toBe(true);
  });

  it('clears the cursor and records the end of a completed pass', async () => {
    const p = await fakeWith(5);
    const r = await runScrub(p, { repair: true });
    expect(r.complete).toBe(true);
    await expect(p.head(SCRUB_CURSOR_KEY)).rejects.toThrow(/./);
    const last = await loadLastPass(p);
    expect(last?.repair).toBe(true);
    expect(Math.abs(last!.completedAt - Date.now())).toBeLessThan(10_000);
  });

  it('reports progress with totals', async () => {
    const p = await fakeWith(30, 1000);
    const seen: ScrubProgress[] = [];
    await runScrub(p, { onProgress: (x) => seen.push(x) });
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ phase: 'scrub', blobs: 30, bytes: 30_000, totalBlobs: 30, totalBytes: 30_000 });
    expect(seen.some((x) => x.phase === 'count')).toBe(true);
    expect(seen.filter((x) => x.phase === 'scrub').map((x) => x.blobs)).toEqual([...Array(31).keys()].slice(1).concat([30]));
    expect(seen.some((x) => x.estimated)).toBe(false);
  });

  it('gives an ETA only once the rate was measured over ETA_AFTER_MS, never from the first blobs', async () => {
    const p = await fakeWith(30, 1000);
    const clock = fakeClock();
    const seen: { at: number; x: ScrubProgress }[] = [];
    // Each report moves the clock on 150 ms: the first reports come before ETA_AFTER_MS.
    await runScrub(p, { clock, onProgress: (x) => { seen.push({ at: clock.t, x }); clock.t += 150; } });
    const scrub = seen.filter((s) => s.x.phase === 'scrub');
    const began = seen[0]!.at;
    const early = scrub.filter((s) => s.at - began < ETA_AFTER_MS);
    const late = scrub.filter((s) => s.at - began >= ETA_AFTER_MS + 150);
    expect(early.length).toBeGreaterThan(3);
    expect(late.length).toBeGreaterThan(3);
    for (const s of early) expect(s.x.etaMs).toBeUndefined();
    for (const s of late) {
      if (s.x.bytes < s.x.totalBytes) expect(s.x.etaMs).toBeGreaterThan(0);
      // What is left at the measured rate.
      expect(s.x.etaMs).toBe(Math.round(((s.x.totalBytes - s.x.bytes) / s.x.bytesPerSec) * 1000));
    }
  });

  it('sizes a later pass from the last one, without a count listing, and never reports less than it checked', async () => {
    const p = await fakeWith(30, 1000);
    // The first pass (a missing-only repair: it goes through every blob too) counts, then walks.
    await runScrub(p, { repair: true, missingOnly: true });
    expect(p.listCalls).toBe(2);
    // 5 more blobs since: the estimate is short, and the totals follow what was checked.
    for (let i = 30; i < 35; i++) await p.put(`b/${String(i).padStart(5, '0')}`, new Uint8Array(1000));
    const seen: ScrubProgress[] = [];
    const r = await runScrub(p, { onProgress: (x) => seen.push(x) });
    expect(r.blobs).toBe(35);
    expect(p.listCalls).toBe(3); // its walk only: no count listing
    expect(seen.some((x) => x.phase === 'count')).toBe(false);
    expect(seen[0]).toMatchObject({ phase: 'scrub', estimated: true, totalBlobs: 30, totalBytes: 30_000 });
    expect(seen.at(-1)).toMatchObject({ blobs: 35, totalBlobs: 35, totalBytes: 35_000, estimated: true });
    for (const x of seen) expect(x.totalBlobs).toBeGreaterThanOrEqual(x.blobs);
    // The next one is sized from this one.
    const again: ScrubProgress[] = [];
    await runScrub(p, { onProgress: (x) => again.push(x) });
    expect(again[0]).toMatchObject({ estimated: true, totalBlobs: 35 });
  });
});

describe('scrub cursor and resume', () => {
  it('a stopped pass resumes after its cursor and checks every blob exactly once overall', async () => {
    const p = await fakeWith(300);
    // Completions out of key order: every 7th blob is slow.
    p.delay = (k) => (Number(k.slice(2)) % 7 === 0 ? 15 : 1);
    p.damage.set('b/00005', ['missing', 'ok', 'ok', 'ok', 'ok', 'ok']);
    p.damage.set('b/00250', ['ok', 'ok', 'corrupt', 'ok', 'ok', 'ok']);
    const ac = new AbortController();
    const first = await runScrub(p, {
      concurrency: 8,
      signal: ac.signal,
      cursorEveryBlobs: 10,
      onProgress: (x) => {
        if (x.blobs >= 120) ac.abort();
      },
    });
    expect(first.complete).toBe(false);
    const cursor = await loadCursor(p);
    expect(cursor).toBeDefined();
    expect(cursor!.totals.blobs).toBe(first.blobs);
    // The cursor claims exactly the checked prefix.
    const sorted = [...p.checked].sort();
    expect(sorted.slice(0, cursor!.totals.blobs).at(-1)).toBe(cursor!.after);
    const checkedBefore = new Set(p.checked.filter((k) => k <= cursor!.after));
    expect(checkedBefore.size).toBe(cursor!.totals.blobs);

    p.checked.length = 0;
    const second = await runScrub(p, { concurrency: 8 });
    expect(second.complete).toBe(true);
    expect(second.resumedFrom).toBe(cursor!.after);
    expect(second.resumedBlobs).toBe(first.blobs);
    expect(second.blobs).toBe(300);
    expect(p.checked.every((k) => k > cursor!.after)).toBe(true);
    expect(second.damagedByDomain).toEqual({ d1: 1, d3: 1 });
    expect(second.startedAt).toBe(first.startedAt);
    expect(await loadCursor(p)).toBeUndefined();
  });

  it('a repair pass does not resume a check-only cursor, and resume: false starts over', async () => {
    const p = await fakeWith(20);
    await saveCursor(p, { after: 'b/00009', repair: false, startedAt: 1, totals: { ...emptyTotals(), blobs: 10, bytes: 1000 } });
    const r = await runScrub(p, { repair: true });
    expect(r.resumedFrom).toBeUndefined();
    expect(p.checked.length).toBe(20);
    await saveCursor(p, { after: 'b/00009', repair: false, startedAt: 1, totals: { ...emptyTotals(), blobs: 10, bytes: 1000 } });
    p.checked.length = 0;
    const r2 = await runScrub(p, { resume: false });
    expect(r2.resumedFrom).toBeUndefined();
    expect(p.checked.length).toBe(20);
    await saveCursor(p, { after: 'b/00009', repair: false, startedAt: 1, totals: { ...emptyTotals(), blobs: 10, bytes: 1000 } });
    p.checked.length = 0;
    const r3 = await runScrub(p);
    expect(r3.resumedFrom).toBe('b/00009');
    expect(p.checked.length).toBe(10);
    expect(r3.blobs).toBe(20);
  });

  it('ignores a malformed, truncated, oversized or hostile cursor and starts over', async () => {
    const good = JSON.stringify({ v: 1, after: 'x', repair: false, startedAt: 1, savedAt: 2, totals: emptyTotals() });
    expect(parseCursor(Buffer.from(good))?.after).toBe('x');
    const bad = [
      '',
      'not json',
      good.slice(0, good.length - 3),
      JSON.stringify({ v: 2, after: 'x', repair: false, startedAt: 1, savedAt: 2, totals: emptyTotals() }),
      JSON.stringify({ v: 1, after: '', repair: false, startedAt: 1, savedAt: 2, totals: emptyTotals() }),
      JSON.stringify({ v: 1, after: 'x', repair: 'yes', startedAt: 1, savedAt: 2, totals: emptyTotals() }),
      JSON.stringify({ v: 1, after: 'x', repair: false, startedAt: 1, savedAt: 2, totals: { ...emptyTotals(), blobs: -1 } }),
      JSON.stringify({ v: 1, after: 'x', repair: false, startedAt: 1, savedAt: 2, totals: { ...emptyTotals(), lost: new Array(2000).fill('k') } }),
      JSON.stringify({ v: 1, after: 'x', repair: false, startedAt: 1, savedAt: 2, totals: { ...emptyTotals(), damagedByDomain: { d1: 'many' } } }),
      JSON.stringify({ v: 1, after: 'x', repair: false, startedAt: 1, savedAt: 2, totals: { ...emptyTotals(), errors: [{ key: 1 }] } }),
      JSON.stringify([1, 2, 3]),
      'null',
    ];
    for (const b of bad) expect(parseCursor(Buffer.from(b))).toBeUndefined();
    const p = await fakeWith(5);
    await p.put(SCRUB_CURSOR_KEY, Buffer.from('{"v":1,"after":'));
    const r = await runScrub(p);
    expect(r.resumedFrom).toBeUndefined();
    expect(r.blobs).toBe(5);
    await p.put(SCRUB_CURSOR_KEY, new Uint8Array(5 * 1024 * 1024)); // oversized: not even read
    expect(await loadCursor(p)).toBeUndefined();
    await p.put(SCRUB_LAST_KEY, Buffer.from('garbage'));
    expect(await loadLastPass(p)).toBeUndefined();
  });

  it('ignores a malformed, oversized or hostile recorded size and counts instead', async () => {
    const p = await fakeWith(5);
    for (const b of ['not json', '{"v":1,"blobs":-5,"bytes":10}', '{"v":1,"blobs":1e400,"bytes":1}', '{"v":2,"blobs":5,"bytes":500}', '{"v":1,"blobs":"5","bytes":500}', 'null']) {
      await p.put(SCRUB_SIZE_KEY, Buffer.from(b));
      expect(await loadPassSize(p), b).toBeUndefined();
    }
    await p.put(SCRUB_SIZE_KEY, new Uint8Array(5 * 1024 * 1024));
    expect(await loadPassSize(p)).toBeUndefined();
    const seen: ScrubProgress[] = [];
    const r = await runScrub(p, { onProgress: (x) => seen.push(x) });
    expect(r.blobs).toBe(5);
    expect(seen.some((x) => x.phase === 'count')).toBe(true);
    expect(seen.at(-1)).toMatchObject({ totalBlobs: 5, totalBytes: 500 });
    // The pass recorded a good size over the bad one.
    expect(await loadPassSize(p)).toEqual({ blobs: 5, bytes: 500 });
  });
});

describe('scrub rate limit', () => {
  it('the limiter holds the long-run rate for takes larger than its bucket', async () => {
    const c = fakeClock();
    const l = new ByteRateLimiter(1000, c);
    const t0 = c.now();
    for (let i = 0; i < 10; i++) await l.take(500);
    // 5000 bytes at 1000 B/s with a 1000-byte burst: about 4 s.
    expect(c.now() - t0).toBeGreaterThanOrEqual(3500);
    expect(c.now() - t0).toBeLessThanOrEqual(4600);
    const t1 = c.now();
    await l.take(10_000); // one take of ten buckets goes through at once ...
    await l.take(1); // ... and the next waits the debt out
    expect(c.now() - t1).toBeGreaterThanOrEqual(9000);
    expect(() => new ByteRateLimiter(0)).toThrow(RangeError);
    expect(() => new ByteRateLimiter(Infinity)).toThrow(RangeError);
  });

  it('a scrub under a rate limit takes as long as its bytes need; abort stops a wait', async () => {
    const p = await fakeWith(20, 1000);
    const c = fakeClock();
    const r = await runScrub(p, { rateBytesPerSec: 2000, clock: c, concurrency: 1 });
    // 20,000 bytes at 2000 B/s, 2000 bytes of burst: about 9 s of (fake) waiting.
    const waited = c.slept.reduce((a, b) => a + b, 0);
    expect(waited).toBeGreaterThanOrEqual(8500);
    expect(waited).toBeLessThanOrEqual(10_000);
    expect(r.blobs).toBe(20);

    const ac = new AbortController();
    const slow = runScrub(p, { rateBytesPerSec: 100, signal: ac.signal, concurrency: 1 });
    setTimeout(() => ac.abort(), 300);
    const started = Date.now();
    const stopped = await slow;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(stopped.complete).toBe(false);
    expect(stopped.blobs).toBeLessThan(20);
    expect((await loadCursor(p))?.totals.blobs ?? 0).toBe(stopped.blobs);
  });
});
