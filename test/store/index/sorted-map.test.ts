import { describe, expect, test } from 'vitest';
import { compareKeys } from '../../../src/store/index/compare.js';
import { SortedMap, ENTRY_OVERHEAD_BYTES } from '../../../src/store/index/sorted-map.js';
import { byteOrder, prng, randomKey, valueOf } from './support.js';

/** The reference model: a sorted array of [key, value], O(n) per operation. */
class Model {
  keys: string[] = [];
  values = new Map<string, Uint8Array>();
  set(k: string, v: Uint8Array) {
    if (!this.values.has(k)) {
      let lo = 0;
      let hi = this.keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (byteOrder(this.keys[mid]!, k) < 0) lo = mid + 1;
        else hi = mid;
      }
      this.keys.splice(lo, 0, k);
    }
    this.values.set(k, v);
  }
  delete(k: string) {
    if (!this.values.delete(k)) return false;
    this.keys.splice(this.keys.indexOf(k), 1);
    return true;
  }
  from(key: string, inclusive: boolean): string[] {
    return this.keys.filter((k) => byteOrder(k, key) > 0 || (inclusive && k === key));
  }
}

function check(map: SortedMap, model: Model) {
  expect(map.size).toBe(model.keys.length);
  expect([...map].map(([k]) => k)).toEqual(model.keys);
}

describe('SortedMap', () => {
  for (const [seed, ops, deleteShare] of [
    [1, 20_000, 0.2],
    [2, 20_000, 0.6],
    [3, 5_000, 0.9],
  ] as const) {
    test(`random set/delete/get (seed ${seed}, ${ops} ops, ${deleteShare * 100}% deletes) match a sorted-array model`, () => {
      const next = prng(seed);
      const map = new SortedMap();
      const model = new Model();
      for (let i = 0; i < ops; i++) {
        const key = randomKey(next, 6, 0.7);
        const r = (next() % 1000) / 1000;
        if (r < deleteShare) expect(map.delete(key)).toBe(model.delete(key));
        else {
          const v = valueOf(key, i);
          map.set(key, v);
          model.set(key, v);
        }
        if (i % 97 === 0) {
          const probe = randomKey(next, 6, 0.7);
          expect(map.get(probe)).toBe(model.values.get(probe));
          expect(map.has(probe)).toBe(model.values.has(probe));
        }
        if (i % 2_500 === 0) check(map, model);
      }
      check(map, model);
      for (const k of model.keys) expect(map.get(k)).toBe(model.values.get(k));
    });
  }

  test('entries(from) starts at the first key >= (inclusive) or > (exclusive) the seek key', () => {
    const next = prng(4);
    const map = new SortedMap();
    const model = new Model();
    for (let i = 0; i < 3_000; i++) {
      const k = randomKey(next, 5, 0.6);
      map.set(k, valueOf(k));
      model.set(k, valueOf(k));
    }
    const probes = [...model.keys.filter((_, i) => i % 37 === 0), '', '\u{10ffff}\u{10ffff}'];
    for (let i = 0; i < 200; i++) probes.push(randomKey(next, 5, 0.6));
    for (const key of probes) {
      for (const inclusive of [true, false]) {
        const got = [];
        for (const [k] of map.entries({ key, inclusive })) {
          got.push(k);
          if (got.length === 50) break;
        }
        expect(got, `${JSON.stringify(key)} ${inclusive}`).toEqual(
          model.from(key, inclusive).slice(0, 50)
        );
      }
    }
  });

  test('scan batches cover the map in order; iteration survives writes between its steps', async () => {
    const map = new SortedMap();
    for (let i = 0; i < 10_000; i += 2) map.set(String(i).padStart(6, '0'), valueOf(String(i)));
    const seen: string[] = [];
    let step = 0;
    for (const [k] of map.entries()) {
      seen.push(k);
      // Insert just ahead, delete ahead, insert just behind the cursor.
      if (++step % 100 === 0) {
        const n = Number(k);
        map.set(String(n + 1).padStart(6, '0'), valueOf('ahead'));
        map.delete(String(n + 4).padStart(6, '0'));
        map.set(String(n - 1).padStart(6, '0') + 'x', valueOf('behind'));
      }
    }
    const sortedSeen = [...seen].sort(compareKeys);
    expect(seen).toEqual(sortedSeen);
    expect(new Set(seen).size).toBe(seen.length);
    // Every key present throughout (the even keys never deleted) was seen exactly once.
    const stable = [...map].map(([k]) => k).filter((k) => Number(k) % 2 === 0);
    const stableSet = new Set(stable);
    expect(seen.filter((k) => stableSet.has(k))).toEqual(stable);
    expect(seen.some((k) => k.endsWith('x'))).toBe(false);
    let batches = 0;
    const scanned: string[] = [];
    for await (const b of map.scan({ key: '', inclusive: true })) {
      batches++;
      for (let i = b.start; i < b.keys.length; i++) scanned.push(b.keys[i]!);
    }
    expect(scanned).toEqual([...map].map(([k]) => k));
    expect(batches).toBeGreaterThan(map.size / 64 - 1);
  });

  test('byte count tracks keys + values + overhead through replace and delete', () => {
    const map = new SortedMap();
    expect(map.bytes).toBe(0);
    map.set('abc', new Uint8Array(100));
    expect(map.bytes).toBe(3 + 100 + ENTRY_OVERHEAD_BYTES);
    map.set('abc', new Uint8Array(10));
    expect(map.bytes).toBe(3 + 10 + ENTRY_OVERHEAD_BYTES);
    map.set('de', new Uint8Array(0));
    expect(map.bytes).toBe(3 + 10 + 2 + 2 * ENTRY_OVERHEAD_BYTES);
    map.delete('abc');
    map.delete('nope');
    expect(map.bytes).toBe(2 + ENTRY_OVERHEAD_BYTES);
    map.delete('de');
    expect(map.bytes).toBe(0);
    expect(map.size).toBe(0);
    expect([...map]).toEqual([]);
  });

  test('50,000 sequential and random inserts stay fast (O(log n) each)', () => {
    const map = new SortedMap();
    const next = prng(5);
    const t0 = performance.now();
    for (let i = 0; i < 25_000; i++) map.set(`seq/${String(i).padStart(8, '0')}`, valueOf(''));
    for (let i = 0; i < 25_000; i++) map.set(`rnd/${next().toString(36)}`, valueOf(''));
    const ms = performance.now() - t0;
    expect(map.size).toBeGreaterThan(49_900);
    expect(ms).toBeLessThan(2_000);
  });
});
