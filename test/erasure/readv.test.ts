/**
 * The erasure provider's scatter read (Provider.readv), which a large GET of a carrier uses
 * (store/chunk-scatter-read.ts): the bytes land in the caller's targets exactly as a
 * contiguous read would give them, for targets of every shape (24-byte entry headers next to
 * large segments, odd sizes, empty ones) and ranges crossing block, cell, stripe and
 * fragment-end boundaries; healthy, with up to m fragments missing (found missing by a cold
 * lookup, or gone under a warm description) or corrupted on disk (CRC mismatch: detected,
 * rebuilt, queued for repair); with m + 1 lost it fails closed naming the blob. Before this
 * provider had readv, every case failed (readv undefined).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { getBytes, ProviderError, type Provider } from '../../src/provider/provider.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import { BLOCK_BYTES, framedLength, HEADER_BYTES } from '../../src/provider/erasure/geometry.js';
import type { ErasureProvider } from '../../src/provider/erasure/types.js';
import { cleanupRigs, KiB, makeRig, type Rig } from '../provider/erasure-helpers.js';
import { bytes, prng } from '../provider/helpers.js';

const k = 4;
const m = 2;
const cellSize = 64 * KiB;
/** Three full stripes and a short one whose cells end inside a block. */
const size = 3 * k * cellSize + 5 * BLOCK_BYTES + 123;
const data = bytes(size, 11);

const open: ErasureProvider[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
  await cleanupRigs();
});
afterAll(cleanupRigs);

async function rig(): Promise<Rig> {
  const r = await makeRig({ k, m, cellSize, kind: 'fs' });
  open.push(r.provider);
  await r.provider.put('blob', data);
  return r;
}

/** Targets shaped like a carrier span's (24-byte header, then a segment), cut from `total`
 * bytes with seeded sizes; some empty. */
function targetsFor(total: number, seed: number): Uint8Array[] {
  const rand = prng(seed);
  const out: Uint8Array[] = [];
  let left = total;
  while (left > 0) {
    const shape = rand();
    const n = Math.min(left, shape < 0.3 ? 24 : shape < 0.4 ? 0 : 1 + Math.floor(rand() * 2 * cellSize));
    out.push(new Uint8Array(n).fill(0xee));
    left -= n;
  }
  return out;
}

async function expectExact(p: ErasureProvider, start: number, total: number, seed: number): Promise<void> {
  const targets = targetsFor(total, seed);
  await p.readv!('blob', start, targets);
  expect(Buffer.concat(targets).equals(data.subarray(start, start + total)), `readv ${start}+${total}`).toBe(true);
}

/** Ranges at and around every block, cell, stripe and blob edge, and seeded random ones. */
function ranges(): [number, number][] {
  const edges = [0, 1, BLOCK_BYTES - 1, BLOCK_BYTES, cellSize - 1, cellSize, 2 * cellSize + 3, k * cellSize - 1, k * cellSize, 3 * k * cellSize, size - 200, size - 1];
  const out: [number, number][] = [];
  for (const a of edges) for (const len of [1, 100, BLOCK_BYTES + 1, cellSize + 1, k * cellSize]) out.push([a, Math.min(size - a, len)]);
  const rand = prng(3);
  for (let i = 0; i < 20; i++) {
    const a = Math.floor(rand() * size);
    out.push([a, Math.max(1, Math.min(size - a, Math.floor(rand() * 3 * k * cellSize)))]);
  }
  out.push([0, size]);
  return out;
}

/** The child keys (and domains) of 'blob's fragments of `indices`. */
async function fragments(r: Rig, indices: number[]): Promise<{ domain: number; key: string; index: number }[]> {
  const out: { domain: number; key: string; index: number }[] = [];
  for (let d = 0; d < r.domains.length; d++) {
    for (const item of (await r.domains[d]!.provider.list({})).items) {
      const name = parseChildKey(item.key);
      if (name?.key === 'blob' && indices.includes(name.index)) out.push({ domain: d, key: item.key, index: name.index });
    }
  }
  expect(out.length).toBe(indices.length);
  return out;
}

async function drop(r: Rig, indices: number[]): Promise<void> {
  for (const f of await fragments(r, indices)) await r.domains[f.domain]!.provider.delete(f.key);
}

/** Flips one data byte of every stripe's cell in the fragments of `indices` (their CRCs now
 * fail). */
async function corrupt(r: Rig, indices: number[]): Promise<void> {
  for (const f of await fragments(r, indices)) {
    const p = r.domains[f.domain]!.provider;
    const frag = Buffer.from(await getBytes(p, f.key));
    for (let s = 0; s < 4; s++) frag[HEADER_BYTES + s * framedLength(cellSize) + 7 + f.index] ^= 0x40;
    await p.put(f.key, frag);
  }
}

async function cold(r: Rig): Promise<ErasureProvider> {
  const p = await createErasureProvider({
    config: {
      k, m, cellSize, stripeThreshold: 64 * KiB, degradedWrites: false, domainTimeoutMs: 5_000, policy: {},
      domains: r.domains.map((d, i) => ({ id: d.id, url: r.dirs[i]!, labels: {} })),
    },
    domains: r.domains,
  });
  open.push(p);
  return p;
}

describe('erasure readv', () => {
  it('fills targets of every shape byte-exact on a healthy blob', async () => {
    const r = await rig();
    let seed = 1;
    for (const [a, n] of ranges()) await expectExact(r.provider, a, n, seed++);
    expect(r.provider.stats.degradedReads).toBe(0);
  });

  it('rebuilds up to m missing data fragments (cold lookup: known missing) byte-exact', async () => {
    const r = await rig();
    await drop(r, [0, 2]);
    const p = await cold(r);
    let seed = 100;
    for (const [a, n] of ranges()) await expectExact(p, a, n, seed++);
    expect(p.stats.degradedReads).toBeGreaterThan(0);
    expect(p.takeRepairQueue()).toEqual(['blob']);
  });

  it('rebuilds fragments that vanish under a warm description (NotFound on read)', async () => {
    const r = await rig();
    await expectExact(r.provider, 0, 100, 7); // the description is cached now
    await drop(r, [1, 3]);
    let seed = 200;
    for (const [a, n] of ranges()) await expectExact(r.provider, a, n, seed++);
    expect(r.provider.takeRepairQueue()).toEqual(['blob']);
  });

  it('detects corrupted data blocks (CRC mismatch), rebuilds them and never returns the bad bytes', async () => {
    const r = await rig();
    await corrupt(r, [0, 3]);
    let seed = 300;
    for (const [a, n] of ranges()) await expectExact(r.provider, a, n, seed++);
    expect(r.provider.takeRepairQueue()).toEqual(['blob']);
  });

  it('rebuilds with one fragment missing and one corrupted, parity included', async () => {
    const r = await rig();
    await drop(r, [1]);
    await corrupt(r, [4]);
    const p = await cold(r);
    let seed = 400;
    for (const [a, n] of ranges()) await expectExact(p, a, n, seed++);
  });

  it('fails closed naming the blob with m + 1 fragments lost, missing or corrupt', async () => {
    const r = await rig();
    await drop(r, [0, 1]);
    await corrupt(r, [2]);
    const p = await cold(r);
    for (const [a, n] of [[0, 100], [0, size], [k * cellSize - 10, 2 * cellSize]] as const) {
      const targets = targetsFor(n, 9);
      const err = await p.readv!('blob', a, targets).catch((e: unknown) => e);
      expect(err, `readv ${a}+${n}`).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).code).toBe('Io');
      expect((err as ProviderError).message).toContain('blob');
    }
  });

  it('refuses a range past the blob (InvalidRange) and a missing key (NotFound)', async () => {
    const r = await rig();
    const err = await r.provider.readv!('blob', size - 10, [new Uint8Array(11)]).catch((e: unknown) => e);
    expect((err as ProviderError).code).toBe('InvalidRange');
    const missing = await r.provider.readv!('nope', 0, [new Uint8Array(1)]).catch((e: unknown) => e);
    expect((missing as ProviderError).code).toBe('NotFound');
    await r.provider.readv!('blob', size, []); // empty read at the end: nothing to do
  });

  it('rebuilds each stripe of an in-order degraded read once (read-ahead included) and reads no stripe ahead for a read elsewhere', async () => {
    // A read going through a degraded blob in order has the next stripe rebuilt while the
    // current one is copied out; that must not read any stripe twice, nor read ahead for a
    // read of one stripe in the middle of the blob.
    let reads = 0;
    const counting = (p: Provider): Provider => ({
      kind: p.kind,
      capabilities: p.capabilities,
      put: (key, body, o) => p.put(key, body, o),
      get: (key, o) => p.get(key, o),
      head: (key) => p.head(key),
      list: (o) => p.list(o),
      delete: (key) => p.delete(key),
      close: () => p.close(),
      read: (key, range, into) => {
        reads++;
        return p.read!(key, range, into);
      },
    });
    const r = await makeRig({ k, m, cellSize, kind: 'fs', wrap: counting });
    open.push(r.provider);
    await r.provider.put('blob', data);
    await drop(r, [0, 2]);
    const stripes = Math.ceil(size / (k * cellSize));
    const p = await cold(r);
    reads = 0;
    // One stripe in the middle, in two spans: k reads (its k sources), nothing ahead.
    await expectExact(p, 2 * k * cellSize, cellSize, 500);
    await expectExact(p, 2 * k * cellSize + cellSize, 2 * cellSize, 501);
    expect(reads).toBe(k);
    // The whole blob in order, in spans of a cell and a half (as the store reads a carrier).
    const p2 = await cold(r);
    reads = 0;
    const span = cellSize + cellSize / 2;
    for (let at = 0, seed = 600; at < size; at += span) await expectExact(p2, at, Math.min(span, size - at), seed++);
    expect(reads).toBe(k * stripes);
  });

  it('with endToEnd leaves the block checks to the caller: a damaged block is read as stored, and the checked read after it rebuilds it', async () => {
    // The caller (the store's scatter read) checks every byte against its own CRCs and reads
    // again without the option when one fails: that second read finds the damage.
    const r = await rig();
    await corrupt(r, [1]);
    const targets = targetsFor(k * cellSize, 21);
    await r.provider.readv!('blob', 0, targets, { endToEnd: true });
    const got = Buffer.concat(targets);
    const want = data.subarray(0, k * cellSize);
    const differ = [...got.keys()].filter((i) => got[i] !== want[i]);
    expect(differ).toEqual([cellSize + 7 + 1]); // the flipped byte of cell 1, stripe 0, and only it
    expect(r.provider.takeRepairQueue()).toEqual([]); // nothing was checked, so nothing found
    await expectExact(r.provider, 0, k * cellSize, 22);
    expect(r.provider.takeRepairQueue()).toEqual(['blob']);
  });

  it('never hands a checked read a stripe rebuilt for an endToEnd read from a damaged source', async () => {
    // Data fragment 0 is missing, so wide reads rebuild whole stripes and keep them
    // (rebuilt-stripes.ts); parity fragment 4, one of the rebuild's sources, is damaged.
    const r = await rig();
    await drop(r, [0]);
    await corrupt(r, [4]);
    const p = await cold(r);
    const wide = 2 * cellSize;
    const unchecked = targetsFor(wide, 31);
    await p.readv!('blob', 0, unchecked, { endToEnd: true });
    expect(Buffer.concat(unchecked).equals(data.subarray(0, wide))).toBe(false); // rebuilt from the bad parity
    // The same range, checked: rebuilt again from checked sources (not taken from the kept stripe).
    await expectExact(p, 0, wide, 32);
    // And an endToEnd read after it gets the checked stripe, which superseded the other.
    const after = targetsFor(wide, 33);
    await p.readv!('blob', 0, after, { endToEnd: true });
    expect(Buffer.concat(after).equals(data.subarray(0, wide))).toBe(true);
    // The whole blob, checked, in spans of a cell and a half: exact everywhere.
    const span = cellSize + cellSize / 2;
    for (let at = 0, seed = 700; at < size; at += span) await expectExact(p, at, Math.min(span, size - at), seed++);
  });
});
