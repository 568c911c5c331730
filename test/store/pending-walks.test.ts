/**
 * The pending budget binds history walks and restores, not only writes.
 *
 * Proves that a ListObjectVersions page is charged while it is built: with a budget too small
 * for a full page, pages end early (IsTruncated, with markers) yet paging returns every version
 * exactly once (so do history pages, `strata history`, and as-of listings); with no room at all the walk is refused with 'SlowDown' + retryAfterSeconds;
 * and that a restore commits its batch early when the budget is short, completes, and leaves
 * the budget at zero. A second, unrelated reservation shows the charge is real.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { makeProvider, stream } from './helpers.js';

const B = 'walks';
const meta = { colour: 'x'.repeat(200) };

async function fill(pendingBytes: number, n: number, keys = 7) {
  const { provider } = await makeProvider('memory');
  const store = await Store.open(provider, { pendingBytes });
  await store.createBucket(B);
  await store.putVersioning(B, 'Enabled');
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const body = new TextEncoder().encode(`v${i}`);
    ids.push((await store.putObject(B, `key-${i % keys}`, stream(body), { size: body.length, userMetadata: meta })).versionId!);
  }
  return { store, ids };
}

describe('pending budget on history walks and restore', () => {
  it('ends ListObjectVersions pages early when the budget is short, and paging still returns every version once', async () => {
    const { store, ids } = await fill(64 * 1024, 120);
    const seen: string[] = [];
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await store.listVersions(B, { maxKeys: 1000, ...(keyMarker ? { keyMarker } : {}), ...(versionIdMarker ? { versionIdMarker } : {}) });
      pages++;
      seen.push(...page.versions.map((v) => v.versionId));
      expect(store.repo.budget.used).toBe(0);
      if (!page.isTruncated) break;
      expect(page.versions.length).toBeLessThan(120);
      keyMarker = page.nextKeyMarker;
      versionIdMarker = page.nextVersionIdMarker;
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen.sort()).toEqual([...ids].sort());
    // No room at all: the walk is refused as transient pressure.
    const release = store.repo.budget.reserve(store.repo.budget.limit);
    await expect(store.listVersions(B)).rejects.toMatchObject({ code: 'SlowDown', retryAfterSeconds: 1 });
    release();
    await store.close();
  });

  it('commits a restore in smaller batches when the budget is short, and completes', async () => {
    const { store } = await fill(16 * 1024, 40, 40);
    const t = store.repo.lastCommitTime;
    for (let i = 0; i < 40; i++) await store.deleteObject(B, `key-${i}`);
    const before = store.repo.stats.commits;
    const r = await store.restore(B, { to: t });
    expect(r.restored).toBe(40);
    // 40 planned keys of ~1 KiB charged each do not fit 16 KiB: the batch was committed early.
    expect(r.commits).toBeGreaterThanOrEqual(3);
    expect(store.repo.budget.used).toBe(0);
    expect(store.repo.stats.commits - before).toBe(r.commits);
    for (let i = 0; i < 40; i++) expect((await store.headObject(B, `key-${i}`)).version.userMetadata).toEqual(meta);
    await store.close();
  });

  it('ends history pages (strata history) early when the budget is short, and the cursor resumes without loss', async () => {
    const { store, ids } = await fill(8 * 1024, 80, 80);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await store.listHistory(B, { limit: 1000, ...(cursor ? { cursor } : {}) });
      pages++;
      seen.push(...page.entries.map((e) => e.writeId));
      expect(store.repo.budget.used).toBe(0);
      if (!page.next) break;
      cursor = page.next;
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen.sort()).toEqual([...ids].sort());
    const release = store.repo.budget.reserve(store.repo.budget.limit);
    await expect(store.listHistory(B)).rejects.toMatchObject({ code: 'SlowDown' });
    release();
    await store.close();
  });

  it('ends as-of listing pages early when the budget is short, and the token resumes without loss', async () => {
    const { store } = await fill(8 * 1024, 60, 60);
    const at = store.repo.lastCommitTime;
    const keys: string[] = [];
    let token: string | undefined;
    let pages = 0;
    for (;;) {
      const r = await store.listObjectsAsOf(B, { at, maxKeys: 1000, ...(token ? { continuationToken: token } : {}) });
      pages++;
      keys.push(...r.contents.map((c) => c.key));
      expect(store.repo.budget.used).toBe(0);
      if (!r.isTruncated) break;
      token = r.nextContinuationToken!;
    }
    expect(pages).toBeGreaterThan(1);
    expect(keys).toEqual(Array.from({ length: 60 }, (_, i) => `key-${i}`).sort());
    const release = store.repo.budget.reserve(store.repo.budget.limit);
    await expect(store.listObjectsAsOf(B, { at, maxKeys: 10 })).rejects.toMatchObject({ code: 'SlowDown' });
    release();
    await store.close();
  });
});
