/**
 * The erasure provider's codec work on resident stripes (framed-stripe.ts for writes of known
 * length, read.ts rebuilds through scratch.ts takeResidentStripe): the same bytes come back
 * whether the resident pool has room or is exhausted (heap buffers and the copying codec
 * then), degraded reads included, and no resident region is left held afterwards.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import type { Domain, ErasureConfig } from '../../src/provider/erasure/types.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { ArenaBudgetError, type ArenaRegion, gf256ArenaPool } from '../../src/wasm/gf256-arena.js';
import { defaultFlavor } from '../../src/wasm/loader.js';
import { bytes, chunked } from './helpers.js';

const KiB = 1024;
const MiB = 1024 * 1024;
const k = 4;
const m = 2;
const cellSize = 64 * KiB;
const size = 2 * k * cellSize + 3 * 16 * KiB + 77; // two full stripes and a short one
const data = bytes(size, 11);
const domains: Domain[] = [];

afterAll(async () => {
  for (const d of domains) await d.provider.close();
});

async function rig(): Promise<{ config: ErasureConfig; domains: Domain[] }> {
  const ds: Domain[] = [];
  for (let i = 0; i < k + m; i++) ds.push({ id: `d${i + 1}`, labels: {}, provider: await createMemoryProvider() });
  domains.push(...ds);
  const config: ErasureConfig = {
    k, m, domains: ds.map((d) => ({ id: d.id, url: 'memory:', labels: {} })), policy: {},
    cellSize, stripeThreshold: 64 * KiB, degradedWrites: false, domainTimeoutMs: 5_000,
  };
  return { config, domains: ds };
}

/** Writes the blob (known length: framed stripes), checks a healthy read, drops data
 * fragments 0 and 3 and checks a cold degraded read and a degraded range (both rebuilt from
 * the two parity fragments). Returns the fragments' bytes. */
async function roundTrip(): Promise<Map<string, Buffer>> {
  const r = await rig();
  const p = await createErasureProvider(r);
  await p.put('blob', chunked(data, 40_000), { contentLength: size });
  expect(Buffer.from(await p.read!('blob')).equals(data)).toBe(true);
  const fragments = new Map<string, Buffer>();
  for (const d of r.domains) {
    for (const item of (await d.provider.list({})).items) {
      const name = parseChildKey(item.key);
      if (name?.key !== 'blob') continue;
      const res = await d.provider.get(item.key);
      const parts: Uint8Array[] = [];
      for await (const c of res.body as AsyncIterable<Uint8Array>) parts.push(c);
      fragments.set(String(name.index), Buffer.concat(parts));
      if (name.index === 0 || name.index === 3) await d.provider.delete(item.key);
    }
  }
  const cold = await createErasureProvider(r);
  expect(Buffer.from(await cold.read!('blob')).equals(data)).toBe(true);
  const a = cellSize - 100;
  const z = k * cellSize + 2 * cellSize + 5;
  expect(Buffer.from(await cold.read!('blob', { start: a, end: z })).equals(data.subarray(a, z + 1))).toBe(true);
  expect(cold.stats.degradedReads).toBeGreaterThan(0);
  await p.close();
  await cold.close();
  return fragments;
}

describe('erasure provider on resident stripes', () => {
  it('writes and rebuilds the same bytes with the resident pool available or exhausted', async () => {
    const pool = gf256ArenaPool(defaultFlavor('gf256'));
    const live = pool.stats.liveRegions;
    const resident = await roundTrip();
    expect(pool.stats.liveRegions).toBe(live);
    // Exhaust the pool down to its last 64 bytes: whole arenas, then the room left in each
    // (the regions are never touched, so this costs address space, not memory).
    const held: ArenaRegion[] = [];
    for (let want = 32 * MiB; want >= 64; ) {
      try {
        held.push(pool.alloc(want));
      } catch (err) {
        expect(err).toBeInstanceOf(ArenaBudgetError);
        want /= 2;
      }
      if (held.length > 1000) throw new Error('the resident pool does not run out');
    }
    try {
      const heap = await roundTrip();
      expect([...heap.keys()].sort()).toEqual([...resident.keys()].sort());
      // CRCs are bound to each write's generation, so the bytes differ; the sizes must not.
      // (Parity is checked by the degraded reads, which rebuild two data fragments from it.)
      for (const [i, b] of heap) expect(b.length, `fragment ${i}`).toBe(resident.get(i)!.length);
    } finally {
      for (const r of held) r.release();
    }
    expect(pool.stats.liveRegions).toBe(live);
  });
});
