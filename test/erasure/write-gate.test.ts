/**
 * The erasure write gate (src/provider/erasure/write-gate.ts): object-body writes enter with
 * the descriptors and stripe memory they will hold, wait in arrival order when they do not fit,
 * and are refused (ProviderError 'Unavailable', so S3 503) when the wait runs out; and the
 * erasure provider puts every object body (PutOptions.bulk) through it, store metadata not.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ProviderError, type Provider } from '../../src/provider/provider.js';
import { stripedCost, replicatedCost, WriteGate, writeGateLimits, STRIPES_PER_WRITE, type WriteGateLimits } from '../../src/provider/erasure/write-gate.js';
import { framedLength } from '../../src/provider/erasure/geometry.js';
import { ERASURE_DEFAULTS } from '../../src/provider/erasure/config.js';
import type { ErasureConfig } from '../../src/provider/erasure/types.js';
import { cleanupRigs, KiB, makeRig, MiB } from '../provider/erasure-helpers.js';

afterAll(cleanupRigs);

const LIMITS: WriteGateLimits = { descriptors: 28, bytes: 100, waitMs: 200, maxWaiters: 3 };
const tick = () => new Promise((r) => setTimeout(r, 0));

/** Resolves to 'admitted' with the release, or to the rejection, whichever comes. */
function track(p: Promise<() => void>) {
  const t: { state: 'waiting' | 'admitted' | 'refused'; leave?: () => void; error?: unknown } = { state: 'waiting' };
  p.then(
    (leave) => Object.assign(t, { state: 'admitted', leave }),
    (error: unknown) => Object.assign(t, { state: 'refused', error })
  );
  return t;
}

describe('WriteGate', () => {
  it('admits while both descriptors and bytes fit, then queues in arrival order', async () => {
    const g = new WriteGate(LIMITS);
    const a = track(g.enter({ descriptors: 14, bytes: 10 }, 'a'));
    const b = track(g.enter({ descriptors: 14, bytes: 10 }, 'b'));
    const c = track(g.enter({ descriptors: 14, bytes: 10 }, 'c'));
    // A small write behind a waiting one waits too (no jumping the queue).
    const d = track(g.enter({ descriptors: 1, bytes: 1 }, 'd'));
    await tick();
    expect([a.state, b.state, c.state, d.state]).toEqual(['admitted', 'admitted', 'waiting', 'waiting']);
    expect(g.stats).toMatchObject({ inFlight: 2, waiting: 2, descriptors: 28, bytes: 20, peakInFlight: 2 });
    a.leave!();
    a.leave!(); // idempotent: gives back once
    await tick();
    expect([c.state, d.state]).toEqual(['admitted', 'waiting']);
    expect(g.stats).toMatchObject({ inFlight: 2, waiting: 1, descriptors: 28, bytes: 20 });
    b.leave!();
    await tick();
    expect(d.state).toBe('admitted');
    expect(g.stats).toMatchObject({ inFlight: 2, waiting: 0, descriptors: 15, bytes: 11, peakInFlight: 2 });
    for (const t of [c, d]) t.leave!();
    expect(g.stats).toMatchObject({ inFlight: 0, descriptors: 0, bytes: 0, refused: 0 });
  });

  it('bounds memory as well as descriptors', async () => {
    const g = new WriteGate(LIMITS);
    const a = track(g.enter({ descriptors: 1, bytes: 60 }, 'a'));
    const b = track(g.enter({ descriptors: 1, bytes: 60 }, 'b'));
    await tick();
    expect([a.state, b.state]).toEqual(['admitted', 'waiting']);
    a.leave!();
    await tick();
    expect(b.state).toBe('admitted');
    b.leave!();
  });

  it('admits a write costlier than the whole gate when it is alone', async () => {
    const g = new WriteGate(LIMITS);
    const big = track(g.enter({ descriptors: 1000, bytes: 10_000 }, 'big'));
    const next = track(g.enter({ descriptors: 1, bytes: 1 }, 'next'));
    await tick();
    expect([big.state, next.state]).toEqual(['admitted', 'waiting']);
    expect(g.stats).toMatchObject({ descriptors: 28, bytes: 100 });
    big.leave!();
    await tick();
    expect(next.state).toBe('admitted');
    next.leave!();
  });

  it('refuses a write whose wait runs out, with Unavailable naming it, and admits the next', async () => {
    const g = new WriteGate({ ...LIMITS, waitMs: 50 });
    const a = track(g.enter({ descriptors: 28, bytes: 1 }, 'a'));
    const b = track(g.enter({ descriptors: 28, bytes: 1 }, 'bucket/key-b'));
    await tick();
    await new Promise((r) => setTimeout(r, 120));
    expect(b.state).toBe('refused');
    expect(b.error).toBeInstanceOf(ProviderError);
    expect((b.error as ProviderError).code).toBe('Unavailable');
    expect((b.error as ProviderError).retryable).toBe(true);
    expect((b.error as ProviderError).message).toMatch(/^bucket\/key-b: too many writes in flight \(1 holding 28 of 28 descriptors/);
    expect(g.stats).toMatchObject({ refused: 1, waiting: 0, inFlight: 1 });
    a.leave!();
    const c = track(g.enter({ descriptors: 28, bytes: 1 }, 'c'));
    await tick();
    expect(c.state).toBe('admitted');
    c.leave!();
  });

  it('refuses at once past maxWaiters, and with no wait allowed', async () => {
    const g = new WriteGate(LIMITS);
    const hold = track(g.enter({ descriptors: 28, bytes: 1 }, 'hold'));
    const waiters = [1, 2, 3].map((i) => track(g.enter({ descriptors: 1, bytes: 1 }, `w${i}`)));
    const extra = track(g.enter({ descriptors: 1, bytes: 1 }, 'extra'));
    await tick();
    expect(waiters.map((w) => w.state)).toEqual(['waiting', 'waiting', 'waiting']);
    expect(extra.state).toBe('refused');
    hold.leave!();
    await tick();
    expect(waiters.map((w) => w.state)).toEqual(['admitted', 'admitted', 'admitted']);
    waiters.forEach((w) => w.leave!());
    const none = new WriteGate({ ...LIMITS, waitMs: 0 });
    const first = track(none.enter({ descriptors: 28, bytes: 1 }, 'first'));
    const second = track(none.enter({ descriptors: 1, bytes: 1 }, 'second'));
    await tick();
    expect([first.state, second.state]).toEqual(['admitted', 'refused']);
  });

  it('lets a waiter whose client went away leave the queue, not counted as refused', async () => {
    const g = new WriteGate(LIMITS);
    const hold = track(g.enter({ descriptors: 28, bytes: 1 }, 'hold'));
    const ac = new AbortController();
    const gone = track(g.enter({ descriptors: 1, bytes: 1 }, 'gone', ac.signal));
    const after = track(g.enter({ descriptors: 1, bytes: 1 }, 'after'));
    await tick();
    ac.abort(new Error('client closed'));
    await tick();
    expect(gone.state).toBe('refused');
    expect((gone.error as ProviderError).code).toBe('Aborted');
    expect(g.stats).toMatchObject({ refused: 0, waiting: 1 });
    hold.leave!();
    await tick();
    expect(after.state).toBe('admitted');
    const pre = new AbortController();
    pre.abort();
    await expect(g.enter({ descriptors: 28, bytes: 1 }, 'pre', pre.signal)).rejects.toMatchObject({ code: 'Aborted' });
  });

  it('once closed, refuses its waiters and every later write', async () => {
    const g = new WriteGate(LIMITS);
    const hold = track(g.enter({ descriptors: 28, bytes: 1 }, 'hold'));
    const waiting = track(g.enter({ descriptors: 1, bytes: 1 }, 'bucket/waiting'));
    await tick();
    g.close();
    await tick();
    expect(waiting.state).toBe('refused');
    expect((waiting.error as ProviderError).code).toBe('Io');
    expect((waiting.error as ProviderError).message).toBe('bucket/waiting: erasure provider is closed');
    hold.leave!();
    await expect(g.enter({ descriptors: 1, bytes: 1 }, 'later')).rejects.toMatchObject({ code: 'Io' });
    expect(g.stats).toMatchObject({ inFlight: 0, waiting: 0, refused: 0 });
  });

  it('holds one owner to its share while other owners pass its waiting writes', async () => {
    // Share 0.5: an owner may hold 14 of 28 descriptors and 50 of 100 bytes.
    const g = new WriteGate({ ...LIMITS, maxWaiters: 10, waitMs: 500, ownerShare: 0.5 });
    const a1 = track(g.enter({ descriptors: 7, bytes: 10 }, 'a1', undefined, 'HOG'));
    const a2 = track(g.enter({ descriptors: 7, bytes: 10 }, 'a2', undefined, 'HOG'));
    const a3 = track(g.enter({ descriptors: 7, bytes: 10 }, 'a3', undefined, 'HOG'));
    await tick();
    // a3 waits for its owner's writes only, with room in the gate: no pressure on other uploads.
    expect(g.stats).toMatchObject({ inFlight: 2, waiting: 1, waitingForRoom: 0 });
    // Another owner's write arrives after a3 and goes at once: a3 waits for HOG's own writes.
    const b1 = track(g.enter({ descriptors: 7, bytes: 10 }, 'b1', undefined, 'OTHER'));
    // A write with no owner (store-internal) is not held by any share.
    const n1 = track(g.enter({ descriptors: 7, bytes: 10 }, 'n1'));
    await tick();
    expect([a1.state, a2.state, a3.state, b1.state, n1.state]).toEqual(['admitted', 'admitted', 'waiting', 'admitted', 'admitted']);
    // The gate is full now: a3 would not fit it either.
    expect(g.stats).toMatchObject({ inFlight: 4, waiting: 1, waitingForRoom: 1, descriptors: 28 });
    // HOG's later small write keeps its place behind HOG's waiting one.
    const a4 = track(g.enter({ descriptors: 1, bytes: 1 }, 'a4', undefined, 'HOG'));
    // The gate is full now: OTHER's next write waits for room, not for its share.
    const b2 = track(g.enter({ descriptors: 7, bytes: 10 }, 'b2', undefined, 'OTHER'));
    await tick();
    expect(b2.state).toBe('waiting');
    expect(g.stats).toMatchObject({ waiting: 3, waitingForRoom: 3 });
    // n1 leaves: b2 (in OTHER's share) goes; a3 still waits (HOG holds its share).
    n1.leave!();
    await tick();
    expect([a3.state, b2.state]).toEqual(['waiting', 'admitted']);
    expect(a4.state).toBe('waiting');
    // One of HOG's writes leaves: the room goes to a3, then (a3 done) to a4.
    a1.leave!();
    await tick();
    expect([a3.state, a4.state]).toEqual(['admitted', 'waiting']);
    a3.leave!();
    await tick();
    expect(a4.state).toBe('admitted');
    for (const t of [a2, a4, b1, b2]) t.leave!();
    expect(g.stats).toMatchObject({ inFlight: 0, descriptors: 0, bytes: 0, waiting: 0 });
  });

  it('refuses a write its owner\'s share held back after the wait, naming the share; admits an oversized one alone', async () => {
    const g = new WriteGate({ ...LIMITS, maxWaiters: 10, waitMs: 40, ownerShare: 0.25 });
    const big = track(g.enter({ descriptors: 20, bytes: 10 }, 'big', undefined, 'HOG')); // more than its share (7), alone: admitted
    const next = track(g.enter({ descriptors: 1, bytes: 1 }, 'next', undefined, 'HOG'));
    const other = track(g.enter({ descriptors: 7, bytes: 10 }, 'other', undefined, 'OTHER'));
    await tick();
    expect([big.state, next.state, other.state]).toEqual(['admitted', 'waiting', 'admitted']);
    await new Promise((r) => setTimeout(r, 80));
    expect(next.state).toBe('refused');
    expect(next.error).toBeInstanceOf(ProviderError);
    expect((next.error as ProviderError).code).toBe('Unavailable');
    expect((next.error as Error).message).toContain('access key HOG already hold their share');
    expect(g.stats.refused).toBe(1);
    big.leave!();
    other.leave!();
    expect(g.stats).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it('refuses nonsense limits', () => {
    expect(() => new WriteGate({ ...LIMITS, ownerShare: 0 })).toThrow(RangeError);
    expect(() => new WriteGate({ ...LIMITS, ownerShare: 1.5 })).toThrow(RangeError);
    expect(() => new WriteGate({ ...LIMITS, descriptors: 0 })).toThrow(RangeError);
    expect(() => new WriteGate({ ...LIMITS, bytes: Number.NaN })).toThrow(RangeError);
    expect(() => new WriteGate({ ...LIMITS, waitMs: -1 })).toThrow(RangeError);
  });
});

describe('the gate limits and costs', () => {
  const config = (k: number, m: number, extra: Partial<ErasureConfig> = {}): ErasureConfig => ({
    k, m, domains: [], policy: {}, cellSize: 256 * KiB, stripeThreshold: MiB, degradedWrites: false, domainTimeoutMs: 1000, ...extra,
  });

  it('gives writes an eighth of the open-files limit, never less than one striped write', () => {
    expect(writeGateLimits(config(10, 4), 1024).descriptors).toBe(128);
    expect(writeGateLimits(config(10, 4), 20_000).descriptors).toBe(2500);
    expect(writeGateLimits(config(10, 4), 64).descriptors).toBe(14);
    expect(writeGateLimits(config(10, 4), Infinity).descriptors).toBe(Number.MAX_SAFE_INTEGER);
    expect(writeGateLimits(config(10, 4), 1024).bytes).toBe(ERASURE_DEFAULTS.writeMemory);
    expect(writeGateLimits(config(10, 4, { writeMemory: 8 * MiB }), 1024).bytes).toBe(8 * MiB);
    expect(writeGateLimits(config(10, 4, { ownerShare: 0.5 }), 1024).ownerShare).toBe(0.5);
    expect(writeGateLimits(config(10, 4, { ownerShare: 1 }), 1024).ownerShare).toBeUndefined();
  });

  it('costs a striped write its k+m files and three framed stripes (plus its stripe when unsized)', () => {
    const c = config(10, 4);
    expect(stripedCost(c, true)).toEqual({ descriptors: 14, bytes: STRIPES_PER_WRITE * 14 * framedLength(256 * KiB) });
    expect(stripedCost(c, false).bytes).toBe(STRIPES_PER_WRITE * 14 * framedLength(256 * KiB) + 14 * 256 * KiB);
    expect(replicatedCost(c, 1000)).toEqual({ descriptors: 5, bytes: 2000 });
    // 24 striped writes fit the default memory at (10,4), 56 at (4,2).
    expect(Math.floor(ERASURE_DEFAULTS.writeMemory / stripedCost(c, true).bytes)).toBe(24);
    expect(Math.floor(ERASURE_DEFAULTS.writeMemory / stripedCost(config(4, 2), true).bytes)).toBe(56);
  });
});

describe('the erasure provider behind the gate', () => {
  /** Children whose puts take 20 ms, counting how many run at once across all domains. */
  function slowChildren() {
    const live = { now: 0, peak: 0 };
    const wrap = (p: Provider): Provider =>
      new Proxy(p, {
        get(target, prop) {
          if (prop !== 'put') {
            const v: unknown = Reflect.get(target, prop);
            return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
          }
          return async (...args: Parameters<Provider['put']>) => {
            live.now++;
            live.peak = Math.max(live.peak, live.now);
            try {
              await new Promise((r) => setTimeout(r, 20));
              return await target.put(...args);
            } finally {
              live.now--;
            }
          };
        },
      });
    return { live, wrap };
  }

  it('holds object-body writes to what the gate allows and lands every one', async () => {
    const { live, wrap } = slowChildren();
    // One striped write at (4,2) with 64 KiB cells costs ~1.2 MB: 2 MiB admits one at a time.
    const { provider } = await makeRig({ k: 4, m: 2, cellSize: 64 * KiB, stripeThreshold: 64 * KiB, writeMemory: 2 * MiB, wrap });
    const body = (i: number) => new Uint8Array(300 * KiB).fill(i + 1);
    await Promise.all(Array.from({ length: 6 }, (_, i) => provider.put(`obj/${i}`, body(i), { contentLength: 300 * KiB, bulk: true })));
    expect(provider.writeGate).toMatchObject({ peakInFlight: 1, inFlight: 0, refused: 0 });
    expect(live.peak).toBeLessThanOrEqual(6);
    for (let i = 0; i < 6; i++) {
      const got = await provider.get(`obj/${i}`);
      const chunks: Uint8Array[] = [];
      for await (const c of got.body) chunks.push(c);
      expect(Buffer.concat(chunks).equals(body(i))).toBe(true);
    }
    // Store metadata (no bulk) does not wait behind object bodies.
    live.peak = 0;
    await Promise.all(Array.from({ length: 6 }, (_, i) => provider.put(`meta/${i}`, body(i), { contentLength: 300 * KiB })));
    expect(live.peak).toBeGreaterThan(6);
    expect(provider.writeGate!.peakInFlight).toBe(1);
    await provider.close();
  });

  it.each([
    // At 0.5 HOG runs one write at a time and OTHER goes beside its first: at least 2 of HOG's
    // (in practice 3 or 4) land after it.
    { ownerShare: 0.5, after: [2, 4] },
    // No share: arrival order, two at a time: OTHER starts only when HOG's third finishes, so
    // at most its fourth (running beside it) lands after.
    { ownerShare: undefined, after: [0, 1] },
  ])('with owner share $ownerShare, another owner\'s write passes what one owner queued: $after of its 4 land after', async ({ ownerShare, after }) => {
    const { wrap } = slowChildren();
    // Two striped writes at (4,2) with 64 KiB cells fit 3 MiB; an owner at 0.5 holds one.
    const { provider } = await makeRig({ k: 4, m: 2, cellSize: 64 * KiB, stripeThreshold: 64 * KiB, writeMemory: 3 * MiB, wrap, ...(ownerShare ? { ownerShare } : {}) });
    const done: string[] = [];
    const put = (key: string, owner: string) =>
      provider.put(key, new Uint8Array(300 * KiB).fill(key.length), { contentLength: 300 * KiB, bulk: true, owner }).then(() => void done.push(key));
    const hog = Array.from({ length: 4 }, (_, i) => put(`hog/${i}`, 'HOG'));
    await tick();
    await Promise.all([...hog, put('other/0', 'OTHER')]);
    expect(done.filter((k) => k.startsWith('hog/')).length).toBe(4);
    // How many of HOG's writes landed after OTHER's, which arrived last.
    const landedAfter = done.length - 1 - done.indexOf('other/0');
    expect(landedAfter).toBeGreaterThanOrEqual(after[0]!);
    expect(landedAfter).toBeLessThanOrEqual(after[1]!);
    expect(provider.writeGate).toMatchObject({ inFlight: 0, waiting: 0, refused: 0 });
    await provider.close();
  });

  it('gives the place back when a body fails midway, and refuses waiting writes on close', async () => {
    const { wrap } = slowChildren();
    const { provider } = await makeRig({ k: 4, m: 2, cellSize: 64 * KiB, stripeThreshold: 64 * KiB, writeMemory: 2 * MiB, wrap });
    async function* failing() {
      yield new Uint8Array(200 * KiB);
      await new Promise((r) => setTimeout(r, 30));
      throw new Error('client went away');
    }
    const err = await provider.put('obj/broken', failing(), { contentLength: 400 * KiB, bulk: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(provider.writeGate).toMatchObject({ inFlight: 0, waiting: 0, descriptors: 0, bytes: 0 });
    // The body's failure is not the domains': none is counted failed (all six were, before).
    expect(provider.failedDomainIds!()).toEqual([]);
    // The place is free: a whole write goes through.
    await provider.put('obj/whole', new Uint8Array(300 * KiB).fill(9), { contentLength: 300 * KiB, bulk: true });
    // One write in flight (its body stalls), one waiting: close refuses the waiting one at once.
    let release!: () => void;
    const stalled = new Promise<void>((r) => (release = r));
    async function* slow() {
      yield new Uint8Array(100 * KiB);
      await stalled;
      yield new Uint8Array(200 * KiB);
    }
    const first = provider.put('obj/slow', slow(), { contentLength: 300 * KiB, bulk: true }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    const second = provider.put('obj/queued', new Uint8Array(300 * KiB), { contentLength: 300 * KiB, bulk: true }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    expect(provider.writeGate).toMatchObject({ inFlight: 1, waiting: 1 });
    const closing = provider.close();
    expect(await second).toMatchObject({ code: 'Io', message: 'obj/queued: erasure provider is closed' });
    release();
    await first;
    await closing;
    expect(provider.writeGate).toMatchObject({ inFlight: 0, waiting: 0 });
  });
});
