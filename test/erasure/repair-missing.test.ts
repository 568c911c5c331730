/**
 * Missing-only repair (`strata scrub --repair --missing-only`, runScrub `missingOnly`) on the
 * real erasure provider over six directory domains (4+2): after a domain is replaced by an
 * empty directory, the pass rebuilds what was on it reading only k verified fragments of each
 * striped blob (data first), reports every fragment it did not read as unchecked (never as
 * verified), and a corrupt fragment among the k it chose is detected and replaced by another
 * survivor, so no wrong fragment is ever written: a full scrub afterwards finds nothing and every
 * blob reads back byte-exact. A SIGKILLed missing-only repair resumes from its cursor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { resolveErasureConfig } from '../../src/provider/erasure/config.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { getBytes, type Provider } from '../../src/provider/provider.js';
import type { DomainSpec, ErasureConfig, ErasureProvider } from '../../src/provider/erasure/types.js';
import { runScrub, type ScrubReport } from '../../src/provider/erasure/scrub.js';
import { loadCursor, loadLastPass } from '../../src/provider/erasure/scrub-cursor.js';
import { tempDir } from '../store/helpers.js';
import { childKeys } from './domain-keys.js';
import { prng, randInt, randomBytes } from '../support/random.js';
import { cursorSaved, runCli } from './scrub-cli.js';

const N = 6;

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function config(root: string): ErasureConfig {
  const domains: DomainSpec[] = Array.from({ length: N }, (_, i) => ({ id: `d${i + 1}`, url: join(root, `d${i + 1}`), labels: {} }));
  // Small cells: a 9 MiB blob spans several groups of a stripe pass (stripe-pass.ts PASS_BYTES).
  return { k: 4, m: 2, domains, policy: {}, cellSize: 16 * 1024, stripeThreshold: 32 * 1024, degradedWrites: false, domainTimeoutMs: 10_000 };
}

async function openSet(root: string): Promise<ErasureProvider> {
  const cfg = config(root);
  const domains = await Promise.all(cfg.domains.map(async (d) => ({ id: d.id, labels: d.labels, provider: (await createFsProvider({ dir: d.url })) as Provider })));
  return createErasureProvider({ config: cfg, domains });
}

/** Blobs of odd sizes: replicated small ones, striped ones of one group, two of several groups. */
async function fill(root: string, seed: number): Promise<Map<string, Uint8Array>> {
  const p = await openSet(root);
  const next = prng(seed);
  const blobs = new Map<string, Uint8Array>();
  const sizes = [9 * 2 ** 20 + 12_345, 7 * 2 ** 20 + 1, ...Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? randInt(next, 1, 30_000) : randInt(next, 40_000, 900_000)))];
  for (const [i, size] of sizes.entries()) {
    const body = randomBytes(size, seed * 100 + i);
    blobs.set(`b/${String(i).padStart(3, '0')}`, body);
    await p.put(`b/${String(i).padStart(3, '0')}`, body);
  }
  await p.close();
  return blobs;
}

/** [domain, child key] of every fragment and replica, maintenance/ left out. */
async function children(root: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for (let i = 1; i <= N; i++) for (const key of await childKeys(root, `d${i}`)) out.push([`d${i}`, key]);
  return out;
}

function wipe(root: string, id: string): void {
  rmSync(join(root, id), { recursive: true, force: true });
  mkdirSync(join(root, id));
}

async function expectExact(p: ErasureProvider, blobs: Map<string, Uint8Array>): Promise<void> {
  for (const [key, body] of blobs) expect(Buffer.compare(Buffer.from(await getBytes(p, key)), Buffer.from(body)), key).toBe(0);
}

describe('missing-only repair', () => {
  it('rebuilds a wiped domain from k verified fragments per blob and reports the rest unchecked', async () => {
    const { dir: root, cleanup } = tempDir('repair-missing');
    cleanups.push(cleanup);
    const blobs = await fill(root, 5);
    const before = await children(root);
    const onD3 = before.filter(([d]) => d === 'd3').length;
    const striped = new Set(before.filter(([d, c]) => d !== 'd3' && parseChildKey(c)?.layout === 'striped').map(([, c]) => c.split('!')[0]));
    wipe(root, 'd3');

    const p = await openSet(root);
    const r = await runScrub(p, { repair: true, missingOnly: true });
    expect(r.complete).toBe(true);
    expect(r.missingOnly).toBe(true);
    expect(r.lost).toEqual([]);
    expect(r.repairedFragments).toBe(onD3);
    expect(r.unrepairedBlobs).toBe(0);
    expect(Object.keys(r.damagedByDomain)).toEqual(['d3']);
    // Every fragment is either read (verified, or found missing) or counted unchecked: one per
    // striped blob (k + m - 1 survivors, k read) at least, and nothing counted twice.
    expect(r.fragments.unchecked).toBeGreaterThanOrEqual(striped.size);
    expect(r.fragments.verified + r.fragments.unchecked!).toBe(before.length);
    expect(r.fragments.verified).toBeLessThan(before.length);
    // Not a completed scrub: the schedule's full pass is not postponed by it.
    expect(await loadLastPass(p)).toBeUndefined();

    const full = await runScrub(p);
    expect(full.damagedBlobs).toBe(0);
    expect(full.fragments.unchecked).toBeUndefined();
    expect(full.fragments.verified).toBe(before.length);
    expect((await children(root)).length).toBe(before.length);
    await expectExact(p, blobs);
    await p.close();
  }, 120_000);

  it('a corrupt fragment among the k chosen is detected and another survivor used: nothing wrong is written', async () => {
    const { dir: root, cleanup } = tempDir('repair-missing');
    cleanups.push(cleanup);
    const blobs = await fill(root, 9);
    const before = await children(root);
    const onD3 = before.filter(([d]) => d === 'd3').length;
    wipe(root, 'd3');
    // For every striped blob, flip a byte of the lowest-index fragment left (one the pass
    // chooses), seeded, anywhere past its header: in a later group of the big blobs, so a spare
    // joins midway there (its header read and checked on its own).
    const next = prng(77);
    const lowest = new Map<string, [string, string, number]>();
    for (const [d, c] of before) {
      const name = parseChildKey(c);
      if (d === 'd3' || name?.layout !== 'striped') continue;
      const blob = c.split('!')[0]!;
      const was = lowest.get(blob);
      if (!was || name.index < was[2]) lowest.set(blob, [d, c, name.index]);
    }
    for (const [d, c] of lowest.values()) {
      const child = await createFsProvider({ dir: join(root, d) });
      const bytes = Buffer.from(await getBytes(child, c));
      const at = randInt(next, Math.floor(bytes.length / 2), bytes.length - 64);
      bytes[at] = bytes[at]! ^ (1 + (next() % 255));
      await child.put(c, bytes);
      await child.close();
    }

    const p = await openSet(root);
    const r = await runScrub(p, { repair: true, missingOnly: true, concurrency: 3 });
    expect(r.complete).toBe(true);
    expect(r.lost).toEqual([]);
    expect(r.fragments.corrupt).toBe(lowest.size);
    // The missing fragments and the corrupt ones found are all rebuilt.
    expect(r.repairedFragments).toBe(onD3 + lowest.size);
    expect(r.unrepairedBlobs).toBe(0);

    const full = await runScrub(p);
    expect(full.damagedBlobs).toBe(0);
    expect(full.fragments.verified).toBe(before.length);
    await expectExact(p, blobs);
    await p.close();
  }, 120_000);

  it('a spare joining midway with a bad header is not used: the blob is reported lost and nothing is written for it', async () => {
    const { dir: root, cleanup } = tempDir('repair-missing');
    cleanups.push(cleanup);
    const blobs = await fill(root, 13);
    const big = [...blobs.keys()][0]!; // 9 MiB: several groups
    const before = await children(root);
    wipe(root, 'd3');
    const present = before
      .filter(([d, c]) => d !== 'd3' && c.split('!')[0] === big)
      .map(([d, c]) => ({ d, c, index: parseChildKey(c)!.index }))
      .sort((a, b) => a.index - b.index);
    expect(present).toHaveLength(5);
    const flip = async (f: { d: string; c: string }, at: (len: number) => number) => {
      const child = await createFsProvider({ dir: join(root, f.d) });
      const bytes = Buffer.from(await getBytes(child, f.c));
      const i = at(bytes.length);
      bytes[i] = bytes[i]! ^ 0x5a;
      await child.put(f.c, bytes);
      await child.close();
    };
    // A chosen source fails in the last group; the only spare then joins with a bad header.
    await flip(present[0]!, (len) => len - 4096);
    await flip(present[4]!, () => 40);

    const p = await openSet(root);
    const r = await runScrub(p, { repair: true, missingOnly: true });
    expect(r.lost).toEqual([big]);
    expect(r.fragments.corrupt).toBe(2);
    expect((await children(root)).some(([d, c]) => d === 'd3' && c.split('!')[0] === big)).toBe(false);
    // A full scrub agrees: the same two fragments are bad, the blob is lost.
    const full = await runScrub(p);
    expect(full.lost).toEqual([big]);
    expect(full.fragments.corrupt).toBe(2);
    await p.close();
  }, 120_000);

  it('a blob heal on read queued for repair stays queued when a missing-only pass skips it', async () => {
    // Regression: the provider dropped a key from its repair queue when a check found every
    // fragment it listed ok, and a missing-only check of a complete blob lists none.
    const { dir: root, cleanup } = tempDir('repair-missing');
    cleanups.push(cleanup);
    const blobs = await fill(root, 17);
    const key = [...blobs.keys()][1]!; // 7 MiB, striped
    const [d, c] = (await children(root)).find(([, c]) => c.split('!')[0] === key && parseChildKey(c)?.index === 0)!;
    const child = await createFsProvider({ dir: join(root, d) });
    const bytes = Buffer.from(await getBytes(child, c));
    bytes[bytes.length >> 1] ^= 0x5a;
    await child.put(c, bytes);
    await child.close();
    const p = await openSet(root);
    expect(Buffer.compare(Buffer.from(await getBytes(p, key)), Buffer.from(blobs.get(key)!))).toBe(0);
    expect(p.stats.degradedBlobs).toBe(1);
    const r = await runScrub(p, { repair: true, missingOnly: true });
    expect(r.repairedFragments).toBe(0);
    expect(p.stats.degradedBlobs).toBe(1);
    const full = await runScrub(p, { repair: true });
    expect(full.repairedFragments).toBe(1);
    // The next check finds it sound and takes it off the queue.
    expect((await runScrub(p)).damagedBlobs).toBe(0);
    expect(p.stats.degradedBlobs).toBe(0);
    await expectExact(p, blobs);
    await p.close();
  }, 120_000);

  it('a stopped missing-only pass resumes only as one: a full pass starts over', async () => {
    const { dir: root, cleanup } = tempDir('repair-missing');
    cleanups.push(cleanup);
    const blobs = await fill(root, 3);
    wipe(root, 'd2');
    const p = await openSet(root);
    const ac = new AbortController();
    const stopped = await runScrub(p, { repair: true, missingOnly: true, concurrency: 1, cursorEveryBlobs: 1, signal: ac.signal, onProgress: (x) => x.blobs >= 3 && ac.abort() });
    expect(stopped.complete).toBe(false);
    expect((await loadCursor(p))?.missingOnly).toBe(true);
    const resumed = await runScrub(p, { repair: true, missingOnly: true });
    expect(resumed.complete).toBe(true);
    expect(resumed.resumedFrom).toBeDefined();
    expect(resumed.blobs).toBe(blobs.size);
    expect(resumed.unrepairedBlobs).toBe(0);
    // A full repair pass does not continue a missing-only cursor (it would skip unverified blobs).
    const stopped2 = new AbortController();
    await runScrub(p, { repair: true, missingOnly: true, concurrency: 1, cursorEveryBlobs: 1, signal: stopped2.signal, onProgress: (x) => x.blobs >= 2 && stopped2.abort() });
    expect((await loadCursor(p))?.missingOnly).toBe(true);
    const full = await runScrub(p, { repair: true });
    expect(full.resumedFrom).toBeUndefined();
    expect(full.blobs).toBe(blobs.size);
    expect(full.damagedBlobs).toBe(0);
    await expectExact(p, blobs);
    await p.close();
  }, 120_000);

  it('strata scrub --repair --missing-only SIGKILLed mid-pass resumes and completes; a full scrub is then clean', async () => {
    const { dir: root, cleanup } = tempDir('repair-missing-kill');
    cleanups.push(cleanup);
    const pattern = join(root, 'd{1...6}');
    const cfg = resolveErasureConfig({ data: pattern, erasure: '4+2' });
    const p0 = await createErasureProvider({ config: cfg, domains: await Promise.all(cfg.domains.map(async (d) => ({ id: d.id, labels: d.labels, provider: (await createFsProvider({ dir: d.url })) as Provider }))) });
    const size = 1536 * 1024; // above the 1 MiB stripe threshold: striped
    const blobs = new Map<string, Uint8Array>();
    for (let i = 0; i < 12; i++) {
      const body = randomBytes(size, i + 1);
      blobs.set(`o${String(i).padStart(2, '0')}`, body);
      await p0.put(`o${String(i).padStart(2, '0')}`, body);
    }
    await p0.close();
    wipe(root, 'd4');
    const args = ['scrub', '--data', pattern, '--erasure', '4+2', '--repair', '--missing-only', '--json'];
    // ~18 MiB at 3 MiB/s: about 6 s, far longer than the first cursor save (2 s in).
    const killed = await runCli([...args, '--rate', '3MiB'], (kill) => {
      const poll = setInterval(() => {
        void cursorSaved(root, N).then((yes) => {
          if (yes) {
            clearInterval(poll);
            kill();
          }
        });
      }, 100);
    });
    expect(killed.signal).toBe('SIGKILL');
    const resumed = await runCli(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    const r = JSON.parse(resumed.stdout) as ScrubReport;
    expect(r.complete).toBe(true);
    expect(r.missingOnly).toBe(true);
    expect(r.resumedBlobs).toBeGreaterThan(0);
    expect(r.resumedBlobs).toBeLessThan(r.blobs);
    expect(r.fragments.unchecked).toBe(12);
    expect(Object.keys(r.damagedByDomain)).toEqual(['d4']);
    const clean = await runCli(['scrub', '--data', pattern, '--erasure', '4+2', '--json']);
    expect(clean.code, clean.stderr).toBe(0);
    expect((JSON.parse(clean.stdout) as ScrubReport).damagedBlobs).toBe(0);
    const usage = await runCli(['scrub', '--data', pattern, '--erasure', '4+2', '--missing-only']);
    expect(usage.code).toBe(2);
    // The repairs above wrote with O_DIRECT where /tmp takes it (the default); buffered writes
    // rebuild the same. A value other than on or off is a usage error.
    const badFlag = await runCli(['scrub', '--data', pattern, '--erasure', '4+2', '--direct-io', 'maybe']);
    expect(badFlag.code).toBe(2);
    wipe(root, 'd2');
    const buffered = await runCli([...args, '--direct-io', 'off']);
    expect(buffered.code, buffered.stderr).toBe(0);
    expect(Object.keys((JSON.parse(buffered.stdout) as ScrubReport).damagedByDomain)).toEqual(['d2']);
    expect((JSON.parse(buffered.stdout) as ScrubReport).unrepairedBlobs).toBe(0);
    const p = await createErasureProvider({ config: cfg, domains: await Promise.all(cfg.domains.map(async (d) => ({ id: d.id, labels: d.labels, provider: (await createFsProvider({ dir: d.url })) as Provider }))) });
    await expectExact(p, blobs);
    await p.close();
  }, 90_000);
});


