/**
 * Object bodies read over the erasure provider check each byte once. A large GET of a carrier
 * (store/chunk-scatter-read.ts) reads each span first with ReadOptions.endToEnd (the provider
 * skips its fragment block CRCs, the store's entry CRCs check the same bytes), and a span that
 * fails the store's checks is read once more checked by the provider, which finds the damaged
 * fragment, rebuilds around it and queues the chunk blob for repair. The body comes back
 * byte-exact, with the CRCs on this thread or on a hash worker; with more than m fragments
 * damaged the read fails closed. A packed body (store/body-reader.ts) is read the same way
 * from its pack's copies, or from a log segment's (the commit log's small bodies).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { getBytes, ProviderError, type ByteRange, type Provider, type ReadOptions } from '../../src/provider/provider.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { BLOCK_BYTES, CRC_BYTES, HEADER_BYTES } from '../../src/provider/erasure/geometry.js';
import { LOG_BLOCK_BYTES, RECORD_HEADER_BYTES } from '../../src/provider/erasure/log-record.js';
import { concatPack, encodePack } from '../../src/pack/writer.js';
import { ENTRY_HEADER_SIZE } from '../../src/pack/stream-writer.js';
import { readBody } from '../../src/store/body-reader.js';
import type { ErasureProvider } from '../../src/provider/erasure/types.js';
import { HashPool } from '../../src/checksum/hash-pool.js';
import { ExactReader, writeCarrier } from '../../src/store/carrier.js';
import { scatterReadChunk, SPAN_BODY_BYTES, type ScatterProvider } from '../../src/store/chunk-scatter-read.js';
import type { ChunkRef } from '../../src/store/records.js';
import { cleanupRigs, KiB, makeRig, type Rig } from '../provider/erasure-helpers.js';
import { collect, stream } from '../store/helpers.js';
import { randomBytes } from '../support/random.js';

const k = 4;
const m = 2;
const cellSize = 64 * KiB;
/** Three spans and a short fourth: one chunk blob, striped. */
const size = 3 * SPAN_BODY_BYTES + 12_345;
const body = randomBytes(size, 41);

const open: ErasureProvider[] = [];
const pools: HashPool[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
  for (const p of pools.splice(0)) await p.close();
  await cleanupRigs();
});
afterAll(cleanupRigs);

async function rig(): Promise<{ r: Rig; chunk: ChunkRef }> {
  const r = await makeRig({ k, m, cellSize, kind: 'fs' });
  open.push(r.provider);
  const chunks = await writeCarrier(r.provider, new ExactReader(stream(body, 100_003)), size, () => undefined);
  expect(chunks.length).toBe(1);
  return { r, chunk: chunks[0]! };
}

/** Flips byte `at` of the data of fragment `index` of `blob` (inside its first block). */
async function corrupt(r: Rig, blob: string, index: number, at = 100): Promise<void> {
  for (const d of r.domains) {
    for (const item of (await d.provider.list({})).items) {
      const name = parseChildKey(item.key);
      if (name?.key !== blob || name.index !== index) continue;
      const frag = Buffer.from(await getBytes(d.provider, item.key));
      frag[HEADER_BYTES + at] ^= 0x10;
      await d.provider.put(item.key, frag);
      return;
    }
  }
  throw new Error(`fragment ${index} of ${blob} not found`);
}

/** The provider, recording whether each readv (and read) asked for endToEnd. */
function recording(p: ErasureProvider, calls: boolean[]): ScatterProvider {
  return new Proxy(p, {
    get(target, prop, receiver) {
      if (prop === 'readv')
        return (key: string, start: number, targets: readonly Uint8Array[], options?: ReadOptions) => {
          calls.push(options?.endToEnd === true);
          return target.readv!(key, start, targets, options);
        };
      if (prop === 'read')
        return (key: string, range?: { start: number; end: number }, into?: Uint8Array, options?: ReadOptions) => {
          calls.push(options?.endToEnd === true);
          return target.read!(key, range, into, options);
        };
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as ScatterProvider;
}

describe('scatter read of a carrier over erasure', () => {
  for (const worker of [false, true]) {
    const where = worker ? 'CRCs on a hash worker' : 'CRCs on this thread';
    it(`reads every span endToEnd when healthy (${where})`, async () => {
      const { r, chunk } = await rig();
      const calls: boolean[] = [];
      const pool = worker ? new HashPool({ threads: 1 }) : undefined;
      if (pool) pools.push(pool);
      const got = await collect(scatterReadChunk(recording(r.provider, calls), chunk, 0, size - 1, pool));
      expect(Buffer.from(got).equals(Buffer.from(body))).toBe(true);
      expect(calls).toEqual([true, true, true, true]);
      expect(r.provider.takeRepairQueue()).toEqual([]);
    });

    it(`reads a span that fails the store's check again, checked: byte-exact, and the blob is queued for repair (${where})`, async () => {
      const { r, chunk } = await rig();
      await corrupt(r, chunk.blob, 1); // data cell 1 of stripe 0: the first span
      const calls: boolean[] = [];
      const pool = worker ? new HashPool({ threads: 1 }) : undefined;
      if (pool) pools.push(pool);
      const got = await collect(scatterReadChunk(recording(r.provider, calls), chunk, 0, size - 1, pool));
      expect(Buffer.from(got).equals(Buffer.from(body))).toBe(true);
      // Four spans endToEnd, and the first once more, checked.
      expect(calls.filter((c) => c).length).toBe(4);
      expect(calls.filter((c) => !c).length).toBe(1);
      expect(r.provider.takeRepairQueue()).toEqual([chunk.blob]);
    });
  }

  it('fails closed, naming the blob, when more than m fragments of a stripe are damaged', async () => {
    const { r, chunk } = await rig();
    for (const i of [0, 1, 4]) await corrupt(r, chunk.blob, i);
    const err = await collect(scatterReadChunk(r.provider as ScatterProvider, chunk, 0, size - 1)).catch((e: unknown) => e);
    // The checked read finds too few good fragments: 'Io' naming the blob (the server's 500),
    // as a read of such a blob fails without the endToEnd first try.
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Io');
    expect((err as ProviderError).message).toContain(chunk.blob);
  });

  // A pack written whole (below the stripe threshold: m + 1 copies of the blob) or appended to
  // a log segment (m + 1 copies of its records, as the commit log holds small bodies).
  it.each(['copies', 'log'] as const)('reads a packed body endToEnd, and from a damaged copy once more checked: byte-exact, the pack queued for repair (%s)', async (layout) => {
    // Which domain serves a copy's reads, so the copy the first read takes can be damaged.
    const served: number[] = [];
    const spy = (p: Provider, i: number): Provider =>
      new Proxy(p, {
        get(target, prop, receiver) {
          if (prop === 'read')
            return (key: string, range?: ByteRange, into?: Uint8Array) => {
              if (parseChildKey(key)?.key === 'packs/p1') served.push(i);
              return target.read!(key, range, into);
            };
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    const r = await makeRig({ k, m, cellSize, kind: 'fs', wrap: spy });
    open.push(r.provider);
    const bodies = [randomBytes(4096, 1), randomBytes(20_000, 2), randomBytes(3000, 3)];
    const pack = encodePack(bodies);
    if (layout === 'copies') await r.provider.put('packs/p1', concatPack(pack));
    else {
      const log = await r.provider.openLog!('packs/p1', 64 * KiB);
      await log.append(0, [concatPack(pack)]);
      await log.close();
    }
    const at = (i: number) => ({ kind: 'pack' as const, blob: 'packs/p1', offset: pack.entries[i]!.offset, length: bodies[i]!.length, tag: pack.tag, index: i });
    const calls: boolean[] = [];
    const p = recording(r.provider, calls);
    for (let i = 0; i < bodies.length; i++) expect(Buffer.from(await collect(readBody(p, at(i), bodies[i]!.length))).equals(Buffer.from(bodies[i]!))).toBe(true);
    expect(calls).toEqual([true, true, true]);
    // Damage entry 1's body on the copy those reads took (the description is cached: the next
    // read takes it first again).
    const first = served[0]!;
    expect(served.every((d) => d === first)).toBe(true);
    const logical = pack.entries[1]!.offset + ENTRY_HEADER_SIZE + 10;
    const d = r.domains[first]!.provider;
    const child = (await d.list({})).items.find((item) => parseChildKey(item.key)?.key === 'packs/p1')!.key;
    const copy = Buffer.from(await getBytes(d, child));
    // The body byte's place in the copy: after the fragment header and a CRC per block, or after
    // the log record's header and a CRC per 4 KiB block (one record, at the copy's start).
    if (layout === 'copies') copy[HEADER_BYTES + logical + CRC_BYTES * Math.floor(logical / BLOCK_BYTES)] ^= 0x08;
    else copy[RECORD_HEADER_BYTES + logical + CRC_BYTES * Math.floor(logical / LOG_BLOCK_BYTES)] ^= 0x08;
    await d.put(child, copy);
    calls.length = 0;
    served.length = 0;
    expect(Buffer.from(await collect(readBody(p, at(1), bodies[1]!.length))).equals(Buffer.from(bodies[1]!))).toBe(true);
    expect(calls).toEqual([true, false]); // endToEnd from the damaged copy, then checked
    expect(served[0]).toBe(first);
    expect(served.some((x) => x !== first)).toBe(true); // the checked read went on to another copy
    expect(r.provider.takeRepairQueue()).toEqual(['packs/p1']);
  });
});
