/**
 * The census-driven scrub (census.ts, stripe-pass.ts, check.ts): a domain replaced by an empty
 * directory is rebuilt with one listing walk and no per-blob lookup, every rebuilt fragment is
 * byte-identical to the one lost; a fragment found corrupt in the same pass as a missing one is
 * repaired too; a census that went stale (a blob deleted or replaced after it) reports no false
 * damage; missing replicas are named by domain, never '?'; and a torn write nothing references
 * is garbage, while the same damage on a committed chunk is lost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getBytes, type ListOptions, type Provider } from '../../src/provider/provider.js';
import { runScrub } from '../../src/provider/erasure/scrub.js';
import { adminScrub } from '../../src/admin/scrub.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { collect, stream } from '../store/helpers.js';
import { randomBytes } from '../support/random.js';
import { expectExact, listAll, makeRig, mixedBlobs, putAll, wipeDomains, type Rig } from './fault-setup.js';

let rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.close().catch(() => undefined);
    r.cleanup();
  }
});

/** Counts list calls on a child that look one key up (a prefix listing) or walk it (no prefix). */
function countingLists(p: Provider, counts: { prefixed: number; walks: number }): Provider {
  const list = p.list.bind(p);
  p.list = (o: ListOptions = {}) => {
    if (o.prefix) counts.prefixed++;
    else counts.walks++;
    return list(o);
  };
  return p;
}

/** Every child blob of every domain, by domain index and key. */
async function snapshot(rig: Rig): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (let i = 0; i < rig.children.length; i++) {
    for (const key of await listAll(rig.children[i]!)) {
      if (key.startsWith('maintenance/')) continue;
      out.set(`${i}:${key}`, Buffer.from(await getBytes(rig.children[i]!, key)));
    }
  }
  return out;
}

describe('census-driven scrub', () => {
  it('rebuilds a wiped domain without per-blob lookups, byte-identical to what was lost', async () => {
    const counts = { prefixed: 0, walks: 0 };
    const rig = await makeRig({ k: 4, m: 2, cellSize: 16 * 1024, stripeThreshold: 32 * 1024, wrap: (_, p) => countingLists(p, counts) });
    rigs.push(rig);
    const blobs = mixedBlobs(rig, 40, 5);
    await putAll(rig.provider, blobs);
    const before = await snapshot(rig);
    const onWiped = [...before.keys()].filter((k) => k.startsWith('2:')).length;
    expect(onWiped).toBeGreaterThan(10);
    await rig.close();
    wipeDomains(rig, [2]);
    const p = await rig.reopen();
    counts.prefixed = 0;
    counts.walks = 0;
    const r = await runScrub(p, { repair: true, resume: false });
    expect(r.complete).toBe(true);
    expect(r.lostCount).toBe(0);
    expect(Object.keys(r.damagedByDomain)).toEqual(['d3']);
    expect(r.damagedByDomain.d3).toBe(onWiped);
    expect(r.repairedFragments).toBe(onWiped);
    expect(r.unrepairedBlobs).toBe(0);
    // One walk per domain (a page each here) for the census and one for the count; a lookup
    // per blob would have made 6 prefixed listings for each of the 40.
    expect(counts.prefixed).toBeLessThan(40);
    const after = await snapshot(rig);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [k, bytes] of before) expect(Buffer.compare(after.get(k)!, bytes), k).toBe(0);
    await expectExact(p, blobs, 'after rebuild');
    expect((await runScrub(p, { resume: false })).damagedBlobs).toBe(0);
  });

  it('repairs a fragment found corrupt in the same pass that rebuilds a missing one', async () => {
    const rig = await makeRig({ k: 4, m: 2, cellSize: 16 * 1024, stripeThreshold: 32 * 1024 });
    rigs.push(rig);
    const body = randomBytes(5 * 4 * 16 * 1024 + 777, 77);
    await rig.provider.put('chunks/two-bad', body);
    const before = await snapshot(rig);
    const mine = [...before.keys()].filter((k) => k.includes('two-bad'));
    expect(mine.length).toBe(6);
    // One fragment deleted, another with a byte flipped in its last stripe.
    const [gone, flipped] = mine.slice(0, 2).map((k) => ({ i: Number(k.split(':')[0]), key: k.slice(k.indexOf(':') + 1) }));
    await rig.children[gone!.i]!.delete(gone!.key);
    const bytes = Buffer.from(before.get(`${flipped!.i}:${flipped!.key}`)!);
    bytes[bytes.length - 100]! ^= 0x5a;
    await rig.children[flipped!.i]!.put(flipped!.key, bytes);
    await rig.close();
    const p = await rig.reopen();
    const r = await runScrub(p, { repair: true, resume: false });
    expect(r.fragments.missing).toBe(1);
    expect(r.fragments.corrupt).toBe(1);
    expect(r.repairedFragments).toBe(2);
    expect(r.unrepairedBlobs).toBe(0);
    const after = await snapshot(rig);
    for (const k of mine) expect(Buffer.compare(after.get(k)!, before.get(k)!), k).toBe(0);
    expect(Buffer.compare(Buffer.from(await getBytes(p, 'chunks/two-bad')), Buffer.from(body))).toBe(0);
  });

  it('a census gone stale reports no damage: deleted blobs vanish, replaced ones are checked anew', async () => {
    const rig = await makeRig({ k: 2, m: 1, cellSize: 16 * 1024, stripeThreshold: 32 * 1024 });
    rigs.push(rig);
    const p = rig.provider;
    await p.put('a-striped', randomBytes(100_000, 1));
    await p.put('b-small', randomBytes(500, 2));
    const entries = [];
    for await (const e of p.census!()) entries.push(e);
    expect(entries.map((e) => e.key)).toEqual(['a-striped', 'b-small']);
    await p.delete('a-striped');
    await p.put('b-small', randomBytes(600, 3));
    await expect(p.checkBlob('a-striped', { repair: true, found: entries[0]!.found })).rejects.toMatchObject({ code: 'NotFound' });
    const b = await p.checkBlob('b-small', { repair: true, found: entries[1]!.found });
    expect(b.fragments.every((f) => f.state === 'ok')).toBe(true);
    expect(b.size).toBe(600);
    expect(b.repaired).toBe(0);
    // Nothing of the deleted blob was written back.
    for (const c of rig.children) expect((await listAll(c)).filter((k) => k.startsWith('a-striped'))).toEqual([]);
  });

  it('names the domain of every missing replica, also when the policy cannot be met', async () => {
    const rig = await makeRig({ k: 2, m: 2, n: 5, cellSize: 16 * 1024, stripeThreshold: 1 << 20 });
    rigs.push(rig);
    const blobs = Array.from({ length: 30 }, (_, i) => ({ key: `small/${i}`, body: randomBytes(300 + i, i) }));
    await putAll(rig.provider, blobs);
    await rig.close();
    wipeDomains(rig, [0, 3]);
    // Domain d1 denied from now on: blobs that had a copy there have it missing, and the
    // placement of m + 1 = 3 copies among 4 eligible domains still works; d4 is empty.
    rig.config.policy = { deny: ['d1'] };
    const p = await rig.reopen();
    const r = await runScrub(p, { resume: false });
    expect(Object.keys(r.damagedByDomain).every((d) => /^d[1-5]$/.test(d))).toBe(true);
    expect(r.lostCount).toBe(0);
    const fixed = await runScrub(p, { repair: true, resume: false });
    expect(fixed.unrepairedBlobs).toBe(0);
    await expectExact(p, blobs, 'after repair');
  });

  it('a torn chunk nothing references is garbage; the same damage on a committed chunk is lost', async () => {
    const rig = await makeRig({ k: 2, m: 1, cellSize: 16 * 1024, stripeThreshold: 32 * 1024 });
    rigs.push(rig);
    const store = await Store.open(rig.provider);
    await store.createBucket('bkt');
    const big = randomBytes(9 * 1024 * 1024 + 5, 9);
    await store.putObject('bkt', 'big', stream(big), { size: big.length });
    await store.checkpoint();
    await store.close();
    const p = rig.provider;
    const used = (await p.list({ prefix: 'chunks/' })).items.map((i) => i.key);
    expect(used.length).toBeGreaterThan(0);
    // A put killed after one of its three fragments landed: too few to read, never committed.
    await p.put('chunks/ffffffffffffffffff-torn', randomBytes(50_000, 10));
    const lose = async (key: string) => {
      const names = (await Promise.all(rig.children.map(async (c, i) => (await listAll(c)).filter((k) => k.startsWith(`${key}!`)).map((k) => ({ i, k }))))).flat();
      for (const { i, k } of names.slice(1)) await rig.children[i]!.delete(k);
    };
    await lose('chunks/ffffffffffffffffff-torn');
    const report = await adminScrub(p, { restart: true });
    expect(report.garbage).toEqual(['chunks/ffffffffffffffffff-torn']);
    expect(report.garbageCount).toBe(1);
    expect(report.lostCount).toBe(0);
    expect(report.damagedBlobs).toBe(0);
    expect((await verifyRepository(p)).garbage.map((g) => g.blob)).toEqual(['chunks/ffffffffffffffffff-torn']);

    await lose(used[0]!);
    const damaged = await adminScrub(p, { restart: true, repair: true });
    expect(damaged.lost).toEqual([used[0]]);
    expect(damaged.garbage).toEqual(['chunks/ffffffffffffffffff-torn']);
    const s2 = await Store.open(p);
    await expect(s2.getObject('bkt', 'big').then((o) => collect(o.body))).rejects.toThrow();
    await s2.close();
  });
});
