/**
 * What one pack-cleaning pass gathers is bounded by referrers, not only by entries
 * (gc-pack.ts MAX_MOVE_REFS): every fork of a bucket adds two referrers (namespace and version
 * log) to each body the bucket names, so a pass over a few entries of a much-forked bucket
 * could gather any number of them.
 *
 * Proves, with a bucket forked four times (ten referrers per live body) and sparse commit
 * blobs: at a cap of 100 referrers a pass re-points at most 100 and defers the packs that would
 * not fit (reported as deferredPacks), the passes that follow take the deferred ones until none
 * is left, and every version reads byte-exact in every bucket, before and after a reopen, with
 * verify clean; at a cap below one pack's referrers a pass moves nothing and defers every pack,
 * and nothing changes.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { gcStats, runGc } from '../../src/store/gc.js';
import { verifyRepository } from '../../src/store/verify.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, makeProvider, stream } from './helpers.js';

const FORKS = ['fork-a', 'fork-b', 'fork-c', 'fork-d'];

/** `keep` (4 forks) and `drop` written in the same batches, then `drop` deleted: sparse blobs. */
async function sparseForked(store: Store): Promise<Map<string, Uint8Array>> {
  await store.createBucket('keep');
  await store.createBucket('drop');
  const model = new Map<string, Uint8Array>();
  for (let round = 0; round < 6; round++) {
    await Promise.all([
      ...Array.from({ length: 4 }, async (_, i) => {
        const body = randomBytes(200 + i, round * 10 + i + 1);
        await store.putObject('keep', `k${round}-${i}`, stream(body), { size: body.length });
        model.set(`k${round}-${i}`, body);
      }),
      ...Array.from({ length: 20 }, (_, i) => store.putObject('drop', `d${round}-${i}`, stream(randomBytes(3000, 900 + round * 20 + i)), { size: 3000 })),
    ]);
  }
  for (const f of FORKS) await store.forkBucket('keep', f);
  for (let round = 0; round < 6; round++) await store.deleteObjects('drop', Array.from({ length: 20 }, (_, i) => `d${round}-${i}`));
  await store.deleteBucket('drop');
  await store.checkpoint();
  return model;
}

async function expectAll(store: Store, model: Map<string, Uint8Array>, label: string): Promise<void> {
  for (const bucket of ['keep', ...FORKS]) {
    for (const [key, body] of model) expectBytes(await collect((await store.getObject(bucket, key)).body), body, `${label}: ${bucket}/${key}`);
  }
}

describe('pack cleaning bounded by referrers', () => {
  it('defers packs past the cap to later passes, which clean them all', async () => {
    const p = await makeProvider('memory');
    try {
      const store = await Store.open(p.provider, { commitLog: false });
      const model = await sparseForked(store);
      const first = await runGc(store.repo, { graceMs: 0, cleanBelow: 0.5, maxMoveRefs: 100 });
      expect(first.cleanedPacks).toBeGreaterThan(0);
      expect(first.deferredPacks).toBeGreaterThan(0);
      const passes = [first];
      while (passes.length < 12 && passes.at(-1)!.deferredPacks > 0) {
        await new Promise((r) => setTimeout(r, 2));
        passes.push(await runGc(store.repo, { graceMs: 0, cleanBelow: 0.5, maxMoveRefs: 100 }));
      }
      expect(passes.length).toBeGreaterThan(1);
      expect(passes.at(-1)!.deferredPacks).toBe(0);
      // Each pass re-pointed at most the cap; together they re-pointed every referrer of every
      // live body: 24 bodies in 5 buckets, namespace and version log.
      for (const pass of passes) expect(pass.cleanRepointed ?? 0).toBeLessThanOrEqual(100);
      expect(passes.reduce((n, pass) => n + (pass.cleanRepointed ?? 0), 0)).toBe(24 * 5 * 2);
      // The server's strata_gc_deferred_packs_total counts them over the passes.
      expect(gcStats(store.repo).deferredPacks).toBe(passes.reduce((n, pass) => n + pass.deferredPacks, 0));
      const last = await runGc(store.repo, { graceMs: 0, cleanBelow: 0.5, maxMoveRefs: 100 });
      expect(last.cleanedPacks + last.deferredPacks).toBe(0);
      await expectAll(store, model, 'after');
      expect((await verifyRepository(p.provider)).problems).toEqual([]);
      await store.close();
      const reopened = await Store.open(await p.reopen(), { commitLog: false });
      await expectAll(reopened, model, 'reopened');
      await reopened.close();
    } finally {
      p.cleanup();
    }
  });

  it('moves nothing when one pack alone has more referrers than the cap', async () => {
    const p = await makeProvider('memory');
    try {
      const store = await Store.open(p.provider, { commitLog: false });
      const model = await sparseForked(store);
      const pass = await runGc(store.repo, { graceMs: 0, cleanBelow: 0.5, maxMoveRefs: 5 });
      expect(pass.cleanedPacks).toBe(0);
      expect(pass.movedBytes).toBe(0);
      expect(pass.deferredPacks).toBeGreaterThan(0);
      await expectAll(store, model, 'after');
      await store.close();
    } finally {
      p.cleanup();
    }
  });
});
