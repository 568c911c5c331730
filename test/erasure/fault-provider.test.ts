/**
 * Erasure provider under faults, at the provider level, over real fs children: fragments
 * randomly deleted, bit-flipped and truncated on up to m domains (three rounds, each read back
 * byte-exact, then repaired to full health); up to m whole domains emptied and repaired back
 * onto the same (now empty) directories; m+1 domains gone or corrupted, where every read either
 * returns the exact bytes or fails with an error naming the blob, and repair writes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError, getBytes } from '../../src/provider/provider.js';
import { firstDiff } from '../support/bytes.js';
import { pickDistinct, prng } from '../support/random.js';
import {
  checkAll,
  damageDomains,
  expectExact,
  expectHealthy,
  listAll,
  makeRig,
  mixedBlobs,
  putAll,
  wipeDomains,
  type Blob,
  type Rig,
} from './fault-setup.js';

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.close().catch(() => undefined);
    r.cleanup();
  }
});

async function rig(k: number, m: number, n = k + m): Promise<Rig> {
  const r = await makeRig({ k, m, n });
  rigs.push(r);
  return r;
}

/** Every logical key listed once, with its exact size. */
async function expectListing(r: Rig, blobs: readonly Blob[]): Promise<void> {
  const items: { key: string; size: number }[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await r.provider.list({ prefix: 'blobs/', ...(startAfter ? { startAfter } : {}) });
    items.push(...page.items.map((i) => ({ key: i.key, size: i.size })));
    if (!page.next) break;
    startAfter = page.next;
  }
  const want = [...blobs].map((b) => ({ key: b.key, size: b.body.length })).sort((a, b) => (a.key < b.key ? -1 : 1));
  expect(items).toEqual(want);
}

describe.each([
  { k: 4, m: 2, n: 6 },
  { k: 10, m: 4, n: 16 },
])('erasure ($k,$m) over $n domains', ({ k, m, n }) => {
  it('survives random deletes, bit flips and truncations on up to m domains, and repairs them', async () => {
    const r = await rig(k, m, n);
    // Fewer blobs at (10,4): each is several times the bytes of a (4,2) one.
    const blobs = mixedBlobs(r, k > 4 ? 14 : 24, k * 100 + m);
    await putAll(r.provider, blobs);
    await expectHealthy(r.provider, blobs, 'fresh');
    const next = prng(k * 7 + n);
    for (let round = 0; round < 3; round++) {
      const victims = pickDistinct(next, n, round === 1 ? 1 : m);
      const damaged = await damageDomains(r, victims, 0.6, 1000 + round);
      expect(damaged, `round ${round}: damage done`).toBeGreaterThan(0);
      const degraded0 = r.provider.stats.degradedReads;
      await expectExact(r.provider, blobs, `round ${round}, damaged domains ${victims.map((v) => v + 1)}`);
      expect(r.provider.stats.degradedReads).toBeGreaterThan(degraded0);
      const checks = await checkAll(r.provider, blobs, true);
      expect(checks.filter((c) => c.lost).map((c) => c.key)).toEqual([]);
      expect(checks.reduce((a, c) => a + c.repaired, 0), `round ${round}: fragments repaired`).toBeGreaterThan(0);
      await expectHealthy(r.provider, blobs, `round ${round} after repair`);
      await expectListing(r, blobs);
    }
    // Repaired state is durable: a new provider over the same directories finds it whole.
    await r.close();
    await r.reopen();
    await expectHealthy(r.provider, blobs, 'reopened');
    await expectExact(r.provider, blobs, 'reopened');
  });

  it('reads through m emptied domains and repairs them back onto the same directories', async () => {
    const r = await rig(k, m, n);
    const blobs = mixedBlobs(r, k > 4 ? 12 : 20, 7 * k + m);
    await putAll(r.provider, blobs);
    await r.close();
    const victims = pickDistinct(prng(n + 3), n, m);
    wipeDomains(r, victims);
    await r.reopen();
    await expectExact(r.provider, blobs, `domains ${victims.map((v) => v + 1)} emptied`);
    await expectListing(r, blobs);
    const checks = await checkAll(r.provider, blobs, true);
    expect(checks.filter((c) => c.lost)).toEqual([]);
    await expectHealthy(r.provider, blobs, 'after repair');
    // Full redundancy again: the emptied domains hold fragments again (every blob touches all
    // domains when n = k+m; some blobs when n > k+m).
    const refilled = await Promise.all(victims.map(async (v) => (await listAll(r.children[v]!)).length));
    if (n === k + m) for (const c of refilled) expect(c).toBeGreaterThan(0);
    else expect(refilled.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    await expectExact(r.provider, blobs, 'after repair');
  });
});

/**
 * With more than m fragments of a blob gone, reading must fail with an error naming the blob
 * (ProviderError 'Io'; 'NotFound' for a replicated blob whose every copy is gone), never
 * return other bytes. A ranged read whose cells all survived may still succeed, exactly.
 * `strict`: every fragment on the victims is gone, so no striped blob may be read whole (a
 * random flip may land on a byte no reader depends on, so corruption is not strict).
 */
async function expectFailClosed(r: Rig, blobs: readonly Blob[], label: string, strict: boolean): Promise<{ failed: number; striped: number }> {
  let failed = 0;
  let striped = 0;
  for (const b of blobs) {
    const isStriped = b.body.length >= r.config.stripeThreshold;
    if (isStriped) striped++;
    const ranges: ([number, number] | undefined)[] = [undefined];
    if (b.body.length > 2) ranges.push([0, b.body.length >> 1], [b.body.length - 2, b.body.length - 1]);
    for (const range of ranges) {
      let got: Uint8Array | undefined;
      let error: unknown;
      try {
        got = await getBytes(r.provider, b.key, range ? { start: range[0], end: range[1] } : undefined);
      } catch (err) {
        error = err;
      }
      const what = `${label}: ${b.key} ${range ? `range ${range[0]}-${range[1]}` : 'whole'}`;
      if (got) {
        const want = range ? b.body.subarray(range[0], range[1] + 1) : b.body;
        expect(firstDiff(got, want), `${what} returned wrong bytes`).toBe(-1);
        if (!range && strict) expect(isStriped, `${what}: a striped blob read whole past m losses`).toBe(false);
      } else {
        expect(error, what).toBeInstanceOf(ProviderError);
        const e = error as ProviderError;
        expect(['Io', 'NotFound'], `${what}: code ${e.code}`).toContain(e.code);
        if (isStriped) expect(e.code, what).toBe('Io');
        if (e.code === 'Io') expect(e.message, what).toContain(b.key);
        if (!range) failed++;
      }
    }
  }
  return { failed, striped };
}

describe('more than m domains lost: reads fail closed', () => {
  it('(4,2) with 3 of 6 domains emptied: striped blobs fail naming the blob, repair writes nothing', async () => {
    const r = await rig(4, 2);
    const blobs = mixedBlobs(r, 20, 42);
    await putAll(r.provider, blobs);
    await r.close();
    wipeDomains(r, [0, 2, 4]);
    await r.reopen();
    const { failed, striped } = await expectFailClosed(r, blobs, 'm+1 emptied', true);
    expect(failed).toBeGreaterThanOrEqual(striped);
    const before = await Promise.all(r.children.map((c) => listAll(c)));
    for (const b of blobs.filter((x) => x.body.length >= r.config.stripeThreshold)) {
      const c = await r.provider.checkBlob(b.key, { repair: true });
      expect(c.lost, b.key).toBe(true);
      expect(c.repaired).toBe(0);
    }
    expect(await Promise.all(r.children.map((c) => listAll(c)))).toEqual(before);
  });

  it('(4,2) with every fragment on 3 of 6 domains deleted, bit-flipped or cut: no wrong bytes', async () => {
    const r = await rig(4, 2);
    const blobs = mixedBlobs(r, 20, 43);
    await putAll(r.provider, blobs);
    const n = await damageDomains(r, [1, 3, 5], 1, 99);
    expect(n).toBeGreaterThan(0);
    const { failed, striped } = await expectFailClosed(r, blobs, 'm+1 damaged', false);
    // A flip may miss every byte a reader checks, but not on most of the blobs.
    expect(failed).toBeGreaterThan(striped / 2);
  });
});
