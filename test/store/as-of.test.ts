/**
 * Reads as of a past time (store level, real providers): GET/HEAD and ListObjects at every
 * step of a seeded history equal the replayed model (after replay, checkpoints, compaction
 * and reopen too), the history window's edges, and the bounds of an as-of listing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { deleteMarkerOf } from '../../src/store/objects-read.js';
import type { ListResult } from '../../src/store/list.js';
import { DEFAULT_HISTORY_WINDOW_MS } from '../../src/store/history-window.js';
import { collect, makeProvider, type ProviderKind } from './helpers.js';
import { BucketModel, Clock, putText, runScript, type Step } from './history-model.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(kind: ProviderKind, clock: Clock, opts: Parameters<typeof Store.open>[1] = {}) {
  const p = await makeProvider(kind);
  cleanups.push(p.cleanup);
  const all = { ...opts, now: clock.now };
  const store = await Store.open(p.provider, all);
  return { store, reopen: async () => Store.open(await p.reopen(), all) };
}

const text = async (body: AsyncIterable<Uint8Array>) => Buffer.from(await collect(body)).toString();

/** Every page of an as-of listing, concatenated (keys and common prefixes). */
async function listAllAsOf(store: Store, bucket: string, at: number, o: { maxKeys: number; prefix?: string; delimiter?: string; stepBudget?: number; v1?: boolean }) {
  const keys: string[] = [];
  const prefixes: string[] = [];
  let token: string | undefined;
  let marker: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const r: ListResult = await store.listObjectsAsOf(bucket, {
      at,
      maxKeys: o.maxKeys,
      ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
      ...(o.delimiter !== undefined ? { delimiter: o.delimiter } : {}),
      ...(o.stepBudget !== undefined ? { stepBudget: o.stepBudget } : {}),
      ...(token !== undefined ? { continuationToken: token } : {}),
      ...(marker !== undefined ? { startAfter: marker } : {}),
    });
    expect(r.contents.length + r.commonPrefixes.length).toBeLessThanOrEqual(o.maxKeys);
    keys.push(...r.contents.map((c) => c.key));
    prefixes.push(...r.commonPrefixes);
    if (!r.isTruncated) return { keys, prefixes, pages: pages + 1 };
    if (o.v1) marker = r.nextMarker!;
    else token = r.nextContinuationToken!;
    expect(o.v1 ? marker : token).toBeTruthy();
  }
  throw new Error('listing did not end');
}

/** What a delimiter listing of `snapshot` shows. */
function expectedListing(snapshot: Map<string, string>, prefix: string, delimiter: string) {
  const keys: string[] = [];
  const prefixes: string[] = [];
  for (const k of snapshot.keys()) {
    if (!k.startsWith(prefix)) continue;
    const cut = delimiter ? k.indexOf(delimiter, prefix.length) : -1;
    if (cut >= 0) {
      const cp = k.slice(0, cut + delimiter.length);
      if (prefixes.at(-1) !== cp) prefixes.push(cp);
    } else keys.push(k);
  }
  return { keys, prefixes };
}

/** Checks GET, HEAD and listings as of each step's time (and just before the next step). */
async function checkSteps(store: Store, bucket: string, steps: Step[], keys: string[]) {
  for (const [i, step] of steps.entries()) {
    const times = [step.time];
    if (i + 1 < steps.length) times.push(steps[i + 1]!.time - 1);
    for (const at of times) {
      for (const key of keys) {
        const want = step.snapshot.get(key);
        const got = await store.getObject(bucket, key, { asOf: at }).catch((e) => e);
        if (want === undefined) {
          expect(got.code, `${key} as of step ${i} (${step.what})`).toBe('NoSuchKey');
          await expect(store.headObject(bucket, key, { asOf: at })).rejects.toMatchObject({ code: 'NoSuchKey' });
        } else {
          expect(got.code, `${key} as of step ${i} (${step.what})`).toBeUndefined();
          expect(await text(got.body), `${key} as of step ${i} (${step.what})`).toBe(want);
          expect((await store.headObject(bucket, key, { asOf: at })).version.size).toBe(Buffer.byteLength(want));
        }
      }
      const all = await listAllAsOf(store, bucket, at, { maxKeys: 2 });
      expect(all.keys, `listing as of step ${i} (${step.what})`).toEqual([...step.snapshot.keys()]);
      const nested = await listAllAsOf(store, bucket, at, { maxKeys: 1, delimiter: '/' });
      expect({ keys: nested.keys, prefixes: nested.prefixes }).toEqual(expectedListing(step.snapshot, '', '/'));
      const sub = await listAllAsOf(store, bucket, at, { maxKeys: 3, prefix: 'd/', delimiter: '/', v1: true });
      expect({ keys: sub.keys, prefixes: sub.prefixes }).toEqual(expectedListing(step.snapshot, 'd/', '/'));
    }
  }
}

const KEYS = ['a', 'b', 'c/x', 'c/y', 'd/e/f', 'd/g', 'zz'];

describe.each(['memory', 'fs'] as const)('as-of reads on %s', (kind) => {
  it('equal the replayed model at every step of a seeded history, before and after reopen', async () => {
    const clock = new Clock();
    const { store, reopen } = await open(kind, clock, { checkpointEvery: 7, maxRuns: 2 });
    await store.createBucket('hist');
    const model = new BucketModel();
    const steps = await runScript(store, clock, 'hist', model, { seed: 9, count: 90, keys: KEYS });
    clock.tick();
    await checkSteps(store, 'hist', steps, KEYS);
    await store.close();
    const again = await reopen();
    await checkSteps(again, 'hist', steps, KEYS);
    await again.checkpoint();
    await checkSteps(again, 'hist', steps.slice(-10), KEYS);
    await again.close();
  }, 60_000);

  it('read a key permanently removed later, and not once removed; a replaced null version only until replaced', async () => {
    const clock = new Clock();
    const { store } = await open(kind, clock);
    await store.createBucket('nul');
    const t0 = clock.tick();
    await putText(store, 'nul', 'k', 'one'); // null n1
    const t1 = clock.tick();
    await putText(store, 'nul', 'k', 'two'); // null n2 replaces n1
    const t2 = clock.tick();
    await store.removeVersion('nul', 'k', 'null'); // n2 gone: nothing left (n1 was replaced)
    clock.tick();
    expect(await text((await store.getObject('nul', 'k', { asOf: t0 })).body)).toBe('one');
    expect(await text((await store.getObject('nul', 'k', { asOf: t1 })).body)).toBe('two');
    expect(await text((await store.getObject('nul', 'k', { asOf: t2 - 1 })).body)).toBe('two');
    await expect(store.getObject('nul', 'k', { asOf: t2 })).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(store.getObject('nul', 'k')).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(store.getObject('nul', 'k', { asOf: t0 - 1 })).rejects.toMatchObject({ code: 'NoSuchKey' });
  });

  it('carries the delete marker current then, and refuses a version id with a time', async () => {
    const clock = new Clock();
    const { store } = await open(kind, clock);
    await store.createBucket('dmk');
    await store.putVersioning('dmk', 'Enabled');
    const v1 = await putText(store, 'dmk', 'k', 'v1');
    const tm = clock.tick();
    const del = await store.deleteObject('dmk', 'k');
    clock.tick();
    await putText(store, 'dmk', 'k', 'v3');
    const err = await store.getObject('dmk', 'k', { asOf: tm }).catch((e) => e);
    expect(err.code).toBe('NoSuchKey');
    expect(deleteMarkerOf(err)?.versionId).toBe(del.versionId);
    expect((await store.headObject('dmk', 'k', { asOf: tm - 1 })).version.versionId).toBe(v1.versionId);
    await expect(store.getObject('dmk', 'k', { asOf: tm - 1, versionId: v1.versionId })).rejects.toMatchObject({ code: 'InvalidArgument' });
    // Ranges, parts and preconditions apply to the version served.
    const g = await store.getObject('dmk', 'k', { asOf: tm - 1, range: { start: 1 } });
    expect(await text(g.body)).toBe('1');
    await expect(store.getObject('dmk', 'k', { asOf: tm - 1, conditions: { ifNoneMatch: `"${v1.etag}"` } })).rejects.toMatchObject({ code: 'NotModified' });
  });
});

describe('the history window', () => {
  it('bounds as-of reads: before the bucket, older than the window, in the future; 0 keeps only now', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock);
    clock.tick();
    const created = (await store.createBucket('win')).created;
    expect(store.getHistoryWindow('win')).toBe(DEFAULT_HISTORY_WINDOW_MS);
    clock.tick();
    await putText(store, 'win', 'k', 'old');
    const tOld = clock.t;
    // Well inside the default window.
    clock.tick(29 * 86_400_000);
    expect(await text((await store.getObject('win', 'k', { asOf: tOld })).body)).toBe('old');
    await expect(store.getObject('win', 'k', { asOf: created - 1 })).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/before bucket win was created/) });
    expect((await store.listObjectsAsOf('win', { at: created })).contents).toEqual([]);
    const future = await store.getObject('win', 'k', { asOf: clock.t + 1 }).catch((e) => e);
    expect(future).toMatchObject({ code: 'InvalidArgument', detail: { ArgumentName: 'x-strata-as-of' } });
    expect(future.message).toMatch(/in the future.*history window 30 days/);
    // A shorter window: older times are refused, the edge itself is readable.
    await store.putHistoryWindow('win', 3_600_000);
    expect(store.getHistoryWindow('win')).toBe(3_600_000);
    const now = clock.t;
    await expect(store.getObject('win', 'k', { asOf: tOld })).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/older than bucket win's history window of 1 hour/) });
    await expect(store.listObjectsAsOf('win', { at: now - 3_600_000 - 1 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    expect((await store.listObjectsAsOf('win', { at: now - 3_600_000 })).contents.map((c) => c.key)).toEqual(['k']);
    // 0: only the current state (now: the clock, or the last commit's time when ahead of it).
    await store.putHistoryWindow('win', 0);
    const last = store.repo.lastCommitTime;
    await expect(store.getObject('win', 'k', { asOf: last - 1 })).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/current state only/) });
    expect(await text((await store.getObject('win', 'k', { asOf: last })).body)).toBe('old');
    await expect(store.getObject('win', 'k', { asOf: last + 1 })).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/in the future/) });
    // Not a time, out of range windows, missing buckets.
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -1]) await expect(store.getObject('win', 'k', { asOf: bad })).rejects.toMatchObject({ code: 'InvalidArgument' });
    for (const bad of [-1, 1.5, 36_501 * 86_400_000, Number.NaN]) await expect(store.putHistoryWindow('win', bad)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.putHistoryWindow('nope', 1000)).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await expect(store.getObject('nope', 'k', { asOf: clock.t })).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await expect(store.listObjectsAsOf('nope', { at: clock.t })).rejects.toMatchObject({ code: 'NoSuchBucket' });
  });

  it('is kept across reopen, and a bucket created again starts a new history', async () => {
    const clock = new Clock();
    const { store, reopen } = await open('fs', clock);
    await store.createBucket('again');
    await store.putHistoryWindow('again', 7 * 86_400_000);
    await putText(store, 'again', 'k', 'first life');
    const t = clock.mark(store);
    await store.deleteObject('again', 'k');
    await store.close();
    const s2 = await reopen();
    expect(s2.getHistoryWindow('again')).toBe(7 * 86_400_000);
    expect(await text((await s2.getObject('again', 'k', { asOf: t })).body)).toBe('first life');
    await s2.deleteBucket('again');
    clock.tick();
    await s2.createBucket('again');
    expect(s2.getHistoryWindow('again')).toBe(DEFAULT_HISTORY_WINDOW_MS);
    await expect(s2.getObject('again', 'k', { asOf: t })).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/before bucket again was created/) });
    await s2.close();
  });
});

describe('as-of listing bounds', () => {
  it('ends short pages at the step budget and resumes them to the complete answer', async () => {
    const clock = new Clock();
    const { store } = await open('memory', clock, { checkpointEvery: 50 });
    await store.createBucket('sparse');
    for (const k of ['a/1', 'm', 'q/9']) await putText(store, 'sparse', k, k);
    const t = clock.tick();
    // 600 keys made after t, many overwritten (their newer entries are stepped or sought over).
    for (let i = 0; i < 600; i++) {
      clock.tick(10);
      await putText(store, 'sparse', `b${String(i).padStart(4, '0')}`, 'later');
      if (i % 3 === 0) await putText(store, 'sparse', 'm', `m later ${i}`);
    }
    for (let i = 0; i < 3; i++) await putText(store, 'sparse', 'q/9', `q later ${i}`);
    clock.tick();
    const full = await listAllAsOf(store, 'sparse', t, { maxKeys: 1000 });
    expect(full).toMatchObject({ keys: ['a/1', 'm', 'q/9'], pages: 1 });
    for (const v1 of [false, true]) {
      const bounded = await listAllAsOf(store, 'sparse', t, { maxKeys: 1000, stepBudget: 50, v1 });
      expect(bounded.keys).toEqual(['a/1', 'm', 'q/9']);
      expect(bounded.pages).toBeGreaterThan(5);
      const cps = await listAllAsOf(store, 'sparse', t, { maxKeys: 1, delimiter: '/', stepBudget: 7, v1 });
      expect(cps).toMatchObject({ keys: ['m'], prefixes: ['a/', 'q/'] });
    }
    // Tokens are bound to the listing and authenticated, as for a current listing.
    const first = await store.listObjectsAsOf('sparse', { at: t, maxKeys: 1 });
    const token = first.nextContinuationToken!;
    const flipped = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.at(-1);
    await expect(store.listObjectsAsOf('sparse', { at: t, continuationToken: flipped })).rejects.toMatchObject({ code: 'InvalidToken' });
    await expect(store.listObjectsAsOf('sparse', { at: t, continuationToken: token, prefix: 'q/' })).rejects.toMatchObject({ code: 'InvalidToken' });
    expect((await store.listObjectsAsOf('sparse', { at: t, continuationToken: token })).contents.map((c) => c.key)).toEqual(['m', 'q/9']);
    // A prefix longer than any key matches nothing.
    expect((await store.listObjectsAsOf('sparse', { at: t, prefix: 'x'.repeat(5000) })).contents).toEqual([]);
    // The version served is the one current then.
    const page = await store.listObjectsAsOf('sparse', { at: t, prefix: 'm' });
    expect(page.contents.map((c) => c.version.size)).toEqual([1]);
    expect(await text((await store.getObject('sparse', 'm', { asOf: t })).body)).toBe('m');
  });
});
