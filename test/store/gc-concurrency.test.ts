/**
 * GC while everything else runs: GC passes (short grace, pack cleaning at a high threshold so
 * bodies really move) loop beside writers (new keys, overwrites, deletes, packed and carrier
 * bodies, SSE-S3), a versioned bucket whose every version is modelled, forks (as of now and as
 * of a past time) and restores on a bucket of their own, and history expiry on a bucket with a
 * window of 0. Afterwards every version the model says is reachable reads back byte-exact (in
 * every bucket and fork), the same after a reopen, verify is clean, and GC did free blobs and
 * move bodies while the load ran.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { runGc, type GcReport } from '../../src/store/gc.js';
import { verifyRepository } from '../../src/store/verify.js';
import type { KeyRing } from '../../src/store/crypto/envelope.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, stream } from './helpers.js';

const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/**
 * Longer than any write of this test stays unnamed: a PUT of under a MiB, a fork at a time
 * between writing its runs and its commit (which waits for the pipeline to drain). At 1 s a
 * full `npm test` on 2 busy cores once let a carrier chunk stay unnamed longer, and GC freed it
 * (the grace is GC's only protection for in-flight carriers: see the report / README).
 */
const GRACE_MS = 2500;
const RUN_MS = 9000;
const ROOT = Buffer.from(randomBytes(32, 4242));
const KEYS: KeyRing = { sseS3: ROOT };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Body = { bytes: Uint8Array; enc: boolean };

/**
 * Both commit paths: commit blobs, and the commit log rolling every 256 KiB (instead of 48 MiB)
 * so that rolled segments, which GC cleans once a checkpoint covers them, appear within the run.
 */
const PATHS = [
  { name: 'commit blobs', opts: { commitLog: false } },
  { name: 'commit log', opts: { commitLog: true, segmentRollBytes: 256 * 1024 } },
] as const;

it.each(PATHS)('keeps every reachable version byte-exact while GC, writes, forks, restores and expiry run together ($name)', { timeout: 300_000 }, async ({ opts }) => {
  const dir = mkdtempSync(join(base, 'strata-gc-conc-'));
  dirs.push(dir);
  const store = await Store.open(await createFsProvider({ dir }), { overlayBytes: 256 * 1024, checkpointEvery: 40, maxRuns: 3, ...opts });
  let seed = 1;
  const body = (n: number): Body => ({ bytes: randomBytes(n, seed++), enc: seed % 5 === 0 });
  const size = () => (seed % 11 === 0 ? 600 * 1024 + (seed % 7) * 1000 : 50 + (seed % 40) * 37);
  const put = async (bucket: string, key: string, b: Body) =>
    (await store.putObject(bucket, key, stream(b.bytes), { size: b.bytes.length, ...(b.enc ? { encryption: { mode: 'sse-s3' as const, root: ROOT } } : {}) })).versionId;
  const read = async (bucket: string, key: string, b: Body, versionId?: string) => {
    const got = await store.getObject(bucket, key, { ...(versionId ? { versionId } : {}), ...(b.enc ? { keys: KEYS } : {}) });
    expectBytes(await collect(got.body), b.bytes, `${bucket}/${key}${versionId ? `@${versionId}` : ''}`);
  };

  for (const b of ['plain', 'vers', 'frk', 'scratch']) await store.createBucket(b);
  await store.putVersioning('vers', 'Enabled');
  await store.putHistoryWindow('scratch', 0);
  let stop = false;
  const plain = new Map<string, Body>();
  const vers = new Map<string, { versionId: string; body: Body }[]>();
  const forks = new Map<string, Map<string, Body>>();
  const gcReports: GcReport[] = [];
  let expired = 0;

  const writers = [0, 1].map(async (w) => {
    for (let i = 0; !stop; i++) {
      const key = `w${w}/${i % 25}`;
      if (i % 9 === 8 && plain.has(key)) {
        await store.deleteObject('plain', key);
        plain.delete(key);
      } else {
        const b = body(size());
        await put('plain', key, b);
        plain.set(key, b);
      }
      const vk = `v${w}/${i % 10}`;
      const vb = body(size());
      const versionId = await put('vers', vk, vb);
      vers.set(vk, [...(vers.get(vk) ?? []), { versionId, body: vb }]);
      // Few keys, so that overwrites (history for expiry to drop) start within the first
      // rounds: on 2 busy cores a writer may get through only a few dozen in the whole run.
      await put('scratch', `s${w}/${i % 6}`, body(size()));
      if (i % 7 === 0) await store.deleteObject('scratch', `s${w}/${(i + 3) % 6}`);
    }
  });

  // Forks and restores on their own bucket, in sequence, each checked against its model.
  const forker = (async () => {
    const fr = new Map<string, Body>();
    for (let round = 0; !stop; round++) {
      for (let i = 0; i < 8; i++) {
        const b = body(size());
        await put('frk', `f/${i}`, b);
        fr.set(`f/${i}`, b);
      }
      await sleep(3);
      // Commit times strictly increase, so a burst (the commit log takes > 1 commit per ms)
      // runs ahead of the wall clock: "now" for history is the later of the two (history-window.ts).
      const then = Math.max(Date.now(), store.repo.lastCommitTime);
      const snapshot = new Map(fr);
      await sleep(3);
      await store.forkBucket('frk', `frk-now-${round}`);
      forks.set(`frk-now-${round}`, new Map(fr));
      for (let i = 0; i < 8; i += 2) {
        await store.deleteObject('frk', `f/${i}`);
        fr.delete(`f/${i}`);
      }
      await store.forkBucket('frk', `frk-at-${round}`, { at: then });
      forks.set(`frk-at-${round}`, snapshot);
      await store.restore('frk', { to: then });
      fr.clear();
      for (const [k, v] of snapshot) fr.set(k, v);
      forks.set('frk', fr);
      await sleep(20);
    }
  })();

  const collector = (async () => {
    while (!stop) {
      // The repository checkpoints by itself under load (every 40 commits here).
      gcReports.push(await runGc(store.repo, { graceMs: GRACE_MS, cleanBelow: 0.9 }));
      await sleep(50);
    }
  })();
  const expirer = (async () => {
    while (!stop) {
      expired += (await store.expireHistory({ bucket: 'scratch' })).expired;
      await sleep(100);
    }
  })();

  await sleep(RUN_MS);
  stop = true;
  await Promise.all([...writers, forker, collector, expirer]);
  // One more pass after the load, past the grace, with nothing running beside it.
  await sleep(GRACE_MS + 50);
  gcReports.push(await runGc(store.repo, { graceMs: GRACE_MS, cleanBelow: 0.9, checkpoint: true }));

  const total = (k: 'freedBlobs' | 'movedBytes' | 'cleanedPacks') => gcReports.reduce((n, r) => n + r[k], 0);
  console.log(`gc-concurrency: ${gcReports.length} passes, freed ${total('freedBlobs')} blobs, cleaned ${total('cleanedPacks')} packs, moved ${total('movedBytes')} B; expiry dropped ${expired}; ${vers.size} versioned keys, ${forks.size} forks`);
  console.log(gcReports.map((r) => `${r.ms}ms ex${r.examinedBlobs} fr${r.freedBlobs} cl${r.cleanedPacks} mv${r.movedBytes} err${r.errors}`).join("\n"));
  expect(gcReports.length).toBeGreaterThan(3);
  expect(total('freedBlobs')).toBeGreaterThan(0);
  expect(total('movedBytes')).toBeGreaterThan(0);
  expect(expired).toBeGreaterThan(0);
  if (opts.commitLog) expect(store.repo.stats.segmentRolls).toBeGreaterThan(1);

  const check = async (s: Store, label: string) => {
    const r = async (bucket: string, key: string, b: Body, versionId?: string) => {
      const got = await s.getObject(bucket, key, { ...(versionId ? { versionId } : {}), ...(b.enc ? { keys: KEYS } : {}) });
      expectBytes(await collect(got.body), b.bytes, `${label}: ${bucket}/${key}${versionId ? `@${versionId}` : ''}`);
    };
    for (const [k, b] of plain) await r('plain', k, b);
    for (const [k, versions] of vers) for (const v of versions) await r('vers', k, v.body, v.versionId);
    for (const [name, model] of forks) {
      const listed = (await s.listObjects(name, { maxKeys: 1000 })).contents.map((e) => e.key);
      expect(listed, `${label}: ${name} keys`).toEqual([...model.keys()].sort());
      for (const [k, b] of model) await r(name, k, b);
    }
  };
  await check(store, 'live');
  await read('plain', [...plain.keys()][0]!, [...plain.values()][0]!);
  await store.close();
  expect((await verifyRepository(await createFsProvider({ dir }))).problems).toEqual([]);
  const reopened = await Store.open(await createFsProvider({ dir }), opts);
  await check(reopened, 'reopened');
  await reopened.close();
});
