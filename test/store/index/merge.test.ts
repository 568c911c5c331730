import { describe, expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { compareKeys, keyAfterPrefix } from '../../../src/store/index/compare.js';
import {
  mergeSources,
  type MergedEntry,
  type SortedSource,
  type EntryBatch,
  type SeekKey,
} from '../../../src/store/index/merge.js';
import { openRun } from '../../../src/store/index/run-reader.js';
import { writeRun } from '../../../src/store/index/run-writer.js';
import { SortedMap } from '../../../src/store/index/sorted-map.js';
import { CountingProvider, byteOrder, prng, randomKey, valueOf } from './support.js';

type Model = [key: string, tag: number][];

/**
 * `count` sources over a shared key universe, newest first: source 0 is a SortedMap (the
 * overlay), the rest runs with small blocks. Source i's value for a key is valueOf(key, i).
 */
async function buildSources(seed: number, count: number, universe: string[], share = 0.3) {
  const next = prng(seed);
  const provider = new CountingProvider();
  const cache = new BlockCache();
  const sources: SortedSource[] = [];
  const newest = new Map<string, number>();
  for (let s = 0; s < count; s++) {
    const keys = universe.filter(() => (next() % 1000) / 1000 < share);
    for (const k of keys) if (!newest.has(k)) newest.set(k, s);
    if (s === 0) {
      const map = new SortedMap();
      for (const k of keys) map.set(k, valueOf(k, s));
      sources.push(map);
    } else {
      const meta = await writeRun(
        provider,
        `runs/${s}`,
        keys.map((k) => [k, valueOf(k, s)] as const),
        { blockBytes: 256 }
      );
      sources.push(await openRun(provider, meta, cache));
    }
  }
  // Sources were filled newest first, so the first tag recorded per key is the newest.
  const model: Model = [...newest.entries()].sort((a, b) => byteOrder(a[0], b[0]));
  return { provider, cache, sources, model };
}

async function take(it: AsyncIterator<MergedEntry>, n: number): Promise<MergedEntry[]> {
  const out: MergedEntry[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

function expectModel(got: MergedEntry[], want: Model) {
  expect(got.map((e) => e.key)).toEqual(want.map(([k]) => k));
  expect(got.map((e) => e.source)).toEqual(want.map(([, s]) => s));
  for (const e of got) expect(e.value).toEqual(valueOf(e.key, e.source));
}

function fromModel(model: Model, at: SeekKey): Model {
  return model.filter(([k]) => {
    const c = compareKeys(k, at.key);
    return c > 0 || (c === 0 && at.inclusive);
  });
}

describe('mergeSources', () => {
  const universe = [
    ...new Set(Array.from({ length: 4_000 }, (_, i) => randomKey(prng(40 + i), 7, 0.6))),
  ].sort(byteOrder);

  for (const [seed, count] of [
    [41, 1],
    [42, 3],
    [43, 6],
  ] as const) {
    test(`${count} sources (seed ${seed}): the newest value of every key, once, in byte order`, async () => {
      const { sources, model } = await buildSources(seed, count, universe);
      expectModel(await take(mergeSources(sources), Infinity), model);
    });
  }

  test('starting positions and seeks (forward and backward) match the model', async () => {
    const { sources, model } = await buildSources(44, 5, universe);
    const next = prng(45);
    for (let round = 0; round < 60; round++) {
      const from = { key: randomKey(next, 5, 0.6), inclusive: next() % 2 === 0 };
      const it = mergeSources(sources, from);
      expectModel(await take(it, 20), fromModel(model, from).slice(0, 20));
      for (let s = 0; s < 5; s++) {
        const pick = next() % 3;
        const key = pick === 0 ? model[next() % model.length]![0] : randomKey(next, 5, 0.6);
        const inclusive = next() % 2 === 0;
        it.seek(key, inclusive);
        expectModel(await take(it, 15), fromModel(model, { key, inclusive }).slice(0, 15));
      }
      await it.return();
    }
  });

  test('delimiter listing skips whole prefixes: cost follows the prefixes, not the keys', async () => {
    const provider = new CountingProvider();
    const cache = new BlockCache();
    const dirs = 40;
    const sources: SortedSource[] = [];
    for (let s = 0; s < 4; s++) {
      const keys = [];
      for (let d = 0; d < dirs; d++)
        for (let f = s; f < 2_000; f += 4)
          keys.push(`photos/${String(d).padStart(2, '0')}/${String(f).padStart(5, '0')}.jpg`);
      keys.push(`photos/readme-${s}.txt`);
      const meta = await writeRun(
        provider,
        `runs/${s}`,
        keys.sort(compareKeys).map((k) => [k, valueOf(k, s)] as const),
        { blockBytes: 1024 }
      );
      sources.push(await openRun(provider, meta, cache));
    }
    const totalBlocks = sources.reduce(
      (n, s) => n + (s as Awaited<ReturnType<typeof openRun>>).blockCount,
      0
    );
    const before = provider.gets;
    const it = mergeSources(sources, { key: 'photos/', inclusive: true });
    const prefixes: string[] = [];
    const objects: string[] = [];
    let pulled = 0;
    for (let r = await it.next(); !r.done; r = await it.next()) {
      pulled++;
      const rest = r.value.key.slice('photos/'.length);
      const slash = rest.indexOf('/');
      if (slash < 0) {
        objects.push(r.value.key);
        continue;
      }
      const prefix = r.value.key.slice(0, 'photos/'.length + slash + 1);
      prefixes.push(prefix);
      it.seek(keyAfterPrefix(prefix)!);
    }
    expect(prefixes).toEqual(
      Array.from({ length: dirs }, (_, d) => `photos/${String(d).padStart(2, '0')}/`)
    );
    expect(objects).toEqual([0, 1, 2, 3].map((s) => `photos/readme-${s}.txt`));
    expect(pulled).toBe(dirs + 4);
    const reads = provider.gets - before;
    expect(totalBlocks).toBeGreaterThan(1_000);
    expect(reads).toBeLessThanOrEqual(2 * 4 * (dirs + 2));
  });

  test('a page of 1,000 from the middle reads a handful of blocks', async () => {
    const provider = new CountingProvider();
    const cache = new BlockCache();
    const sources: SortedSource[] = [];
    for (let s = 0; s < 3; s++) {
      const keys = Array.from(
        { length: 30_000 },
        (_, i) => `k/${String(i * 3 + s).padStart(7, '0')}`
      );
      sources.push(
        await openRun(
          provider,
          await writeRun(
            provider,
            `r${s}`,
            keys.map((k) => [k, valueOf(k)] as const),
            { blockBytes: 4096 }
          ),
          cache
        )
      );
    }
    const before = provider.gets;
    const page = await take(mergeSources(sources, { key: 'k/0045000', inclusive: true }), 1_000);
    expect(page[0]!.key).toBe('k/0045000');
    expect(page[999]!.key).toBe('k/0045999');
    // ~334 keys per run in the page, ~150 entries per 4 KiB block: 3-4 blocks per run.
    expect(provider.gets - before).toBeLessThanOrEqual(15);
  });

  test('an overlay written to between steps still yields sorted, unique keys', async () => {
    const map = new SortedMap();
    for (let i = 0; i < 2_000; i += 2) map.set(String(i).padStart(5, '0'), valueOf(''));
    const it = mergeSources([map]);
    const seen: string[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) {
      seen.push(r.value.key);
      const n = Number(r.value.key);
      map.set(String(n + 1).padStart(5, '0'), valueOf(''));
      map.delete(String(n + 2).padStart(5, '0'));
    }
    expect(seen).toEqual([...seen].sort(compareKeys));
    expect(new Set(seen).size).toBe(seen.length);
  });

  test('return() closes every source scan; overlapping next() calls are refused', async () => {
    let open = 0;
    const slow: SortedSource = {
      name: 'slow',
      scan(from: SeekKey): AsyncIterator<EntryBatch> {
        open++;
        let done = false;
        return {
          async next() {
            await new Promise((r) => setTimeout(r, 1));
            if (done) return { done: true, value: undefined };
            done = true;
            return {
              done: false,
              value: {
                keys: [from.key + 'a', from.key + 'b'],
                start: 0,
                valueAt: () => new Uint8Array(0),
              },
            };
          },
          async return() {
            open--;
            return { done: true, value: undefined };
          },
        };
      },
    };
    const it = mergeSources([slow, slow]);
    const first = it.next();
    await expect(it.next()).rejects.toThrow(/pending/);
    expect((await first).value).toMatchObject({ key: 'a', source: 0 });
    expect(open).toBe(2);
    await it.return();
    expect(open).toBe(0);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });
});
