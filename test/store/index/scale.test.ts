/**
 * Scale: 200,000 keys over an overlay and five runs, listed in pages of 1,000 by re-opening
 * the merge after the last key of each page (as a LIST continuation does).
 */
import { expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';
import { mergeSources, type SortedSource } from '../../../src/store/index/merge.js';
import { openRun } from '../../../src/store/index/run-reader.js';
import { writeRun } from '../../../src/store/index/run-writer.js';
import { SortedMap } from '../../../src/store/index/sorted-map.js';
import { CountingProvider, bucketKeys, prng } from './support.js';

const KEYS = 200_000;
const RUNS = 5;
const PAGE = 1_000;

test('a paginated pass over 200,000 keys in 6 sources has no duplicate and no missing key', async () => {
  const keys = bucketKeys(KEYS, 64);
  const next = prng(61);
  // Every key lands in one random source; a fifth also in an older one (an overwritten key).
  const perSource: [string, Uint8Array][][] = Array.from({ length: RUNS + 1 }, () => []);
  const newest = new Array<number>(KEYS);
  for (let i = 0; i < KEYS; i++) {
    const s = next() % (RUNS + 1);
    newest[i] = s;
    perSource[s]!.push([keys[i]!, Uint8Array.of(s)]);
    if (next() % 5 === 0 && s < RUNS)
      perSource[s + 1 + (next() % (RUNS - s))]!.push([keys[i]!, Uint8Array.of(99)]);
  }
  const provider = new CountingProvider();
  const cache = new BlockCache({ maxBytes: 8 * 1024 * 1024 });
  const overlay = new SortedMap();
  for (const [k, v] of perSource[0]!) overlay.set(k, v);
  const sources: SortedSource[] = [overlay];
  for (let s = 1; s <= RUNS; s++) {
    const sorted = perSource[s]!.sort((a, b) => (a[0] < b[0] ? -1 : 1)); // ASCII keys: JS order is byte order
    sources.push(await openRun(provider, await writeRun(provider, `runs/${s}`, sorted), cache));
  }

  const times: number[] = [];
  let i = 0;
  let after: string | undefined;
  for (;;) {
    const t0 = performance.now();
    const it = mergeSources(
      sources,
      after === undefined ? undefined : { key: after, inclusive: false }
    );
    let n = 0;
    for (let r = await it.next(); !r.done; r = await it.next()) {
      // In order, nothing skipped or repeated, and the newest value.
      if (r.value.key !== keys[i]) expect(r.value.key).toBe(keys[i]);
      if (r.value.value[0] !== newest[i]) expect(r.value.value[0]).toBe(newest[i]);
      i++;
      if (++n === PAGE) break;
    }
    await it.return();
    times.push(performance.now() - t0);
    if (n < PAGE) break;
    after = keys[i - 1];
  }
  expect(i).toBe(KEYS);
  expect(times.length).toBe(KEYS / PAGE + 1);
  const p50 = times.sort((a, b) => a - b)[times.length >> 1]!;
  expect(p50).toBeLessThan(50); // generous: ~2-5 ms on a quiet machine
}, 30_000);
