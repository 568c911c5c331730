/**
 * Expiry gives bytes back: the entries it drops are tombstones until a merge reaching the
 * oldest run, so after dropping it asks for a major compaction of the buckets concerned
 * (Repository.requestMajorCompaction) and checkpoints. Afterwards the version log holds no
 * tombstone and its runs are about the size of what is kept; the object index loses the
 * tombstones of deleted keys too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { mergeSources } from '../../src/store/index/merge.js';
import { isLogTombstone } from '../../src/store/version-log.js';
import { isTombstone } from '../../src/store/records.js';
import { verifyRepository } from '../../src/store/verify.js';
import { makeProvider, stream } from './helpers.js';
import type { BucketState } from '../../src/store/state.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function entries(b: BucketState, kind: 'versions' | 'objects'): Promise<{ live: number; tombstones: number }> {
  const sources = kind === 'versions' ? b.versions.sources() : b.sources();
  const it = mergeSources(sources);
  const out = { live: 0, tombstones: 0 };
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      if (kind === 'versions' ? isLogTombstone(r.value.value) : isTombstone(r.value.value)) out.tombstones++;
      else out.live++;
    }
  } finally {
    await it.return();
  }
  return out;
}

describe.each(['memory', 'fs'] as const)('expiry compaction on %s', (kind) => {
  it('leaves no tombstone in the version log or the object index once expiry ran', async () => {
    const p = await makeProvider(kind);
    cleanups.push(p.cleanup);
    const store = await Store.open(p.provider, { retentionMs: 0, maxRuns: 4 });
    await store.createBucket('bkt');
    const body = new Uint8Array(64).fill(7);
    for (let i = 0; i < 600; i++) {
      await store.putObject('bkt', i % 3 === 0 ? 'hot' : `k${i}`, stream(body), { size: body.length });
      if (i % 100 === 99) await store.repo.checkpoint(); // several runs, tombstones spread over them
    }
    for (let i = 1; i < 600; i++) if (i % 3 !== 0 && i % 2 === 0) await store.deleteObject('bkt', `k${i}`);
    await store.repo.checkpoint();
    const b = store.repo.state.buckets.get('bkt')!;
    const before = await entries(b, 'versions');
    const report = await store.expireHistory();
    expect(report.expired).toBeGreaterThan(0);
    const after = store.repo.state.buckets.get('bkt')!;
    const v = await entries(after, 'versions');
    const o = await entries(after, 'objects');
    expect(v.tombstones).toBe(0);
    expect(o.tombstones).toBe(0);
    expect(v.live).toBe(before.live + before.tombstones - report.expired);
    expect(after.versions.runs.length).toBe(1);
    expect(after.runs.length).toBe(1);
    // Every live key still reads.
    expect((await store.getObject('bkt', 'hot')).version.size).toBe(64);
    expect((await store.listObjects('bkt')).contents.length).toBe(o.live);
    await store.close();
    const check = await verifyRepository(await p.reopen());
    expect(check.problems).toEqual([]);
  }, 120_000);
});
