/**
 * keyspace.ts on its own: forkKeyspace shares (never copies) the overlay, layers and runs;
 * flushKeyspace writes a shared layer once for all its sharers, retries a layer whose write
 * failed, and after a failed flush gives a keyspace its overlay back (unless a fork shares it),
 * so failing checkpoints do not pile up layers; reads see the same entries throughout.
 */
import { describe, expect, it } from 'vitest';
import { SortedMap } from '../../src/store/index/sorted-map.js';
import { flushKeyspace, forkKeyspace, keyspaceLookup, sharingKeyspaces, type Keyspace } from '../../src/store/keyspace.js';
import type { RunHandle } from '../../src/store/state.js';

const v = (s: string) => new TextEncoder().encode(s);
const empty = (): Keyspace => ({ overlay: new SortedMap('overlay'), frozen: [], runs: [] });

/** A run "written" from a map: a handle whose reader answers from a copy of the map. */
function writer() {
  const written: SortedMap[] = [];
  let failNext = 0;
  const write = async (map: SortedMap): Promise<RunHandle> => {
    if (failNext > 0) {
      failNext--;
      throw new Error('disk full');
    }
    written.push(map);
    const copy = new Map(map.entries());
    return { meta: new Uint8Array([written.length]), key: `run-${written.length}`, reader: { get: async (k: string) => copy.get(k) } } as unknown as RunHandle;
  };
  return { write, written, fail: (n: number) => (failNext = n) };
}

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
    expect(sharingKeyspaces([src, dst, empty()])).toEqual(new Set([src, dst]));
  });

  it('writes a shared layer once, retries it after a failure, and thaws an unshared overlay when its flush fails', async () => {
    const w = writer();
    const src = empty();
    src.overlay.set('a', v('shared'));
    const dst = empty();
    forkKeyspace(src, dst);
    src.overlay.set('b', v('source only'));
    dst.overlay.set('c', v('fork only'));

    // First attempt fails: the shared layer stays a layer, the source's own overlay comes back.
    w.fail(2);
    await expect(flushKeyspace(src, w.write)).rejects.toThrow('disk full');
    expect(src.frozen).toHaveLength(1);
    expect(src.overlay.get('b')).toBeDefined();
    expect([await value(src, 'a'), await value(src, 'b'), await value(src, 'c')]).toEqual(['shared', 'source only', undefined]);

    await flushKeyspace(src, w.write);
    await flushKeyspace(dst, w.write);
    // Written: the source's overlay, the shared layer (once), the fork's overlay.
    expect(w.written.map((m) => [...m.entries()].map(([k]) => k).join())).toEqual(['b', 'a', 'c']);
    expect(src.frozen).toEqual([]);
    expect(dst.frozen).toEqual([]);
    expect(src.runs[1]).toBe(dst.runs[1]); // the shared layer's run
    expect(src.runs).toHaveLength(2);
    expect(dst.runs).toHaveLength(2);
    expect([await value(src, 'a'), await value(src, 'b'), await value(src, 'c')]).toEqual(['shared', 'source only', undefined]);
    expect([await value(dst, 'a'), await value(dst, 'b'), await value(dst, 'c')]).toEqual(['shared', undefined, 'fork only']);
  });

  it('keeps a layer frozen after a failed flush once a fork shares it', async () => {
    const w = writer();
    const src = empty();
    src.overlay.set('a', v('1'));
    w.fail(1);
    const flushing = flushKeyspace(src, w.write);
    // A fork lands while the flush is in flight (a checkpoint beside the commit loop).
    const dst = empty();
    forkKeyspace(src, dst);
    await expect(flushing).rejects.toThrow('disk full');
    expect(src.overlay.size).toBe(0);
    expect(src.frozen).toHaveLength(1);
    expect(dst.frozen[0]).toBe(src.frozen[0]);
    await flushKeyspace(dst, w.write);
    await flushKeyspace(src, w.write);
    expect(w.written).toHaveLength(1);
    expect(src.runs[0]).toBe(dst.runs[0]);
  });
});
