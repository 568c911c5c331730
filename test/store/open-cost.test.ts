/**
 * What opening a repository reads: exactly the anchor, the config, the newest root, each
 * commit after the root once, and one footer read per run of the object index and the
 * uploads keyspace; no history run, no write, no listing (so no migration runs again).
 *
 * Every provider call of an open is a way for it to fail (and costs a round trip on S3):
 * after the version log landed, opens also read every history run, and a reopen after a
 * fence in the fault test could not get one clean open in 1,000 attempts. This pins the cost
 * of an open, call by call, across checkpoints, compactions, uploads in progress and a
 * versioned bucket, and again right after an open (nothing an open writes is left to redo).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { decodeRunMeta } from '../../src/store/index/run-format.js';
import { readAnchor } from '../../src/store/recovery.js';
import { readRecord } from '../../src/store/records-io.js';
import { decodeRoot } from '../../src/store/root.js';
import { Store } from '../../src/store/store.js';
import { prng, randomBytes } from '../support/random.js';
import { chainCommits, stream } from './helpers.js';
import { ObservedProvider } from './observed-provider.js';

const KIB = 1024;
const BUCKETS = ['plain', 'versioned'];
/** Small thresholds: checkpoints, compactions and skipped rounds all happen within the test. */
const OPTIONS = { checkpointEvery: 8, overlayBytes: 16 * KIB, maxRuns: 3 };

/** The calls an open of `inner` must make, from its anchor and root (sorted). */
async function expectedOpen(inner: Provider): Promise<string[]> {
  const { anchor } = (await readAnchor(inner))!;
  const root = decodeRoot(await readRecord(inner, anchor.root, 'root'));
  const calls = ['get anchor', 'get config', `get ${anchor.root.key}`];
  const commits = await chainCommits(inner, root.seq);
  expect(commits.map((c) => c.seq)).toEqual(Array.from({ length: anchor.seq - root.seq }, (_, i) => root.seq + 1 + i));
  // chainCommits walks the same parents the open does: their keys are the commits it reads.
  let ref = anchor.head;
  for (let seq = anchor.seq; seq > root.seq && ref; seq--) {
    calls.push(`get ${ref.key}`);
    ref = commits[seq - root.seq - 1]!.parent;
  }
  for (const b of root.buckets) for (const meta of [...b.runs, ...b.uploadRuns]) calls.push(`get ${decodeRunMeta(meta).blobKey}`);
  return calls.sort();
}

describe('opening a repository', () => {
  it('reads the anchor, config, root, the commits after it and the served runs, nothing else', async () => {
    const inner = await createMemoryProvider();
    const next = prng(11);
    let store = await Store.open(inner, OPTIONS);
    for (const b of BUCKETS) await store.createBucket(b);
    await store.putVersioning('versioned', 'Enabled');
    let opens = 0;
    let sawHistory = false;
    let sawReplay = false;
    for (let phase = 0; phase < 6; phase++) {
      for (let i = 0; i < 10 + (next() % 7); i++) {
        const bucket = BUCKETS[next() % 2]!;
        const key = `k${next() % 12}`;
        const r = next() % 10;
        if (r < 6) {
          const body = randomBytes(next() % (6 * KIB), phase * 100 + i);
          await store.putObject(bucket, key, stream(body), { size: body.length });
        } else if (r < 8) await store.deleteObject(bucket, key);
        else await store.createMultipartUpload(bucket, key);
      }
      await store.close();
      const { anchor } = (await readAnchor(inner))!;
      const root = decodeRoot(await readRecord(inner, anchor.root, 'root'));
      sawHistory ||= root.buckets.some((b) => (b.versionRuns ?? []).length > 0);
      sawReplay ||= anchor.seq > root.seq;
      const want = await expectedOpen(inner);
      // Twice: what an open leaves behind must not make the next one do more.
      for (let again = 0; again < 2; again++) {
        const p = new ObservedProvider(inner);
        store = await Store.open(p, OPTIONS);
        opens++;
        expect([...p.calls].sort(), `open ${opens} (seq ${anchor.seq}, root ${anchor.root.seq})`).toEqual(want);
        if (again === 0) await store.close();
      }
    }
    await store.close();
    expect(opens).toBe(12);
    expect(sawHistory, 'the roots named history runs (which the opens did not read)').toBe(true);
    expect(sawReplay, 'some opens replayed commits after their root').toBe(true);
  });
});
