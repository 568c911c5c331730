/**
 * What a writer on the commit log keeps in memory while a checkpoint is in flight.
 *
 * Regression (1M-object writer, bench:engine scale lane): the log keeps nothing per commit in
 * memory (a frame is built, appended and let go), but it lets a writer fill the fresh overlays
 * much faster than a checkpoint flushes the frozen ones. Batches waited for the checkpoint only
 * once the fresh overlays held a whole `overlayBytes`, so every checkpoint met 2x `overlayBytes`
 * of overlays, and V8 sized its heap at a multiple of that live set. Now batches wait once the
 * fresh overlays hold half of it: overlays stay under ~1.5x `overlayBytes` (plus a batch each),
 * however many batches arrive while the checkpoint is held.
 *
 * A wrapper over a real fs provider (commit log on) holds the checkpoint's root write, so the
 * checkpoint is provably in flight while writes go on; the bound is read from the repository's
 * own accounting (RepoState.overlayBytes: frozen and live overlays).
 */
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { collect, stream, tempDir } from './helpers.js';
import { GatedRootsProvider } from './gated-roots.js';

/** Holds root writes (the checkpoint's last put before its anchor move) while `hold`ing; offers the inner provider's commit log. */
class HeldRoots extends GatedRootsProvider {
  openLog(key: string, bytes: number) {
    return this.inner.openLog!(key, bytes);
  }
}

/** Overlay bytes that start a checkpoint: a few dozen small puts. */
const OVERLAY = 16 * 1024;
const BODY = new TextEncoder().encode('x'.repeat(100));
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('commit log: memory while a checkpoint is in flight', () => {
  for (const writes of [120, 360]) {
    it(`overlays stay under 1.5x overlayBytes while ${writes} writes arrive behind a held checkpoint`, async () => {
      const { dir, cleanup } = tempDir('log-memory');
      try {
        const p = new HeldRoots(await createFsProvider({ dir }));
        const store = await Store.open(p, { overlayBytes: OVERLAY, checkpointEvery: 1 << 20, blockCacheBytes: 0, bodyCacheBytes: 0 });
        expect(store.repo.usesCommitLog).toBe(true);
        await store.createBucket('bkt');
        const state = store.repo.state;
        const put = (key: string) => store.putObject('bkt', key, stream(BODY), { size: BODY.length });
        // What one put adds to the overlays: the bound allows one batch past it.
        const before = state.overlayBytes();
        await put('first');
        const perPut = state.overlayBytes() - before;
        expect(perPut).toBeGreaterThan(0);

        // Fill the overlays until a checkpoint freezes them and holds at its root write.
        p.hold();
        let i = 0;
        while (p.waiting === 0) {
          expect(i, 'no checkpoint reached its root write').toBeLessThan(2000);
          await put(`a/${i++}`);
          await tick();
        }
        // `writes` writes, one batch each, arrive while it is held: they go on until the fresh
        // overlays are full for now, then wait.
        let peak = state.overlayBytes();
        let peakLive = state.liveOverlayBytes();
        let acked = 0;
        const writer = (async () => {
          for (let n = 0; n < writes; n++) {
            await put(`b/${n}`);
            acked++;
            peak = Math.max(peak, state.overlayBytes());
            peakLive = Math.max(peakLive, state.liveOverlayBytes());
          }
        })();
        // Until the writer stops making progress (back-pressure) or is done.
        for (let last = -1, still = 0; still < 20 && acked < writes; ) {
          await tick();
          still = acked === last ? still + 1 : 0;
          last = acked;
        }
        expect(acked, 'writes went on past the bound while the checkpoint was held').toBeLessThan(writes);
        // The frozen overlays hold at most OVERLAY and the put that crossed it; the fresh ones
        // half of OVERLAY and the put that crossed that.
        expect(peakLive).toBeLessThanOrEqual(OVERLAY / 2 + perPut);
        expect(peak).toBeLessThanOrEqual(1.5 * OVERLAY + 2 * perPut);

        p.release();
        await writer;
        expect(store.repo.stats.checkpointWaits).toBeGreaterThan(0);
        await store.close();

        // Every acknowledged write is there after a reopen.
        const again = await Store.open(await createFsProvider({ dir }));
        const last = await collect((await again.getObject('bkt', `b/${writes - 1}`)).body);
        expect(Buffer.from(last).equals(Buffer.from(BODY))).toBe(true);
        let keys = 0;
        for (let token: string | undefined; ; ) {
          const page = await again.listObjects('bkt', { maxKeys: 1000, ...(token ? { continuationToken: token } : {}) });
          keys += page.contents.length;
          if (!page.isTruncated) break;
          token = page.nextContinuationToken;
        }
        expect(keys).toBe(1 + i + writes);
        await again.close();
      } finally {
        cleanup();
      }
    });
  }
});
