/**
 * Pack cleaning at the scale serial writers make it (gc-pack.ts): hundreds of commit blobs that
 * each hold one small body are coalesced with one read per source pack and few re-pointing
 * commits (many referrers each, not one or two), the bucket's runs are merged so each key is
 * held once, and afterwards every object reads back
 * byte-exact, also from a fresh open, with `verify` clean and the old blobs swept.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { runGc } from '../../src/store/gc.js';
import { COMMIT_REFS, MAJOR_COMPACTION_SHARE, bucketsToCompact } from '../../src/store/gc-pack.js';
import { verifyRepository } from '../../src/store/verify.js';
import { decodeRunMeta } from '../../src/store/index/run-format.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, makeProvider, stream } from './helpers.js';

const N = 300;

describe.each(['memory', 'fs'] as const)('pack cleaning of many one-body packs on %s', (kind) => {
  it('reads each source once, re-points in few commits, and loses nothing', async () => {
    const p = await makeProvider(kind);
    try {
      // The commit-blob path (with the commit log, serial PUTs append to one segment instead:
      // no one-body packs to coalesce; gc-pack.test.ts covers cleaning rolled segments).
      const store = await Store.open(p.provider, { commitLog: false });
      await store.createBucket('bkt');
      // Serial PUTs: one commit blob per body, plus a group of concurrent ones sharing a blob.
      for (let i = 0; i < N; i++) await store.putObject('bkt', `k${i}`, stream(randomBytes(512, i)), { size: 512 });
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.putObject('bkt', `g${i}`, stream(randomBytes(700, 5000 + i)), { size: 700 })));
      await store.checkpoint();
      const commitsBefore = (await p.provider.list({ prefix: 'commits/' })).items.length;

      const report = await runGc(store.repo, { graceMs: 0 });
      expect(report.cleanedPacks).toBeGreaterThanOrEqual(N);
      // Every live body referred to twice (namespace and version log): 2 referrers per body.
      const bodies = N + 20;
      expect(report.movedBytes).toBe(N * 512 + 20 * 700);
      // One read per source pack at most (the group's shared blob is read once, not 20 times).
      expect(report.cleanRequests).toBeGreaterThan(0);
      expect(report.cleanRequests!).toBeLessThanOrEqual(report.cleanedPacks);
      // Many referrers per commit: the old pass made one per 1-2 referrers under load.
      expect(report.cleanCommits!).toBeLessThanOrEqual(Math.ceil((2 * bodies) / COMMIT_REFS) + 1);
      expect(report.errors).toBe(0);
      // Every key was re-pointed: the checkpoint after cleaning merged the bucket's runs whole,
      // so each key is held once, not beside its superseded copy.
      const b = store.repo.state.buckets.get('bkt')!;
      const entries = (runs: { meta: Uint8Array }[]) => runs.reduce((n, r) => n + decodeRunMeta(r.meta).entryCount, 0);
      expect(b.runs.length).toBe(1);
      expect(b.versions.runs.length).toBe(1);
      expect(entries(b.runs)).toBe(bodies);
      expect(entries(b.versions.runs)).toBe(bodies);
      const commitsAfter = (await p.provider.list({ prefix: 'commits/' })).items.length;
      expect(commitsAfter).toBeLessThan(commitsBefore / 10);

      const check = async (s: Store, label: string) => {
        for (let i = 0; i < N; i++) expectBytes(await collect((await s.getObject('bkt', `k${i}`)).body), randomBytes(512, i), `${label} k${i}`);
        for (let i = 0; i < 20; i++) expectBytes(await collect((await s.getObject('bkt', `g${i}`)).body), randomBytes(700, 5000 + i), `${label} g${i}`);
      };
      await check(store, 'after gc');
      await store.close();
      const again = await Store.open(await p.reopen(), { create: false });
      try {
        await check(again, 'reopened');
        const v = await verifyRepository(again.repo.provider);
        expect(v.problems).toEqual([]);
        expect(v.ok).toBe(true);
      } finally {
        await again.close();
      }
    } finally {
      p.cleanup();
    }
  }, 60_000);
});

describe('which buckets pack cleaning has merged whole', () => {
  it('only those whose re-pointed share of index entries reaches MAJOR_COMPACTION_SHARE', async () => {
    const p = await makeProvider('memory');
    try {
      const store = await Store.open(p.provider);
      await store.createBucket('big');
      await store.createBucket('small');
      for (let i = 0; i < 100; i++) await store.putObject('big', `k${i}`, stream(randomBytes(10, i)), { size: 10 });
      await store.putObject('small', 'one', stream(randomBytes(10, 1)), { size: 10 });
      await store.checkpoint();
      const big = store.repo.state.buckets.get('big')!;
      const small = store.repo.state.buckets.get('small')!;
      // 'big' holds 200 entries (namespace and version log): a quarter is 50.
      const at = Math.ceil(200 * MAJOR_COMPACTION_SHARE);
      expect(bucketsToCompact(store.repo, new Map([['big', at - 1], ['small', 2]]))).toEqual([small.id]);
      expect(bucketsToCompact(store.repo, new Map([['big', at]]))).toEqual([big.id]);
      expect(bucketsToCompact(store.repo, new Map([['gone', 5], ['big', 0]]))).toEqual([]);
      await store.close();
    } finally {
      p.cleanup();
    }
  });
});
