/**
 * The pipelined group commit: a batch staged while the previous one is still committing
 * sees its staged mutations (so conditions hold across the two), and when a commit fails,
 * the batch staged on top of it fails too — nothing of either becomes visible.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider, PutOptions, BlobBody, BlobInfo } from '../../src/provider/provider.js';
import { ProviderError } from '../../src/provider/provider.js';

async function* bytes(n: number, fill: number) {
  yield new Uint8Array(n).fill(fill);
}

/** Delays every anchor put by `ms` so that batches pile up behind it; can fail the next one. */
function slowAnchor(inner: Provider, ms: number) {
  let failNext = false;
  const p: Provider = {
    kind: inner.kind,
    capabilities: inner.capabilities,
    async put(key: string, body: BlobBody, options?: PutOptions): Promise<BlobInfo> {
      if (key === 'anchor') {
        await new Promise((r) => setTimeout(r, ms));
        if (failNext) {
          failNext = false;
          throw new ProviderError('PreconditionFailed', 'anchor moved by someone else (test)');
        }
      }
      return inner.put(key, body, options);
    },
    get: (key, options) => inner.get(key, options),
    head: (key) => inner.head(key),
    list: (options) => inner.list(options),
    delete: (key) => inner.delete(key),
    close: () => inner.close(),
  };
  return { provider: p, failNextAnchor: () => (failNext = true) };
}

describe('pipelined group commit', () => {
  it('keeps If-None-Match: * exclusive across batches committing at the same time', async () => {
    const { provider } = slowAnchor(await createMemoryProvider(), 20);
    const store = await Store.open(provider);
    await store.createBucket('pipe-bucket');
    for (let round = 0; round < 5; round++) {
      // Staggered so that the writers land in different, overlapping batches.
      const attempts = Array.from({ length: 6 }, (_, i) =>
        new Promise((r) => setTimeout(r, i * 7)).then(() =>
          store.putObject('pipe-bucket', `k${round}`, bytes(10, i), { size: 10, conditions: { ifNoneMatch: '*' } })
        )
      );
      const results = await Promise.allSettled(attempts);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect((r.reason as { code: string }).code).toMatch(/PreconditionFailed|ConditionalRequestConflict/);
    }
    expect(store.repo.stats.commits).toBeGreaterThan(5);
  });

  it('stages new writes behind a commit in flight, and acknowledges them in order', async () => {
    const { provider } = slowAnchor(await createMemoryProvider(), 20);
    const store = await Store.open(provider);
    await store.createBucket('pipe-bucket');
    const acked: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        new Promise((r) => setTimeout(r, i * 6))
          .then(() => store.putObject('pipe-bucket', `k${i}`, bytes(10, i), { size: 10 }))
          .then(() => acked.push(i))
      )
    );
    expect(store.repo.stats.pipelined, 'batches staged behind a commit in flight').toBeGreaterThan(0);
    expect(acked).toEqual([...acked].sort((a, b) => a - b));
    expect((await store.listObjects('pipe-bucket')).contents).toHaveLength(12);
  });

  it('fails the batch staged on a failed commit, and makes neither visible', async () => {
    const { provider, failNextAnchor } = slowAnchor(await createMemoryProvider(), 30);
    const store = await Store.open(provider);
    await store.createBucket('pipe-bucket');
    failNextAnchor();
    const first = store.putObject('pipe-bucket', 'a', bytes(5, 1), { size: 5 });
    await new Promise((r) => setTimeout(r, 5)); // `a` is committing; `b` stages behind it
    const second = store.putObject('pipe-bucket', 'b', bytes(5, 2), { size: 5 });
    const [ra, rb] = await Promise.allSettled([first, second]);
    expect(store.repo.stats.pipelined).toBe(1);
    expect(ra.status).toBe('rejected');
    expect(rb.status).toBe('rejected');
    await expect(store.getObject('pipe-bucket', 'a')).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(store.getObject('pipe-bucket', 'b')).rejects.toMatchObject({ code: 'NoSuchKey' });
    // The repository fenced itself (the anchor moved under it): reopening recovers.
    const again = await Store.open(provider);
    expect((await again.listObjects('pipe-bucket')).contents).toEqual([]);
  });
});
