/**
 * The resident API (allocStripe, encodeResident, reconstructResident) and the arena pool under
 * it: results equal the copying API and the scalar twin, ranges touch nothing outside them,
 * regions are reused, views survive other allocations (memory never grows under a live
 * region), and misuse (wrong sizes, released or twice-released stripes, overlaps, budgets)
 * throws instead of computing anything.
 */
import { describe, expect, it } from 'vitest';
import { createEncoder } from '../../src/codec/reed-solomon.js';
import { ArenaBudgetError, ArenaMemoryError, ArenaRegionError, ResidentStripe } from '../../src/codec/resident-stripe.js';
import { Gf256ArenaPool } from '../../src/wasm/gf256-arena.js';
import { cauchyParity } from '../../src/codec/matrix.js';
import { gfMul } from '../../src/codec/gf.js';
import { availableFlavors } from '../../src/wasm/loader.js';

function fill(view: Uint8Array, seed: number): void {
  let x = seed >>> 0 || 1;
  for (let i = 0; i < view.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    view[i] = x;
  }
}

const eq = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

describe.each(availableFlavors('gf256'))('resident stripes (%s)', (flavor) => {
  it('encode equals the copying API and the scalar twin, for sizes off the 16-byte grid', () => {
    for (const [k, m] of [[10, 4], [4, 2], [3, 1], [6, 5]] as const) {
      const rs = createEncoder(k, m, { flavor });
      const twin = createEncoder(k, m, { flavor: 'scalar' });
      for (const size of [1, 15, 16, 17, 63, 4096 + 5, 70_001]) {
        const st = rs.allocStripe(size);
        try {
          expect(st.shardCount).toBe(k + m);
          expect(st.stride % 64).toBe(0);
          for (let i = 0; i < k; i++) fill(st.shard(i), i * 977 + size);
          const copy: (Uint8Array | null)[] = [...st.shards().slice(0, k).map((s) => s.slice()), ...Array(m).fill(null)];
          twin.encode(copy);
          rs.encodeResident(st);
          for (let i = k; i < k + m; i++) expect(eq(st.shard(i), copy[i]!), `${k}+${m} size ${size} parity ${i}`).toBe(true);
          expect(twin.verify(st.shards())).toBe(true);
        } finally {
          st.release();
        }
      }
    }
  });

  it('parity equals the field arithmetic of the Cauchy matrix, byte by byte (tail bytes included)', () => {
    const [k, m, size] = [5, 3, 16 * 3 + 13];
    const rs = createEncoder(k, m, { flavor });
    const parity = cauchyParity(k, m);
    const st = rs.allocStripe(size);
    try {
      for (let i = 0; i < k; i++) fill(st.shard(i), 100 + i);
      rs.encodeResident(st);
      for (let r = 0; r < m; r++) {
        const want = new Uint8Array(size);
        for (let j = 0; j < k; j++) {
          const c = parity[r * k + j]!;
          st.shard(j).forEach((b, x) => (want[x]! ^= gfMul(c, b)));
        }
        expect(eq(st.shard(k + r), want), `parity ${r}`).toBe(true);
      }
    } finally {
      st.release();
    }
  });

  it('reconstructs every erasure pattern of up to m shards in place, present shards untouched', () => {
    const k = 5;
    const m = 3;
    const rs = createEncoder(k, m, { flavor });
    const size = 1000 + 3;
    const st = rs.allocStripe(size);
    try {
      for (let i = 0; i < k; i++) fill(st.shard(i), i + 1);
      rs.encodeResident(st);
      const orig = st.shards().map((s) => s.slice());
      for (let mask = 0; mask < 1 << (k + m); mask++) {
        const lost = [...Array(k + m).keys()].filter((i) => mask & (1 << i));
        if (lost.length === 0 || lost.length > m) continue;
        for (const i of lost) st.shard(i).fill(0xa5);
        const present = [...Array(k + m).keys()].map((i) => !lost.includes(i));
        expect(rs.reconstructResident(st, present)).toEqual(lost);
        for (let i = 0; i < k + m; i++) expect(eq(st.shard(i), orig[i]!), `mask ${mask} shard ${i}`).toBe(true);
      }
      // dataOnly leaves lost parity as it was.
      st.shard(1).fill(0);
      st.shard(k).fill(7);
      const present = [...Array(k + m).keys()].map((i) => i !== 1 && i !== k);
      expect(rs.reconstructResident(st, present, { dataOnly: true })).toEqual([1]);
      expect(eq(st.shard(1), orig[1]!)).toBe(true);
      expect(st.shard(k).every((b) => b === 7)).toBe(true);
      // `only` rebuilds the shards it lists, parity included, and leaves other absent ones as
      // they were; it refuses a present or out-of-range shard, writing nothing.
      for (const i of [0, k, k + m - 1]) st.shard(i).fill(9);
      const some = [...Array(k + m).keys()].map((i) => ![0, k, k + m - 1].includes(i));
      expect(rs.reconstructResident(st, some, { only: [k + m - 1, 0] })).toEqual([0, k + m - 1]);
      expect(eq(st.shard(0), orig[0]!)).toBe(true);
      expect(eq(st.shard(k + m - 1), orig[k + m - 1]!)).toBe(true);
      expect(st.shard(k).every((b) => b === 9)).toBe(true);
      st.shard(0).fill(9);
      for (const bad of [[2], [k + m], [-1], [0.5]]) {
        expect(() => rs.reconstructResident(st, some, { only: bad })).toThrow(/not an absent shard/);
      }
      expect(st.shard(0).every((b) => b === 9)).toBe(true);
    } finally {
      st.release();
    }
  });

  it('a range (offset, length) writes exactly that range of each parity shard', () => {
    const rs = createEncoder(4, 2, { flavor });
    const twin = createEncoder(4, 2, { flavor: 'scalar' });
    const size = 300;
    const st = rs.allocStripe(size, { stride: 384 });
    try {
      expect(st.stride).toBe(384);
      for (let i = 0; i < 4; i++) fill(st.shard(i), 40 + i);
      for (let i = 4; i < 6; i++) st.shard(i).fill(0xee);
      const padding = st.bytes.subarray(size, 384).fill(0x11);
      rs.encodeResident(st, { offset: 37, length: 101 });
      const want: (Uint8Array | null)[] = [...st.shards().slice(0, 4).map((s) => s.subarray(37, 138).slice()), null, null];
      twin.encode(want);
      for (let i = 4; i < 6; i++) {
        const p = st.shard(i);
        expect(p.subarray(0, 37).every((b) => b === 0xee)).toBe(true);
        expect(eq(p.subarray(37, 138), want[i]!)).toBe(true);
        expect(p.subarray(138).every((b) => b === 0xee)).toBe(true);
      }
      expect(padding.every((b) => b === 0x11)).toBe(true);
    } finally {
      st.release();
    }
  });

  it('reconstructResidentPart: the k sources streamed one at a time through one shard add up to reconstructResident, over a range only', () => {
    for (const [k, m] of [[10, 4], [4, 2], [3, 1]] as const) {
      const rs = createEncoder(k, m, { flavor });
      const size = 4096 + 77;
      const st = rs.allocStripe(size);
      try {
        for (let i = 0; i < k; i++) fill(st.shard(i), 7 * i + k);
        rs.encodeResident(st);
        const orig = st.shards().map((s) => s.slice());
        // Lose a data shard and a parity shard (or just shard 0 with m = 1); the sources are
        // the first k left, each copied in turn into the first source's shard and added there.
        const wanted = m > 1 ? [0, k + m - 1] : [0];
        const sources = [...Array(k + m).keys()].filter((i) => !wanted.includes(i)).slice(0, k);
        const [offset, length] = [33, size - 33 - 20];
        for (const w of wanted) st.shard(w).fill(0xc3);
        const through = st.shard(sources[0]!);
        for (const [j, i] of sources.entries()) {
          through.set(orig[i]!);
          rs.reconstructResidentPart(st, sources, wanted, j, sources[0]! * st.stride + offset, { offset, length }, j === 0);
        }
        for (const w of wanted) {
          expect(eq(st.shard(w).subarray(offset, offset + length), orig[w]!.subarray(offset, offset + length)), `${k}+${m} shard ${w}`).toBe(true);
          // Nothing outside the range is written.
          expect(st.shard(w).subarray(0, offset).every((b) => b === 0xc3)).toBe(true);
          expect(st.shard(w).subarray(offset + length).every((b) => b === 0xc3)).toBe(true);
        }
        // A source added twice cancels out (XOR): the sum is then wrong, as it must be.
        rs.reconstructResidentPart(st, sources, wanted, 1, sources[0]! * st.stride + offset, { offset, length }, false);
        expect(eq(st.shard(wanted[0]!).subarray(offset, offset + length), orig[wanted[0]!]!.subarray(offset, offset + length))).toBe(false);
        // Misuse throws and writes nothing.
        const before = st.shard(wanted[0]!).slice();
        const part = (src: readonly number[], want: readonly number[], j: number, at = sources[0]! * st.stride + offset) =>
          () => rs.reconstructResidentPart(st, src, want, j, at, { offset, length }, true);
        expect(part(sources.slice(1), wanted, 0)).toThrow(/distinct ascending/);
        expect(part([...sources].reverse(), wanted, 0)).toThrow(/distinct ascending/);
        expect(part(sources, wanted, k)).toThrow(/outside/);
        expect(part(sources, [sources[1]!], 0)).toThrow(/not an absent shard/);
        expect(part(sources, wanted, 0, wanted[0]! * st.stride + offset)).toThrow(/overlaps a source/);
        expect(part(sources, [wanted[0]!, wanted[0]!], 0)).toThrow(/given twice/);
        expect(part(sources, wanted, 0, (k + m) * st.stride - length + 1)).toThrow(/leaves the region/);
        expect(() => rs.reconstructResidentPart(st, sources, wanted, 0, 0, { offset: size, length: 1 }, true)).toThrow(/outside shards/);
        expect(eq(st.shard(wanted[0]!), before)).toBe(true);
      } finally {
        st.release();
      }
    }
  });
});

describe('resident stripes: misuse fails closed', () => {
  const rs = createEncoder(4, 2);

  it('rejects bad sizes, strides, ranges and shapes', () => {
    for (const bad of [0, -1, 1.5, NaN, Infinity, 2 ** 60]) expect(() => rs.allocStripe(bad)).toThrow(/shard size/);
    expect(() => rs.allocStripe(100, { stride: 64 })).toThrow(/stride/);
    expect(() => rs.allocStripe(100, { stride: 130 })).toThrow(/stride/);
    const st = rs.allocStripe(100);
    const other = createEncoder(3, 2).allocStripe(100);
    try {
      expect(() => rs.encodeResident(st, { offset: 90, length: 11 })).toThrow(/outside/);
      expect(() => rs.encodeResident(st, { offset: -1 })).toThrow(/outside/);
      expect(() => rs.encodeResident(st, { length: 101 })).toThrow(/outside/);
      expect(() => rs.encodeResident(other)).toThrow(/6 shards/);
      expect(() => rs.encodeResident({} as ResidentStripe)).toThrow(/resident stripe/);
      expect(() => st.shard(6)).toThrow(/shard index/);
      expect(() => st.shard(-1)).toThrow(/shard index/);
      expect(() => rs.reconstructResident(st, [true, true, true])).toThrow(/present needs 6/);
      expect(() => rs.reconstructResident(st, [true, true, true, false, false, false])).toThrow(/3 shards present, 4 needed/);
      // A truthy non-boolean does not count as present.
      expect(() => rs.reconstructResident(st, [1, 1, 1, 1, 0, 0] as unknown as boolean[])).toThrow(/0 shards present/);
    } finally {
      st.release();
      other.release();
    }
  });

  it('rejects a released stripe and a second release', () => {
    const st = rs.allocStripe(256);
    st.release();
    expect(st.released).toBe(true);
    expect(() => st.shard(0)).toThrow(ArenaRegionError);
    expect(() => st.bytes).toThrow(ArenaRegionError);
    expect(() => rs.encodeResident(st)).toThrow(ArenaRegionError);
    expect(() => rs.reconstructResident(st, [false, true, true, true, true, true])).toThrow(ArenaRegionError);
    expect(() => st.release()).toThrow(ArenaRegionError);
  });

  it('reuses released regions instead of taking new memory', () => {
    const a = rs.allocStripe(50_000);
    const at = a.shard(0).byteOffset;
    a.release();
    const b = rs.allocStripe(50_000);
    try {
      expect(b.shard(0).byteOffset).toBe(at);
    } finally {
      b.release();
    }
  });
});

describe('arena pool', () => {
  const MiB = 1024 * 1024;

  it('never detaches a live view: a region past the arena takes a new arena; an empty arena regrows', () => {
    const pool = new Gf256ArenaPool('scalar', 512 * MiB);
    const a = pool.alloc(4 * MiB);
    const view = a.bytes;
    fill(view, 5);
    const before = view.slice();
    const big = pool.alloc(40 * MiB); // more than the first arena holds
    expect(pool.stats.arenas).toBe(2);
    expect(view.byteLength).toBe(a.size); // still attached
    expect(eq(view, before)).toBe(true);
    expect(a.bytes.buffer).toBe(view.buffer);
    big.release();
    a.release();
    // Both arenas are empty now; a region larger than either regrows one of them, and the
    // views of released regions in it are detached (their use can no longer reach memory).
    const stale = view;
    const huge = pool.alloc(80 * MiB);
    expect(pool.stats.arenas).toBe(2);
    expect(huge.bytes.length).toBe(80 * MiB);
    expect(stale.byteLength === 0 || stale.buffer !== huge.bytes.buffer).toBe(true);
    huge.release();
    expect(pool.stats.liveRegions).toBe(0);
  });

  it('keeps growth within its budget', () => {
    const pool = new Gf256ArenaPool('scalar', 40 * MiB);
    const a = pool.alloc(10 * MiB);
    expect(() => pool.alloc(30 * MiB)).toThrow(ArenaBudgetError);
    a.release();
    expect(() => pool.alloc(0)).toThrow(RangeError);
    expect(() => pool.alloc(-5)).toThrow(RangeError);
    expect(() => pool.alloc(Number.MAX_SAFE_INTEGER)).toThrow(ArenaBudgetError);
  });

  it('reports wasm memory it cannot get as ArenaMemoryError (an ArenaBudgetError) and stays usable', () => {
    // Within a 4 GiB budget, but past the 1 GiB an arena's memory may grow to: memory.grow
    // refuses, as it would when the runtime or the OS has no memory to give.
    const pool = new Gf256ArenaPool('scalar', 4 * 1024 * MiB);
    let caught: unknown;
    try {
      pool.alloc(1536 * MiB);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ArenaMemoryError);
    expect(caught).toBeInstanceOf(ArenaBudgetError);
    expect(pool.stats.arenas).toBe(0);
    const small = pool.alloc(MiB);
    expect(small.bytes.length).toBe(MiB);
    small.release();
  });

  it('coalesces freed neighbours so a large region fits again', () => {
    const pool = new Gf256ArenaPool('scalar', 64 * MiB);
    const parts = Array.from({ length: 8 }, () => pool.alloc(MiB));
    for (const i of [1, 3, 2, 0, 7, 5, 6, 4]) parts[i]!.release();
    const whole = pool.alloc(8 * MiB);
    expect(pool.stats.arenas).toBe(1);
    whole.release();
  });

  it('checks operands: outside the region, overlapping outputs or sources, wrong counts', () => {
    const pool = new Gf256ArenaPool('scalar', 64 * MiB);
    const r = pool.alloc(4096);
    const mat = cauchyParity(2, 2);
    try {
      expect(() => r.mulRows(mat, 2, 2, [0, 100], [200, 300], 100)).not.toThrow();
      expect(() => r.mulRows(mat, 2, 2, [0, 100], [200, 4000], 100)).toThrow(/leaves the region/);
      expect(() => r.mulRows(mat, 2, 2, [0, 100], [200, 250], 100)).toThrow(/outputs overlap/);
      expect(() => r.mulRows(mat, 2, 2, [0, 100], [150, 300], 100)).toThrow(/overlaps a source/);
      expect(() => r.mulRows(mat, 2, 2, [0], [200, 300], 100)).toThrow(/operand count/);
      expect(() => r.mulRows(mat, 2, 2, [0, 100], [200, 300], -1)).toThrow(/length/);
      expect(() => r.mulRows(mat.subarray(0, 3), 2, 2, [0, 100], [200, 300], 10)).toThrow(/matrix/);
      expect(() => r.mulRows(mat, 2, 2, [0.5, 100], [200, 300], 10)).toThrow(/leaves the region/);
    } finally {
      r.release();
    }
  });
});
