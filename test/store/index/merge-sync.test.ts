/**
 * MergeIterator.nextSync (the promise-free fast path LIST runs on) yields exactly what
 * next() yields, including across batch boundaries and forward seeks.
 */
import { expect, it } from 'vitest';
import { SortedMap } from '../../../src/store/index/sorted-map.js';
import { mergeSources, type MergeIterator, type MergedEntry } from '../../../src/store/index/merge.js';
import { prng } from '../../support/random.js';

function sources(seed: number): SortedMap[] {
  const next = prng(seed);
  return Array.from({ length: 4 }, (_, s) => {
    const m = new SortedMap(`s${s}`);
    for (let i = 0; i < 3000; i++) m.set(`k${String(next() % 20000).padStart(5, '0')}/${next() % 3}`, new Uint8Array([s, i & 255]));
    return m;
  });
}

async function drain(it: MergeIterator, useSync: boolean, seeks: Map<number, string>): Promise<MergedEntry[]> {
  const out: MergedEntry[] = [];
  for (;;) {
    let e: MergedEntry | null | undefined = useSync ? it.nextSync() : undefined;
    if (e === undefined) {
      const r = await it.next();
      e = r.done ? null : r.value;
    }
    if (e === null) break;
    out.push(e);
    const to = seeks.get(out.length);
    if (to !== undefined) it.seek(to, true);
  }
  return out;
}

it('nextSync and next() agree, with and without forward seeks', async () => {
  for (const seed of [1, 2, 3]) {
    const src = sources(seed);
    const next = prng(seed + 100);
    const seeks = new Map<number, string>();
    for (let i = 1; i < 40; i++) seeks.set(i * 150, `k${String((i * 500 + (next() % 300))).padStart(5, '0')}`);
    for (const plan of [new Map<number, string>(), seeks]) {
      const a = await drain(mergeSources(src), false, plan);
      const b = await drain(mergeSources(src), true, plan);
      expect(b.length).toBe(a.length);
      expect(b.map((e) => `${e.key}:${e.source}`)).toEqual(a.map((e) => `${e.key}:${e.source}`));
      expect(a.length).toBeGreaterThan(1000);
    }
  }
});
