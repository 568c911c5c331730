/**
 * The store over a failing provider.
 *
 * Proves, with seeded random faults (failures before and after puts, delays, truncated
 * reads) under concurrent load, that: a failure always surfaces as a StoreError or
 * ProviderError, never as a success with wrong data; a GET returns exactly the current
 * bytes or throws (a truncated read errors); an operation that failed with anything but
 * 'Unsafe' left no trace, one that failed with 'Unsafe' is all-or-nothing; after the
 * faults stop and the repository is reopened on the inner provider, every operation that
 * resolved is durable and byte-exact, and `verifyRepository` is clean (orphan blobs of
 * failed commits are allowed, damage is not).
 *
 * Scripted faults then pin down each commit path: a commit blob written but reported
 * failed, an anchor move reported failed before or after it happened, and the fence — a
 * repository unsure whether its anchor moved refuses writes until reopened, and the
 * unresolved operation is then visible whole or not at all.
 */
import { describe, expect, it } from 'vitest';
import { createFaultyProvider, type FaultyProvider } from '../../src/provider/faulty.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { ProviderError, type Provider } from '../../src/provider/provider.js';
import { StoreError } from '../../src/store/errors.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { expectBytes } from '../support/bytes.js';
import { prng, randInt, randomBytes } from '../support/random.js';
import { collect, stream, tempDir } from './helpers.js';

const B = 'faulty';
const KIB = 1024;

const isFailure = (e: unknown) => e instanceof StoreError || e instanceof ProviderError;

/** Reads a key: its bytes, null when absent, or the error. */
async function read(store: Store, key: string): Promise<Uint8Array | null | Error> {
  try {
    return await collect((await store.getObject(B, key)).body);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'NoSuchKey') return null;
    return err as Error;
  }
}

const sameBody = (a: Uint8Array | null, b: Uint8Array | null) => (a === null || b === null ? a === b : Buffer.from(a).equals(b));

/** Small thresholds, so checkpoints and compactions run (and fail) under faults too. */
// No body cache: every GET must go to the (faulty) provider, or truncated reads are never seen.
const OPTIONS = { checkpointEvery: 8, overlayBytes: 16 * KIB, maxRuns: 3, bodyCacheBytes: 0 };

/** Faulted opens tried before the outage is taken to end (see openRetrying). */
const FAULTED_OPENS = 2_000;

/**
 * Opens `provider`, retrying failures (each must be typed). Recovery reads the anchor,
 * config, root, every run it names (object index, uploads, version log) and every commit
 * after it, and any one faulted read fails the open (~22% of gets fail or truncate here): when
 * checkpoints keep failing the chain grows past a dozen commits, an open needs ~30 reads and
 * succeeds about once in 2,000 tries, and a longer chain almost never (a CI run saw seed 2
 * fail 20,000 opens in a row). So after {@link FAULTED_OPENS} typed failures the faults stop
 * for this one open, as an outage ends, and come back once it has opened.
 */
async function openRetrying(provider: Provider | FaultyProvider): Promise<Store> {
  for (let attempt = 1; ; attempt++) {
    const outageOver = attempt > FAULTED_OPENS && 'enabled' in provider && provider.enabled;
    if (outageOver) provider.enabled = false;
    try {
      return await Store.open(provider, OPTIONS);
    } catch (err) {
      expect(isFailure(err), String(err)).toBe(true);
      if (attempt > FAULTED_OPENS) throw err; // an open without faults must not fail
    } finally {
      if (outageOver) provider.enabled = true;
    }
  }
}

/** Packed sizes (0 B up to the 512 KiB threshold); with `carriers`, a fifth are 0.6-1.3 MiB. */
function bodySize(next: () => number, carriers: boolean): number {
  const r = next() % 10;
  if (r === 0) return 0;
  if (r < 6) return randInt(next, 1, 48 * KIB);
  if (r < 8 || !carriers) return 512 * KIB - 1 - (next() % 2);
  return randInt(next, 600 * KIB, 1300 * KIB);
}

interface Tracked {
  /** What this process's store serves (its in-memory view). */
  view: Uint8Array | null;
  /** What the key may durably hold (more than one after an ambiguous failure). */
  legal: (Uint8Array | null)[];
}

interface RunOptions {
  rounds: number;
  carriers: boolean;
  /** Random delays make the fault schedule depend on timing; without them a memory run is
   * deterministic per seed. */
  delays: boolean;
}

async function randomFaultRun(inner: Provider, seed: number, o: RunOptions) {
  const keys = Array.from({ length: 10 }, (_, i) => `key-${i}`);
  const model = new Map<string, Tracked>(keys.map((k) => [k, { view: null, legal: [null] }]));
  const faulty = createFaultyProvider(inner, { seed, failBefore: 0.08, failAfterPut: 0.12, truncateGet: 0.15, delay: o.delays ? 0.2 : 0, maxDelayMs: 3 });
  const setup = await Store.open(inner);
  await setup.createBucket(B);
  await setup.close();
  const next = prng(seed);
  const n = { ok: 0, failed: 0, unsafe: 0, readsOk: 0, readsFailed: 0, reopens: 0 };
  let store = await openRetrying(faulty);

  for (let round = 0; round < o.rounds; round++) {
    // Up to four concurrent writes on distinct keys (one group commit, often).
    const shuffled = [...keys].sort(() => (next() % 2 ? 1 : -1));
    const writes = shuffled.slice(0, 1 + (next() % 4)).map(async (key, i) => {
      const kind = next() % 10;
      let body: Uint8Array | null;
      let op: () => Promise<unknown>;
      if (kind < 6) {
        body = randomBytes(bodySize(next, o.carriers), seed * 1000 + round * 10 + i);
        const b = body;
        op = () => store.putObject(B, key, stream(b, 1 + (next() % (64 * KIB))), { size: b.length });
      } else if (kind < 8) {
        body = null;
        op = () => store.deleteObject(B, key);
      } else {
        const src = shuffled[shuffled.length - 1]!; // never written in this round
        body = model.get(src)!.view;
        if (!body) return;
        op = () => store.copyObject({ bucket: B, key: src }, { bucket: B, key });
      }
      const t = model.get(key)!;
      try {
        await op();
        n.ok++;
        t.view = body;
        t.legal = [body];
      } catch (err) {
        expect(isFailure(err), String(err)).toBe(true);
        n.failed++;
        if ((err as StoreError).code === 'Unsafe') t.legal.push(body);
      }
    });
    await Promise.all(writes);

    // Reads: exact bytes of this process's view, or a typed error.
    for (const key of keys.filter(() => next() % 3 === 0)) {
      const got = await read(store, key);
      if (got instanceof Error) {
        expect(isFailure(got), String(got)).toBe(true);
        n.readsFailed++;
      } else {
        expect(sameBody(got, model.get(key)!.view), `${key} in round ${round}`).toBe(true);
        n.readsOk++;
      }
    }

    // Fenced: no write gets through until the repository is reopened.
    const probe = await store.putObject(B, 'probe', stream(new Uint8Array(1)), { size: 1 }).then(
      () => undefined,
      (e: unknown) => e
    );
    if (probe instanceof StoreError && probe.code === 'Unsafe') {
      n.unsafe++;
      await expect(store.deleteObject(B, keys[0]!)).rejects.toMatchObject({ code: 'Unsafe' });
      await store.close();
      store = await openRetrying(faulty);
      n.reopens++;
      // Resolve what the ambiguous operations did (faults off: this is the test's own view).
      faulty.enabled = false;
      for (const [key, t] of model) {
        const got = await read(store, key);
        if (got instanceof Error) throw got;
        expect(t.legal.some((c) => sameBody(c, got)), `${key} after reopen holds an illegal state`).toBe(true);
        t.view = got;
        t.legal = [got];
      }
      faulty.enabled = true;
    }
  }
  faulty.enabled = false;
  await store.close();

  // On the inner provider: every resolved operation is there, byte for byte.
  const final = await Store.open(inner, OPTIONS);
  for (const [key, t] of model) {
    const got = await read(final, key);
    if (got instanceof Error) throw got;
    if (t.legal.length === 1) expectBytes(got ?? new Uint8Array(0), t.legal[0] ?? new Uint8Array(0), key);
    expect(t.legal.some((c) => sameBody(c, got)), `${key} holds an illegal state`).toBe(true);
    if (t.legal.length === 1) expect(got === null, `${key} presence`).toBe(t.legal[0] === null);
  }
  await final.close();
  const report = await verifyRepository(inner);
  expect(report.problems).toEqual([]);
  return { n, faults: faulty.faults };
}

describe('random provider faults under concurrent load', () => {
  it.each([1, 2, 3])('memory provider, seed %i: failures are typed, reads exact, resolved writes durable', async (seed) => {
    const { n, faults } = await randomFaultRun(await createMemoryProvider(), seed, { rounds: 60, carriers: false, delays: true });
    // The run really exercised faults, successes and failures.
    const kinds = new Set(faults.map((f) => f.fault));
    expect([...kinds].sort()).toEqual(['delay', 'fail-after', 'fail-before', 'truncate']);
    expect(n.ok).toBeGreaterThan(20);
    expect(n.failed).toBeGreaterThan(5);
    expect(n.readsFailed).toBeGreaterThan(0);
  });

  it('memory provider without delays: crosses more than one fence, reopening after each', async () => {
    // The fault schedule follows the order of provider calls, and concurrent writes batch by
    // timing, so how many fences one seed meets varies with the machine's load (seed 4 met 8
    // on a quiet machine and 1 under load): seeds are run until two fences were crossed.
    let unsafe = 0;
    let reopens = 0;
    for (const seed of [4, 14, 24, 34, 44]) {
      const { n } = await randomFaultRun(await createMemoryProvider(), seed, { rounds: 60, carriers: false, delays: false });
      unsafe += n.unsafe;
      reopens += n.reopens;
      if (unsafe > 1) break;
    }
    expect(unsafe).toBeGreaterThan(1);
    expect(reopens).toBe(unsafe);
  });

  it('fs provider, seed 9', async () => {
    const { dir, cleanup } = tempDir('faults');
    try {
      const { n } = await randomFaultRun(await createFsProvider({ dir }), 9, { rounds: 30, carriers: false, delays: true });
      expect(n.ok).toBeGreaterThan(10);
    } finally {
      cleanup();
    }
  });

  // Regression: a carrier PUT that failed with 'Unsafe' deleted its chunks although its
  // commit could be durable (see 'a fenced carrier PUT keeps its chunks'); this seed hit it
  // deterministically (no delays).
  it('memory provider with carrier bodies, seed 5', async () => {
    await randomFaultRun(await createMemoryProvider(), 5, { rounds: 60, carriers: true, delays: false });
  });
});

type Step = { op: 'put' | 'get'; key: (k: string) => boolean; when: 'before' | 'after' };

/** Fails exactly the calls its script names, in order (each step once). */
class ScriptedProvider implements Provider {
  readonly kind = 'scripted';
  readonly inner: Provider;
  script: Step[] = [];
  constructor(inner: Provider) {
    this.inner = inner;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  #take(op: Step['op'], key: string, when: Step['when']): boolean {
    const i = this.script.findIndex((s) => s.op === op && s.when === when && s.key(key));
    if (i < 0) return false;
    this.script.splice(i, 1);
    return true;
  }
  async put(...[key, body, o]: Parameters<Provider['put']>) {
    if (this.#take('put', key, 'before')) throw new ProviderError('Unavailable', `scripted: put ${key} failed before`);
    const info = await this.inner.put(key, body, o);
    if (this.#take('put', key, 'after')) throw new ProviderError('Unavailable', `scripted: put ${key} failed after it was applied`);
    return info;
  }
  async get(...[key, o]: Parameters<Provider['get']>) {
    if (this.#take('get', key, 'before')) throw new ProviderError('Unavailable', `scripted: get ${key} failed`);
    return this.inner.get(key, o);
  }
  head = (key: string) => this.inner.head(key);
  list = (o?: Parameters<Provider['list']>[0]) => this.inner.list(o);
  delete = (key: string) => this.inner.delete(key);
  close = async () => undefined;
}

async function scripted() {
  const inner = await createMemoryProvider();
  const p = new ScriptedProvider(inner);
  const store = await Store.open(p);
  await store.createBucket(B);
  return { inner, p, store };
}

const isAnchor = (k: string) => k === 'anchor';
const isCommit = (k: string) => k.startsWith('commits/');

describe('scripted commit failures', () => {
  it('a commit blob written but reported failed: the write fails and leaves no trace', async () => {
    const { inner, p, store } = await scripted();
    p.script = [{ op: 'put', key: isCommit, when: 'after' }];
    await expect(store.putObject(B, 'k', stream(new Uint8Array(10)), { size: 10 })).rejects.toBeInstanceOf(StoreError);
    expect(await read(store, 'k')).toBeNull();
    await store.putObject(B, 'k2', stream(new Uint8Array(3)), { size: 3 }); // not fenced
    const again = await Store.open(inner);
    expect(await read(again, 'k')).toBeNull();
    expect((await read(again, 'k2')) as Uint8Array).toHaveLength(3);
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });

  it('an anchor move reported failed before it happened: a definite failure, not a fence', async () => {
    const { inner, p, store } = await scripted();
    p.script = [{ op: 'put', key: isAnchor, when: 'before' }];
    await expect(store.putObject(B, 'k', stream(new Uint8Array(10)), { size: 10 })).rejects.toMatchObject({ code: 'Io' });
    await store.putObject(B, 'k2', stream(new Uint8Array(3)), { size: 3 });
    const again = await Store.open(inner);
    expect(await read(again, 'k')).toBeNull();
    expect((await read(again, 'k2')) as Uint8Array).toHaveLength(3);
  });

  it('an anchor move reported failed after it happened: recognised by reading the anchor back', async () => {
    const { inner, p, store } = await scripted();
    p.script = [{ op: 'put', key: isAnchor, when: 'after' }];
    const body = randomBytes(700 * KIB, 5);
    await store.putObject(B, 'k', stream(body), { size: body.length });
    await store.putObject(B, 'k2', stream(new Uint8Array(3)), { size: 3 });
    const again = await Store.open(inner);
    expectBytes((await read(again, 'k')) as Uint8Array, body, 'k');
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });

  it('an unresolvable anchor move fences writes until reopened; reads go on', async () => {
    const { inner, p, store } = await scripted();
    await store.putObject(B, 'old', stream(new Uint8Array(4)), { size: 4 });
    p.script = [
      { op: 'put', key: isAnchor, when: 'after' },
      { op: 'get', key: isAnchor, when: 'before' },
    ];
    await expect(store.putObject(B, 'k', stream(new Uint8Array(10)), { size: 10 })).rejects.toMatchObject({ code: 'Unsafe' });
    await expect(store.putObject(B, 'other', stream(new Uint8Array(1)), { size: 1 })).rejects.toMatchObject({ code: 'Unsafe' });
    await expect(store.deleteObject(B, 'old')).rejects.toMatchObject({ code: 'Unsafe' });
    await expect(store.createBucket('another')).rejects.toMatchObject({ code: 'Unsafe' });
    expect((await read(store, 'old')) as Uint8Array).toHaveLength(4);
    await store.close();
    const again = await Store.open(p);
    expect((await read(again, 'k')) as Uint8Array).toHaveLength(10); // the anchor did move: whole
    await again.putObject(B, 'other', stream(new Uint8Array(1)), { size: 1 });
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });

  // Regression: when the commit failed with 'Unsafe' the anchor could already name it, yet
  // putObject/uploadPart deleted the carrier chunks on the way out: after reopening, the
  // object was listed but its body gone (MissingBlob).
  it('a fenced carrier PUT keeps its chunks: after reopen the object is whole or absent', async () => {
    const { inner, p, store } = await scripted();
    p.script = [
      { op: 'put', key: isAnchor, when: 'after' },
      { op: 'get', key: isAnchor, when: 'before' },
    ];
    const body = randomBytes(700 * KIB, 6);
    await expect(store.putObject(B, 'big', stream(body), { size: body.length })).rejects.toMatchObject({ code: 'Unsafe' });
    await store.close();
    const again = await Store.open(inner);
    const got = await read(again, 'big');
    expect(got === null || (got instanceof Uint8Array && Buffer.from(got).equals(body)), String(got)).toBe(true);
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });

  // Regression: the same for UploadPart (the part was listed, its chunk missing).
  it('a fenced UploadPart keeps its chunks: after reopen the part is whole or absent', async () => {
    const { inner, p, store } = await scripted();
    const id = await store.createMultipartUpload(B, 'multi');
    p.script = [
      { op: 'put', key: isAnchor, when: 'after' },
      { op: 'get', key: isAnchor, when: 'before' },
    ];
    const part = randomBytes(5 * 1024 * KIB, 7);
    await expect(store.uploadPart(B, 'multi', id, 1, stream(part), { size: part.length })).rejects.toMatchObject({ code: 'Unsafe' });
    await store.close();
    await Store.open(inner);
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });
});

describe('truncated reads', () => {
  it('every GET of a truncated blob read throws; none yields short or wrong bytes', async () => {
    const inner = await createMemoryProvider();
    const setup = await Store.open(inner);
    await setup.createBucket(B);
    const bodies = [1, 5000, 512 * KIB, 700 * KIB, 2 * 1024 * KIB + 3].map((n, i) => randomBytes(n, 100 + i));
    for (const [i, b] of bodies.entries()) await setup.putObject(B, `t${i}`, stream(b), { size: b.length });
    await setup.close();
    const faulty = createFaultyProvider(inner, { seed: 3, truncateGet: 1, operations: ['get'] });
    faulty.enabled = false;
    const store = await Store.open(faulty);
    faulty.enabled = true;
    for (const [i, b] of bodies.entries()) {
      for (const range of [undefined, { start: 1, end: Math.max(1, b.length - 2) }]) {
        if (range && b.length < 3) continue;
        const got = await store
          .getObject(B, `t${i}`, range ? { range } : {})
          .then((r) => collect(r.body))
          .catch((e: unknown) => e);
        expect(isFailure(got), `t${i} ${range ? 'range' : 'whole'} should have failed, got ${String(got)}`).toBe(true);
      }
    }
    expect(faulty.faults.filter((f) => f.fault === 'truncate').length).toBeGreaterThan(5);
  });
});
