/**
 * GC mark and sweep (gc.ts, gc-mark.ts, gc-sweep.ts, gc-state.ts) on the memory and fs
 * providers: what a deleted bucket leaves is freed unless a fork still reaches it; superseded
 * roots and compacted runs go; orphans (a crashed write's blobs) go only after the grace,
 * counted from when a pass first saw them unreachable AND from their own age; a dry run
 * reports exactly what a pass would free and changes nothing; a mark that cannot read
 * everything deletes nothing; after every pass `verify` is clean and every object byte-exact.
 */
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../src/provider/provider.js';
import { runGc, collectGarbage, gcStats } from '../../src/store/gc.js';
import { markRepository } from '../../src/store/gc-mark.js';
import { GC_PREFIX, parseGcState, encodeGcState } from '../../src/store/gc-state.js';
import { ANCHOR_KEY } from '../../src/store/layout.js';
import { verifyRepository } from '../../src/store/verify.js';
import { randomBytes } from '../support/random.js';
import { expectContents, open, populate, put } from './fork-support.js';

const HOUR = 3_600_000;

async function keys(provider: Provider, prefix = ''): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await provider.list({ prefix, ...(startAfter ? { startAfter } : {}) });
    for (const i of page.items) out.set(i.key, i.size);
    if (!page.next) return out;
    startAfter = page.next;
  }
}

/** A clock the test moves: the repository's commits and GC's sense of "now". */
function clock() {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms: number) => void (offset += ms), reset: () => void (offset = 0) };
}

describe('gc state blobs', () => {
  it('round-trip, and anything that is not a state reads as no state', () => {
    const seen = new Map([['chunks/a', 5], ['runs/b/c', 1_700_000_000_000]]);
    const text = new TextDecoder().decode(encodeGcState(seen));
    expect(parseGcState(text)).toEqual(seen);
    for (const bad of ['', 'strata-gc-state 2\n', 'strata-gc-state 1\nx\tk\n', 'strata-gc-state 1\n-1\tk\n', 'strata-gc-state 1\n5\t\n', 'strata-gc-state 1\nnotab\n']) {
      expect(parseGcState(bad), JSON.stringify(bad)).toBeUndefined();
    }
  });
});

describe.each(['memory', 'fs'] as const)('gc on %s', (kind) => {
  it('frees what a deleted bucket held, keeps what a fork still reaches, and leaves verify clean', async () => {
    const c = clock();
    const { store, provider } = await open(kind, { now: c.now });
    const kept = await populate(store, 'kept');
    const forked = await populate(store, 'forked');
    const doomed = await populate(store, 'doomed');
    await store.forkBucket('forked', 'fork');
    for (const name of ['forked', 'doomed']) {
      await store.deleteObjects(name, [...(name === 'forked' ? forked : doomed).keys()]);
      await store.deleteBucket(name);
    }
    await store.checkpoint();
    const before = await keys(provider);
    const mark = await markRepository(provider);
    // The first pass only notes what is unreachable; one past the grace deletes it.
    const first = await runGc(store.repo, { graceMs: HOUR, cleanBelow: 0 });
    expect(first.freedBlobs).toBe(0);
    expect(first.pendingBlobs).toBe(first.unreachableBlobs);
    c.advance(2 * HOUR);
    const report = await runGc(store.repo, { graceMs: HOUR, cleanBelow: 0 });
    const after = await keys(provider);
    expect(report.freedBlobs).toBeGreaterThan(0);
    expect(report.freedBlobs).toBe(report.unreachableBlobs);
    // Exactly the unmarked blobs went, and nothing marked did.
    for (const [k] of before) {
      if (k.startsWith(GC_PREFIX)) continue;
      expect(after.has(k), k).toBe(mark.live.has(k));
    }
    const freedBytes = [...before].filter(([k]) => !after.has(k)).reduce((n, [, s]) => n + s, 0);
    expect(report.freedBytes).toBe(freedBytes);
    await expectContents(store, 'kept', kept, 'kept after gc');
    await expectContents(store, 'fork', forked, 'fork after gc');
    expect((await verifyRepository(provider)).problems).toEqual([]);
    expect(gcStats(store.repo)).toMatchObject({ passes: 2, freedBlobs: report.freedBlobs });
    // A second pass finds nothing more to free.
    const again = await runGc(store.repo, { graceMs: 0, cleanBelow: 0 });
    expect(again.freedBlobs).toBe(0);
    await store.close();
  });

  it('deletes an orphan only after the grace from first sight and from its own age; a dry run frees exactly as much and changes nothing', async () => {
    const c = clock();
    const { store, provider } = await open(kind, { now: c.now });
    await store.createBucket('bkt');
    const body = randomBytes(2000, 1);
    await put(store, 'bkt', 'k', body);
    await store.checkpoint();
    // What a crashed write leaves: a chunk and a run nothing names.
    await provider.put('chunks/0000000ffdeadbeefdeadbeefdead', randomBytes(100, 2));
    await provider.put('runs/deadbeef/0011223344556677', randomBytes(50, 3));
    const orphans = ['chunks/0000000ffdeadbeefdeadbeefdead', 'runs/deadbeef/0011223344556677'];

    // First pass: the orphans are new to GC (and young): recorded, not deleted.
    c.advance(10);
    const first = await runGc(store.repo, { graceMs: HOUR, cleanBelow: 0 });
    expect(first.unreachableBlobs).toBeGreaterThanOrEqual(2);
    expect(first.freedBlobs).toBe(0);
    for (const k of orphans) expect((await keys(provider, k)).has(k)).toBe(true);
    const state = [...(await keys(provider, GC_PREFIX)).keys()];
    expect(state).toHaveLength(1);

    // Half the grace later: still there.
    c.advance(HOUR / 2);
    expect((await runGc(store.repo, { graceMs: HOUR, cleanBelow: 0 })).freedBlobs).toBe(0);

    // Past the grace: a dry run says what would go, and leaves everything (state included).
    c.advance(HOUR);
    const snapshot = await keys(provider);
    const dry = await runGc(store.repo, { graceMs: HOUR, cleanBelow: 0, dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(await keys(provider)).toEqual(snapshot);
    const real = await runGc(store.repo, { graceMs: HOUR, cleanBelow: 0 });
    expect(real.freedBlobs).toBe(dry.freedBlobs);
    expect(real.freedBytes).toBe(dry.freedBytes);
    expect(real.freedBlobs).toBeGreaterThanOrEqual(2);
    for (const k of orphans) expect((await keys(provider, k)).has(k)).toBe(false);
    expect(await keys(provider, GC_PREFIX)).not.toContain(state[0]);

    // A fresh orphan is young by its own time even if its name were remembered long ago
    // (the clock is back to the wall clock, which the provider's times follow).
    c.reset();
    await provider.put('chunks/0000000ffeeeeeeeeeeeeeeeeeeee', randomBytes(10, 4));
    const stale = new Map([['chunks/0000000ffeeeeeeeeeeeeeeeeeeee', 0]]);
    await provider.put(`${GC_PREFIX}ffffffffffff-000000000000`, encodeGcState(stale));
    expect((await runGc(store.repo, { graceMs: HOUR, cleanBelow: 0 })).freedBlobs).toBe(0);
    expect((await keys(provider, 'chunks/0000000ffe')).size).toBe(1);
    await provider.delete('chunks/0000000ffeeeeeeeeeeeeeeeeeeee'); // not a pack: verify would say so

    await expectContents(store, 'bkt', new Map([['k', body]]), 'after gc');
    expect((await verifyRepository(provider)).problems).toEqual([]);
    await store.close();
  });

  it('frees superseded roots and compacted runs, never the anchor, config, root or chain', async () => {
    const { store, provider } = await open(kind, { maxRuns: 2 });
    await store.createBucket('bkt');
    const model = new Map<string, Uint8Array>();
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 5; i++) {
        const body = randomBytes(300 + i, round * 10 + i);
        await put(store, 'bkt', `r${round}/${i}`, body);
        model.set(`r${round}/${i}`, body);
      }
      await store.checkpoint();
    }
    await put(store, 'bkt', 'after-root', randomBytes(10, 99)); // a chain after the root
    model.set('after-root', randomBytes(10, 99));
    const roots = await keys(provider, 'roots/');
    expect(roots.size).toBeGreaterThan(1);
    await new Promise((r) => setTimeout(r, 5));
    const report = await runGc(store.repo, { graceMs: 0, cleanBelow: 0 });
    expect(report.freedBlobs).toBeGreaterThan(0);
    expect((await keys(provider, 'roots/')).size).toBe(1);
    expect((await keys(provider, 'anchor')).size).toBe(1);
    expect((await keys(provider, 'config')).size).toBe(1);
    await expectContents(store, 'bkt', model, 'after gc');
    await store.close();
    const { Store } = await import('../../src/store/store.js');
    const reopened = await Store.open(provider);
    await expectContents(reopened, 'bkt', model, 'reopened after gc');
    expect((await verifyRepository(provider)).problems).toEqual([]);
    await reopened.close();
  });

  it('deletes nothing when the mark cannot read everything', async () => {
    const { store, provider } = await open(kind);
    await populate(store, 'bkt');
    await store.checkpoint();
    await provider.put('chunks/0000000ffdeadbeefdeadbeefdead', randomBytes(100, 2));
    const run = [...(await keys(provider, 'runs/')).keys()][0]!;
    await provider.delete(run);
    const before = await keys(provider);
    await expect(runGc(store.repo, { graceMs: 0, cleanBelow: 0 })).rejects.toMatchObject({ code: 'MissingBlob' });
    // Nothing deleted or shortened. With a commit log the pass rolled it before marking (a new
    // segment named by the anchor; the old one sealed at the end of its last frame): writes,
    // never deletions.
    const after = await keys(provider);
    for (const [key, size] of before) {
      expect(after.has(key), key).toBe(true);
      if (!key.startsWith('log/') && key !== ANCHOR_KEY) expect(after.get(key), key).toBe(size);
    }
    if (!store.repo.usesCommitLog) expect(after).toEqual(before);
    expect(gcStats(store.repo).failedPasses).toBe(1);
    await store.close();
  });

  it('collectGarbage works on a stopped repository (dry run reads only)', async () => {
    const { store, provider } = await open(kind);
    const model = await populate(store, 'bkt');
    await store.createBucket('gone');
    await put(store, 'gone', 'x', randomBytes(900, 5));
    await store.deleteObject('gone', 'x');
    await store.deleteBucket('gone');
    await store.close();
    await new Promise((r) => setTimeout(r, 5));
    const snapshot = await keys(provider);
    const dry = await collectGarbage(provider, { dryRun: true, graceMs: 0 });
    expect(await keys(provider)).toEqual(snapshot);
    const real = await collectGarbage(provider, { graceMs: 0, cleanBelow: 0 });
    // The real run checkpoints first (more becomes unreachable), so it frees at least as much.
    expect(real.freedBlobs).toBeGreaterThanOrEqual(dry.freedBlobs);
    expect(real.freedBlobs).toBeGreaterThan(0);
    const { Store } = await import('../../src/store/store.js');
    const reopened = await Store.open(provider);
    await expectContents(reopened, 'bkt', model, 'after offline gc');
    expect((await verifyRepository(provider)).problems).toEqual([]);
    await reopened.close();
  });
});
