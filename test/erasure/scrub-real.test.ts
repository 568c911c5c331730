/**
 * Scrub and repair on the real erasure provider over six directory domains (4+2), with a real
 * repository on it: a domain replaced by an empty directory is found (damage on that domain
 * only) and repaired back to full redundancy; seeded random corruption of fragments on two
 * domains is reported by domain and repaired; afterwards every object reads back byte-exact,
 * `strata verify`'s check is clean and a further scrub finds nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { childKeys } from './domain-keys.js';
import { getBytes, type Provider } from '../../src/provider/provider.js';
import type { DomainSpec, ErasureConfig, ErasureProvider } from '../../src/provider/erasure/types.js';
import { runScrub } from '../../src/provider/erasure/scrub.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { collect, stream, tempDir } from '../store/helpers.js';
import { pickDistinct, prng, randInt, randomBytes } from '../support/random.js';

const K = 4;
const M = 2;
const N = 6;
const BUCKET = 'scrubbed';

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function config(root: string): ErasureConfig {
  const domains: DomainSpec[] = Array.from({ length: N }, (_, i) => ({ id: `d${i + 1}`, url: join(root, `d${i + 1}`), labels: {} }));
  // Small cells and threshold so a test-sized repository has many striped blobs of several stripes.
  return { k: K, m: M, domains, policy: {}, cellSize: 16 * 1024, stripeThreshold: 32 * 1024, degradedWrites: false, domainTimeoutMs: 10_000 };
}

async function openSet(root: string): Promise<ErasureProvider> {
  const cfg = config(root);
  const domains = await Promise.all(cfg.domains.map(async (d) => ({ id: d.id, labels: d.labels, provider: (await createFsProvider({ dir: d.url })) as Provider })));
  return createErasureProvider({ config: cfg, domains });
}

/** A repository with a mix of packed small objects and striped large ones; returns what it holds. */
async function fill(provider: ErasureProvider, seed: number): Promise<Map<string, Uint8Array>> {
  const next = prng(seed);
  // Commit blobs (not the commit log): the tests count striped blobs a log segment would replace.
  const store = await Store.open(provider, { commitLog: false });
  await store.createBucket(BUCKET);
  const objects = new Map<string, Uint8Array>();
  for (let i = 0; i < 40; i++) {
    const size = i % 4 === 0 ? randInt(next, 40_000, 600_000) : randInt(next, 1, 9000);
    const body = randomBytes(size, seed * 1000 + i);
    objects.set(`obj-${i}`, body);
    await store.putObject(BUCKET, `obj-${i}`, stream(body), { size });
  }
  await store.checkpoint();
  await store.close();
  await provider.close();
  return objects;
}

async function expectIntact(provider: ErasureProvider, objects: Map<string, Uint8Array>): Promise<void> {
  const store = await Store.open(provider);
  for (const [key, body] of objects) {
    const got = await collect((await store.getObject(BUCKET, key)).body);
    expect(Buffer.compare(Buffer.from(got), Buffer.from(body)), key).toBe(0);
  }
  await store.close();
  const v = await verifyRepository(provider);
  expect(v.problems).toEqual([]);
  expect(v.ok).toBe(true);
}

describe('scrub on the erasure provider', () => {
  it('a domain replaced by an empty directory is reported and repaired back to full redundancy', async () => {
    const { dir: root, cleanup } = tempDir('scrub-real');
    cleanups.push(cleanup);
    const objects = await fill(await openSet(root), 7);
    const before = await Promise.all(config(root).domains.map((d) => childKeys(root, d.id)));
    const lostOnD3 = before[2]!.length;
    expect(lostOnD3).toBeGreaterThan(10);

    rmSync(join(root, 'd3'), { recursive: true, force: true });
    mkdirSync(join(root, 'd3'));
    const p = await openSet(root);
    const check = await runScrub(p);
    expect(check.complete).toBe(true);
    // Missing fragments and missing replicas of small blobs are all named by their domain.
    expect(Object.keys(check.damagedByDomain)).toEqual(['d3']);
    expect(check.damagedByDomain.d3).toBe(lostOnD3);
    expect(check.fragments.missing).toBe(lostOnD3);
    expect(check.lost).toEqual([]);
    expect(check.unrepairedBlobs).toBe(check.damagedBlobs);
    expect(check.repairedFragments).toBe(0);

    const fixed = await runScrub(p, { repair: true });
    expect(fixed.repairedFragments).toBe(lostOnD3);
    expect(fixed.unrepairedBlobs).toBe(0);
    expect(fixed.repairBytes).toBeGreaterThan(0);
    const again = await runScrub(p);
    expect(again.damagedBlobs).toBe(0);
    expect(again.blobs).toBe(check.blobs);
    const after = await Promise.all(config(root).domains.map((d) => childKeys(root, d.id)));
    expect(after.reduce((a, l) => a + l.length, 0)).toBe(before.reduce((a, l) => a + l.length, 0));
    await expectIntact(p, objects);
    await p.close();
  });

  it('random corrupt fragments are reported by domain, repaired, and every object reads back exact', async () => {
    const { dir: root, cleanup } = tempDir('scrub-real');
    cleanups.push(cleanup);
    const objects = await fill(await openSet(root), 11);
    const next = prng(2026);
    const corrupted: Record<string, number> = {};
    // Two domains (= m): no blob can have more than m damaged fragments.
    for (const id of ['d2', 'd5']) {
      const keys = await childKeys(root, id);
      const child = await createFsProvider({ dir: join(root, id) });
      const picks = pickDistinct(next, keys.length, Math.ceil(keys.length * 0.4));
      for (const i of picks) {
        const bytes = Buffer.from(await getBytes(child, keys[i]!));
        const at = randInt(next, 0, bytes.length - 1);
        bytes[at] = bytes[at]! ^ (1 + (next() % 255));
        await child.put(keys[i]!, bytes);
      }
      corrupted[id] = picks.length;
      await child.close();
    }
    const p = await openSet(root);
    const check = await runScrub(p);
    expect(check.damagedByDomain).toEqual(corrupted);
    expect(check.fragments.corrupt + check.fragments.missing).toBe(corrupted.d2! + corrupted.d5!);
    expect(check.lost).toEqual([]);
    const fixed = await runScrub(p, { repair: true, concurrency: 3 });
    expect(fixed.repairedFragments).toBe(corrupted.d2! + corrupted.d5!);
    expect(fixed.unrepairedBlobs).toBe(0);
    expect((await runScrub(p)).damagedBlobs).toBe(0);
    await expectIntact(p, objects);
    await p.close();
  });

  it('more than m damaged domains: blobs are listed as lost, never repaired into wrong bytes', async () => {
    const { dir: root, cleanup } = tempDir('scrub-real');
    cleanups.push(cleanup);
    await fill(await openSet(root), 3);
    for (const id of ['d1', 'd2', 'd4']) {
      rmSync(join(root, id), { recursive: true, force: true });
      mkdirSync(join(root, id));
    }
    const p = await openSet(root);
    const r = await runScrub(p, { repair: true });
    expect(r.lostCount).toBeGreaterThan(0);
    expect(r.lost.length).toBe(Math.min(r.lostCount, 1000));
    for (const key of r.lost.slice(0, 5)) await expect(getBytes(p, key)).rejects.toMatchObject({ code: 'Io' });
    await p.close();
  });
});
