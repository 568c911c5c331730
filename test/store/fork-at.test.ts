/**
 * Forks as of a past time (store level, real providers): at many steps of a seeded history
 * the fork holds exactly the model's objects and versions then (same version ids), bodies
 * shared; it is isolated from its source both ways, survives the source's deletion, replay
 * before a checkpoint and reopen after one; a crash before its commit leaves no fork; and
 * times outside the source's window are refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { prepareForkAt } from '../../src/store/fork-at-time.js';
import { verifyRepository } from '../../src/store/verify.js';
import { decodeCommit, encodeCommit, type Mutation } from '../../src/store/commit.js';
import { collect, makeProvider, type ProviderKind } from './helpers.js';
import { BucketModel, Clock, putText, runScript } from './history-model.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(kind: ProviderKind, clock: Clock, opts: Parameters<typeof Store.open>[1] = {}) {
  const p = await makeProvider(kind);
  cleanups.push(p.cleanup);
  const all = { ...opts, now: clock.now };
  const store = await Store.open(p.provider, all);
  return { store, provider: p.provider, reopen: async () => Store.open(await p.reopen(), all) };
}

/** Forks `source` as of `at` into `name` (fork.ts, with its settings). */
async function forkAt(store: Store, source: string, name: string, at: number): Promise<void> {
  await store.forkBucket(source, name, { at });
}

const text = async (body: AsyncIterable<Uint8Array>) => Buffer.from(await collect(body)).toString();

async function contents(store: Store, bucket: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let token: string | undefined;
  do {
    const page = await store.listObjects(bucket, { maxKeys: 3, ...(token ? { continuationToken: token } : {}) });
    for (const c of page.contents) out.set(c.key, await text((await store.getObject(bucket, c.key)).body));
    token = page.nextContinuationToken;
  } while (token);
  return out;
}

async function versions(store: Store, bucket: string): Promise<[string, string, boolean][]> {
  const out: [string, string, boolean][] = [];
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    const r = await store.listVersions(bucket, { maxKeys: 4, ...(keyMarker !== undefined ? { keyMarker } : {}), ...(versionIdMarker !== undefined ? { versionIdMarker } : {}) });
    out.push(...r.versions.map((v): [string, string, boolean] => [v.key, v.versionId, v.version.deleteMarker]));
    if (!r.isTruncated) return out;
    keyMarker = r.nextKeyMarker;
    versionIdMarker = r.nextVersionIdMarker;
  }
}

const KEYS = ['a', 'b', 'c/x', 'c/y', 'd/e', 'zz'];

describe.each(['memory', 'fs'] as const)('forks as of a past time on %s', (kind) => {
  it('hold the source as it was (objects and versions) at every sampled step, and survive replay and reopen', async () => {
    const clock = new Clock();
    const { store, provider, reopen } = await open(kind, clock, { checkpointEvery: 9, maxRuns: 2 });
    await store.createBucket('src');
    const model = new BucketModel();
    const steps = await runScript(store, clock, 'src', model, { seed: 33, count: 50, keys: KEYS });
    const sampled = [1, 6, 13, 25, 38, 50].map((i) => steps[i]!);
    for (const [n, step] of sampled.entries()) {
      clock.tick();
      await forkAt(store, 'src', `fork-${n}`, step.time);
      expect(await contents(store, `fork-${n}`), `fork at "${step.what}"`).toEqual(step.snapshot);
      expect(await versions(store, `fork-${n}`), `versions at "${step.what}"`).toEqual(step.versions);
    }
    // Isolation both ways.
    clock.tick();
    await putText(store, 'fork-2', 'only-in-fork', 'f');
    await putText(store, 'src', 'only-in-src', 's');
    await expect(store.getObject('src', 'only-in-fork')).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(store.getObject('fork-2', 'only-in-src')).rejects.toMatchObject({ code: 'NoSuchKey' });
    // Replay (no checkpoint since the last forks), then a checkpoint and a reopen.
    await store.close();
    const s2 = await reopen();
    for (const [n, step] of sampled.entries()) {
      const want = new Map(step.snapshot);
      if (n === 2) want.set('only-in-fork', 'f');
      expect(await contents(s2, `fork-${n}`)).toEqual(new Map([...want].sort(([a], [b]) => (a < b ? -1 : 1))));
    }
    await s2.checkpoint();
    await s2.close();
    const s3 = await reopen();
    expect(await contents(s3, 'fork-5')).toEqual(sampled[5]!.snapshot);
    expect(await versions(s3, 'fork-4')).toEqual(sampled[4]!.versions);
    // Forked again, as of now (O(1), sharing the fork's own runs) and as of its creation.
    await s3.forkBucket('fork-3', 'fork-of-fork');
    expect(await versions(s3, 'fork-of-fork')).toEqual(sampled[3]!.versions);
    await s3.forkBucket('fork-4', 'fork-at-fork', { at: s3.headBucket('fork-4').created });
    expect(await contents(s3, 'fork-at-fork')).toEqual(sampled[4]!.snapshot);
    await expect(s3.forkBucket('fork-4', 'too-early', { at: s3.headBucket('fork-4').created - 1 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    const report = await verifyRepository(kind === 'fs' ? s3.repo.provider : provider);
    expect(report.problems).toEqual([]);
    await s3.close();
  }, 60_000);
});

describe('forks as of a past time', () => {
  it('share bodies, outlive their source, and keep their own history from their creation', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    await store.createBucket('orig');
    await store.putVersioning('orig', 'Enabled');
    const v1 = await putText(store, 'orig', 'k', 'one');
    const t = clock.mark(store);
    await store.removeVersion('orig', 'k', v1.versionId); // removed after t: the fork still has it
    await putText(store, 'orig', 'k', 'two');
    clock.tick();
    await forkAt(store, 'orig', 'copy', t);
    const got = await store.getObject('copy', 'k');
    expect(await text(got.body)).toBe('one');
    expect(got.version.versionId).toBe(v1.versionId);
    expect(got.version.location).toEqual(v1.version.location);
    // The source goes; the fork stays whole.
    for (const v of (await store.listVersions('orig')).versions) await store.removeVersion('orig', v.key, v.versionId);
    await store.deleteBucket('orig');
    expect(await text((await store.getObject('copy', 'k', { versionId: v1.versionId })).body)).toBe('one');
    // Its history starts at its creation.
    const created = store.headBucket('copy').created;
    await expect(store.getObject('copy', 'k', { asOf: created - 1 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    expect(await text((await store.getObject('copy', 'k', { asOf: created })).body)).toBe('one');
  });

  it('leave no bucket when the commit never happens, and refuse times outside the window', async () => {
    const clock = new Clock();
    const { store, reopen } = await open('fs', clock);
    await store.createBucket('wsb');
    const created = store.headBucket('wsb').created;
    await putText(store, 'wsb', 'k', 'x');
    const t = clock.mark(store);
    // Step 1 only (a crash before the commit): runs written, no bucket, nothing after reopen.
    await prepareForkAt(store.repo, 'wsb', t);
    await store.close();
    const s2 = await reopen();
    expect(s2.listBuckets().map((b) => b.name)).toEqual(['wsb']);
    await expect(prepareForkAt(s2.repo, 'wsb', created - 1)).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/fork time .* before bucket wsb was created/) });
    await expect(prepareForkAt(s2.repo, 'wsb', Math.max(clock.t, s2.repo.lastCommitTime) + 1)).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/in the future/) });
    await s2.putHistoryWindow('wsb', 0);
    await expect(prepareForkAt(s2.repo, 'wsb', t)).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/history window/) });
    await expect(prepareForkAt(s2.repo, 'none', t)).rejects.toMatchObject({ code: 'NoSuchBucket' });
    // A time before anything was written: an empty fork. An existing name: refused before any run is written.
    await s2.putHistoryWindow('wsb', 86_400_000);
    await forkAt(s2, 'wsb', 'empty', created);
    expect(await contents(s2, 'empty')).toEqual(new Map());
    await expect(forkAt(s2, 'wsb', 'empty', t)).rejects.toMatchObject({ code: 'BucketAlreadyOwnedByYou' });
    await s2.close();
  });
});

describe('the forkBucketAt mutation', () => {
  const parent = { key: 'roots/x', offset: 4, length: 10, hash: 'ab'.repeat(32) };
  const m: Mutation = { op: 'forkBucketAt', bucket: 'dst', source: 'src', id: 'abcd1234', created: 1_767_225_600_000, at: 1_767_225_000_123, runs: [new Uint8Array([1, 2, 3])], versionRuns: [new Uint8Array([4, 5])] };
  it('round-trips, empty run lists included, and refuses truncations and more than one run per list', () => {
    const empty: Mutation = { ...m, runs: [], versionRuns: [] } as Mutation;
    for (const mutation of [m, empty]) expect(decodeCommit(encodeCommit({ seq: 7, parent, time: 1, mutations: [mutation] })).mutations).toEqual([mutation]);
    const good = encodeCommit({ seq: 7, parent, time: 1, mutations: [m] });
    for (let n = 0; n < good.length; n++) expect(() => decodeCommit(good.subarray(0, n)), `truncated to ${n}`).toThrow(expect.objectContaining({ code: 'Corrupt' }));
    const two = encodeCommit({ seq: 7, parent, time: 1, mutations: [{ ...m, runs: [new Uint8Array([1]), new Uint8Array([2])] } as Mutation] });
    expect(() => decodeCommit(two)).toThrow(expect.objectContaining({ code: 'Corrupt' }));
  });
});
