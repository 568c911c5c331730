import { describe, expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { compactRuns } from '../../../src/store/index/compact.js';
import { compareKeys } from '../../../src/store/index/compare.js';
import type { EntryBatch, SeekKey, SortedSource } from '../../../src/store/index/merge.js';
import { openRun } from '../../../src/store/index/run-reader.js';
import { writeRun } from '../../../src/store/index/run-writer.js';
import { SortedMap } from '../../../src/store/index/sorted-map.js';
import { CountingProvider, prng, sortedKeys, valueOf } from './support.js';

/** A deletion, for these tests: a value whose first byte is 0. */
const TOMBSTONE = Uint8Array.of(0);
const isTombstone = (v: Uint8Array) => v.length > 0 && v[0] === 0;

async function readRun(provider: CountingProvider, meta: Parameters<typeof openRun>[1]) {
  const run = await openRun(provider, meta, new BlockCache());
  const out: [string, Uint8Array][] = [];
  for await (const e of run.entries()) out.push(e);
  return out;
}

describe('compactRuns', () => {
  test('the output run equals the newest-wins merge of an overlay and three runs', async () => {
    const provider = new CountingProvider();
    const cache = new BlockCache();
    const universe = sortedKeys(51, 5_000, 8, 0.5);
    const next = prng(52);
    const newest = new Map<string, Uint8Array>();
    const sources: SortedSource[] = [];
    for (let s = 0; s < 4; s++) {
      const entries = universe
        .filter(() => next() % 3 === 0)
        .map((k) => [k, next() % 5 === 0 ? TOMBSTONE : valueOf(k, s)] as const);
      for (const [k, v] of entries) if (!newest.has(k)) newest.set(k, v);
      if (s === 0) {
        const overlay = new SortedMap();
        for (const [k, v] of entries) overlay.set(k, v);
        sources.push(overlay);
      } else {
        sources.push(
          await openRun(
            provider,
            await writeRun(provider, `runs/${s}`, entries, { blockBytes: 512 }),
            cache
          )
        );
      }
    }
    const model = [...newest.entries()].sort((a, b) => compareKeys(a[0], b[0]));

    const all = await compactRuns(provider, 'runs/all', sources, { blockBytes: 2048 });
    expect(all.entryCount).toBe(model.length);
    expect(await readRun(provider, all)).toEqual(model);

    const live = await compactRuns(provider, 'runs/live', sources, {
      keep: (_k, v) => !isTombstone(v),
    });
    expect(await readRun(provider, live)).toEqual(model.filter(([, v]) => !isTombstone(v)));
    expect(live.entryCount).toBeLessThan(all.entryCount);

    const none = await compactRuns(provider, 'runs/none', sources, { keep: () => false });
    expect(none).toMatchObject({ entryCount: 0, firstKey: undefined });
    // The sources are only read: they still read back afterwards.
    expect((await (sources[1] as Awaited<ReturnType<typeof openRun>>).entries().next()).done).toBe(
      false
    );
  });

  test('streams: the merge never runs more than a few blocks ahead of the provider', async () => {
    const provider = new CountingProvider();
    const TOTAL = 300_000;
    const VALUE = new Uint8Array(100).fill(7);
    const BATCH = 256;
    let produced = 0;
    let maxAhead = 0;
    /** A source generating keys on the fly; it records how far it got ahead of the writes. */
    const lazy = (offset: number, step: number): SortedSource => ({
      name: `lazy${offset}`,
      async *scan(from: SeekKey): AsyncGenerator<EntryBatch> {
        for (let i = offset; i < TOTAL; i += step * BATCH) {
          const keys: string[] = [];
          for (let j = i; j < Math.min(TOTAL, i + step * BATCH); j += step)
            keys.push(`obj/${String(j).padStart(8, '0')}`);
          if (compareKeys(keys[keys.length - 1]!, from.key) < 0) continue;
          // Each entry encodes to more than its value, so this undercounts what was written.
          produced += keys.length * VALUE.length;
          maxAhead = Math.max(maxAhead, produced - provider.bytesPulled);
          yield { keys, start: 0, valueAt: () => VALUE };
        }
      },
    });
    // Format version 1 (blocks stored as they are): the bytes the provider pulled then measure
    // the entries written, which compressed v2 blocks (30x smaller here) would not.
    const meta = await compactRuns(provider, 'runs/big', [lazy(0, 2), lazy(1, 2)], { version: 1 });
    expect(meta.entryCount).toBe(TOTAL);
    expect(produced).toBe(TOTAL * VALUE.length);
    // Bounded by a block (64 KiB) plus one batch per source: far below the 30 MB produced.
    expect(maxAhead).toBeLessThan(512 * 1024);
    const run = await openRun(provider, meta, new BlockCache());
    expect(await run.get('obj/00123457')).toEqual(VALUE);
  }, 20_000);
});
