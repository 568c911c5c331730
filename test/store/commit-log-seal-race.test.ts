/**
 * A scan of the commit log racing the seal of its segment.
 *
 * Regression (CI, gc-concurrency with the log on): GC's mark scans the log (loadChainTip ->
 * scanLog) while writes go on; the scan reads the segment's size, then the writer rolls to a new
 * segment and seals the old one (cuts the preallocated tail to its written end), and the scan's
 * next window, sized from the old size, ran past the new end: the fs provider failed the read
 * ("file shorter than its size") and the GC pass with it. Only preallocated bytes past the last
 * frame are cut, so the scan must re-read the size and end at the last frame.
 *
 * The race is replayed deterministically: a wrapper over the real fs provider answers the
 * segment's head with the size it had before a seal (the written end plus a preallocation
 * step), as a head taken just before the seal would have.
 */
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { scanLog } from '../../src/store/commit-log/scan.js';
import { readAnchor, readFrameKey } from '../../src/store/recovery.js';
import { Store } from '../../src/store/store.js';
import { randomBytes } from '../support/random.js';
import { stream, tempDir } from './helpers.js';
import { ObservedProvider } from './observed-provider.js';

const STEP = 4 * 1024 * 1024;

/** Answers heads of `stale` keys with their size before a seal cut STEP bytes from them. */
class SizeBeforeSeal extends ObservedProvider {
  readonly stale = new Set<string>();
  override async head(key: string) {
    const h = await super.head(key);
    return this.stale.delete(key) ? { ...h, size: h.size + STEP } : h;
  }
}

describe('commit log scan racing a seal', () => {
  it('ends at the last frame when the segment was cut after its size was read', async () => {
    const { dir, cleanup } = tempDir('log-seal-race');
    try {
      const store = await Store.open(await createFsProvider({ dir }), { checkpointEvery: 1 << 20, commitLog: true });
      await store.createBucket('bkt');
      for (let i = 0; i < 6; i++) await store.putObject('bkt', `k${i}`, stream(randomBytes(300, i)), { size: 300 });
      await store.close();

      const fs = await createFsProvider({ dir });
      const found = await readAnchor(fs);
      const from = found!.anchor.log!;
      const after = { seq: found!.anchor.seq, ref: found!.anchor.head ?? found!.anchor.root };
      const key = await readFrameKey(fs);
      const truth = await scanLog(fs, from, after, key);
      expect(truth.commits.length).toBeGreaterThanOrEqual(6);

      const raced = new SizeBeforeSeal(fs);
      raced.stale.add(from.key);
      const got = await scanLog(raced, from, after, key);
      expect(got.commits.map((c) => c.record.seq)).toEqual(truth.commits.map((c) => c.record.seq));
      expect(got.end).toEqual(truth.end);
      await fs.close();
    } finally {
      cleanup();
    }
  });
});
