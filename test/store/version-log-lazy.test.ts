/**
 * The version log's runs are opened when history is read, not to open the repository.
 *
 * Regression (cost): since the version log landed, opening a repository read the footer of
 * every run of every bucket's history (up to 2 * maxRuns - 1 per bucket) besides the runs
 * it serves from, and a checkpoint read back each history run it flushed. Under the fault
 * test's rates every such read is one more way for an open to fail: the opens needed after
 * a fence went from a median of 8 (p99 103) before the log to 16 (p99 1,239). Now history
 * runs are opened on first read, wherever they come from (root, flush, compaction,
 * migration).
 *
 * Proves: an open, GET, LIST and a checkpoint read no history run; ListObjectVersions does,
 * once per run; a history run that fails to open fails only the history read (typed, naming
 * the run) and is tried again on the next one; a missing history run leaves current objects
 * served, fails history reads with MissingBlob naming it, and verify reports it.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { BlockCache } from '../../src/store/index/block-cache.js';
import { StoreError } from '../../src/store/errors.js';
import { lazyRunHandle } from '../../src/store/runs.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { expectBytes } from '../support/bytes.js';
import { randomBytes } from '../support/random.js';
import { collect, stream } from './helpers.js';
import { isVersionRun, ObservedProvider } from './observed-provider.js';

const B = 'history';
const KEYS = ['a', 'b/1', 'b/2', 'c'];
const ROUNDS = 3;
/** Checkpoints only when asked, and no compaction: one history run per checkpoint. */
const OPTIONS = { checkpointEvery: 1 << 20, overlayBytes: 1 << 30, maxRuns: 8 };

/** A versioned bucket whose history lies in ROUNDS runs (every key written once per round). */
async function repositoryWithHistory() {
  const inner = await createMemoryProvider();
  const store = await Store.open(inner, OPTIONS);
  await store.createBucket(B);
  await store.putVersioning(B, 'Enabled');
  const current = new Map<string, Uint8Array>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, key] of KEYS.entries()) {
      const body = randomBytes(50 + round * 10 + i, round * 100 + i);
      await store.putObject(B, key, stream(body), { size: body.length });
      current.set(key, body);
    }
    await store.checkpoint();
  }
  const runs = store.repo.state.buckets.get(B)!.versions.runs.map((r) => r.key);
  expect(runs).toHaveLength(ROUNDS);
  await store.close();
  return { inner, current, runs };
}

async function expectCurrent(store: Store, current: Map<string, Uint8Array>) {
  for (const [key, body] of current) expectBytes(await collect((await store.getObject(B, key)).body), body, key);
  expect((await store.listObjects(B)).contents.map((c) => c.key)).toEqual(KEYS);
}

describe('version log runs are opened when history is read', () => {
  it('open, GET, LIST and a checkpoint read no history run; listing versions opens each once', async () => {
    const { inner, current, runs } = await repositoryWithHistory();
    const p = new ObservedProvider(inner);
    const store = await Store.open(p, OPTIONS);
    await expectCurrent(store, current);
    expect(p.gets(isVersionRun), 'history runs read by open, GET or LIST').toEqual([]);

    let mark = p.calls.length;
    const listed = await store.listVersions(B);
    expect(listed.versions).toHaveLength(KEYS.length * ROUNDS);
    expect(new Set(p.gets(isVersionRun, mark))).toEqual(new Set(runs));
    mark = p.calls.length;
    expect((await store.listVersions(B)).versions).toHaveLength(KEYS.length * ROUNDS);
    expect(p.gets(isVersionRun, mark), 'opened runs (and their cached blocks) are kept').toEqual([]);

    // A checkpoint flushes the new history without reading it back.
    mark = p.calls.length;
    await store.putObject(B, 'a', stream(new Uint8Array(3)), { size: 3 });
    await store.checkpoint();
    const flushed = p.calls.slice(mark).filter((c) => c.startsWith('put ') && isVersionRun(c.slice(4)));
    expect(flushed).toHaveLength(1);
    expect(p.gets(isVersionRun, mark)).toEqual([]);
    expect((await store.listVersions(B)).versions).toHaveLength(KEYS.length * ROUNDS + 1);
    await store.close();
  });

  it('a history run that fails to open fails the history read, typed and named, and is tried again', async () => {
    const { inner, current, runs } = await repositoryWithHistory();
    const p = new ObservedProvider(inner);
    const store = await Store.open(p, OPTIONS);
    p.failOnce.add(runs[1]!);
    const err = await store.listVersions(B).then(
      () => undefined,
      (e: unknown) => e as Error
    );
    expect(err?.message).toContain(runs[1]);
    expect(p.failed).toBe(1);
    await expectCurrent(store, current);
    expect((await store.listVersions(B)).versions).toHaveLength(KEYS.length * ROUNDS);
    await store.close();
  });

  it('a missing history run: current objects are served, history reads fail naming it, verify reports it', async () => {
    const { inner, current, runs } = await repositoryWithHistory();
    await inner.delete(runs[0]!);
    const store = await Store.open(inner, OPTIONS);
    await expectCurrent(store, current);
    await expect(store.listVersions(B)).rejects.toSatisfy((e: unknown) => e instanceof StoreError && e.code === 'MissingBlob' && e.message.includes(runs[0]!));
    await store.close();
    expect((await verifyRepository(inner)).problems.map((x) => x.blob)).toContain(runs[0]);
  });

  it('run metadata that does not decode is refused at once, before any read', async () => {
    const untouchable = new Proxy({} as Provider, {
      get: () => {
        throw new Error('the provider must not be used');
      },
    });
    for (const meta of [new Uint8Array(0), new Uint8Array([1, 2, 3]), new Uint8Array(64).fill(0xff)]) {
      expect(() => lazyRunHandle(untouchable, meta, new BlockCache())).toThrow(expect.objectContaining({ code: 'Corrupt' }));
    }
  });
});
