/**
 * A Store over the erasure provider ((4,2) over 6 fs domains) under faults: objects (packed
 * small bodies and striped carriers) survive random deletes, flips and truncations of the
 * fragments on up to m domains — every object reads back byte-exact, `verifyRepository` (what
 * `strata verify` runs) is clean before and after repair, and repair restores every fragment.
 * Repair also runs while writes continue: nothing written meanwhile is lost or damaged, and a
 * check afterwards finds every blob whole.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ErasureProvider } from '../../src/provider/erasure/types.js';
import { ProviderError } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { firstDiff } from '../support/bytes.js';
import { randomBytes } from '../support/random.js';
import { collect, stream } from '../store/helpers.js';
import { damageDomains, listAll, makeRig, type Rig } from './fault-setup.js';

const rigs: Rig[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
  for (const r of rigs.splice(0)) {
    await r.close().catch(() => undefined);
    r.cleanup();
  }
});

/** Object i: mostly small (packed into commit blobs), every 6th 100 KiB .. 1.1 MiB (a carrier). */
const bodyOf = (i: number) => randomBytes(i % 6 === 5 ? 100_000 + ((i * 77_777) % 1_000_000) : 10 + ((i * 37) % 3000), 500 + i);

async function putRange(store: Store, from: number, to: number): Promise<void> {
  // Batches of concurrent PUTs, so group commits carry many bodies.
  for (let i = from; i < to; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, to - i) }, (_, j) => {
        const b = bodyOf(i + j);
        return store.putObject('bkt', `k${i + j}`, stream(b), { size: b.length });
      })
    );
  }
}

async function expectObjects(store: Store, from: number, to: number, label: string): Promise<void> {
  for (let i = from; i < to; i++) {
    const got = await collect((await store.getObject('bkt', `k${i}`)).body);
    const want = bodyOf(i);
    expect(firstDiff(got, want), `${label}: k${i} (${want.length} bytes, got ${got.length})`).toBe(-1);
  }
}

async function expectVerified(p: ErasureProvider, label: string): Promise<void> {
  const report = await verifyRepository(p);
  expect(report.problems, label).toEqual([]);
  expect(report.ok, label).toBe(true);
}

/**
 * checkBlob (with repair) on every logical blob listed now; returns fragments rebuilt. A blob
 * the store removed since the listing (NotFound) is skipped.
 */
async function repairAll(p: ErasureProvider): Promise<number> {
  let repaired = 0;
  for (const key of await listAll(p)) {
    let c;
    try {
      c = await p.checkBlob(key, { repair: true });
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'NotFound') continue;
      throw err;
    }
    expect(c.lost, key).toBe(false);
    repaired += c.repaired;
  }
  return repaired;
}

async function expectAllWhole(p: ErasureProvider, label: string): Promise<number> {
  const keys = await listAll(p);
  for (const key of keys) {
    const c = await p.checkBlob(key);
    expect(
      c.fragments.filter((f) => f.state !== 'ok'),
      `${label}: ${key}`
    ).toEqual([]);
  }
  return keys.length;
}

async function openRig(): Promise<{ r: Rig; store: Store }> {
  const r = await makeRig({ k: 4, m: 2 });
  rigs.push(r);
  const store = await Store.open(r.provider);
  stores.push(store);
  await store.createBucket('bkt');
  return { r, store };
}

describe('a Store over the erasure provider under faults', () => {
  it('reads every object exact through damage on m domains, verifies clean, repairs to whole', async () => {
    const { r, store } = await openRig();
    await putRange(store, 0, 120);
    await store.checkpoint();
    const damaged = await damageDomains(r, [1, 4], 0.5, 17);
    expect(damaged).toBeGreaterThan(0);
    await expectObjects(store, 0, 120, 'damaged');
    await expectVerified(r.provider, 'damaged');
    expect(await repairAll(r.provider)).toBeGreaterThan(0);
    expect(await expectAllWhole(r.provider, 'repaired')).toBeGreaterThan(10);
    await expectVerified(r.provider, 'repaired');
    // Reopened from the directories alone: the same objects, still whole.
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    await r.close();
    const again = await Store.open(await r.reopen());
    stores.push(again);
    await expectObjects(again, 0, 120, 'reopened');
    await expectVerified(r.provider, 'reopened');
  });

  it('repairs while writes continue: old and new objects exact, every blob whole after', async () => {
    const { r, store } = await openRig();
    await putRange(store, 0, 100);
    await damageDomains(r, [0, 3], 0.7, 23);
    let repaired = 0;
    await Promise.all([
      putRange(store, 100, 220),
      (async () => {
        repaired = await repairAll(r.provider);
      })(),
    ]);
    expect(repaired).toBeGreaterThan(0);
    await expectObjects(store, 0, 220, 'after repair beside writes');
    // Blobs the pass listed were repaired; those written during it were written whole.
    await expectAllWhole(r.provider, 'after repair beside writes');
    await expectVerified(r.provider, 'after repair beside writes');
  });
});
