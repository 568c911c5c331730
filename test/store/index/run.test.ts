import { describe, expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { IndexError } from '../../../src/store/index/errors.js';
import { decodeRunMeta, encodeRunMeta } from '../../../src/store/index/run-format.js';
import { openRun, readRunMeta } from '../../../src/store/index/run-reader.js';
import { writeRun, type RunEntry } from '../../../src/store/index/run-writer.js';
import { ProviderError } from '../../../src/provider/provider.js';
import { CountingProvider, prng, sortedKeys, valueOf } from './support.js';

async function collect(it: AsyncIterable<[string, Uint8Array]>): Promise<[string, Uint8Array][]> {
  const out: [string, Uint8Array][] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** Random values 0..maxBytes long, a fifth of them empty. */
function entriesFor(keys: string[], seed: number, maxBytes = 40): RunEntry[] {
  const next = prng(seed);
  return keys.map((k) => {
    const n = next() % 5 === 0 ? 0 : next() % maxBytes;
    return [k, Uint8Array.from({ length: n }, (_, i) => (i * 31 + k.length) & 0xff)];
  });
}

describe('runs: write, open, get, iterate', () => {
  for (const blockBytes of [64, 1024, 64 * 1024]) {
    test(`round trip of 3,000 tricky-Unicode keys with ${blockBytes}-byte blocks`, async () => {
      const provider = new CountingProvider();
      const entries = entriesFor(sortedKeys(31, 3_000, 10, 0.4), 32);
      const meta = await writeRun(provider, 'runs/a', entries, { blockBytes });
      expect(meta).toMatchObject({
        blobKey: 'runs/a',
        entryCount: 3_000,
        firstKey: entries[0]![0],
      });
      expect(meta.lastKey).toBe(entries[entries.length - 1]![0]);
      expect(meta.size).toBe((await provider.head('runs/a')).size);
      expect(decodeRunMeta(encodeRunMeta(meta))).toEqual(meta);
      expect(await readRunMeta(provider, 'runs/a')).toEqual(meta);

      const gets = provider.gets;
      const run = await openRun(provider, meta, new BlockCache());
      expect(provider.gets - gets).toBe(1);
      expect(await collect(run.entries())).toEqual(entries);
      for (const [k, v] of entries) expect(await run.get(k)).toEqual(v);
      const present = new Set(entries.map(([k]) => k));
      for (const k of sortedKeys(33, 500, 10, 0.4)) {
        if (!present.has(k)) expect(await run.get(k)).toBeUndefined();
      }
    });
  }

  test('seek lands on the first key >= / > the target at every position, including block edges', async () => {
    const provider = new CountingProvider();
    const entries = entriesFor(sortedKeys(34, 600, 6, 0.5), 35);
    const keys = entries.map(([k]) => k);
    const meta = await writeRun(provider, 'runs/seek', entries, { blockBytes: 96 });
    const run = await openRun(provider, meta, new BlockCache());
    expect(run.blockCount).toBeGreaterThan(50);
    const firstThree = async (key: string, inclusive: boolean) => {
      const out: string[] = [];
      for await (const [k] of run.entries({ key, inclusive })) if (out.push(k) === 3) break;
      return out;
    };
    for (let i = 0; i < keys.length; i++) {
      expect(await firstThree(keys[i]!, true)).toEqual(keys.slice(i, i + 3));
      expect(await firstThree(keys[i]!, false)).toEqual(keys.slice(i + 1, i + 4));
      // The smallest extension of a key lies between it and its successor (or equals it).
      const between = keys[i] + '\u0000';
      const j = keys[i + 1] === between ? i + 1 : i + 1;
      expect(await firstThree(between, true)).toEqual(keys.slice(j, j + 3));
    }
    expect(await firstThree('', true)).toEqual(keys.slice(0, 3));
    expect(await firstThree(keys[keys.length - 1]! + 'z', true)).toEqual([]);
    expect(await firstThree(keys[keys.length - 1]!, false)).toEqual([]);
  });

  test('1 MiB values, a single entry, the empty key, and an empty run', async () => {
    const provider = new CountingProvider();
    const big = Uint8Array.from({ length: 1 << 20 }, (_, i) => i & 0xff);
    const bigEntries: RunEntry[] = [
      ['a', big],
      ['b', new Uint8Array(0)],
      ['c', big.subarray(1)],
    ];
    const cache = new BlockCache();
    const bigRun = await openRun(
      provider,
      await writeRun(provider, 'runs/big', bigEntries, { blockBytes: 1024 }),
      cache
    );
    expect(bigRun.blockCount).toBe(2); // [a] alone (over the target), then [b, c]
    // Buffer.equals: deep equality over a MiB of elements is needlessly slow.
    const same = (a: Uint8Array | undefined, b: Uint8Array) =>
      a !== undefined && Buffer.from(a).equals(b);
    const got = await collect(bigRun.entries());
    expect(got.map(([k]) => k)).toEqual(['a', 'b', 'c']);
    got.forEach(([, v], i) => expect(same(v, bigEntries[i]![1])).toBe(true));
    expect(same(await bigRun.get('c'), big.subarray(1))).toBe(true);

    const one = await openRun(
      provider,
      await writeRun(provider, 'runs/one', [['', valueOf('')]]),
      cache
    );
    expect(await collect(one.entries())).toEqual([['', valueOf('')]]);
    expect(await one.get('')).toEqual(valueOf(''));
    expect(await one.get('a')).toBeUndefined();

    const emptyMeta = await writeRun(provider, 'runs/empty', []);
    expect(emptyMeta).toMatchObject({ entryCount: 0, firstKey: undefined, lastKey: undefined });
    expect(decodeRunMeta(encodeRunMeta(emptyMeta))).toEqual(emptyMeta);
    const empty = await openRun(provider, emptyMeta, cache);
    expect(await collect(empty.entries())).toEqual([]);
    expect(await empty.get('a')).toBeUndefined();
  });

  test('async iterable input; values returned are copies the caller owns', async () => {
    const provider = new CountingProvider();
    async function* gen(): AsyncGenerator<RunEntry> {
      for (let i = 0; i < 100; i++) yield [`k${String(i).padStart(3, '0')}`, valueOf(String(i))];
    }
    const run = await openRun(
      provider,
      await writeRun(provider, 'runs/async', gen()),
      new BlockCache()
    );
    const v = (await run.get('k007'))!;
    v.fill(0);
    expect(await run.get('k007')).toEqual(valueOf('7'));
  });

  test('runs sharing a small cache keep it within its byte bound', async () => {
    const provider = new CountingProvider();
    const cache = new BlockCache({ maxBytes: 16 * 1024 });
    const runs = [];
    for (let r = 0; r < 3; r++) {
      const keys = Array.from({ length: 3_000 }, (_, i) => `r${r}/${String(i).padStart(5, '0')}`);
      runs.push(
        await openRun(
          provider,
          await writeRun(
            provider,
            `runs/c${r}`,
            keys.map((k) => [k, valueOf(k)] as const),
            { blockBytes: 1024 }
          ),
          cache
        )
      );
    }
    for (const run of runs)
      for await (const _ of run.entries())
        expect(cache.stats().bytes).toBeLessThanOrEqual(16 * 1024);
    const { misses, evictions, blocks } = cache.stats();
    expect(misses).toBe(runs.reduce((n, r) => n + r.blockCount, 0));
    expect(evictions).toBe(misses - blocks);
  });

  test('keys outside [first, last] or rejected by the bloom filter cost no block read', async () => {
    const provider = new CountingProvider();
    const keys = Array.from({ length: 2_000 }, (_, i) => `m/${String(i * 2).padStart(6, '0')}`);
    const meta = await writeRun(
      provider,
      'runs/bloom',
      keys.map((k) => [k, valueOf(k)] as const),
      { blockBytes: 512 }
    );
    const cache = new BlockCache();
    const run = await openRun(provider, meta, cache);
    const before = provider.gets;
    expect(await run.get('a')).toBeUndefined();
    expect(await run.get('z')).toBeUndefined();
    let absent = 0;
    for (let i = 0; i < 1_000; i++)
      if ((await run.get(`m/${String(i * 2 + 1).padStart(6, '0')}`)) === undefined) absent++;
    expect(absent).toBe(1_000);
    expect(provider.gets - before).toBeLessThan(40); // ~1% false positives
  });
});

describe('runs: the writer refuses bad input and stores nothing', () => {
  const cases: [string, RunEntry[], string][] = [
    [
      'out of order',
      [
        ['b', valueOf('')],
        ['a', valueOf('')],
      ],
      'ERR_RUN_UNSORTED',
    ],
    [
      'duplicate',
      [
        ['a', valueOf('')],
        ['a', valueOf('')],
      ],
      'ERR_RUN_UNSORTED',
    ],
    [
      'a prefix after its extension',
      [
        ['ab', valueOf('')],
        ['a', valueOf('')],
      ],
      'ERR_RUN_UNSORTED',
    ],
    [
      'JS order instead of byte order',
      [
        ['\u{10000}', valueOf('')],
        ['\uffff', valueOf('')],
      ],
      'ERR_RUN_UNSORTED',
    ],
    ['a lone surrogate', [['a\ud800', valueOf('')]], 'ERR_RUN_ENTRY'],
    ['a value that is not bytes', [['a', 'text' as unknown as Uint8Array]], 'ERR_RUN_ENTRY'],
  ];
  for (const [name, entries, code] of cases) {
    test(`${name}: ${code}`, async () => {
      const provider = new CountingProvider();
      const many: RunEntry[] = [
        ...Array.from(
          { length: 500 },
          (_, i) => ['0' + String(i).padStart(4, '0'), valueOf('x')] as const
        ),
        ...entries,
      ];
      for (const input of [entries, many]) {
        const err = await writeRun(provider, 'runs/bad', input, { blockBytes: 128 }).catch(
          (e: unknown) => e
        );
        expect(err).toBeInstanceOf(IndexError);
        expect((err as IndexError).code).toBe(code);
      }
      await expect(provider.head('runs/bad')).rejects.toMatchObject({ code: 'NotFound' });
    });
  }

  test('runs are immutable: writing an existing key fails unless exclusive is false', async () => {
    const provider = new CountingProvider();
    await writeRun(provider, 'runs/x', [['a', valueOf('')]]);
    await expect(writeRun(provider, 'runs/x', [['b', valueOf('')]])).rejects.toBeInstanceOf(
      ProviderError
    );
    await expect(
      writeRun(provider, 'runs/x', [['b', valueOf('')]], { exclusive: false })
    ).resolves.toMatchObject({ firstKey: 'b' });
  });

  test('options are validated', async () => {
    const provider = new CountingProvider();
    await expect(writeRun(provider, 'r', [], { blockBytes: 10 })).rejects.toThrow(RangeError);
    await expect(writeRun(provider, 'r', [], { bitsPerKey: 0 })).rejects.toThrow(RangeError);
  });
});
