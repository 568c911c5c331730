/**
 * keyspace.ts on its own: forkKeyspace shares (never copies) the overlay, layers and runs.
 * Checkpoint flushes of shared layers are covered by test/store/checkpoint-background.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { SortedMap } from '../../src/store/index/sorted-map.js';
import { forkKeyspace, keyspaceLookup, type Keyspace } from '../../src/store/keyspace.js';
import type { RunHandle } from '../../src/store/state.js';

const v = (s: string) => new TextEncoder().encode(s);
const empty = (): Keyspace => ({ overlay: new SortedMap('overlay'), frozen: [], runs: [] });

async function value(k: Keyspace, key: string): Promise<string | undefined> {
  const got = await keyspaceLookup(k, key);
  return got && new TextDecoder().decode(got);
}

describe('keyspace forks and flushes', () => {
  it('shares the overlay as a frozen layer, and the runs, without copying', () => {
    const src = empty();
    src.overlay.set('a', v('1'));
    const run = {} as RunHandle;
    src.runs = [run];
    const map = src.overlay;
    const dst = empty();
    forkKeyspace(src, dst);
    expect(src.frozen[0]!.map).toBe(map);
    expect(dst.frozen[0]).toBe(src.frozen[0]);
    expect(dst.runs[0]).toBe(run);
    expect(src.overlay).not.toBe(dst.overlay);
    expect(src.overlay.size + dst.overlay.size).toBe(0);
    expect(src.frozen[0]!.shared).toBe(true);
  });

  it('reads the same entries in both after the fork, and each its own writes after it', async () => {
    const src = empty();
    src.overlay.set('a', v('1'));
    const dst = empty();
    forkKeyspace(src, dst);
    src.overlay.set('b', v('src'));
    dst.overlay.set('a', v('dst'));
    expect([await value(src, 'a'), await value(src, 'b')]).toEqual(['1', 'src']);
    expect([await value(dst, 'a'), await value(dst, 'b')]).toEqual(['dst', undefined]);
  });
});
