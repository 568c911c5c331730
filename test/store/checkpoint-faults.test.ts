/**
 * Checkpoints under read faults: the root keeps advancing when a compaction cannot read.
 *
 * Regression: a checkpoint flushed every overlay, compacted, and only then wrote its root, so
 * a compaction that failed (it reads every run it merges) failed the whole checkpoint. Each
 * failed checkpoint still flushed a run, so the next compaction read one run more and was
 * likelier still to fail: under transient read faults the root stopped advancing while the
 * chain a reopen replays grew (the fault test "fs provider, seed 9" reopened 21 commits
 * behind its root and could not get one clean open in 1,000 attempts). Only the version
 * log's compaction was exempt. Now any failed compaction is logged and skipped: the root
 * names the runs as they are, and the next checkpoint merges them.
 *
 * Each case fails every read of one keyspace's existing runs while a checkpoint runs (the
 * run it flushes is new, so it is still read back), checks the root names the head commit,
 * that nothing was lost, and that the runs are merged once reads work again.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { Store } from '../../src/store/store.js';
import { readAnchor } from '../../src/store/recovery.js';
import { verifyRepository } from '../../src/store/verify.js';
import type { RunHandle } from '../../src/store/state.js';
import { expectBytes } from '../support/bytes.js';
import { randomBytes } from '../support/random.js';
import { collect, stream } from './helpers.js';
import { ObservedProvider } from './observed-provider.js';

const B = 'checkpoints';

type Keyspace = 'objects' | 'uploads' | 'versions';

/** Checkpoints only when asked; more than two runs in a keyspace call for a compaction. */
const OPTIONS = { checkpointEvery: 1 << 20, overlayBytes: 1 << 30, maxRuns: 2, blockCacheBytes: 0, bodyCacheBytes: 0 };

function runsOf(store: Store, keyspace: Keyspace): RunHandle[] {
  const b = store.repo.state.buckets.get(B)!;
  return keyspace === 'objects' ? b.runs : keyspace === 'uploads' ? b.uploads.runs : b.versions.runs;
}

describe('a compaction that cannot read its runs', () => {
  it.each<Keyspace>(['objects', 'uploads', 'versions'])('(%s) does not hold back the root; the runs are merged once reads work', async (keyspace) => {
    const inner = await createMemoryProvider();
    const p = new ObservedProvider(inner);
    const events: { event: string; fields: Record<string, unknown> }[] = [];
    const store = await Store.open(p, { ...OPTIONS, log: (event, fields) => events.push({ event, fields }) });
    await store.createBucket(B);
    const bodies = new Map<string, Uint8Array>();
    let n = 0;
    const write = async () => {
      const key = `k${n++}`;
      const body = randomBytes(100 + n, n);
      await store.putObject(B, key, stream(body), { size: body.length });
      bodies.set(key, body);
      if (keyspace === 'uploads') await store.createMultipartUpload(B, key);
    };
    const failed = () => events.filter((e) => e.event === 'compaction.failed' && e.fields.keyspace === keyspace);

    // Checkpoint with the keyspace's runs unreadable until its compaction has been tried.
    for (let i = 0; failed().length === 0; i++) {
      expect(i, `no ${keyspace} compaction was attempted`).toBeLessThan(12);
      await write();
      for (const r of runsOf(store, keyspace)) p.failing.add(r.key);
      await store.repo.checkpoint(); // rejected before the fix, once the compaction was tried
      p.failing.clear();
      expect(store.repo.rootSeq, 'the root names the head commit').toBe(store.repo.seq);
      const { anchor } = (await readAnchor(inner))!;
      expect(anchor.root.seq).toBe(store.repo.seq);
    }
    expect(p.failed).toBeGreaterThan(0);
    expect(store.repo.stats.failedCompactions).toBe(failed().length);
    const piledUp = runsOf(store, keyspace).length;
    expect(piledUp).toBeGreaterThan(OPTIONS.maxRuns);

    // Reads work again: the next checkpoint merges what the failed one left.
    await write();
    await store.repo.checkpoint();
    expect(runsOf(store, keyspace).length).toBeLessThan(piledUp);
    expect(store.repo.rootSeq).toBe(store.repo.seq);
    for (const [key, body] of bodies) expectBytes(await collect((await store.getObject(B, key)).body), body, key);
    await store.close();

    // Reopened: nothing to replay, everything there.
    const again = await Store.open(inner, OPTIONS);
    expect(again.repo.rootSeq).toBe(again.repo.seq);
    for (const [key, body] of bodies) expectBytes(await collect((await again.getObject(B, key)).body), body, key);
    if (keyspace === 'uploads') expect((await again.listMultipartUploads(B)).uploads).toHaveLength(bodies.size);
    if (keyspace === 'versions') expect((await again.listVersions(B)).versions).toHaveLength(bodies.size);
    await again.close();
    expect((await verifyRepository(inner)).problems).toEqual([]);
  });
});
