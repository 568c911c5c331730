/**
 * A compaction reads its runs once, past the block cache (RunReader.passOnce).
 *
 * Regression (1M-object writer, bench:engine scale lane): compactions read every block of the
 * runs they replace through the shared block cache, so a process that only writes filled the
 * cache to its bound (32 MiB by default, the decoded tier in the JS heap) with blocks of runs
 * about to be deleted, evicting whatever readers had cached. Now blocks the cache holds are
 * used, the others are read and verified and let go.
 */
import { describe, expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { compactRuns } from '../../../src/store/index/compact.js';
import { compareKeys } from '../../../src/store/index/compare.js';
import { IndexError } from '../../../src/store/index/errors.js';
import { openRun, type RunReader } from '../../../src/store/index/run-reader.js';
import { writeRun } from '../../../src/store/index/run-writer.js';
import { CountingProvider, prng, sortedKeys, valueOf } from './support.js';

/** Three runs of a shared key universe (newest first), their newest-wins model, one cache. */
async function threeRuns(seed: number) {
  const provider = new CountingProvider();
  const cache = new BlockCache();
  const universe = sortedKeys(seed, 3_000, 10, 0.5);
  const next = prng(seed + 1);
  const newest = new Map<string, Uint8Array>();
  const runs: RunReader[] = [];
  for (let s = 0; s < 3; s++) {
    const entries = universe.filter(() => next() % 2 === 0).map((k) => [k, valueOf(k, s)] as const);
    for (const [k, v] of entries) if (!newest.has(k)) newest.set(k, v);
    runs.push(await openRun(provider, await writeRun(provider, `runs/${s}`, entries, { blockBytes: 512 }), cache));
  }
  const model = [...newest.entries()].sort((a, b) => compareKeys(a[0], b[0]));
  return { provider, cache, runs, model };
}

async function entriesOf(provider: CountingProvider, meta: Parameters<typeof openRun>[1]) {
  const out: [string, Uint8Array][] = [];
  for await (const e of (await openRun(provider, meta, new BlockCache({ maxBytes: 0 }))).entries()) out.push(e);
  return out;
}

describe('compaction and the block cache', () => {
  test('a compaction leaves the cache as empty as it found it, and its output is the merge', async () => {
    const { provider, cache, runs, model } = await threeRuns(71);
    const out = await compactRuns(provider, 'runs/out', runs, { blockBytes: 2048 });
    const st = cache.stats();
    expect({ blocks: st.blocks, encoded: st.encodedBlocks, seeks: st.seeks }).toEqual({ blocks: 0, encoded: 0, seeks: 0 });
    expect(await entriesOf(provider, out)).toEqual(model);
  });

  test('blocks the cache already holds are used, not read again', async () => {
    const { provider, cache, runs, model } = await threeRuns(72);
    // A reader walked the newest run: its blocks are cached.
    for await (const _ of runs[0]!.entries()) void _;
    const cached = cache.stats().blocks + cache.stats().encodedBlocks;
    expect(cached).toBeGreaterThan(0);
    const blocks = runs.reduce((n, r) => n + r.blockCount, 0);
    const before = provider.gets;
    const out = await compactRuns(provider, 'runs/out', runs);
    expect(provider.gets - before).toBe(blocks - runs[0]!.blockCount);
    expect(await entriesOf(provider, out)).toEqual(model);
  });

  test('a corrupt block read past the cache still fails the compaction', async () => {
    const { provider, runs } = await threeRuns(73);
    const blob = await provider.bytesOf('runs/1');
    const bad = blob.slice();
    bad[Math.floor(blob.length / 3)]! ^= 0x10; // inside a middle block
    await provider.put('runs/1', bad);
    await expect(compactRuns(provider, 'runs/out', runs)).rejects.toBeInstanceOf(IndexError);
    expect(await provider.head('runs/out').catch(() => undefined)).toBeUndefined();
  });
});
