/**
 * readAhead (src/store/index/read-ahead.ts): the same batches in the same order, the next one
 * asked for as soon as the current one is handed over, a failure reported on the batch that
 * failed (and nothing read after it), return() closing the source after a read in flight,
 * and a compaction over slow run reads overlapping them instead of waiting for each.
 */
import { describe, expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { compactRuns } from '../../../src/store/index/compact.js';
import { FROM_START, type EntryBatch, type SeekKey, type SortedSource } from '../../../src/store/index/merge.js';
import { readAhead } from '../../../src/store/index/read-ahead.js';
import { openRun } from '../../../src/store/index/run-reader.js';
import { writeRun } from '../../../src/store/index/run-writer.js';
import type { GetOptions, GetResult } from '../../../src/provider/provider.js';
import { CountingProvider, sortedKeys, valueOf } from './support.js';

const batchOf = (keys: string[]): EntryBatch => ({ keys, start: 0, valueAt: (i) => valueOf(keys[i]!) });

/** A source of `batches` batches of 2 keys that records its pulls and can fail at one. */
function scripted(batches: number, failAt = -1) {
  const log: string[] = [];
  let closed = 0;
  const source: SortedSource = {
    name: 'scripted',
    scan(_from: SeekKey) {
      let i = 0;
      return {
        async next() {
          const n = i++;
          log.push(`pull ${n}`);
          await new Promise((r) => setTimeout(r, 1));
          if (n === failAt) throw new Error(`batch ${n} failed`);
          if (n >= batches) return { done: true as const, value: undefined };
          return { done: false as const, value: batchOf([`k${n}a`, `k${n}b`]) };
        },
        async return() {
          closed++;
          return { done: true as const, value: undefined };
        },
      };
    },
  };
  return { source, log, closed: () => closed };
}

describe('readAhead', () => {
  test('hands over the same batches and asks for the next one right away', async () => {
    const { source, log } = scripted(3);
    const it = readAhead(source).scan(FROM_START);
    const first = await it.next();
    expect((first.value as EntryBatch).keys).toEqual(['k0a', 'k0b']);
    expect(log).toEqual(['pull 0', 'pull 1']); // batch 1 is being read while 0 is used
    const keys: string[] = [...(first.value as EntryBatch).keys];
    for (let s = await it.next(); !s.done; s = await it.next()) keys.push(...(s.value as EntryBatch).keys);
    expect(keys).toEqual(['k0a', 'k0b', 'k1a', 'k1b', 'k2a', 'k2b']);
    expect(log).toEqual(['pull 0', 'pull 1', 'pull 2', 'pull 3']); // nothing past the end
    expect((await it.next()).done).toBe(true);
    expect(log.length).toBe(4);
  });

  test('reports a failed read ahead on that batch, without an unhandled rejection, and stops', async () => {
    const { source, log } = scripted(5, 1);
    const it = readAhead(source).scan(FROM_START);
    expect(((await it.next()).value as EntryBatch).keys).toEqual(['k0a', 'k0b']);
    await new Promise((r) => setTimeout(r, 20)); // the read ahead fails meanwhile
    await expect(it.next()).rejects.toThrow('batch 1 failed');
    expect((await it.next()).done).toBe(true);
    expect(log).toEqual(['pull 0', 'pull 1']);
  });

  test('return() waits for the read in flight, then closes the source', async () => {
    const { source, log, closed } = scripted(5);
    const it = readAhead(source).scan(FROM_START);
    await it.next();
    expect(log).toEqual(['pull 0', 'pull 1']);
    await it.return!();
    expect(closed()).toBe(1);
    expect((await it.next()).done).toBe(true);
    expect(log).toEqual(['pull 0', 'pull 1']);
  });
});

/** A provider whose every get takes `delayMs` (a remote backend's round trip). */
class SlowProvider extends CountingProvider {
  delayMs = 0;
  inFlight = 0;
  /** Gets that started while another was in flight. */
  overlapped = 0;
  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    if (this.inFlight > 0) this.overlapped++;
    this.inFlight++;
    try {
      await new Promise((r) => setTimeout(r, this.delayMs));
      return await super.get(key, options);
    } finally {
      this.inFlight--;
    }
  }
}

describe('compaction over slow reads', () => {
  test('overlaps the block reads of its runs and writes the same run', async () => {
    const provider = new SlowProvider();
    const keys = sortedKeys(7, 6_000, 10, 0.5);
    const metas = [];
    for (let r = 0; r < 3; r++) {
      const part = keys.filter((_, i) => i % 3 === r).map((k) => [k, valueOf(k, r)] as [string, Uint8Array]);
      metas.push(await writeRun(provider, `runs/r${r}`, part, { blockBytes: 1024 }));
    }
    provider.delayMs = 3;
    const cache = new BlockCache();
    const readers = await Promise.all(metas.map((m) => openRun(provider, m, cache)));
    const before = provider.gets;
    const overlappedBefore = provider.overlapped;
    const meta = await compactRuns(provider, 'runs/out', readers);
    // Without read-ahead only the merge's first reads (one per run) could overlap; with it,
    // most of the ~25 block reads of each run start while another is in flight.
    const reads = provider.gets - before;
    expect(reads).toBeGreaterThan(30);
    const overlapped = provider.overlapped - overlappedBefore;
    expect(overlapped, `${overlapped} of ${reads} reads overlapped`).toBeGreaterThan(reads / 4);
    provider.delayMs = 0;
    const out = await openRun(provider, meta, new BlockCache());
    const got: string[] = [];
    for await (const [k, v] of out.entries()) {
      got.push(k);
      const r = keys.indexOf(k) % 3;
      expect(Buffer.from(v).equals(Buffer.from(valueOf(k, r)))).toBe(true);
    }
    expect(got).toEqual(keys);
  });
});
