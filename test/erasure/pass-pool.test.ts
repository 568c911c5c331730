/**
 * The stripe pass's CPU work gives the same answer on a worker thread as inline: rebuilt cells
 * byte-identical to the ones encoded, CRC folds equal, a flipped byte reported as a failed
 * source, and too few good sources reported rather than rebuilt. The worker path runs from the
 * built module (dist/, as the CLI does: `npm run build:js` first); the inline one from source.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createEncoder } from '../../src/codec/reed-solomon.js';
import { ArenaBudgetError, type ResidentStripe } from '../../src/codec/resident-stripe.js';
import { encodeHeader, encodeTrailer, frameCell, keyHash } from '../../src/provider/erasure/fragment.js';
import { framedLength, Geometry } from '../../src/provider/erasure/geometry.js';
import { processGroup, type GroupJob, type GroupResult } from '../../src/provider/erasure/stripe-group.js';
import { randomBytes } from '../support/random.js';

type Pool = {
  runGroup(job: GroupJob, codec: () => ReturnType<typeof createEncoder>): Promise<GroupResult>;
  poolSize(): number;
};
const built = (): Promise<Pool> => import(pathToFileURL(resolve('dist/src/provider/erasure/pass-pool.js')).href) as Promise<Pool>;

const K = 4;
const M = 2;
const CELL = 64 * 1024;
const GEN = 123456789;
const KEY = 'chunks/pool-test';

/** Whole framed fragments (header, cells, trailer) of a blob of `length` bytes. */
function fragments(body: Uint8Array): { frags: Uint8Array[]; g: Geometry } {
  const g = new Geometry(K, CELL, body.length);
  const codec = createEncoder(K, M);
  const frags = Array.from({ length: K + M }, () => new Uint8Array(g.fragmentSize));
  const folds = new Array<number>(K + M).fill(0);
  frags.forEach((f, i) => f.set(encodeHeader({ layout: 'striped', k: K, m: M, index: i, cellSize: CELL, length: body.length, generation: GEN, keyHash: keyHash(KEY) })));
  for (let s = 0; s < g.stripes; s++) {
    const cl = g.cellLength(s);
    const data = new Uint8Array(K * cl);
    data.set(body.subarray(g.stripeStart(s), g.stripeStart(s) + g.stripeData(s)));
    const shards = [...Array.from({ length: K }, (_, i) => data.subarray(i * cl, (i + 1) * cl)), ...Array.from({ length: M }, () => new Uint8Array(cl))];
    codec.encode(shards);
    shards.forEach((sh, i) => {
      const at = g.sectionOffset(s);
      folds[i] = frameCell(sh, frags[i]!.subarray(at, at + framedLength(cl)), GEN, i, g.firstBlock(s), folds[i]!);
    });
  }
  frags.forEach((f, i) => f.set(encodeTrailer({ length: body.length, blockCount: g.blockCount, fold: folds[i]! }), g.trailerOffset));
  return { frags, g };
}

/** The whole blob as one group: every source but `skip`, rebuilding `targets`. */
function job(frags: Uint8Array[], g: Geometry, length: number, sources: number[], targets: number[]): GroupJob {
  return {
    key: KEY, k: K, m: M, cellSize: CELL, length, generation: GEN, keyHash: keyHash(KEY),
    s0: 0, s1: g.stripes, first: true, last: true,
    sources: sources.map((i) => ({ index: i, bytes: frags[i]!.slice() })),
    targets, folds: targets.map(() => 0),
  };
}

describe('stripe pass pool', () => {
  const body = randomBytes(3 * K * CELL + 12_345, 4);
  const { frags, g } = fragments(body);
  const sections = (i: number) => frags[i]!.subarray(g.sectionOffset(0), g.trailerOffset);

  it('inline: rebuilds two lost fragments byte-exact and flags a flipped source', () => {
    const codec = createEncoder(K, M);
    const r = processGroup(job(frags, g, body.length, [0, 2, 3, 5], [1, 4]), codec);
    expect(r.failed).toEqual([]);
    expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(sections(1)))).toBe(0);
    expect(Buffer.compare(Buffer.from(r.outputs[1]!), Buffer.from(sections(4)))).toBe(0);
    const bad = job(frags, g, body.length, [0, 2, 3, 5], [1]);
    bad.sources[1]!.bytes[g.sectionOffset(1) + 10]! ^= 1;
    const r2 = processGroup(bad, codec);
    expect(r2.failed.map((f) => f.index)).toEqual([2]);
    expect(r2.good).toBe(3);
    expect(r2.outputs).toEqual([]);
  });

  it('inline, with the resident budget spent: the heap path gives the same bytes and folds, and the resident one releases its stripe', () => {
    const codec = createEncoder(K, M);
    for (const [sources, targets] of [[[0, 2, 3, 5], [1, 4]], [[1, 2, 3, 4], [0, 5]], [[0, 1, 2, 3], [4]], [[2, 3, 4, 5], [0, 1]]] as const) {
      const resident = processGroup(job(frags, g, body.length, [...sources], [...targets]), codec);
      const held: ResidentStripe[] = [];
      try {
        for (;;) held.push(codec.allocStripe(g.stripes * CELL));
      } catch (err) {
        expect(err).toBeInstanceOf(ArenaBudgetError);
      }
      expect(held.length).toBeGreaterThan(0); // the resident path had a stripe: it was released
      const heap = processGroup(job(frags, g, body.length, [...sources], [...targets]), codec);
      for (const h of held) h.release();
      expect(heap.failed).toEqual([]);
      expect(heap.folds).toEqual(resident.folds);
      targets.forEach((t, j) => {
        expect(Buffer.compare(Buffer.from(resident.outputs[j]!), Buffer.from(sections(t)))).toBe(0);
        expect(Buffer.compare(Buffer.from(heap.outputs[j]!), Buffer.from(sections(t)))).toBe(0);
      });
    }
    // A source that fails its CRC halfway (its cells partly unframed into the stripe) while k
    // others pass: rebuilt from those k, byte-exact, the failed one reported and not used.
    const bad = job(frags, g, body.length, [0, 1, 2, 3, 5], [4]);
    bad.sources[1]!.bytes[g.sectionOffset(2) + 100]! ^= 0x40; // fragment 1, third stripe
    const r = processGroup(bad, codec);
    expect(r.failed.map((f) => f.index)).toEqual([1]);
    expect(r.good).toBe(4);
    expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(sections(4)))).toBe(0);
  });

  it('on a worker thread: the same bytes and folds as inline', async () => {
    const pool = await built();
    const codec = createEncoder(K, M);
    const inline = processGroup(job(frags, g, body.length, [1, 2, 3, 4, 5], [0]), codec);
    const viaWorker = await pool.runGroup(job(frags, g, body.length, [1, 2, 3, 4, 5], [0]), () => codec);
    expect(pool.poolSize()).toBeGreaterThan(0);
    expect(viaWorker.failed).toEqual([]);
    expect(viaWorker.folds).toEqual(inline.folds);
    expect(Buffer.compare(Buffer.from(viaWorker.outputs[0]!), Buffer.from(sections(0)))).toBe(0);
    const bad = job(frags, g, body.length, [1, 2, 3, 4, 5], [0]);
    bad.sources[0]!.bytes[5]! ^= 0xff; // the header of fragment 1
    const r = await pool.runGroup(bad, () => codec);
    expect(r.failed.map((f) => f.index)).toEqual([1]);
    expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(sections(0)))).toBe(0);
  });
});
