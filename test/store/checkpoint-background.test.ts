/**
 * Checkpoints beside the commit loop (repository.ts, checkpoint.ts).
 *
 * A provider wrapper holds every root write until the test opens a gate, so a checkpoint is
 * provably in flight while the test acknowledges writes, forks, creates and deletes buckets,
 * and then lands (or fails). Each case checks what the live store reads, that the anchor's
 * root is the checkpoint's commit while the anchor's sequence is the newest commit, what a
 * reopen reads (root + replay of the commits after it), and a clean verifyRepository.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import { readAnchor } from '../../src/store/recovery.js';
import { verifyRepository } from '../../src/store/verify.js';
import { expectBytes } from '../support/bytes.js';
import { collect, stream } from './helpers.js';
import { GatedRootsProvider } from './gated-roots.js';


/** Checkpoints only when asked or every 8 commits; tiny overlays otherwise never force one. */
const OPTIONS = { checkpointEvery: 8, overlayBytes: 1 << 30, maxRuns: 3, blockCacheBytes: 0, bodyCacheBytes: 0 };

const utf8 = (s: string) => new TextEncoder().encode(s);

async function put(store: Store, bucket: string, key: string, text: string): Promise<void> {
  const body = utf8(text);
  await store.putObject(bucket, key, stream(body), { size: body.length });
}

async function read(store: Store, bucket: string, key: string): Promise<string> {
  return new TextDecoder().decode(await collect((await store.getObject(bucket, key)).body));
}

async function keys(store: Store, bucket: string): Promise<string[]> {
  const out: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.listObjects(bucket, { maxKeys: 1000, ...(after ? { continuationToken: after } : {}) });
    out.push(...page.contents.map((o) => o.key));
    if (!page.isTruncated) return out;
    after = page.nextContinuationToken;
  }
}

/** Waits until a root write is held at the gate (the checkpoint is in flight). */
async function untilHeld(p: GatedRootsProvider): Promise<void> {
  for (let i = 0; p.waiting === 0; i++) {
    expect(i, 'no checkpoint reached its root write').toBeLessThan(2000);
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function open(inner: Provider, p = new GatedRootsProvider(inner), options = {}) {
  const events: string[] = [];
  const store = await Store.open(p, { ...OPTIONS, ...options, log: (e) => events.push(e) });
  return { store, p, events };
}

describe('a checkpoint beside the commit loop', () => {
  it('lets writes be acknowledged while it is in flight; they are durable and survive a reopen', async () => {
    const inner = await createMemoryProvider();
    const { store, p } = await open(inner);
    await store.createBucket('bkt');
    for (let i = 0; i < 20; i++) await put(store, 'bkt', `before/${i}`, `v${i}`);
    await store.repo.idle();
    const rootBefore = store.repo.rootSeq;

    p.hold();
    // Enough commits to make a checkpoint due; it freezes, builds, and waits at its root write.
    for (let i = 0; i < OPTIONS.checkpointEvery; i++) await put(store, 'bkt', `due/${i}`, `d${i}`);
    await untilHeld(p);
    const heldAt = store.repo.seq; // the checkpoint froze at or before this commit
    const checkpoints = store.repo.stats.checkpoints;
    // Acknowledged while the checkpoint is in flight: overwrites, deletes, new keys.
    for (let i = 0; i < 30; i++) await put(store, 'bkt', `during/${i}`, `w${i}`);
    await put(store, 'bkt', 'before/0', 'overwritten during');
    await store.deleteObject('bkt', 'before/1');
    expect(store.repo.stats.checkpoints).toBe(checkpoints);
    expect(store.repo.rootSeq).toBe(rootBefore);
    expect(store.repo.seq).toBeGreaterThan(heldAt);
    expect(await read(store, 'bkt', 'during/29')).toBe('w29');

    p.release();
    await store.repo.idle();
    expect(store.repo.stats.checkpoints).toBeGreaterThan(checkpoints);
    // The root is the commit it froze at, before the writes made while it was in flight (they
    // are in the commits a reopen replays); the anchor names the newest commit.
    expect(store.repo.rootSeq).toBeGreaterThan(rootBefore);
    expect(store.repo.rootSeq).toBeLessThanOrEqual(heldAt);
    const { anchor } = (await readAnchor(inner))!;
    expect(anchor.seq).toBe(store.repo.seq);
    expect(anchor.seq).toBeGreaterThan(anchor.root.seq);
    expect(anchor.root.seq).toBe(store.repo.rootSeq);
    const b = store.repo.state.buckets.get('bkt')!;
    expect(b.frozen).toEqual([]); // the layers became runs
    expect(await read(store, 'bkt', 'before/0')).toBe('overwritten during');
    await expect(store.getObject('bkt', 'before/1')).rejects.toMatchObject({ code: 'NoSuchKey' });
    const live = await keys(store, 'bkt');
    expect(live).toHaveLength(20 - 1 + OPTIONS.checkpointEvery + 30);
    await store.close();

    const again = (await open(inner)).store;
    expect(await keys(again, 'bkt')).toEqual(live);
    expect(await read(again, 'bkt', 'before/0')).toBe('overwritten during');
    for (let i = 0; i < 30; i++) expect(await read(again, 'bkt', `during/${i}`)).toBe(`w${i}`);
    await again.close();
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });

  it('comes out right when buckets are forked, created and deleted while it is in flight', async () => {
    const inner = await createMemoryProvider();
    const { store, p } = await open(inner);
    for (const name of ['src', 'doomed', 'kept']) await store.createBucket(name);
    for (let i = 0; i < 10; i++) {
      await put(store, 'src', `k/${i}`, `s${i}`);
      await put(store, 'kept', `k/${i}`, `k${i}`);
    }
    await store.forkBucket('src', 'early-fork'); // a fork whose layer the checkpoint shares
    await put(store, 'src', 'k/0', 'after early fork');
    await store.repo.idle();

    p.hold();
    const started = store.repo.stats.checkpoints;
    const forced = store.repo.checkpoint();
    await untilHeld(p);
    // While the checkpoint waits at its root write:
    await put(store, 'src', 'k/1', 'src during');
    await store.forkBucket('src', 'late-fork');
    await put(store, 'late-fork', 'k/2', 'late-fork own');
    await put(store, 'src', 'k/3', 'src after late fork');
    await store.createBucket('fresh');
    await put(store, 'fresh', 'x', 'fresh x');
    await store.deleteObject('doomed', 'nothing'); // a no-op delete: nothing to stage
    await store.deleteBucket('doomed');
    await store.createBucket('doomed'); // same name, new bucket
    await put(store, 'doomed', 'reborn', 'yes');
    expect(store.repo.stats.checkpoints).toBe(started);
    p.release();
    await forced;
    await store.repo.idle();
    expect(store.repo.stats.checkpoints).toBeGreaterThan(started);

    const expected = async (s: Store) => {
      expect(await read(s, 'src', 'k/0')).toBe('after early fork');
      expect(await read(s, 'src', 'k/1')).toBe('src during');
      expect(await read(s, 'src', 'k/3')).toBe('src after late fork');
      expect(await read(s, 'early-fork', 'k/0')).toBe('s0');
      expect(await read(s, 'early-fork', 'k/1')).toBe('s1');
      expect(await read(s, 'late-fork', 'k/0')).toBe('after early fork');
      expect(await read(s, 'late-fork', 'k/1')).toBe('src during');
      expect(await read(s, 'late-fork', 'k/2')).toBe('late-fork own');
      expect(await read(s, 'late-fork', 'k/3')).toBe('s3');
      expect(await read(s, 'src', 'k/2')).toBe('s2');
      expect(await read(s, 'fresh', 'x')).toBe('fresh x');
      expect(await keys(s, 'doomed')).toEqual(['reborn']);
      expect(await keys(s, 'kept')).toHaveLength(10);
      expect(await keys(s, 'src')).toHaveLength(10);
      expect(await keys(s, 'late-fork')).toHaveLength(10);
      expect(await keys(s, 'early-fork')).toHaveLength(10);
      expect((await s.listBuckets()).map((b) => b.name).sort()).toEqual(['doomed', 'early-fork', 'fresh', 'kept', 'late-fork', 'src']);
    };
    await expected(store);
    // The late fork reads the checkpoint's runs below its own layer, like its source.
    const src = store.repo.state.buckets.get('src')!;
    const late = store.repo.state.buckets.get('late-fork')!;
    expect(late.runs).toEqual(src.runs);
    await store.close();

    const again = (await open(inner)).store;
    await expected(again);
    await again.checkpoint(); // and once more from the replayed state
    await expected(again);
    await again.close();
    const third = (await open(inner)).store;
    await expected(third);
    await third.close();
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });

  it('leaves state readable when it fails in the background, and a later checkpoint succeeds', async () => {
    const inner = await createMemoryProvider();
    const { store, p, events } = await open(inner);
    await store.createBucket('bkt');
    for (let i = 0; i < 5; i++) await put(store, 'bkt', `k/${i}`, `v${i}`);
    await store.repo.idle();
    const rootBefore = store.repo.rootSeq;

    // Every run and root write fails: the checkpoint due after 8 commits fails in the background.
    p.failPut = (key) => key.startsWith('runs/') || key.startsWith('roots/');
    for (let i = 0; i < OPTIONS.checkpointEvery + 4; i++) await put(store, 'bkt', `f/${i}`, `f${i}`);
    await store.repo.idle();
    expect(store.repo.stats.failedCheckpoints).toBeGreaterThan(0);
    expect(events).toContain('checkpoint.failed');
    expect(store.repo.rootSeq).toBe(rootBefore);
    // Abandoned: the frozen overlay became the overlay again, nothing is lost or doubled.
    const b = store.repo.state.buckets.get('bkt')!;
    expect(b.frozen).toEqual([]);
    expect(b.versions.frozen).toEqual([]);
    await put(store, 'bkt', 'k/0', 'after the failure');
    expect(await keys(store, 'bkt')).toHaveLength(5 + OPTIONS.checkpointEvery + 4);
    expect(await read(store, 'bkt', 'k/0')).toBe('after the failure');
    expect(await read(store, 'bkt', 'f/3')).toBe('f3');
    await expect(store.repo.checkpoint()).rejects.toThrow(/failed by the test/);

    p.failPut = undefined;
    await store.repo.checkpoint();
    expect(store.repo.rootSeq).toBe(store.repo.seq);
    expect(b.frozen).toEqual([]);
    expect(await read(store, 'bkt', 'k/0')).toBe('after the failure');
    await store.close();
    const again = (await open(inner)).store;
    expect(again.repo.rootSeq).toBe(again.repo.seq);
    expect(await keys(again, 'bkt')).toHaveLength(5 + OPTIONS.checkpointEvery + 4);
    expect(await read(again, 'bkt', 'k/0')).toBe('after the failure');
    await again.close();
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });

  it('makes writes wait once the overlays fill up again before it lands (back-pressure)', async () => {
    const inner = await createMemoryProvider();
    const { store, p } = await open(inner, undefined, { checkpointEvery: 1 << 20, overlayBytes: 4096 });
    await store.createBucket('bkt');
    p.hold();
    let i = 0;
    const body = 'x'.repeat(100);
    // Fill the overlay until a checkpoint freezes it, then let that checkpoint reach its root
    // write, where it holds. (Writing on until it holds could fill the fresh overlays first
    // when building the runs is slow, and the writes would then wait on a held checkpoint.)
    const bucket = store.repo.state.buckets.get('bkt')!;
    while (p.waiting === 0 && bucket.frozen.length === 0) {
      expect(i).toBeLessThan(1000);
      await put(store, 'bkt', `k/${i++}`, body);
      await new Promise((r) => setImmediate(r));
    }
    await untilHeld(p);
    // Fill the fresh overlays again, to half of overlayBytes (commit-loop.ts
    // IN_FLIGHT_OVERLAY_SHARE): the next write waits for the checkpoint.
    while (store.repo.state.liveOverlayBytes() < 4096 / 2) await put(store, 'bkt', `k/${i++}`, body);
    let acked = false;
    const waiting = put(store, 'bkt', 'blocked', body).then(() => (acked = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(acked).toBe(false);
    expect(store.repo.state.liveOverlayBytes()).toBeGreaterThanOrEqual(4096 / 2);
    p.release();
    await waiting;
    expect(store.repo.stats.checkpointWaits).toBeGreaterThan(0);
    expect(await read(store, 'bkt', 'blocked')).toBe(body);
    await store.close();
    const again = (await open(inner)).store;
    expect(await keys(again, 'bkt')).toHaveLength(i + 1);
    await again.close();
  });

  it('keeps multipart uploads in progress and their parts across a checkpoint in flight', async () => {
    const inner = await createMemoryProvider();
    const { store, p } = await open(inner);
    await store.createBucket('bkt');
    const uploadId = await store.createMultipartUpload('bkt', 'big');
    const part1 = utf8('a'.repeat(5 * 1024 * 1024));
    const e1 = await store.uploadPart('bkt', 'big', uploadId, 1, stream(part1), { size: part1.length });
    p.hold();
    const forced = store.repo.checkpoint();
    await untilHeld(p);
    const part2 = utf8('tail');
    const e2 = await store.uploadPart('bkt', 'big', uploadId, 2, stream(part2), { size: part2.length });
    const second = await store.createMultipartUpload('bkt', 'other');
    expect(store.repo.state.buckets.get('bkt')!.uploads.frozen.length).toBe(1);
    expect((await store.listMultipartUploads('bkt')).uploads).toHaveLength(2);
    p.release();
    await forced;
    expect(store.repo.state.buckets.get('bkt')!.uploads.frozen).toEqual([]);
    await store.close();
    const again = (await open(inner)).store;
    expect((await again.listMultipartUploads('bkt')).uploads.map((u) => u.uploadId).sort()).toEqual([uploadId, second].sort());
    await again.completeMultipartUpload('bkt', 'big', uploadId, [
      { partNumber: 1, etag: e1.etag },
      { partNumber: 2, etag: e2.etag },
    ]);
    const got = await collect((await again.getObject('bkt', 'big')).body);
    expectBytes(got, new Uint8Array([...part1, ...part2]), 'big');
    await again.close();
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });
});
