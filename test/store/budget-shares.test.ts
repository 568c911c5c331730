/**
 * Per-access-key shares of the pending budget (store/budget.ts BudgetShares) and of requests
 * in flight (s3/key-share.ts KeyShares), without a server.
 *
 * Proves that one identity's reservations stop at its share with StoreError 'SlowDown' while
 * another identity still reserves; that the whole budget still bounds them together; that a
 * release gives the bytes back to both and the account is dropped once it holds nothing and
 * serves no request; that a GET-style reservation waits for its identity's own releases, then
 * for the shared budget, within its one wait, and is refused or aborted cleanly; and that
 * the request cap counts per identity (anonymous requests together), refuses past it and
 * lets the next one in once a request leaves; and that a large body written under a share
 * tells the provider whose write it is (PutOptions.owner, what an erasure set's write gate
 * counts per key), on the worker-hashing path, the main-thread one and multipart parts.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider, PutOptions } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import { BudgetShares, PendingBudget } from '../../src/store/budget.js';
import { randomBytes } from '../support/random.js';
import { collect, stream } from './helpers.js';
import { expectBytes } from '../support/bytes.js';
import { StoreError } from '../../src/store/errors.js';
import { KeyShares, MIN_KEY_SHARE_BYTES } from '../../src/s3/key-share.js';

const KIB = 1024;

function slowDown(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('SlowDown');
    expect((err as StoreError).retryAfterSeconds).toBeGreaterThan(0);
    return err as StoreError;
  }
  throw new Error('expected SlowDown');
}

describe('BudgetShares', () => {
  it('stops an identity at its share while another still reserves, within the whole budget', () => {
    const budget = new PendingBudget(100 * KIB);
    const shares = new BudgetShares(budget, 40 * KIB);
    const a = shares.enter('AKIDA');
    const b = shares.enter('AKIDB');
    const a1 = a.account.reserve(25 * KIB);
    const a2 = a.account.reserve(15 * KIB);
    expect(shares.used('AKIDA')).toBe(40 * KIB);
    const err = slowDown(() => a.account.reserve(1));
    expect(err.message).toContain('access key AKIDA');
    expect(err.message).toContain('--key-share');
    expect(() => a.account.check(1)).toThrow(StoreError);
    expect(a.account.tryReserve(1)).toBeUndefined();
    expect(shares.refusals).toBe(2); // reserve and check; tryReserve counts nothing
    // The other identity is untouched by A's share.
    const b1 = b.account.reserve(40 * KIB);
    expect(budget.used).toBe(80 * KIB);
    // A third identity meets the whole budget's limit, not its share.
    const c = shares.enter('');
    const c1 = c.account.reserve(20 * KIB);
    const whole = slowDown(() => c.account.reserve(1));
    expect(whole.message).toContain('pending budget (bytes held by requests in flight) exhausted');
    expect(shares.used('')).toBe(20 * KIB); // the refused byte was given back to the share
    // A release frees both the share and the budget.
    a1();
    a1(); // idempotent
    expect(shares.used('AKIDA')).toBe(15 * KIB);
    expect(budget.used).toBe(75 * KIB);
    const a3 = a.account.tryReserve(5 * KIB);
    expect(a3).toBeDefined();
    for (const r of [a2, a3!, b1, c1]) r();
    expect(budget.used).toBe(0);
  });

  it('drops an account only once its request left and its bytes are released', () => {
    const budget = new PendingBudget(100 * KIB);
    const shares = new BudgetShares(budget, 50 * KIB);
    const t = shares.enter('K');
    const r = t.account.reserve(10 * KIB);
    t.leave();
    t.leave(); // idempotent
    expect(shares.identities).toBe(1); // still holds bytes (a GET streaming after its handler returned)
    expect(shares.requests('K')).toBe(0);
    r();
    expect(shares.identities).toBe(0);
    // A refusal counted by a dropped account stays counted.
    const u = shares.enter('K');
    slowDown(() => u.account.reserve(60 * KIB));
    u.leave();
    expect(shares.identities).toBe(0);
    expect(shares.refusals).toBe(1);
  });

  it('lets a GET wait for its own identity to release, then refuses after the wait or on abort', async () => {
    const budget = new PendingBudget(100 * KIB);
    const shares = new BudgetShares(budget, 30 * KIB);
    const t = shares.enter('G');
    const held = t.account.reserve(30 * KIB);
    expect(t.account.tryReserve(10 * KIB)).toBeUndefined();
    const waiting = t.account.reserveWithin(10 * KIB, 2000);
    await new Promise((r) => setTimeout(r, 20));
    expect(t.account.waiting).toBe(1);
    held();
    const got = await waiting;
    expect(shares.used('G')).toBe(10 * KIB);
    expect(budget.used).toBe(10 * KIB);
    // A wait that runs out is refused; nothing stays reserved.
    const keep = t.account.reserve(20 * KIB);
    await expect(t.account.reserveWithin(10 * KIB, 30)).rejects.toMatchObject({ code: 'SlowDown' });
    expect(shares.used('G')).toBe(30 * KIB);
    // An aborted wait rejects with the signal's reason.
    const ac = new AbortController();
    const aborted = t.account.reserveWithin(10 * KIB, 2000, ac.signal);
    ac.abort(new Error('client went away'));
    await expect(aborted).rejects.toThrow('client went away');
    got();
    keep();
    t.leave();
    expect(budget.used).toBe(0);
    expect(shares.identities).toBe(0);
  });

  it('waits for the shared budget after the share, within one wait', async () => {
    const budget = new PendingBudget(50 * KIB);
    const shares = new BudgetShares(budget, 40 * KIB);
    const other = shares.enter('HOG');
    const hog = other.account.reserve(40 * KIB);
    const t = shares.enter('G');
    const waiting = t.account.reserveWithin(20 * KIB, 2000);
    await new Promise((r) => setTimeout(r, 20));
    expect(shares.used('G')).toBe(20 * KIB); // its share is held while the budget is awaited
    hog();
    const got = await waiting;
    expect(budget.used).toBe(20 * KIB);
    got();
    // The budget still full past the wait: refused, and the share given back.
    const hog2 = other.account.reserve(40 * KIB);
    await expect(t.account.reserveWithin(20 * KIB, 40)).rejects.toMatchObject({ code: 'SlowDown' });
    expect(shares.used('G')).toBe(0);
    hog2();
    other.leave();
    t.leave();
    expect(shares.identities).toBe(0);
  });

  it('refuses a share below one byte and caps a share above the budget at the budget', () => {
    const budget = new PendingBudget(10 * KIB);
    expect(() => new BudgetShares(budget, 0)).toThrow(RangeError);
    expect(new BudgetShares(budget, 20 * KIB).cap).toBe(10 * KIB);
  });
});

describe('KeyShares', () => {
  it('derives the caps from the percentage', () => {
    const k = new KeyShares(new PendingBudget(64 * KIB * KIB), { percent: 50, maxConnections: 1024 });
    expect(k.requestCap).toBe(512);
    expect(k.budgets.cap).toBe(32 * KIB * KIB);
    // Never below the largest single reservations (MIN_KEY_SHARE_BYTES), nor above the budget.
    expect(new KeyShares(new PendingBudget(64 * KIB * KIB), { percent: 5, maxConnections: 1024 }).budgets.cap).toBe(MIN_KEY_SHARE_BYTES);
    expect(new KeyShares(new PendingBudget(4 * KIB * KIB), { percent: 50, maxConnections: 1024 }).budgets.cap).toBe(4 * KIB * KIB);
    expect(new KeyShares(new PendingBudget(1000), { percent: 33, maxConnections: 10 }).requestCap).toBe(4); // rounded up
    expect(new KeyShares(new PendingBudget(1000), { percent: 1, maxConnections: 0 }).requestCap).toBe(0); // no connection cap, no request cap
    for (const bad of [0, 101, 12.5, Number.NaN]) expect(() => new KeyShares(new PendingBudget(1000), { percent: bad, maxConnections: 10 })).toThrow(RangeError);
  });

  it('refuses an identity past its requests in flight, per identity, anonymous ones together', () => {
    const k = new KeyShares(new PendingBudget(1 << 20), { percent: 25, maxConnections: 8 });
    expect(k.requestCap).toBe(2);
    const a = [k.enter('A'), k.enter('A')];
    const err = slowDown(() => k.enter('A'));
    expect(err.message).toContain('access key A');
    expect(k.enter('B')).toBeDefined();
    const anon = [k.enter(null), k.enter(null)];
    expect(slowDown(() => k.enter(null)).message).toContain('anonymous requests');
    expect(k.refusals).toBe(2);
    a[0]!.leave();
    const again = k.enter('A');
    // The ticket's budget is the identity's share.
    const r = again.account.reserve(100);
    expect(k.budgets.used('A')).toBe(100);
    r();
    for (const t of [a[1]!, again, ...anon]) t.leave();
  });
});

describe('a copy that rewrites the body', () => {
  it('reserves from the request\'s share', async () => {
    const store = await Store.open(await createMemoryProvider(), {});
    await store.createBucket('copies');
    const body = randomBytes(100 * KIB, 5);
    await store.putObject('copies', 'src', stream(body), { size: body.length });
    const shares = new BudgetShares(store.repo.budget, 64 * KIB);
    const t = shares.enter('K');
    // SHA-256 is not what the source carries: the body is read and written again.
    const refused = await store.copyObject({ bucket: 'copies', key: 'src' }, { bucket: 'copies', key: 'dst' }, { checksumAlgorithm: 'sha256', budget: t.account }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'SlowDown' });
    expect((refused as Error).message).toContain('access key K');
    t.leave();
    await store.copyObject({ bucket: 'copies', key: 'src' }, { bucket: 'copies', key: 'dst' }, { checksumAlgorithm: 'sha256' });
    expectBytes(await collect((await store.getObject('copies', 'dst')).body), body, 'copy');
    await store.close();
  });
});

describe('the owner of bulk writes', () => {
  it.each([
    ['worker hashing', undefined],
    ['main-thread hashing', null],
  ] as const)('reaches the provider with every chunk of a large body (%s)', async (_name, hashPool) => {
    const inner = await createMemoryProvider();
    const owners: (string | undefined)[] = [];
    const provider = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'put') {
          return (key: string, body: Parameters<Provider['put']>[1], o?: PutOptions) => {
            if (o?.bulk) owners.push(o.owner);
            return target.put(key, body, o);
          };
        }
        const v: unknown = Reflect.get(target, prop);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as Provider;
    const store = await Store.open(provider, { pendingBytes: 64 * KIB * KIB });
    await store.createBucket('owners');
    const shares = new BudgetShares(store.repo.budget, 32 * KIB * KIB);
    const t = shares.enter('OWNER1');
    const body = randomBytes(3 * KIB * KIB, 9);
    await store.putObject('owners', 'big', stream(body, 100_003), { size: body.length, budget: t.account, ...(hashPool === null ? { hashPool } : {}) });
    const id = await store.createMultipartUpload('owners', 'mp');
    await store.uploadPart('owners', 'mp', id, 1, stream(body, 65_536), { size: body.length, budget: t.account, ...(hashPool === null ? { hashPool } : {}) });
    // Without a share, no owner.
    await store.putObject('owners', 'plain', stream(body, 100_003), { size: body.length });
    t.leave();
    expect(owners.length).toBeGreaterThanOrEqual(3);
    const withOwner = owners.filter((o) => o === 'OWNER1').length;
    expect(withOwner).toBeGreaterThanOrEqual(2);
    expect(owners.filter((o) => o !== 'OWNER1' && o !== undefined)).toEqual([]);
    expect(owners.at(-1)).toBeUndefined();
    expect(shares.identities).toBe(0);
    await store.close();
  });
});
