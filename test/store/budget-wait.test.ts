/**
 * PendingBudget.reserveWithin: a request that may wait (a GET) is granted room in order as
 * reservations are released, refused (counted) when its wait runs out or when it could never
 * fit, and leaves the queue without a trace when its client goes away.
 */
import { describe, expect, it } from 'vitest';
import { MAX_BUDGET_WAITERS, PendingBudget } from '../../src/store/budget.js';
import { StoreError } from '../../src/store/errors.js';

const settled = async <T>(p: Promise<T>): Promise<'pending' | 'resolved' | 'rejected'> => {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  p.then(() => (state = 'resolved'), () => (state = 'rejected'));
  await new Promise((r) => setImmediate(r));
  return state;
};

describe('PendingBudget.reserveWithin', () => {
  it('grants at once when room is free, and in arrival order as room comes back', async () => {
    const b = new PendingBudget(100);
    const first = await b.reserveWithin(60, 1_000);
    expect(b.used).toBe(60);
    const a = b.reserveWithin(50, 10_000);
    const c = b.reserveWithin(10, 10_000);
    // c would fit now, but it does not overtake a, which waits for 50.
    expect(await settled(a)).toBe('pending');
    expect(await settled(c)).toBe('pending');
    expect(b.waiting).toBe(2);
    first();
    const ra = await a;
    const rc = await c;
    expect(b.used).toBe(60);
    expect(b.waiting).toBe(0);
    ra();
    rc();
    rc();
    expect(b.used).toBe(0);
    expect(b.refusals).toBe(0);
  });

  it('refuses with SlowDown when the wait runs out, reserving nothing, and serves the next waiter', async () => {
    const b = new PendingBudget(100);
    const hold = b.reserve(90);
    const big = b.reserveWithin(50, 30);
    const small = b.reserveWithin(5, 10_000);
    // small fits now but queues behind big; big's refusal lets it through.
    const err = await big.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('SlowDown');
    expect((err as StoreError).message).toMatch(/after waiting 30 ms/);
    const rs = await small;
    expect(b.used).toBe(95);
    expect(b.refusals).toBe(1);
    rs();
    hold();
    expect(b.used).toBe(0);
  });

  it('refuses at once what could never fit, and waiters past the cap', async () => {
    const b = new PendingBudget(MAX_BUDGET_WAITERS);
    await expect(b.reserveWithin(MAX_BUDGET_WAITERS + 1, 10_000)).rejects.toMatchObject({ code: 'SlowDown' });
    const hold = b.reserve(MAX_BUDGET_WAITERS);
    const queued = Array.from({ length: MAX_BUDGET_WAITERS }, () => b.reserveWithin(1, 10_000));
    expect(b.waiting).toBe(MAX_BUDGET_WAITERS);
    await expect(b.reserveWithin(1, 10_000)).rejects.toMatchObject({ code: 'SlowDown' });
    expect(b.refusals).toBe(2);
    hold();
    const releases = await Promise.all(queued);
    expect(b.used).toBe(MAX_BUDGET_WAITERS);
    for (const r of releases) r();
    expect(b.used).toBe(0);
  });

  it('drops an aborted waiter from the queue without counting a refusal, and lets the next one in', async () => {
    const b = new PendingBudget(100);
    const hold = b.reserve(80);
    const gone = new AbortController();
    const a = b.reserveWithin(50, 10_000, gone.signal);
    const c = b.reserveWithin(20, 10_000);
    expect(b.waiting).toBe(2);
    gone.abort(new Error('client went away'));
    await expect(a).rejects.toThrow('client went away');
    // The head was blocking c; with it gone c fits and is granted.
    const rc = await c;
    expect(b.waiting).toBe(0);
    expect(b.used).toBe(100);
    expect(b.refusals).toBe(0);
    rc();
    hold();
    expect(b.used).toBe(0);
    // An already-aborted signal never queues.
    const h2 = b.reserve(100);
    await expect(b.reserveWithin(1, 10_000, AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    expect(b.waiting).toBe(0);
    h2();
  });
});
