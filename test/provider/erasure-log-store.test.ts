/**
 * A real Store on the commit log over the erasure provider (4+2 over six fs directories):
 * commits go to replicated log segments (no commit blobs), a reopen over a cold provider
 * replays them from the copies, one copy's damaged frame is read around, a domain lost while
 * writing loses no acknowledged object, and verify, scrub repair and GC understand segments.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getBytes } from '../../src/provider/provider.js';
import { readAnchor } from '../../src/store/recovery.js';
import { Store, type StoreOptions } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { runGc } from '../../src/store/gc.js';
import { randomBytes } from '../support/random.js';
import { collect, stream } from '../store/helpers.js';
import { cleanupRigs, KiB, MiB } from './erasure-helpers.js';
import { copyName, holders, killRig, reopen, type KillRig } from './erasure-log-helpers.js';

afterEach(cleanupRigs);

const B = 'bkt';
const GEOMETRY = { cellSize: 256 * KiB, stripeThreshold: MiB };
const OPTIONS: StoreOptions = { commitLog: true, checkpointEvery: 1 << 20 };

async function fill(store: Store, n: number, seed: number, want: Map<string, Uint8Array>, prefix = 'k'): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const body = randomBytes(50 + ((i * 97) % 5000), seed * 1000 + i);
      await store.putObject(B, `${prefix}${i}`, stream(body, 64 * KiB), { size: body.length });
      want.set(`${prefix}${i}`, body);
    })
  );
}

async function expectAll(store: Store, want: Map<string, Uint8Array>, label: string): Promise<void> {
  for (const [k, v] of want) expect(Buffer.from(await collect((await store.getObject(B, k)).body)).equals(Buffer.from(v)), `${label}: ${k}`).toBe(true);
}

async function openRig(): Promise<{ rig: KillRig; store: Store }> {
  const rig = await killRig(4, 2, 6, GEOMETRY);
  const store = await Store.open(rig.provider, OPTIONS);
  await store.createBucket(B);
  return { rig, store };
}

describe('Store on the commit log over the erasure provider', () => {
  it('appends commits to replicated segments, replays them cold, and reads around a damaged copy', async () => {
    const { rig, store } = await openRig();
    expect(store.repo.usesCommitLog).toBe(true);
    const want = new Map<string, Uint8Array>();
    await fill(store, 60, 1, want);
    const provider = store.repo.provider;
    expect((await provider.list({ prefix: 'commits/' })).items).toEqual([]);
    const segments = (await provider.list({ prefix: 'log/' })).items;
    expect(segments).toHaveLength(1);
    const seg = segments[0]!.key;
    expect((await holders(rig, seg)).length).toBe(3);
    expect((await readAnchor(provider))!.anchor.log?.key).toBe(seg);
    const seq = store.repo.seq;
    await store.close();

    // Damage the newest commits' frames on one copy: recovery must take them from another.
    const [a] = await holders(rig, seg);
    const name = (await copyName(rig.inner[a!]!, seg))!;
    const raw = Buffer.from(await getBytes(rig.inner[a!]!, name));
    let end = raw.length;
    while (end > 0 && raw[end - 1] === 0) end--;
    for (let at = Math.max(0, end - 20_000); at < end; at += 997) raw[at] ^= 0x5a;
    await rig.inner[a!]!.put(name, raw);
    await rig.provider.close();

    const cold = await reopen(rig, undefined, GEOMETRY);
    const again = await Store.open(cold.provider, OPTIONS);
    expect(again.repo.seq).toBe(seq);
    await expectAll(again, want, 'reopened');
    await again.close();
    const check = await reopen(rig, undefined, GEOMETRY);
    const report = await verifyRepository(check.provider);
    expect(report.problems).toEqual([]);
    // The open rewrote the damaged copy before new commits could chain on the tip (settleLog:
    // the newest records were on 2 whole copies, an append needs m + 1 = 3): nothing is left.
    const c = await check.provider.checkBlob(seg, { repair: true });
    expect(c.fragments.map((f) => f.state)).toEqual(['ok', 'ok', 'ok']);
    expect(c.repaired).toBe(0);
    expect(Buffer.from(await getBytes(check.inner[a!]!, name)).equals(raw)).toBe(false); // rewritten, not the damaged bytes
    await check.provider.close();
  }, 60_000);

  it('loses no acknowledged object when a domain dies mid-run, and scrub re-replicates', async () => {
    const rig = await killRig(4, 2, 6, GEOMETRY);
    const opts = { ...OPTIONS, segmentRollBytes: 16 * KiB };
    const store = await Store.open(rig.provider, opts);
    await store.createBucket(B);
    const want = new Map<string, Uint8Array>();
    await fill(store, 30, 2, want, 'a');
    const current = (await readAnchor(store.repo.provider))!.anchor.log!.key;
    const [victim] = await holders(rig, current);
    rig.kill(victim!);
    await fill(store, 30, 3, want, 'b');
    await expectAll(store, want, 'after the loss');
    const seq = store.repo.seq;
    await store.close();
    await rig.provider.close();

    // The dead domain is back empty-handed for the segment it lost: replay from the others.
    const cold = await reopen(rig, undefined, GEOMETRY);
    const again = await Store.open(cold.provider, opts);
    expect(again.repo.seq).toBe(seq);
    await expectAll(again, want, 'reopened');
    // Scrub: every segment back to m + 1 good copies.
    for (let next: string | undefined, first = true; first || next; first = false) {
      const page = await cold.provider.list({ prefix: 'log/', startAfter: next });
      for (const item of page.items) await cold.provider.checkBlob(item.key, { repair: true });
      next = page.next;
    }
    for (const item of (await cold.provider.list({ prefix: 'log/' })).items) {
      const c = await cold.provider.checkBlob(item.key);
      expect(c.fragments.map((f) => f.state), item.key).toEqual(['ok', 'ok', 'ok']);
    }
    await again.close();
    const v = await reopen(rig, undefined, GEOMETRY);
    expect((await verifyRepository(v.provider)).problems).toEqual([]);
    await v.provider.close();
  }, 60_000);

  it('GC deletes every copy of a segment nothing reaches any more, and keeps the ones still named', async () => {
    const rig = await killRig(4, 2, 6, GEOMETRY);
    const opts = { ...OPTIONS, retentionMs: 0 };
    const store = await Store.open(rig.provider, opts);
    await store.createBucket('gone');
    for (let i = 0; i < 4; i++) await store.putObject('gone', `g${i}`, stream(randomBytes(300, i), 1024), { size: 300 });
    const old = (await readAnchor(store.repo.provider))!.anchor.log!.key;
    await store.close();
    await rig.provider.close();
    const cold = await reopen(rig, undefined, GEOMETRY);
    const again = await Store.open(cold.provider, opts);
    await again.createBucket(B);
    for (let i = 0; i < 4; i++) await again.deleteObject('gone', `g${i}`);
    await again.deleteBucket('gone');
    const want = new Map<string, Uint8Array>();
    await fill(again, 8, 5, want);
    await again.repo.checkpoint();
    const current = (await readAnchor(again.repo.provider))!.anchor.log!.key;
    expect(current).not.toBe(old);
    // GC leaves blobs modified within a second of its mark on providers other than fs and
    // memory (gc-sweep.ts: mtime resolution), the erasure provider included.
    await new Promise((r) => setTimeout(r, 1100));
    await runGc(again.repo, { graceMs: 0, cleanBelow: 0 });
    // The pass rolls the log first (the anchor names a new segment); `current` stays (the
    // index names bodies in it); `old` holds nothing reachable: gone, every copy.
    const rolled = (await readAnchor(again.repo.provider))!.anchor.log!.key;
    expect((await cold.provider.list({ prefix: 'log/' })).items.map((i) => i.key).sort()).toEqual([...new Set([current, rolled])].sort());
    for (const c of cold.inner) expect(await copyName(c, old)).toBeUndefined();
    await expectAll(again, want, 'after gc');
    await again.close();
  }, 60_000);
});
