/**
 * The commit loop's safety after the anchor moved, and the order of commit times.
 *
 * Regressions from the issue-9 review of src/store/, each failing before its fix:
 *  - an exception while applying a commit the anchor already named left the sequence number
 *    free, so the next batch reused it and dropped the durable commit from the chain;
 *  - an ambiguous checkpoint anchor write was judged "ours landed" on (seq, head, writer)
 *    alone, which a checkpoint never changes, so memory believed a root the anchor did not
 *    name;
 *  - commit time was the wall clock at batch creation: equal within a millisecond and going
 *    backwards with the clock (also across reopen).
 * All run on the real fs provider; faults are injected by a provider wrapper or, for the
 * in-memory apply, by wrapping the state's apply method (the only way such a fault arises is
 * a bug or exhaustion inside this process, which no provider can simulate).
 */
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { getBytes, ProviderError, type Provider } from '../../src/provider/provider.js';
import { ANCHOR_KEY } from '../../src/store/layout.js';
import type { Mutation } from '../../src/store/commit.js';
import { readAnchor } from '../../src/store/recovery.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { chainCommits, collect, stream, tempDir } from './helpers.js';

const B = 'safety';
const text = (s: string) => new TextEncoder().encode(s);
const put = (store: Store, key: string, body: string) => store.putObject(B, key, stream(text(body)), { size: text(body).length });
/** Whether `m` writes object `key` (a plain put, or a version once versioning exists). */
const writes = (m: Mutation, key: string) => (m.op === 'put' || m.op === 'putVersion') && m.key === key;
const read = async (store: Store, key: string) => new TextDecoder().decode(await collect((await store.getObject(B, key)).body));

type PutHook = (inner: Provider, ...args: Parameters<Provider['put']>) => Promise<Awaited<ReturnType<Provider['put']>>>;

/** Passes every call to `inner`, except that `hook`, when armed, handles the next anchor put once. */
class AnchorHook implements Provider {
  readonly inner: Provider;
  readonly kind = 'anchor-hook';
  hook: PutHook | undefined;
  /** Delay before every anchor put, ms (lets batches pile up behind a commit in flight). */
  delayMs = 0;
  constructor(inner: Provider) {
    this.inner = inner;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  async put(...[key, body, o]: Parameters<Provider['put']>) {
    if (key === ANCHOR_KEY && this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const h = key === ANCHOR_KEY ? this.hook : undefined;
    if (!h) return this.inner.put(key, body, o);
    this.hook = undefined;
    return h(this.inner, key, body, o);
  }
  get = (...a: Parameters<Provider['get']>) => this.inner.get(...a);
  head = (key: string) => this.inner.head(key);
  list = (o?: Parameters<Provider['list']>[0]) => this.inner.list(o);
  delete = (key: string) => this.inner.delete(key);
  close = () => this.inner.close();
}

async function fsStore(options: Parameters<typeof Store.open>[1] = {}) {
  const { dir, cleanup } = tempDir('commit-safety');
  const provider = new AnchorHook(await createFsProvider({ dir }));
  const store = await Store.open(provider, options);
  await store.createBucket(B);
  const reopen = async (o: Parameters<typeof Store.open>[1] = {}) => Store.open(await createFsProvider({ dir }), o);
  return { dir, cleanup, provider, store, reopen };
}

const durable = async (p: Provider) => (await readAnchor(p))!.anchor;

describe('an exception after the anchor moved', () => {
  it('fences the repository; the sequence is never reused and a reopen replays the durable commit', async () => {
    const { cleanup, provider, store, reopen } = await fsStore();
    try {
      await put(store, 'before', 'old');
      // Applying the put of 'boom' throws, as a bug or an exhausted Map would, after the
      // anchor already names its commit.
      const state = store.repo.state;
      const apply = state.apply.bind(state);
      state.apply = (m: Mutation) => {
        if (writes(m, 'boom')) throw new RangeError('injected: applying the commit failed');
        apply(m);
      };
      const seq = store.repo.seq;
      await expect(put(store, 'boom', 'durable')).rejects.toMatchObject({ code: 'Unsafe' });
      const anchor = await durable(provider);
      expect(anchor.seq).toBe(seq + 1);
      expect(store.repo.seq).toBe(anchor.seq);
      // No further commit in this process: each would have to reuse or skip that sequence.
      await expect(put(store, 'after', 'lost?')).rejects.toMatchObject({ code: 'Unsafe' });
      await expect(store.deleteObject(B, 'before')).rejects.toMatchObject({ code: 'Unsafe' });
      await expect(store.createBucket('another')).rejects.toMatchObject({ code: 'Unsafe' });
      expect((await durable(provider)).head).toEqual(anchor.head);
      expect(await read(store, 'before')).toBe('old'); // reads go on
      await store.close();

      const again = await reopen();
      expect(await read(again, 'boom')).toBe('durable');
      expect(await read(again, 'before')).toBe('old');
      await expect(again.headObject(B, 'after')).rejects.toMatchObject({ code: 'NoSuchKey' });
      await put(again, 'after', 'new');
      const chain = await chainCommits(again.repo.provider);
      expect(chain.map((c) => c.seq)).toEqual(chain.map((_, i) => i + 1));
      expect(chain.some((c) => c.mutations.some((m) => writes(m, 'boom')))).toBe(true);
      expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
      await again.close();
    } finally {
      cleanup();
    }
  });

  it('fails the batch staged behind it too; a reopen holds the durable commit only', async () => {
    const { cleanup, provider, store, reopen } = await fsStore();
    try {
      provider.delayMs = 30; // anchor moves are slow, so the next batch stages behind one
      const state = store.repo.state;
      const apply = state.apply.bind(state);
      state.apply = (m: Mutation) => {
        if (writes(m, 'a')) throw new RangeError('injected: applying the commit failed');
        apply(m);
      };
      const first = put(store, 'a', 'durable');
      await new Promise((r) => setTimeout(r, 10)); // `a` is committing; `b` stages behind it
      const second = put(store, 'b', 'staged');
      const [ra, rb] = await Promise.allSettled([first, second]);
      expect(store.repo.stats.pipelined).toBe(1);
      expect(ra).toMatchObject({ status: 'rejected', reason: { code: 'Unsafe' } });
      expect(rb).toMatchObject({ status: 'rejected', reason: { code: 'Unsafe' } });
      await store.close();
      const again = await reopen();
      expect(await read(again, 'a')).toBe('durable');
      await expect(again.headObject(B, 'b')).rejects.toMatchObject({ code: 'NoSuchKey' });
      expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
      await again.close();
    } finally {
      cleanup();
    }
  });
});

describe('an ambiguous checkpoint anchor write', () => {
  it('that did not land is a definite failure: memory keeps the root the anchor names', async () => {
    const { cleanup, provider, store, reopen } = await fsStore();
    try {
      for (let i = 0; i < 5; i++) await put(store, `k${i}`, `v${i}`);
      const before = await durable(provider);
      provider.hook = async () => {
        throw new ProviderError('Unavailable', 'scripted: anchor put timed out before it was applied');
      };
      await expect(store.repo.checkpoint()).rejects.toMatchObject({ code: 'Io' });
      const after = await durable(provider);
      expect(after).toEqual(before);
      expect(store.repo.rootSeq).toBe(after.root.seq);
      // Not fenced: the anchor was read back unchanged, so the failure is definite.
      await put(store, 'later', 'x');
      expect((await durable(provider)).root).toEqual(before.root);
      await store.repo.checkpoint();
      const moved = await durable(provider);
      expect(moved.root.seq).toBe(store.repo.seq);
      expect(store.repo.rootSeq).toBe(moved.root.seq);
      await store.close();
      const again = await reopen();
      expect(await read(again, 'k4')).toBe('v4');
      expect(await read(again, 'later')).toBe('x');
      expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
      await again.close();
    } finally {
      cleanup();
    }
  });

  it('that landed is recognised by reading the whole anchor back', async () => {
    const { cleanup, provider, store } = await fsStore();
    try {
      await put(store, 'k', 'v');
      provider.hook = async (inner, ...args) => {
        await inner.put(...args);
        throw new ProviderError('Unavailable', 'scripted: anchor put failed after it was applied');
      };
      await store.repo.checkpoint();
      const anchor = await durable(provider);
      expect(anchor.root.seq).toBe(store.repo.seq);
      expect(store.repo.rootSeq).toBe(anchor.root.seq);
      await put(store, 'k2', 'v2'); // the etag read back is the one to compare-and-swap on
      await store.close();
    } finally {
      cleanup();
    }
  });

  it('read back naming our commit with another root fences instead of believing ours', async () => {
    const { cleanup, provider, store, reopen } = await fsStore();
    try {
      await put(store, 'k', 'v');
      const rootBefore = (await durable(provider)).root;
      // The write lands, then the anchor is replaced by the one before it (same sequence,
      // head and writer; another root), as a stale delayed write could do.
      provider.hook = async (inner, ...args) => {
        const previous = await getBytes(inner, ANCHOR_KEY);
        await inner.put(...args);
        await inner.put(ANCHOR_KEY, previous);
        throw new ProviderError('Unavailable', 'scripted: anchor put failed after it was applied');
      };
      await expect(store.repo.checkpoint()).rejects.toMatchObject({ code: 'Unsafe' });
      expect((await durable(provider)).root).toEqual(rootBefore);
      expect(store.repo.rootSeq).toBe(rootBefore.seq);
      await expect(put(store, 'k2', 'v2')).rejects.toMatchObject({ code: 'Unsafe' });
      expect(await read(store, 'k')).toBe('v');
      await store.close();
      const again = await reopen();
      expect(await read(again, 'k')).toBe('v');
      await put(again, 'k2', 'v2');
      expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
      await again.close();
    } finally {
      cleanup();
    }
  });
});

describe('commit time', () => {
  const strictlyIncreasing = (times: number[]) => times.every((t, i) => i === 0 || t > times[i - 1]!);

  it('strictly increases when the wall clock stands still or steps back, also across reopen', async () => {
    let wall = Date.UTC(2026, 5, 1);
    const now = () => wall;
    const { cleanup, store, reopen } = await fsStore({ now });
    try {
      await put(store, 'a', '1'); // same millisecond as the bucket's creation
      wall -= 60_000; // NTP steps the clock back a minute
      await put(store, 'b', '2');
      // Commits one after another, then concurrent ones, all within one (frozen) millisecond.
      for (let i = 0; i < 10; i++) await put(store, `seq${i}`, `${i}`);
      await Promise.all(Array.from({ length: 30 }, (_, i) => put(store, `burst${i}`, `${i}`)));
      const first = await chainCommits(store.repo.provider);
      expect(first.length).toBeGreaterThan(13);
      expect(strictlyIncreasing(first.map((c) => c.time)), first.map((c) => c.time).join(' ')).toBe(true);
      const b = (await store.headObject(B, 'b')).version.lastModified;
      expect(b).toBeGreaterThan((await store.headObject(B, 'a')).version.lastModified);
      wall += 3_600_000; // the clock is ahead again: commits take its time
      await put(store, 'c', '3');
      expect((await store.headObject(B, 'c')).version.lastModified).toBe(wall);
      await store.close();

      // Reopen with the clock a day behind: replayed commits set the floor.
      wall -= 86_400_000;
      const again = await reopen({ now });
      await put(again, 'd', '4');
      const last = await chainCommits(again.repo.provider);
      expect(strictlyIncreasing(last.map((c) => c.time))).toBe(true);
      expect((await again.headObject(B, 'd')).version.lastModified).toBeGreaterThan(wall + 86_400_000);
      // Reopen right after a checkpoint (nothing to replay): the head commit sets the floor.
      await again.repo.checkpoint();
      await again.close();
      wall -= 86_400_000;
      const third = await reopen({ now });
      await put(third, 'e', '5');
      const all = await chainCommits(third.repo.provider);
      expect(all.at(-1)!.seq).toBe(third.repo.seq);
      expect(strictlyIncreasing(all.map((c) => c.time)), all.map((c) => c.time).join(' ')).toBe(true);
      await third.close();
    } finally {
      cleanup();
    }
  });
});
