/**
 * Retention expiry (src/store/expiry.ts, expiry-rule.ts) on real repositories: reads inside
 * the window give exactly what they gave before expiry (a seeded model history, before and
 * after reopen), reads before it are refused, and the rule's edges: exactly at the window's
 * start, delete markers, removed versions, suspended versioning's null versions, unversioned
 * deletes, locked versions, window 0, a window made longer later, forks, re-runs, and a
 * bucket replaced while a run is in flight.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { lockedBucketConfigs } from '../../src/store/object-lock-config.js';
import { verifyRepository } from '../../src/store/verify.js';
import { mergeSources } from '../../src/store/index/merge.js';
import { isLogTombstone } from '../../src/store/version-log.js';
import type { ExpiryProgress } from '../../src/store/expiry.js';
import { readableRange } from '../../src/store/history-window.js';
import { decodeCommit, encodeCommit, MAX_EXPIRE_KEYS, writeRef, type Mutation } from '../../src/store/commit.js';
import { ByteWriter } from '../../src/store/binary.js';
import { RepoState } from '../../src/store/state.js';
import { logKey } from '../../src/store/version-id.js';
import { collect, makeProvider, stream, type ProviderKind } from './helpers.js';
import { BucketModel, Clock, putText, runScript, type Step } from './history-model.js';

const HOUR = 3_600_000;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(kind: ProviderKind, clock: Clock, opts: Parameters<typeof Store.open>[1] = {}) {
  const p = await makeProvider(kind);
  cleanups.push(p.cleanup);
  const all = { ...opts, now: clock.now };
  const store = await Store.open(p.provider, all);
  return { store, provider: p, reopen: async () => Store.open(await p.reopen(), all) };
}

const text = async (body: AsyncIterable<Uint8Array>) => Buffer.from(await collect(body)).toString();

/** Live (not dropped) entries of `bucket`'s version log, as log keys. */
async function logKeys(store: Store, bucket: string): Promise<string[]> {
  const b = store.repo.state.buckets.get(bucket)!;
  const out: string[] = [];
  const it = mergeSources(b.versions.sources());
  for (;;) {
    const r = await it.next();
    if (r.done) break;
    if (!isLogTombstone(r.value.value)) out.push(r.value.key);
  }
  return out;
}

/** What GET shows of `key` as of `at`: its body, or undefined (NoSuchKey). */
async function readAt(store: Store, bucket: string, key: string, at: number): Promise<string | undefined> {
  try {
    return await text((await store.getObject(bucket, key, { asOf: at })).body);
  } catch (err) {
    if ((err as { code?: string }).code === 'NoSuchKey') return undefined;
    throw err;
  }
}

/** Every step whose state was current at some time of [from, to]: GET and LIST as of it equal the model. */
async function checkWindow(store: Store, bucket: string, steps: Step[], keys: string[], from: number, to: number) {
  let checked = 0;
  for (const [i, step] of steps.entries()) {
    const end = i + 1 < steps.length ? steps[i + 1]!.time - 1 : to;
    if (end < from) continue;
    for (const at of new Set([Math.max(step.time, from), end])) {
      for (const key of keys) expect(await readAt(store, bucket, key, at), `${key} as of step ${i} (${step.what})`).toBe(step.snapshot.get(key));
      const listed = await store.listObjectsAsOf(bucket, { at, maxKeys: 1000 });
      expect(listed.contents.map((c) => c.key), `listing as of step ${i}`).toEqual([...step.snapshot.keys()]);
      checked++;
    }
  }
  return checked;
}

async function versionsOf(store: Store, bucket: string): Promise<[string, string, boolean][]> {
  const r = await store.listVersions(bucket, { maxKeys: 1000 });
  return r.versions.map((v) => [v.key, v.versionId, v.version.deleteMarker]);
}

const KEYS = ['a', 'b', 'c/x', 'c/y', 'd'];

/** The first time `bucket` can be read now (commits run the history clock ahead of the test clock). */
const readableFrom = (store: Store, bucket: string) => readableRange(store.repo, store.repo.state.buckets.get(bucket)!).from;

describe.each(['memory', 'fs'] as const)('expiry on %s', (kind) => {
  it('keeps every read inside the window exactly as it was (seeded model), refuses older ones, and converges', async () => {
    const clock = new Clock();
    const { store, provider, reopen } = await open(kind, clock, { checkpointEvery: 11, maxRuns: 2 });
    await store.createBucket('hist');
    const model = new BucketModel();
    const steps = await runScript(store, clock, 'hist', model, { seed: 31, count: 160, keys: KEYS });
    clock.tick();
    const before = (await logKeys(store, 'hist')).length;
    // The window starts between two steps, two thirds into the script.
    const mid = steps[Math.floor((steps.length * 2) / 3)]!;
    const now = clock.t;
    const window = now - mid.time - 500;
    await store.putHistoryWindow('hist', window);
    const seen: ExpiryProgress[] = [];
    const accounted = store.repo.state.historyBytes;
    const report = await store.expireHistory({ onProgress: (p) => void seen.push(p) });
    // The history budget's account went down by exactly the bytes the report says were dropped.
    expect(accounted - store.repo.state.historyBytes).toBe(report.bytes);
    const start = readableFrom(store, 'hist');
    expect(start).toBeGreaterThanOrEqual(now - window);
    expect(start).toBeLessThan(now - window + 10);
    expect(report.buckets).toBe(1);
    expect(report.examined).toBe(before);
    expect(report.expired).toBeGreaterThan(10);
    expect(report.bytes).toBeGreaterThan(report.expired * 10);
    expect(seen.at(-1)).toMatchObject({ bucket: 'hist', bucketDone: true, expired: report.expired });
    expect((await logKeys(store, 'hist')).length).toBe(before - report.expired);
    // What S3 shows is unchanged, every read in the window too.
    expect(await versionsOf(store, 'hist')).toEqual(model.versions());
    expect(await checkWindow(store, 'hist', steps, KEYS, start, clock.t)).toBeGreaterThan(20);
    await expect(store.getObject('hist', 'a', { asOf: start - 1 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    // A second run finds nothing more to drop (same now).
    expect((await store.expireHistory({ now })).expired).toBe(0);
    await store.checkpoint();
    await store.close();
    const again = await reopen();
    expect(await versionsOf(again, 'hist')).toEqual(model.versions());
    await checkWindow(again, 'hist', steps, KEYS, start, clock.t);
    await again.close();
    const v = await verifyRepository(await provider.reopen());
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
  }, 120_000);

});

describe('expiry over rounds (the memory provider: its runs and checkpoints are the same code)', () => {
  it('rounds of writes and expiries with windows that shrink and grow: every read still in reach stays exact; a fork is untouched', async () => {
    const clock = new Clock();
    const { store, provider } = await open('memory', clock, { checkpointEvery: 5, maxRuns: 2 });
    await store.createBucket('rounds');
    const model = new BucketModel();
    const steps: Step[] = [];
    let forkSteps: Step[] | undefined;
    let expired = 0;
    for (const [round, frac] of [0.5, 0.8, 0.3, 0.9, 0.6].entries()) {
      steps.push(...(await runScript(store, clock, 'rounds', model, { seed: 100 + round, count: 50, keys: KEYS })));
      clock.tick();
      if (round === 1) {
        // A fork now: its log shares the source's runs and layers; expiring the source must not change it.
        await store.forkBucket('rounds', 'rounds-fork');
        await store.putHistoryWindow('rounds-fork', 30 * 24 * HOUR); // its own (the source's was copied)
        forkSteps = [...steps];
      }
      // The window reaches back `frac` of the way to the first step (a longer one than before
      // may reach into what was expired: those times stay refused).
      const window = Math.round((clock.t - steps[0]!.time) * frac);
      await store.putHistoryWindow('rounds', window);
      const r = await store.expireHistory({ bucket: 'rounds' });
      expired += r.expired;
      expect(await versionsOf(store, 'rounds'), `round ${round}`).toEqual(model.versions());
      await checkWindow(store, 'rounds', steps, KEYS, readableFrom(store, 'rounds'), clock.t);
      clock.tick();
    }
    expect(expired).toBeGreaterThan(20);
    // The fork still reads, as of its creation on, what the source read then.
    const fk = forkSteps!;
    const created = store.repo.state.buckets.get('rounds-fork')!.created;
    const last = fk.at(-1)!;
    for (const key of KEYS) expect(await readAt(store, 'rounds-fork', key, created), key).toBe(last.snapshot.get(key));
    await store.close();
    const v = await verifyRepository(await provider.reopen());
    expect(v.problems).toEqual([]);
  }, 120_000);
});

describe('the expiry rule', () => {
  async function fresh(opts: Parameters<typeof Store.open>[1] = {}) {
    const clock = new Clock();
    const { store } = await open('memory', clock, opts);
    return { clock, store };
  }

  it('drops a replaced null version exactly when it stopped being current at or before the window start', async () => {
    for (const [gap, dropped] of [
      [0, 1], // replaced exactly at the start: the start reads the replacement
      [1, 0], // replaced 1 ms after the start: the start still reads it
    ] as const) {
      const { clock, store } = await fresh();
      await store.createBucket('bkt');
      clock.tick();
      await putText(store, 'bkt', 'k', 'one');
      clock.tick();
      await putText(store, 'bkt', 'k', 'two');
      const replaced = store.repo.lastCommitTime;
      clock.tick(HOUR);
      await store.putHistoryWindow('bkt', clock.t - replaced + gap);
      // The window's start is exactly the replacement's time, or 1 ms before it.
      expect(store.repo.lastCommitTime).toBe(clock.t);
      const r = await store.expireHistory({ now: clock.t });
      expect(r.expired, `gap ${gap}`).toBe(dropped);
      expect((await logKeys(store, 'bkt')).length).toBe(2 - dropped);
      expect(await readAt(store, 'bkt', 'k', readableFrom(store, 'bkt'))).toBe(gap === 0 ? 'two' : 'one');
    }
  });

  it('keeps versions and delete markers S3 lists; drops removed ones once out of the window', async () => {
    const { clock, store } = await fresh();
    await store.createBucket('ver');
    await store.putVersioning('ver', 'Enabled');
    const v1 = (await putText(store, 'ver', 'k', 'v1')).versionId;
    clock.tick();
    const v2 = (await putText(store, 'ver', 'k', 'v2')).versionId;
    clock.tick();
    const dm = (await store.deleteObject('ver', 'k')).versionId!;
    clock.tick();
    await store.putHistoryWindow('ver', 0);
    clock.tick();
    expect((await store.expireHistory()).expired).toBe(0);
    expect(await versionsOf(store, 'ver')).toEqual([
      ['k', dm, true],
      ['k', v2, false],
      ['k', v1, false],
    ]);
    await store.removeVersion('ver', 'k', v2);
    await store.removeVersion('ver', 'k', dm);
    clock.tick();
    const r = await store.expireHistory();
    expect(r.expired).toBe(2);
    expect(await versionsOf(store, 'ver')).toEqual([['k', v1, false]]);
    expect(await readAt(store, 'ver', 'k', store.repo.lastCommitTime)).toBe('v1');
    expect((await logKeys(store, 'ver')).length).toBe(1);
    await expect(store.getObject('ver', 'k', { versionId: v2 })).rejects.toMatchObject({ code: 'NoSuchVersion' });
  });

  it('suspended versioning: replaced null versions go, the versioned ones stay', async () => {
    const { clock, store } = await fresh();
    await store.createBucket('sus');
    await store.putVersioning('sus', 'Enabled');
    const v1 = (await putText(store, 'sus', 'k', 'v1')).versionId;
    await store.putVersioning('sus', 'Suspended');
    clock.tick();
    await putText(store, 'sus', 'k', 'n1');
    clock.tick();
    await putText(store, 'sus', 'k', 'n2');
    clock.tick();
    await store.deleteObject('sus', 'k'); // a null delete marker replaces n2
    clock.tick();
    await store.putHistoryWindow('sus', 0);
    clock.tick();
    const r = await store.expireHistory();
    expect(r.expired).toBe(2);
    const vs = await versionsOf(store, 'sus');
    expect(vs).toEqual([
      ['k', 'null', true],
      ['k', v1, false],
    ]);
  });

  it('an unversioned key deleted before the window leaves nothing behind, and reads in the window stay absent', async () => {
    const { clock, store } = await fresh();
    await store.createBucket('unv');
    await putText(store, 'unv', 'gone', 'x');
    await putText(store, 'unv', 'gone', 'y');
    clock.tick();
    await store.deleteObject('unv', 'gone');
    await putText(store, 'unv', 'stays', 'z');
    const deleted = store.repo.lastCommitTime;
    clock.tick(HOUR);
    await store.putHistoryWindow('unv', HOUR / 2);
    const r = await store.expireHistory();
    expect(r.expired).toBe(3);
    expect((await logKeys(store, 'unv')).map((k) => k.slice(0, 4))).toEqual(['stay']);
    const from = readableFrom(store, 'unv');
    expect(await readAt(store, 'unv', 'gone', from)).toBeUndefined();
    expect(await readAt(store, 'unv', 'stays', from)).toBe('z');
    expect(deleted).toBeLessThan(from);
  });

  it('window 0 keeps only the current state; a longer window later does not bring expired history back', async () => {
    const { clock, store } = await fresh({ retentionMs: 0 });
    await store.createBucket('zero');
    expect(store.getHistoryWindow('zero')).toBe(0);
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      clock.tick();
      await putText(store, 'zero', 'k', `v${i}`);
      times.push(store.repo.lastCommitTime);
    }
    clock.tick();
    const r = await store.expireHistory();
    expect(r.expired).toBe(19);
    expect(await readAt(store, 'zero', 'k', clock.t)).toBe('v19');
    await expect(store.getObject('zero', 'k', { asOf: times[18]! })).rejects.toMatchObject({ code: 'InvalidArgument' });
    // Longer again: what was dropped stays unreadable (refused, never read wrongly)...
    await store.putHistoryWindow('zero', 30 * 24 * HOUR);
    const err = await store.getObject('zero', 'k', { asOf: times[5]! }).catch((e) => e);
    expect(err).toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/expired history/) });
    // ...while history written from now on is kept and readable.
    clock.tick();
    await putText(store, 'zero', 'k', 'later');
    const tLater = store.repo.lastCommitTime;
    clock.tick();
    await putText(store, 'zero', 'k', 'latest');
    clock.tick();
    expect((await store.expireHistory()).expired).toBe(0);
    expect(await readAt(store, 'zero', 'k', tLater)).toBe('later');
    // Back to the server default (0): the bucket's own window is cleared.
    await store.clearHistoryWindow('zero');
    expect(store.getHistoryWindow('zero')).toBe(0);
    clock.tick();
    expect((await store.expireHistory()).expired).toBe(2);
  });

  it('never drops a removed version under an active retention; drops it once the retention ends', async () => {
    const { clock, store } = await fresh();
    clock.t = Date.now();
    await store.createBucket('lck', undefined, lockedBucketConfigs());
    const body = Buffer.from('abc');
    const locked = (await store.putObject('lck', 'k', stream(body), { size: 3, lock: { retention: { mode: 'GOVERNANCE', retainUntil: clock.t + HOUR } } })).version.versionId;
    const plain = (await store.putObject('lck', 'p', stream(body), { size: 3 })).version.versionId;
    await store.removeVersion('lck', 'k', locked, { bypassGovernance: true });
    await store.removeVersion('lck', 'p', plain);
    clock.tick(1000);
    await store.putHistoryWindow('lck', 0);
    clock.tick(1000);
    expect((await store.expireHistory()).expired).toBe(1); // only the unlocked one
    expect((await logKeys(store, 'lck')).length).toBe(1);
    clock.tick(2 * HOUR);
    expect((await store.expireHistory()).expired).toBe(1);
    expect((await logKeys(store, 'lck')).length).toBe(0);
    // A legal hold keeps a version from removal, hence from expiry: overwritten, it is listed and kept.
    const held = (await store.putObject('lck', 'h', stream(body), { size: 3, lock: { legalHold: true } })).version.versionId;
    await store.putObject('lck', 'h', stream(body), { size: 3 });
    await expect(store.removeVersion('lck', 'h', held, { bypassGovernance: true })).rejects.toMatchObject({ code: 'AccessDenied' });
    clock.tick(1000);
    expect((await store.expireHistory()).expired).toBe(0);
    expect((await versionsOf(store, 'lck')).map((v) => v[1])).toContain(held);
  });

  it('a fork keeps its own history: expiring the source drops nothing of the fork, and the reverse', async () => {
    const { clock, store } = await fresh();
    await store.createBucket('src');
    for (let i = 0; i < 5; i++) {
      clock.tick();
      await putText(store, 'src', 'k', `v${i}`);
    }
    clock.tick();
    await store.forkBucket('src', 'fork1');
    const forkLog = await logKeys(store, 'fork1');
    expect(forkLog.length).toBe(5);
    clock.tick();
    await store.putHistoryWindow('src', 0);
    clock.tick();
    expect((await store.expireHistory({ bucket: 'src' })).expired).toBe(4);
    expect(await logKeys(store, 'fork1')).toEqual(forkLog);
    expect(await logKeys(store, 'src')).toHaveLength(1);
    // The fork inherits nothing it did not copy: its own window (copied settings) expires it alone.
    await store.putHistoryWindow('fork1', 0);
    await putText(store, 'src', 'k', 'new');
    clock.tick();
    const r = await store.expireHistory({ bucket: 'fork1' });
    expect(r.expired).toBe(4);
    expect(await readAt(store, 'fork1', 'k', store.repo.lastCommitTime)).toBe('v4');
    expect(await readAt(store, 'src', 'k', store.repo.lastCommitTime)).toBe('new');
  });

  it('a key whose held drops do not fit the pending budget is kept whole this time; the others expire', async () => {
    // 256 KiB of pending budget: one reservation step (1,000 drops) fits, two do not.
    const { clock, store } = await fresh({ retentionMs: 0, pendingBytes: 256 * 1024 });
    await store.createBucket('tight');
    for (let i = 0; i < 1500; i++) await putText(store, 'tight', 'many', `v${i}`);
    for (let i = 0; i < 5; i++) await putText(store, 'tight', 'some', `v${i}`);
    clock.tick();
    const r = await store.expireHistory();
    expect(r.expired).toBe(4); // 'some' only
    expect(r.skipped).toBeGreaterThan(900);
    expect(store.repo.budget.used).toBe(0);
    expect(await readAt(store, 'tight', 'many', store.repo.lastCommitTime)).toBe('v1499');
  });

  it('batches of at most 1,000; a bucket replaced during the run is left alone', async () => {
    const { clock, store } = await fresh({ retentionMs: 0 });
    await store.createBucket('big');
    for (let i = 0; i < 2600; i++) await putText(store, 'big', `k${i % 2}`, `v${i}`);
    clock.tick();
    const commits = store.repo.stats.commits;
    const r = await store.expireHistory({ bucket: 'big' });
    expect(r.expired).toBe(2598);
    // 3 batches (1000, 1000, 598), each also setting history-expired once.
    expect(store.repo.stats.commits - commits).toBe(3);
    for (let i = 0; i < 2500; i++) await putText(store, 'big', 'r', `v${i}`);
    clock.tick();
    let replaced = false;
    const r2 = await store.expireHistory({
      bucket: 'big',
      onProgress: async (p) => {
        if (replaced || p.bucketDone) return;
        replaced = true;
        for (const k of ['k0', 'k1', 'r']) await store.deleteObject('big', k);
        await store.deleteBucket('big');
        await store.createBucket('big');
        await putText(store, 'big', 'r', 'new');
      },
    });
    expect(replaced).toBe(true);
    expect(r2.expired).toBe(1000);
    expect(await readAt(store, 'big', 'r', store.repo.lastCommitTime)).toBe('new');
    expect(await logKeys(store, 'big')).toHaveLength(1);
  }, 60_000);
});

describe('the expireVersions mutation', () => {
  const parent = { key: 'roots/x', offset: 4, length: 10, hash: 'ab'.repeat(32) };
  const keys = [logKey('a/b', { seq: 3, index: 0 }), logKey('zz', { seq: 9, index: 4 })];
  const m: Mutation = { op: 'expireVersions', bucket: 'bkt', keys, sizes: [40, 7] };
  it('round-trips, refuses truncations, more than MAX_EXPIRE_KEYS keys, and malformed log keys on apply', () => {
    const none: Mutation = { ...m, keys: [], sizes: [] } as Mutation;
    for (const mutation of [m, none]) expect(decodeCommit(encodeCommit({ seq: 7, parent, time: 1, mutations: [mutation] })).mutations).toEqual([mutation]);
    const good = encodeCommit({ seq: 7, parent, time: 1, mutations: [m] });
    for (let n = 0; n < good.length; n++) expect(() => decodeCommit(good.subarray(0, n)), `truncated to ${n}`).toThrow(expect.objectContaining({ code: 'Corrupt' }));
    const many = Array.from({ length: MAX_EXPIRE_KEYS + 1 }, (_, i) => logKey('k', { seq: i + 1, index: 0 }));
    expect(() => encodeCommit({ seq: 7, parent, time: 1, mutations: [{ ...m, keys: many, sizes: many.map(() => 1) } as Mutation] })).toThrow(RangeError);
    expect(() => encodeCommit({ seq: 7, parent, time: 1, mutations: [{ ...m, sizes: [1] } as Mutation] })).toThrow(RangeError);
    // A hand-made record claiming too many keys is refused before reading them.
    const w = new ByteWriter(64);
    w.u32(0x31434d53).varint(7);
    writeRef(w, parent);
    w.varint(1).varint(1).string('bkt').varint(1).u8(16).varint(0).varint(MAX_EXPIRE_KEYS + 1);
    expect(() => decodeCommit(w.finish())).toThrow(expect.objectContaining({ code: 'Corrupt' }));
    const state = new RepoState();
    state.apply({ op: 'createBucket', bucket: 'bkt', id: 'id1', created: 1 });
    expect(() => state.apply({ op: 'expireVersions', bucket: 'bkt', keys: ['not a log key'], sizes: [1] })).toThrow(expect.objectContaining({ code: 'Corrupt' }));
    expect(() => state.apply({ op: 'expireVersions', bucket: 'nope', keys, sizes: [1, 1] })).toThrow(expect.objectContaining({ code: 'Corrupt' }));
    state.apply(m);
    expect(state.buckets.get('bkt')!.versions.overlay.get(keys[0]!)).toEqual(new Uint8Array([0]));
  });
});
