/**
 * RunReader.peek (the merge's read-free seek) and the block cache's encoded tier: a peek
 * gives exactly the first batch a scan from the same position gives, never reads, answers
 * "needs a read" for blocks the cache holds in neither tier, and rebuilds decoded blocks from
 * encoded ones — verifying them, so a corrupted cached copy fails closed.
 */
import { describe, expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { IndexError } from '../../../src/store/index/errors.js';
import { openRun } from '../../../src/store/index/run-reader.js';
import { writeRun, type RunEntry } from '../../../src/store/index/run-writer.js';
import type { EntryBatch, SeekKey } from '../../../src/store/index/merge.js';
import { CountingProvider, prng, sortedKeys } from './support.js';
import { compareKeys } from '../../../src/store/index/compare.js';

const batchOf = (b: EntryBatch | null | undefined) =>
  b ? b.keys.slice(b.start).map((k, i) => [k, [...b.valueAt(b.start + i)]]) : b;

async function fixture(cache: BlockCache) {
  const provider = new CountingProvider();
  const next = prng(71);
  const entries: RunEntry[] = sortedKeys(72, 800, 8, 0.5).map((k) => [k, Uint8Array.from({ length: next() % 30 }, () => next() & 0xff)]);
  const meta = await writeRun(provider, 'runs/peek', entries, { blockBytes: 512 });
  const run = await openRun(provider, meta, cache);
  return { provider, run, entries };
}

async function firstBatch(run: Awaited<ReturnType<typeof fixture>>['run'], from: SeekKey) {
  const it = run.scan(from);
  const step = await it.next();
  await it.return();
  return step.done ? null : step.value;
}

describe('RunReader.peek', () => {
  test('needs a read for uncached blocks, then matches scan at every position without reading', async () => {
    const { provider, run, entries } = await fixture(new BlockCache({ maxBytes: 64 * 1024 * 1024 }));
    expect(run.blockCount).toBeGreaterThan(20);
    expect(run.peek({ key: entries[400]![0], inclusive: true })).toBeUndefined();
    const targets: SeekKey[] = [{ key: '', inclusive: true }];
    for (const [k] of entries) targets.push({ key: k, inclusive: true }, { key: k, inclusive: false }, { key: `${k}\u0000`, inclusive: true });
    targets.push({ key: '\u{10ffff}\u{10ffff}', inclusive: true });
    for (const t of targets) await firstBatch(run, t); // warms every block
    const gets = provider.gets;
    for (const t of targets) {
      const scanned = batchOf(await firstBatch(run, t));
      expect(batchOf(run.peek(t, false)), JSON.stringify(t)).toEqual(scanned);
      // A seek hands over the first entries only (and keeps them); the same again from the seek tier.
      for (let again = 0; again < 2; again++) {
        const sought = run.peek(t, true);
        expect(sought?.keys.length ?? 0).toBeLessThanOrEqual(2);
        expect(batchOf(sought), JSON.stringify(t)).toEqual(scanned && scanned.slice(0, sought!.keys.length));
      }
    }
    expect(provider.gets).toBe(gets);
    expect(run.peek({ key: entries[entries.length - 1]![0], inclusive: false })).toBeNull();
  });

  test('rebuilds decoded blocks from the encoded tier, with no read', async () => {
    // A decoded tier too small for any block: every decoded block comes from encoded bytes.
    const cache = new BlockCache({ maxBytes: 4 * 1024 * 1024, encodedBytes: 4 * 1024 * 1024 - 16, seekBytes: 0 });
    const { provider, run, entries } = await fixture(cache);
    for (let i = 0; i < entries.length; i += 7) await firstBatch(run, { key: entries[i]![0], inclusive: true });
    expect(cache.stats()).toMatchObject({ blocks: 0 });
    expect(cache.stats().encodedBlocks).toBe(run.blockCount);
    const gets = provider.gets;
    for (let i = 0; i < entries.length; i += 5) {
      const t = { key: entries[i]![0], inclusive: i % 2 === 0 };
      expect(batchOf(run.peek(t, false))).toEqual(batchOf(await firstBatch(run, t)));
    }
    expect(provider.gets).toBe(gets);
  });

  test('keeps what a seek found and answers the same seek again from it, exactly, with no block', async () => {
    // No decoded tier to speak of: every block is rebuilt from encoded bytes, so seeks are kept.
    const cache = new BlockCache({ maxBytes: 4 * 1024 * 1024, encodedBytes: 3 * 1024 * 1024, seekBytes: 1024 * 1024 - 16 });
    const { run, entries } = await fixture(cache);
    const targets: SeekKey[] = [];
    for (let i = 0; i < entries.length; i += 3) targets.push({ key: entries[i]![0], inclusive: i % 2 === 0 }, { key: `${entries[i]![0]}\u0000`, inclusive: true });
    for (const t of targets) await firstBatch(run, t); // encoded tier warm
    for (const t of targets) run.peek(t, true); // decoded from encoded: seeks kept
    const seeks = cache.stats().seeks;
    expect(seeks).toBeGreaterThan(targets.length / 2);
    // Spoil every encoded copy: from now on a peek that touches a block throws, so a peek
    // that answers answers from a kept seek — and must give exactly the run's next entries.
    for (let i = 0; i < run.blockCount; i++) {
      const bytes = cache.peekEncoded(BlockCache.keyOf(`${run.meta.blobKey}\u0000${run.meta.footerCrc}`, i));
      if (bytes) bytes[bytes.length >> 1]! ^= 0x40;
    }
    let answered = 0;
    for (const t of targets) {
      let kept: EntryBatch | null | undefined;
      try {
        kept = run.peek(t, true);
      } catch (err) {
        expect(err).toBeInstanceOf(IndexError);
        continue;
      }
      answered++;
      const at = entries.findIndex(([k]) => (t.inclusive ? compareKeys(k, t.key) >= 0 : compareKeys(k, t.key) > 0));
      const want = entries.slice(at, at + kept!.keys.length - kept!.start).map(([k, v]) => [k, [...v]]);
      expect(batchOf(kept)).toEqual(want);
    }
    expect(answered).toBe(seeks);
  });

  test('a corrupted encoded copy fails closed (IndexError), never yields entries', async () => {
    const cache = new BlockCache({ maxBytes: 4 * 1024 * 1024, encodedBytes: 4 * 1024 * 1024 - 16, seekBytes: 0 });
    const { run, entries } = await fixture(cache);
    const target = { key: entries[300]![0], inclusive: true };
    await firstBatch(run, target);
    // Flip a byte of every cached encoded block (the cache hands out its own copies).
    for (let i = 0; i < run.blockCount; i++) {
      const bytes = cache.peekEncoded(BlockCache.keyOf(`${run.meta.blobKey}\u0000${run.meta.footerCrc}`, i));
      if (bytes) bytes[bytes.length >> 1]! ^= 0x40;
    }
    expect(() => run.peek(target)).toThrow(IndexError);
    await expect(firstBatch(run, target)).rejects.toThrow(IndexError);
  });
});
