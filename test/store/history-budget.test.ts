/**
 * The history budget (history-budget.ts): accounted history bytes stay exact and persisted.
 *
 * Proves that the account kept by RepoState.apply equals a recount by walking every bucket's
 * version log after puts, overwrites, delete markers, unversioned deletes, tag rewrites,
 * removals, forks as of now and as of a past time and bucket deletion; that commit records and
 * roots carry the totals (replay and reopen agree, a checkpoint changes nothing); that staging
 * refuses the write that would pass the budget with 'HistoryBudgetFull' while removals and
 * unversioned deletes stay admitted; that a refusal leaves every blob and the anchor untouched;
 * and that a smaller budget still opens and reads everything.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { recountHistory, logEntryBytes, restoreHistory, settleHistory } from '../../src/store/history-budget.js';
import { decodeCommit, encodeCommit, type CommitRecord } from '../../src/store/commit.js';
import { decodeRoot, encodeRoot } from '../../src/store/root.js';
import type { Provider } from '../../src/provider/provider.js';
import { verifyRepository } from '../../src/store/verify.js';
import { verifyHistory } from '../../src/store/history-verify.js';
import { readAnchor } from '../../src/store/recovery.js';
import { readRecord } from '../../src/store/records-io.js';
import { chainCommits, collect, makeProvider, stream } from './helpers.js';

const B = 'hist';
const enc = new TextEncoder();

async function put(store: Store, bucket: string, key: string, body: string) {
  const bytes = enc.encode(body);
  return store.putObject(bucket, key, stream(bytes), { size: bytes.length });
}

/** The account equals a recount of every log; returns the total. */
async function expectExact(store: Store): Promise<number> {
  const r = await recountHistory(store.repo.state, false);
  expect(r.mismatched, 'buckets whose account differs from their log').toEqual([]);
  expect(store.repo.state.historyBytes).toBe(r.counted);
  expect(store.repo.state.history.points).toBe(r.entries);
  return r.counted;
}

/** Every blob key and size of the provider plus the anchor's bytes. */
async function blobs(p: Provider): Promise<string[]> {
  const out: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await p.list(after ? { startAfter: after, limit: 1000 } : { limit: 1000 });
    for (const i of page.items) out.push(`${i.key} ${i.size} ${i.etag ?? ''}`);
    if (!page.next) break;
    after = page.next;
  }
  return out.sort();
}

describe('history budget accounting', () => {
  it('stays equal to a recount through every kind of history change, replay and reopen', async () => {
    const { provider, reopen, cleanup } = await makeProvider('fs');
    try {
      let store = await Store.open(provider);
      await store.createBucket(B);
      expect(store.repo.state.historyBytes).toBe(0);
      await put(store, B, 'plain', 'one');
      await put(store, B, 'plain', 'two'); // unversioned overwrite: a second entry
      const first = await expectExact(store);
      expect(first).toBeGreaterThan(0);
      await store.deleteObject(B, 'plain'); // unversioned delete: an absence
      await store.putVersioning(B, 'Enabled');
      const v1 = await put(store, B, 'ver', 'a');
      await put(store, B, 'ver', 'bb');
      await store.deleteObject(B, 'ver'); // delete marker
      await store.putObjectTagging(B, 'ver', { colour: 'blue', size: 'large' }, v1.versionId); // rewrite grows
      await store.removeVersion(B, 'ver', v1.versionId!); // rewrite: removal
      const beforeFork = await expectExact(store);
      await store.forkBucket(B, 'fork-now');
      // A fork counts its own log: the total doubles.
      expect(await expectExact(store)).toBe(2 * beforeFork);
      const t = store.repo.lastCommitTime;
      await put(store, B, 'later', 'x');
      await store.forkBucket(B, 'fork-past', { at: t });
      await expectExact(store);
      await put(store, 'fork-now', 'own', 'y');
      await expectExact(store);

      // Commit records carry the total after each commit; the last one names today's.
      const chain = await chainCommits(provider);
      expect(chain.at(-1)!.historyBytes).toBe(store.repo.state.historyBytes);
      const total = store.repo.state.historyBytes;
      const points = store.repo.state.history.points;

      // Reopen by replay (no checkpoint since open): same totals, no recount.
      await store.close();
      let logs: string[] = [];
      store = await Store.open(await reopen(), { log: (e, f) => logs.push(e + JSON.stringify(f)) });
      expect(store.repo.state.historyBytes).toBe(total);
      expect(store.repo.state.history.points).toBe(points);
      expect(logs.join('\n')).not.toMatch(/history.recounted/);
      // Checkpoint (root carries per-bucket totals), reopen from the root.
      await store.checkpoint();
      await store.close();
      logs = [];
      store = await Store.open(await reopen(), { log: (e, f) => logs.push(e + JSON.stringify(f)) });
      expect(store.repo.state.historyBytes).toBe(total);
      expect(logs.join('\n')).not.toMatch(/history.recounted/);
      await expectExact(store);

      // Deleting a bucket takes its log away (the fork's own objects first).
      await store.deleteObject('fork-past', 'later').catch(() => undefined);
      const forkBytes = store.repo.state.buckets.get('fork-now')!.historyBytes;
      for (const v of (await store.listVersions('fork-now')).versions) await store.removeVersion('fork-now', v.key, v.versionId);
      const grownBy = store.repo.state.buckets.get('fork-now')!.historyBytes - forkBytes; // removals grow entries
      const before = store.repo.state.historyBytes;
      await store.deleteBucket('fork-now');
      expect(store.repo.state.historyBytes).toBe(before - forkBytes - grownBy);
      await expectExact(store);
      await store.close();
    } finally {
      cleanup();
    }
  });

  it('encodes the total and each noted change in commit records, and per-bucket totals in roots', () => {
    const parent = { key: 'roots/x', offset: 0, length: 1, hash: '0'.repeat(64) };
    const c: CommitRecord = {
      seq: 7,
      parent,
      time: 5,
      historyBytes: 12345,
      mutations: [
        { op: 'putVersion', bucket: 'b', key: 'k', seq: 7, index: 0, entry: new Uint8Array([0, 0, 1]) },
        { op: 'rewriteVersion', bucket: 'b', key: 'k', seq: 3, index: 2, entry: new Uint8Array([0, 2, 1, 1]), historyDelta: -3 },
        { op: 'rewriteVersion', bucket: 'b', key: 'j', seq: 3, index: 1, entry: new Uint8Array([0, 0, 1]), historyDelta: 40 },
      ],
    };
    expect(decodeCommit(encodeCommit(c))).toEqual(c);
    // A record without the section (written before budgets) decodes without totals.
    const legacy = { ...c, historyBytes: undefined, mutations: c.mutations.map(({ historyDelta: _d, ...m }) => m) };
    const back = decodeCommit(encodeCommit(legacy as CommitRecord));
    expect(back.historyBytes).toBeUndefined();
    expect(back.mutations[1]!.historyDelta).toBeUndefined();
    // Hostile sections: a note past the mutations, notes out of order, truncated.
    const bytes = encodeCommit(c);
    for (const cut of [1, 2, 3]) expect(() => decodeCommit(bytes.subarray(0, bytes.length - cut))).toThrow(/./);
    const w = [...encodeCommit({ ...c, historyBytes: undefined })];
    expect(() => decodeCommit(new Uint8Array([...w, 1, 1, 9, 0, 0]))).toThrow(/history note/);
    expect(() => decodeCommit(new Uint8Array([...w, 1, 2, 1, 0, 0, 0, 0, 0]))).toThrow(/history note/);
    expect(() => decodeCommit(new Uint8Array([...w, 1, 9]))).toThrow(/history notes/);

    const root = { seq: 1, time: 2, repositoryId: 'r', uploads: [], keys: [], versionLog: true, buckets: [{ name: 'a', id: 'i', created: 1, configs: [], runs: [], uploadRuns: [], uploadCount: 0 }], history: { buckets: [[99, 3]] as [number, number][] } };
    expect(decodeRoot(encodeRoot(root)).history).toEqual({ buckets: [[99, 3]] });
    const old = decodeRoot(encodeRoot({ ...root, history: undefined }));
    expect(old.history).toBeUndefined();
    expect(logEntryBytes('ké', new Uint8Array(5))).toBe(3 + 5);
  });
});

describe('history budget admission at staging', () => {
  it('admits writes up to the budget, refuses the next with nothing written, keeps removals and deletes possible', async () => {
    const { provider, reopen, cleanup } = await makeProvider('fs');
    try {
      // Measure one write's cost in a scratch store, then size the budget for exactly N of them.
      // The same provider kind: a record's location names its pack (a commit log segment on
      // fs, a commit blob on memory), and the key lengths differ.
      const scratchProvider = await makeProvider('fs');
      const scratch = await Store.open(scratchProvider.provider);
      await scratch.createBucket(B);
      await scratch.putVersioning(B, 'Enabled');
      await put(scratch, B, 'k000', 'v');
      const per = scratch.repo.state.historyBytes;
      await scratch.close();
      scratchProvider.cleanup();
      const N = 20;
      let store = await Store.open(provider, { historyBudget: N * per });
      await store.createBucket(B);
      await store.putVersioning(B, 'Enabled');
      const ids: string[] = [];
      for (let i = 0; i < N; i++) ids.push((await put(store, B, `k${String(i).padStart(3, '0')}`, 'v')).versionId!);
      expect(store.repo.state.historyBytes).toBe(N * per); // exactly full
      const before = await blobs(provider);
      const err = await put(store, B, 'k999', 'v').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'HistoryBudgetFull' });
      expect(String((err as Error).message)).toMatch(new RegExp(`history budget is ${N * per} bytes, ${N * per} are in use`));
      expect((err as Error).message).toMatch(/retention.*delet.*expir.*gc/is);
      // A delete marker adds a retained point: refused too; a fork would double the history: refused.
      await expect(store.deleteObject(B, 'k000')).rejects.toMatchObject({ code: 'HistoryBudgetFull' });
      await expect(store.forkBucket(B, 'copy')).rejects.toMatchObject({ code: 'HistoryBudgetFull' });
      expect(await blobs(provider), 'a refusal writes no blob and leaves the anchor').toEqual(before);
      expect(store.repo.state.history.refusals.history).toBe(3);
      // Removing a version stays possible (it only makes history expirable), past the budget.
      await store.removeVersion(B, 'k000', ids[0]!);
      expect(store.repo.state.historyBytes).toBeGreaterThan(N * per);
      await expectExact(store);
      await store.close();

      // A process with a smaller budget opens and reads everything; writes are refused.
      store = await Store.open(await reopen(), { historyBudget: per });
      for (let i = 1; i < N; i++) {
        const g = await store.getObject(B, `k${String(i).padStart(3, '0')}`);
        expect(Buffer.from(await collect(g.body)).toString()).toBe('v');
      }
      await expect(put(store, B, 'k998', 'v')).rejects.toMatchObject({ code: 'HistoryBudgetFull' });
      await store.close();
    } finally {
      cleanup();
    }
  });

  it('checks the batch as a whole: concurrent writes that each fit alone are admitted only while the sum fits', async () => {
    const { provider, cleanup } = await makeProvider('memory');
    try {
      const scratch = await Store.open((await makeProvider('memory')).provider);
      await scratch.createBucket(B);
      await put(scratch, B, 'k00', 'v');
      const per = scratch.repo.state.historyBytes;
      await scratch.close();
      const store = await Store.open(provider, { historyBudget: 5 * per });
      await store.createBucket(B);
      const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => put(store, B, `k${String(i).padStart(2, '0')}`, 'v')));
      // Entries in one batch differ by a byte or two (body offsets are varints): 4 or 5 fit.
      const admitted = results.filter((r) => r.status === 'fulfilled').length;
      expect(admitted).toBeGreaterThanOrEqual(4);
      expect(admitted).toBeLessThanOrEqual(5);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'HistoryBudgetFull' });
      expect(store.repo.state.historyBytes).toBeLessThanOrEqual(5 * per);
      expect(5 * per - store.repo.state.historyBytes, 'no room left for one more write').toBeLessThan(per + 8);
      await expectExact(store);
      await store.close();
    } finally {
      cleanup();
    }
  });
});

describe('expiry and the history account', () => {
  it('takes dropped entries off exactly, persists it across reopen, and frees room for writes', async () => {
    const { provider, reopen, cleanup } = await makeProvider('fs');
    try {
      let t = Date.now();
      const now = () => t;
      let store = await Store.open(provider, { now });
      await store.createBucket(B);
      for (let i = 0; i < 30; i++) {
        await put(store, B, `k${i % 3}`, `v${i}`); // unversioned overwrites: replaced entries
        t += 1000;
      }
      const full = await expectExact(store);
      const points = store.repo.state.history.points;
      await store.putHistoryWindow(B, 0);
      t += 1000;
      const r = await store.expireHistory();
      expect(r.expired).toBeGreaterThan(0);
      const after = await expectExact(store);
      expect(after).toBeLessThan(full);
      expect(store.repo.state.history.points).toBe(points - r.expired);
      const chain = await chainCommits(provider);
      expect(chain.at(-1)!.historyBytes).toBe(after);
      await store.close();
      const logs: string[] = [];
      store = await Store.open(await reopen(), { now, log: (e) => logs.push(e) });
      expect(store.repo.state.historyBytes).toBe(after);
      expect(logs).not.toContain('history.recounted');
      await expectExact(store);
      await store.checkpoint();
      expect((await verifyRepository(provider)).problems).toEqual([]);
      await store.close();
    } finally {
      cleanup();
    }
  });
});

describe('records written before budgets', () => {
  it('a root without the history account leaves it unknown, and opening recounts it by walking the logs', async () => {
    const { provider, cleanup } = await makeProvider('fs');
    try {
      const store = await Store.open(provider);
      await store.createBucket(B);
      for (let i = 0; i < 12; i++) await put(store, B, `k${i % 4}`, `v${i}`);
      await store.forkBucket(B, 'fork-old');
      await store.checkpoint();
      const truth = store.repo.state.historyBytes;
      const points = store.repo.state.history.points;
      const found = (await readAnchor(provider))!;
      const root = decodeRoot(await readRecord(provider, found.anchor.root, 'root'));
      // As an older server wrote it: no history section.
      const { history: _h, ...legacy } = root;
      restoreHistory(store.repo.state, legacy);
      expect(store.repo.state.history.exact).toBe(false);
      expect(store.repo.state.historyBytes).toBe(0);
      const logged: [string, Record<string, unknown>][] = [];
      await settleHistory({ state: store.repo.state, log: (e, f) => logged.push([e, f]) }, { root: legacy, commits: [] });
      expect(store.repo.state.history.exact).toBe(true);
      expect(store.repo.state.historyBytes).toBe(truth);
      expect(store.repo.state.history.points).toBe(points);
      expect(logged.map(([e, f]) => [e, f.reason, f.counted])).toEqual([['history.recounted', 'not recorded', truth]]);
      await store.close();
    } finally {
      cleanup();
    }
  });
});

describe('carrier writes and the history budget', () => {
  it('refuses a carrier PUT on an upper bound of its entry before writing any chunk, while a small write still fits', async () => {
    const { provider, cleanup } = await makeProvider('fs');
    try {
      let store = await Store.open(provider);
      await store.createBucket(B);
      await put(store, B, 'a', 'x');
      const per = store.repo.state.historyBytes;
      await store.close();
      // Room for one more small entry (a few bytes to spare), not for a carrier's upper bound.
      store = await Store.open(provider, { historyBudget: 2 * per + 16 });
      const before = await blobs(provider);
      const big = new Uint8Array(3 * 1024 * 1024).fill(1);
      await expect(store.putObject(B, 'big', stream(big), { size: big.length })).rejects.toMatchObject({ code: 'HistoryBudgetFull' });
      expect(await blobs(provider), 'no chunk written').toEqual(before);
      await put(store, B, 'b', 'y');
      expect(store.repo.state.historyBytes).toBeLessThanOrEqual(2 * per + 16);
      await store.close();
    } finally {
      cleanup();
    }
  });
});

describe('strata verify and the history account', () => {
  it('is clean on a repository with forks and rewrites, and names a root or commit whose totals disagree', async () => {
    const { provider, cleanup } = await makeProvider('fs');
    try {
      const store = await Store.open(provider);
      await store.createBucket(B);
      await store.putVersioning(B, 'Enabled');
      const v = await put(store, B, 'a', 'one');
      await put(store, B, 'a', 'two');
      await store.putObjectTagging(B, 'a', { t: 'x' }, v.versionId);
      await store.checkpoint();
      await store.forkBucket(B, 'fork-f');
      await store.removeVersion(B, 'a', v.versionId!);
      await put(store, 'fork-f', 'b', 'three');
      await store.close();
      const report = await verifyRepository(provider);
      expect(report.problems).toEqual([]);

      const found = (await readAnchor(provider))!;
      const root = decodeRoot(await readRecord(provider, found.anchor.root, 'root'));
      const chain = await chainCommits(provider, root.seq);
      expect(root.history!.buckets[0]![0]).toBeGreaterThan(0);
      expect(await verifyHistory(provider, root, chain)).toEqual([]);
      // A root that records one byte more than its log holds.
      const badRoot = { ...root, history: { buckets: root.history!.buckets.map(([b, p]) => [b + 1, p] as [number, number]) } };
      const p1 = await verifyHistory(provider, badRoot, chain);
      expect(p1.map((p) => p.blob)).toContain(`bucket ${B} history`);
      // A commit whose recorded total is not what its changes sum to.
      const badChain = chain.map((c, i) => (i === chain.length - 1 ? { ...c, historyBytes: c.historyBytes! + 5 } : c));
      const p2 = await verifyHistory(provider, root, badChain);
      expect(p2.map((p) => p.blob)).toEqual([`commit ${chain.at(-1)!.seq} history`]);
    } finally {
      cleanup();
    }
  });
});
