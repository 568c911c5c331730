/**
 * The pending budget (admission control for in-flight write bytes).
 *
 * Proves that with a small `pendingBytes`: writes that fit are admitted and succeed while
 * others are in flight; a write beyond the budget is refused at once with StoreError
 * 'SlowDown' and `retryAfterSeconds`, before any provider write and without reading a
 * byte of its body (a wrapping provider counts puts); packed bodies reserve their size,
 * carriers and parts one segment; and the reservation is released after success, after a
 * failure, after a client that stops mid-body and after an abort signal — so the same
 * writes are admitted again afterwards.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { SEGMENT_SIZE } from '../../src/store/layout.js';
import { Store } from '../../src/store/store.js';
import { randomBytes } from '../support/random.js';
import { stream } from './helpers.js';

const B = 'budget';
const KIB = 1024;

/** A provider that counts the puts that reach it. */
class CountingProvider implements Provider {
  readonly kind = 'counting';
  readonly inner: Provider;
  puts = 0;
  constructor(inner: Provider) {
    this.inner = inner;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  put(...args: Parameters<Provider['put']>) {
    this.puts++;
    return this.inner.put(...args);
  }
  get = (...args: Parameters<Provider['get']>) => this.inner.get(...args);
  head = (key: string) => this.inner.head(key);
  list = (o?: Parameters<Provider['list']>[0]) => this.inner.list(o);
  delete = (key: string) => this.inner.delete(key);
  close = async () => undefined;
}

/** A body that yields `first` bytes, then waits for `open()` before the rest; `pulled` tells if it was read. */
function gated(bytes: Uint8Array, first = 1024) {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const state = { pulled: false, open: () => open() };
  const body = (async function* () {
    state.pulled = true;
    yield bytes.subarray(0, first);
    await gate;
    yield* stream(bytes.subarray(first));
  })();
  return { body, state };
}

/** Resolves once no provider write has started for two turns of the event loop. */
async function quiesce(provider: CountingProvider): Promise<void> {
  for (let last = -1; last !== provider.puts; ) {
    last = provider.puts;
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  }
}

/** A body that must never be read. */
function untouchable(): { body: AsyncIterable<Uint8Array>; pulled: () => boolean } {
  let pulled = false;
  return {
    body: (async function* () {
      pulled = true;
      yield new Uint8Array(1);
    })(),
    pulled: () => pulled,
  };
}

async function setup(pendingBytes: number) {
  const provider = new CountingProvider(await createMemoryProvider());
  const store = await Store.open(provider, { pendingBytes });
  await store.createBucket(B);
  return { provider, store };
}

/** Expects a refusal before any provider write and before the body was read. */
async function expectRefused(store: Store, provider: CountingProvider, write: (body: AsyncIterable<Uint8Array>) => Promise<unknown>) {
  const before = provider.puts;
  const refusals = store.repo.budget.refusals;
  const u = untouchable();
  const err = await write(u.body).then(
    () => undefined,
    (e: unknown) => e
  );
  expect(err).toMatchObject({ code: 'SlowDown' });
  expect((err as { retryAfterSeconds?: number }).retryAfterSeconds).toBeGreaterThan(0);
  expect(provider.puts, 'no provider write').toBe(before);
  expect(u.pulled(), 'body never read').toBe(false);
  expect(store.repo.budget.refusals).toBe(refusals + 1);
}

describe('pending budget', () => {
  it('packed bodies reserve their size: what fits is admitted, the rest refused before any write', async () => {
    const { provider, store } = await setup(1024 * KIB);
    const big = randomBytes(512 * KIB, 1);
    const a = gated(big);
    const b = gated(big);
    const pa = store.putObject(B, 'a', a.body, { size: big.length });
    const pb = store.putObject(B, 'b', b.body, { size: big.length });
    expect(store.repo.budget.used).toBe(1024 * KIB);
    await expectRefused(store, provider, (body) => store.putObject(B, 'c', body, { size: 1 }));
    a.state.open();
    b.state.open();
    await Promise.all([pa, pb]);
    expect(store.repo.budget.used).toBe(0);
    // Released after success: the same size is admitted again.
    await store.putObject(B, 'c', stream(big), { size: big.length });
    expect(store.repo.budget.used).toBe(0);
  });

  it('carriers and parts reserve one segment each: concurrent large writes beyond the budget are refused', async () => {
    const { provider, store } = await setup(4 * SEGMENT_SIZE);
    const large = randomBytes(3 * 1024 * KIB, 2);
    const inFlight = [0, 1, 2].map((i) => {
      const g = gated(large, 300 * KIB);
      return { g, done: store.putObject(B, `large-${i}`, g.body, { size: large.length }) };
    });
    const id = await store.createMultipartUpload(B, 'multi');
    const part = gated(large, 300 * KIB);
    const partDone = store.uploadPart(B, 'multi', id, 1, part.body, { size: large.length });
    expect(store.repo.budget.used).toBe(4 * SEGMENT_SIZE);
    // Let the admitted writers reach their gates (each starts its first chunk blob), so the
    // refusals below are judged on provider writes of their own only.
    await quiesce(provider);
    await expectRefused(store, provider, (body) => store.putObject(B, 'more', body, { size: large.length }));
    await expectRefused(store, provider, (body) => store.putObject(B, 'small', body, { size: 10 }));
    await expectRefused(store, provider, (body) => store.uploadPart(B, 'multi', id, 2, body, { size: large.length }));
    for (const w of inFlight) w.g.state.open();
    part.state.open();
    await Promise.all([...inFlight.map((w) => w.done), partDone]);
    expect(store.repo.budget.used).toBe(0);
    expect(store.repo.budget.peak).toBe(4 * SEGMENT_SIZE);
    await store.putObject(B, 'more', stream(large), { size: large.length });
  });

  it('releases the reservation when the client stops mid-body, when aborted, and on other failures', async () => {
    const { provider, store } = await setup(SEGMENT_SIZE);
    const large = randomBytes(2 * 1024 * KIB, 3);
    const dying = (async function* () {
      yield large.subarray(0, 600 * KIB);
      throw new Error('client went away');
    })();
    await expect(store.putObject(B, 'x', dying, { size: large.length })).rejects.toBeDefined();
    expect(store.repo.budget.used).toBe(0);

    const controller = new AbortController();
    const slow = gated(large, 400 * KIB);
    const aborted = store.putObject(B, 'y', slow.body, { size: large.length, signal: controller.signal });
    await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    slow.state.open();
    await expect(aborted).rejects.toBeDefined();
    expect(store.repo.budget.used).toBe(0);

    const short = (async function* () {
      yield new Uint8Array(100);
    })();
    await expect(store.putObject(B, 'z', short, { size: 200 })).rejects.toMatchObject({ code: 'IncompleteBody' });
    await expect(store.putObject('no-such-bucket', 'z', stream(new Uint8Array(5)), { size: 5 })).rejects.toMatchObject({ code: 'NoSuchBucket' });
    expect(store.repo.budget.used).toBe(0);
    // Nothing of the failed carriers was left behind, and the budget admits a full write again.
    expect((await provider.list({ prefix: 'chunks/' })).items).toEqual([]);
    await store.putObject(B, 'w', stream(large), { size: large.length });
    expect(store.repo.budget.used).toBe(0);
  });
});
