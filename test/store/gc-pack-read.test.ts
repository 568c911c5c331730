/**
 * Pack cleaning's reads (gc-pack-read.ts): neighbouring live entries of a source pack are read
 * as one span (bounded gap, bounded span), every entry is CRC-checked as a single read would
 * check it, a corrupt entry or a failed or short read fails only the entries it holds, and
 * bodies come back byte-exact and independent of the span buffer.
 */
import { describe, expect, it } from 'vitest';
import { MemoryProvider } from '../../src/provider/memory/index.js';
import type { ByteRange, Provider } from '../../src/provider/provider.js';
import { getBytes } from '../../src/provider/provider.js';
import { PackStream, ENTRY_HEADER_SIZE } from '../../src/pack/stream-writer.js';
import { planSpans, readSpans, type PackLoc } from '../../src/store/gc-pack-read.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';

/** Writes a pack of `bodies` under `key`; returns each entry's location. */
async function writePack(provider: Provider, key: string, bodies: Uint8Array[]): Promise<{ locs: PackLoc[]; bytes: Uint8Array }> {
  const pack = new PackStream(bodies.map((b) => b.length));
  const chunks: Uint8Array[] = [pack.header()];
  for (const b of bodies) chunks.push(...pack.entry(b));
  chunks.push(...pack.finish());
  await provider.put(key, chunks, { contentLength: pack.size });
  const locs = bodies.map((b, index): PackLoc => ({ kind: 'pack', blob: key, offset: pack.rows[index]!.offset, length: b.length, tag: pack.tag, index }));
  return { locs, bytes: await getBytes(provider, key) };
}

/** A provider that counts ranged reads, fails reads of `failKeys`, and can cut a read short. */
function counting(inner: Provider, opts: { failKeys?: Set<string>; shortBy?: number } = {}) {
  const calls: { key: string; range?: ByteRange }[] = [];
  const p: Provider = Object.create(inner) as Provider;
  Object.defineProperty(p, 'read', {
    value: async (key: string, range?: ByteRange) => {
      calls.push({ key, ...(range ? { range } : {}) });
      if (opts.failKeys?.has(key)) throw new Error(`injected read failure of ${key}`);
      const bytes = await getBytes(inner, key, range);
      return opts.shortBy ? bytes.subarray(0, Math.max(0, bytes.length - opts.shortBy)) : bytes;
    },
  });
  return { provider: p, calls };
}

const loc = (blob: string, offset: number, length: number, index = 0): PackLoc => ({ kind: 'pack', blob, offset, length, tag: 1, index });

describe('planSpans', () => {
  it('joins neighbours of one blob, splits at a wide gap, a full span, and another blob', () => {
    const a1 = loc('a', 32, 100);
    const a2 = loc('a', 32 + ENTRY_HEADER_SIZE + 100, 50, 1); // adjacent
    const a3 = loc('a', 10_000, 10, 2); // gap of ~9.8 KB: joined at the default gap
    const a4 = loc('a', 100_000, 10, 3); // gap of ~90 KB: a new span
    const b1 = loc('b', 32, 7);
    const spans = planSpans([a4, b1, a3, a1, a2]);
    expect(spans.map((s) => [s.blob, s.start, s.end, s.entries.map((e) => e.index)])).toEqual([
      ['a', 32, 10_000 + ENTRY_HEADER_SIZE + 10 - 1, [0, 1, 2]],
      ['a', 100_000, 100_000 + ENTRY_HEADER_SIZE + 10 - 1, [3]],
      ['b', 32, 32 + ENTRY_HEADER_SIZE + 7 - 1, [0]],
    ]);
    // A span never grows past maxBytes; one entry larger than it is a span of its own.
    const big = [loc('c', 32, 600), loc('c', 32 + ENTRY_HEADER_SIZE + 600, 600, 1), loc('c', 2000, 5000, 2)];
    const capped = planSpans(big, 1024, 1000);
    expect(capped.map((s) => s.entries.map((e) => e.index))).toEqual([[0], [1], [2]]);
    for (const s of capped.slice(0, 2)) expect(s.end - s.start + 1).toBeLessThanOrEqual(1000);
    // maxGap 0 joins only touching entries.
    expect(planSpans([a1, a2, a3], 0).map((s) => s.entries.length)).toEqual([2, 1]);
    expect(planSpans([])).toEqual([]);
  });
});

describe('readSpans', () => {
  it('reads many entries of a pack with one request, byte-exact, bodies not views of the span', async () => {
    const mem = new MemoryProvider();
    const bodies = Array.from({ length: 40 }, (_, i) => randomBytes(1 + ((i * 37) % 700), 600 + i));
    const { locs } = await writePack(mem, 'packs/p1', bodies);
    const other = await writePack(mem, 'commits/c2', [randomBytes(512, 700)]);
    const { provider, calls } = counting(mem);
    // Every other entry is live: the dead ones in between are small gaps.
    const live = [...locs.filter((_, i) => i % 2 === 0), ...other.locs];
    const r = await readSpans(provider, planSpans(live), 3);
    expect(r.failed).toEqual([]);
    expect(r.requests).toBe(2);
    expect(calls.length).toBe(2);
    for (const l of live) {
      const want = l.blob === 'packs/p1' ? bodies[l.index]! : randomBytes(512, 700);
      expectBytes(r.bodies.get(l)!, want);
    }
    const one = r.bodies.get(live[0]!)!;
    expect(one.byteOffset).toBe(0);
    expect(one.buffer.byteLength).toBe(one.length);
  });

  it('fails only the corrupt entry of a span; the others are copied', async () => {
    const mem = new MemoryProvider();
    const bodies = [randomBytes(300, 1), randomBytes(300, 2), randomBytes(300, 3)];
    const { locs, bytes } = await writePack(mem, 'packs/x', bodies);
    const bad = bytes.slice();
    bad[locs[1]!.offset + ENTRY_HEADER_SIZE + 7]! ^= 0x40; // a flipped bit in body 1
    await mem.put('packs/x', [bad], { contentLength: bad.length });
    const r = await readSpans(mem, planSpans(locs));
    expect(r.requests).toBe(1);
    expect(r.failed.map((f) => f.loc.index)).toEqual([1]);
    expectBytes(r.bodies.get(locs[0]!)!, bodies[0]!);
    expectBytes(r.bodies.get(locs[2]!)!, bodies[2]!);
  });

  it('a location whose index, length or tag disagrees with the pack is refused', async () => {
    const mem = new MemoryProvider();
    const { locs } = await writePack(mem, 'packs/y', [randomBytes(64, 9), randomBytes(64, 10)]);
    const hostile: PackLoc[] = [
      { ...locs[0]!, index: 1 }, // the other entry's index
      { ...locs[1]!, length: 65 }, // longer than the entry
      { ...locs[1]!, tag: locs[1]!.tag ^ 1 }, // another pack's tag
    ];
    for (const h of hostile) {
      const r = await readSpans(mem, planSpans([h]));
      expect(r.bodies.size).toBe(0);
      expect(r.failed.length).toBe(1);
    }
    // An offset past the blob's end: the read fails, nothing is copied.
    const past = await readSpans(mem, planSpans([{ ...locs[0]!, offset: 1 << 20 }]));
    expect(past.bodies.size).toBe(0);
    expect(past.failed.length).toBe(1);
  });

  it('a failed or short read fails the entries of its span only', async () => {
    const mem = new MemoryProvider();
    const a = await writePack(mem, 'packs/a', [randomBytes(100, 20), randomBytes(100, 21)]);
    const b = await writePack(mem, 'packs/b', [randomBytes(100, 22)]);
    const failing = counting(mem, { failKeys: new Set(['packs/a']) });
    const r = await readSpans(failing.provider, planSpans([...a.locs, ...b.locs]));
    expect(r.failed.map((f) => f.loc.blob).sort()).toEqual(['packs/a', 'packs/a']);
    expect(String(r.failed[0]!.error)).toContain('injected read failure');
    expectBytes(r.bodies.get(b.locs[0]!)!, randomBytes(100, 22));
    // A provider that returns a span one byte short: the last entry is truncated, the first is fine.
    const short = counting(mem, { shortBy: 1 });
    const s = await readSpans(short.provider, planSpans(a.locs));
    expect(s.failed.map((f) => f.loc.index)).toEqual([1]);
    expectBytes(s.bodies.get(a.locs[0]!)!, randomBytes(100, 20));
  });

  it('keeps at most `parallel` reads in flight', async () => {
    const mem = new MemoryProvider();
    const locs: PackLoc[] = [];
    for (let i = 0; i < 12; i++) locs.push(...(await writePack(mem, `commits/${i}`, [randomBytes(50, 30 + i)])).locs);
    let inFlight = 0;
    let peak = 0;
    const p: Provider = Object.create(mem) as Provider;
    Object.defineProperty(p, 'read', {
      value: async (key: string, range?: ByteRange) => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setTimeout(r, 2));
        try {
          return await getBytes(mem, key, range);
        } finally {
          inFlight--;
        }
      },
    });
    const r = await readSpans(p, planSpans(locs), 3);
    expect(r.bodies.size).toBe(12);
    expect(peak).toBe(3);
  });
});
