/**
 * What changed when (store level): every write of a bucket as the history lists it — PUTs,
 * delete markers, unversioned deletes, permanent removals — key by key newest first, filtered
 * by key, prefix and time, paged by limit and by the scan budget, inside the history window;
 * and hostile cursors and arguments.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { HistoryEntry, HistoryOptions } from '../../src/store/history.js';
import { Clock, putText } from './history-model.js';

async function open(clock: Clock) {
  return Store.open(await createMemoryProvider({}), { now: clock.now });
}

async function all(store: Store, bucket: string, opts: HistoryOptions = {}) {
  const out: HistoryEntry[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await store.listHistory(bucket, { ...opts, ...(cursor ? { cursor } : {}) });
    pages++;
    out.push(...page.entries);
    if (!page.next) return { entries: out, pages };
    cursor = page.next;
    if (pages > 10_000) throw new Error('history did not end');
  }
}

describe('history', () => {
  it('lists every write with its time, op, ids and size, key by key newest first', async () => {
    const clock = new Clock();
    const store = await open(clock);
    await store.createBucket('his');
    const at = () => store.repo.lastCommitTime;
    clock.tick();
    const a1 = await putText(store, 'his', 'a', 'one');
    const t0 = at();
    clock.tick();
    await putText(store, 'his', 'b', 'bb');
    const tb = at();
    clock.tick();
    await store.deleteObject('his', 'b'); // unversioned: an absence
    const tdel = at();
    clock.tick();
    await store.putVersioning('his', 'Enabled');
    const a2 = await putText(store, 'his', 'a', 'three');
    const ta2 = at();
    clock.tick();
    const m = await store.deleteObject('his', 'a');
    const tm = at();
    clock.tick();
    await store.removeVersion('his', 'a', a2.versionId);
    const { entries } = await all(store, 'his');
    expect(entries.map((e) => [e.key, e.op, e.versionId, e.size, e.time])).toEqual([
      ['a', 'delete-marker', m.versionId, undefined, tm],
      ['a', 'put', a2.versionId, 5, ta2],
      ['a', 'put', 'null', 3, t0],
      ['b', 'delete', 'null', undefined, tdel],
      ['b', 'put', 'null', 2, tb],
    ]);
    expect(entries[1]!.removedAt).toBe(at());
    expect(entries[2]!.writeId).toBe(a1.version.logId);
    expect(entries[2]!.etag).toBe(a1.etag);
    // Filters: one key, a prefix, a time range.
    expect((await all(store, 'his', { key: 'b' })).entries.map((e) => e.op)).toEqual(['delete', 'put']);
    expect((await all(store, 'his', { prefix: 'a' })).entries).toHaveLength(3);
    expect((await all(store, 'his', { since: tb, until: tdel })).entries.map((e) => [e.key, e.op])).toEqual([
      ['b', 'delete'],
      ['b', 'put'],
    ]);
  });

  it('pages by limit and by scan budget to the same list, and honours the window', async () => {
    const clock = new Clock();
    const store = await open(clock);
    await store.createBucket('pag');
    for (let i = 0; i < 40; i++) {
      clock.tick();
      await putText(store, 'pag', `k${i % 7}`, `v${i}`);
    }
    const whole = await all(store, 'pag', { limit: 1000 });
    expect(whole.entries).toHaveLength(40);
    expect(whole.pages).toBe(1);
    const byLimit = await all(store, 'pag', { limit: 3 });
    expect(byLimit.entries).toEqual(whole.entries);
    const late = clock.t - 5000;
    const byBudget = await all(store, 'pag', { since: late, scanBudget: 4 });
    expect(byBudget.entries).toEqual(whole.entries.filter((e) => e.time >= late));
    expect(byBudget.pages).toBeGreaterThan(5);
    // The window: entries older than it are not shown; `from` says where history starts.
    await store.putHistoryWindow('pag', 10_000);
    const page = await store.listHistory('pag', { limit: 1000 });
    const from = store.repo.lastCommitTime - 10_000;
    expect(page.from).toBe(from);
    expect(page.windowMs).toBe(10_000);
    expect(page.entries.every((e) => e.time >= from)).toBe(true);
    expect(page.entries.length).toBeLessThan(40);
  });

  it('refuses bad cursors, limits, keys and ranges', async () => {
    const clock = new Clock();
    const store = await open(clock);
    await store.createBucket('bad');
    await putText(store, 'bad', 'k', 'x');
    const good = (await store.listHistory('bad', { limit: 1 })).next!;
    expect(good).toBeTruthy();
    const forged = Buffer.from('zzzzzzzzzzzzzzzzzzk').toString('base64url');
    for (const cursor of ['', '!!', 'a'.repeat(5000), forged, Buffer.from('000000000001000000').toString('base64url'), `${good}=`]) {
      await expect(store.listHistory('bad', { cursor }), cursor.slice(0, 20)).rejects.toMatchObject({ code: 'InvalidArgument' });
    }
    for (const limit of [0, -1, 1001, 1.5, Number.NaN]) await expect(store.listHistory('bad', { limit })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.listHistory('bad', { key: 'k'.repeat(1025) })).rejects.toMatchObject({ code: 'KeyTooLong' });
    await expect(store.listHistory('bad', { prefix: 'p'.repeat(1025) })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.listHistory('bad', { since: clock.t + 10, until: clock.t })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.listHistory('nope')).rejects.toMatchObject({ code: 'NoSuchBucket' });
    // A valid cursor of another key or bucket is just a position.
    expect((await store.listHistory('bad', { cursor: good })).entries).toEqual([]);
  });
});
