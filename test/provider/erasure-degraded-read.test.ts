/**
 * Degraded reads when the description already says which data fragments are gone (a cold
 * lookup found them missing): the k rebuild sources are read in one round (data and parity
 * at once, not data first and parity after), and every range — inside one cell, across
 * cells, across stripes, the short last stripe — comes back byte-exact; with more than m
 * gone the read fails closed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { getBytes, ProviderError, type Provider } from '../../src/provider/provider.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import type { Domain, ErasureConfig } from '../../src/provider/erasure/types.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { bytes, prng } from './helpers.js';

const KiB = 1024;

/** Counts the child reads in flight (and the most at once); each read waits a few ms. */
class Counting implements Provider {
  readonly kind = 'counting';
  inFlight = 0;
  maxInFlight = 0;
  reads = 0;
  constructor(readonly inner: Provider) {}
  get capabilities() {
    return this.inner.capabilities;
  }
  async #count<T>(f: () => Promise<T>): Promise<T> {
    this.reads++;
    this.inFlight++;
    Counting.all.max = Math.max(Counting.all.max, ++Counting.all.now);
    try {
      await new Promise((r) => setTimeout(r, 3));
      return await f();
    } finally {
      this.inFlight--;
      Counting.all.now--;
    }
  }
  static all = { now: 0, max: 0 };
  put: Provider['put'] = (k, b, o) => this.inner.put(k, b, o);
  get: Provider['get'] = (k, o) => this.#count(() => this.inner.get(k, o));
  read = (k: string, r?: { start: number; end?: number }) => this.#count(() => getBytes(this.inner, k, r));
  head: Provider['head'] = (k) => this.inner.head(k);
  list: Provider['list'] = (o) => this.inner.list(o);
  delete: Provider['delete'] = (k) => this.inner.delete(k);
  close: Provider['close'] = () => this.inner.close();
}

const k = 4;
const m = 2;
const cellSize = 64 * KiB;
const size = 3 * k * cellSize + 5 * 16 * KiB + 123; // three full stripes and a short one
const data = bytes(size, 7);
let domains: Domain[];
let counters: Counting[];
let config: ErasureConfig;

async function setUp(): Promise<void> {
  counters = [];
  domains = [];
  for (let i = 0; i < k + m; i++) {
    const c = new Counting(await createMemoryProvider());
    counters.push(c);
    domains.push({ id: `d${i + 1}`, labels: {}, provider: c });
  }
  config = {
    k, m, domains: domains.map((d) => ({ id: d.id, url: 'memory:', labels: {} })), policy: {},
    cellSize, stripeThreshold: 64 * KiB, degradedWrites: false, domainTimeoutMs: 5_000,
  };
  const writer = await createErasureProvider({ config, domains });
  await writer.put('blob', data);
}

/** Deletes the fragments of `indices` of 'blob' on every domain. */
async function dropFragments(indices: number[]): Promise<void> {
  for (const d of domains) {
    for (const item of (await d.provider.list({})).items) {
      const name = parseChildKey(item.key);
      if (name?.key === 'blob' && indices.includes(name.index)) await d.provider.delete(item.key);
    }
  }
}

afterAll(async () => {
  for (const d of domains ?? []) await d.provider.close();
});

describe('erasure degraded reads with known-missing data fragments', () => {
  it('reads the k sources of a stripe in one round and every range byte-exact', async () => {
    await setUp();
    await dropFragments([0, 2]);
    const cold = await createErasureProvider({ config, domains });
    // One whole stripe: k child reads (2 data + 2 parity), all in flight together.
    Counting.all.max = 0;
    const before = counters.reduce((a, c) => a + c.reads, 0);
    const stripe = await cold.read!('blob', { start: k * cellSize, end: 2 * k * cellSize - 1 });
    expect(Buffer.from(stripe).equals(data.subarray(k * cellSize, 2 * k * cellSize))).toBe(true);
    expect(counters.reduce((a, c) => a + c.reads, 0) - before).toBe(k);
    expect(Counting.all.max).toBe(k);
    // Whole blob, streamed and read.
    const chunks: Uint8Array[] = [];
    for await (const c of (await cold.get('blob')).body as AsyncIterable<Uint8Array>) chunks.push(c);
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
    expect(Buffer.from(await cold.read!('blob')).equals(data)).toBe(true);
    // Ranges at and around every cell, block and stripe edge, and random ones.
    const rand = prng(5);
    const edges = [0, 1, 16 * KiB - 1, 16 * KiB, cellSize - 1, cellSize, 2 * cellSize + 3, k * cellSize - 1, k * cellSize, 3 * k * cellSize, size - 200, size - 1];
    const ranges: [number, number][] = [];
    for (const a of edges) for (const len of [1, 100, 16 * KiB, cellSize + 1, k * cellSize]) ranges.push([a, Math.min(size - 1, a + len - 1)]);
    for (let i = 0; i < 40; i++) {
      const a = Math.floor(rand() * size);
      ranges.push([a, Math.min(size - 1, a + Math.floor(rand() * 3 * cellSize))]);
    }
    for (const [a, z] of ranges) {
      const got = await cold.read!('blob', { start: a, end: z });
      expect(Buffer.from(got).equals(data.subarray(a, z + 1)), `range ${a}-${z}`).toBe(true);
    }
    expect(cold.stats.degradedReads).toBeGreaterThan(0);
    expect(cold.takeRepairQueue()).toEqual(['blob']);
  });

  it('fails closed naming the blob when more than m data fragments are known missing', async () => {
    await setUp();
    await dropFragments([0, 1, 3]);
    const cold = await createErasureProvider({ config, domains });
    const err = await cold.read!('blob', { start: 0, end: 99 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Io');
    expect((err as ProviderError).message).toContain('blob');
  });
});
