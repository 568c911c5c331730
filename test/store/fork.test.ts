/**
 * Bucket forks in the store (fork.ts, keyspace.ts): a fork reads exactly what its source read
 * at the fork's commit — objects in runs, in the overlay, deleted ones, packed, carrier and
 * multipart bodies — writes and deletes on either side never show on the other, deleting the
 * source leaves the fork complete, forks of forks work, a checkpoint flushes a shared frozen
 * overlay into ONE run named by every sharer, and all of it survives a reopen. Also: what a
 * fork copies (settings but the owner and the policy; no uploads in progress), that it copies
 * no index entry and writes one commit, how it orders against writes in flight, and its
 * refusals (bad names, missing source, existing target, itself, a time). The version log forks
 * with its bucket. Crashes inside a fork: fork-crash.test.ts; kill -9: fork-kill.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { TOMBSTONE } from '../../src/store/records.js';
import { decodeRoot } from '../../src/store/root.js';
import { readAnchor } from '../../src/store/recovery.js';
import { readRecord } from '../../src/store/records-io.js';
import { verifyRepository } from '../../src/store/verify.js';
import { parseForkTime } from '../../src/store/fork-at.js';
import { NOT_COPIED } from '../../src/store/fork.js';
import { randomBytes } from '../support/random.js';
import { collect, stream } from './helpers.js';
import { expectContents, listing, open, populate, put, utf8 } from './fork-support.js';

describe.each(['memory', 'fs'] as const)('forks on %s', (kind) => {
  it('reads what the source held; writes and deletes on either side never show on the other; both survive reopens', async () => {
    const { store, reopen } = await open(kind);
    const src = await populate(store, 'source');
    const fork = await store.forkBucket('source', 'fork');
    expect(fork).toMatchObject({ name: 'fork', source: 'source' });
    const dst = new Map(src);
    await expectContents(store, 'fork', dst, 'fork right after');

    // Source side: a new key, an overwrite of an overlay key and of a run key, deletions.
    await put(store, 'source', 'only-in-source', utf8('s'));
    src.set('only-in-source', utf8('s'));
    await put(store, 'source', 'overlay/1', utf8('source overwrote'));
    src.set('overlay/1', utf8('source overwrote'));
    await put(store, 'source', 'run1/5', utf8('source overwrote a run key'));
    src.set('run1/5', utf8('source overwrote a run key'));
    for (const key of ['overlay/2', 'run2/3', 'carrier']) {
      await store.deleteObject('source', key);
      src.delete(key);
    }
    // Fork side: the same kinds of changes to other keys (and one to the same key).
    await put(store, 'fork', 'only-in-fork', utf8('f'));
    dst.set('only-in-fork', utf8('f'));
    await put(store, 'fork', 'overlay/1', utf8('fork overwrote'));
    dst.set('overlay/1', utf8('fork overwrote'));
    for (const key of ['overlay/4', 'run1/7', 'multipart']) {
      await store.deleteObject('fork', key);
      dst.delete(key);
    }
    await expectContents(store, 'source', src, 'source after both wrote');
    await expectContents(store, 'fork', dst, 'fork after both wrote');

    await store.close();
    const replayed = await reopen(); // no checkpoint since the fork: replayed from the chain
    await expectContents(replayed, 'source', src, 'source replayed');
    await expectContents(replayed, 'fork', dst, 'fork replayed');
    await replayed.checkpoint();
    await replayed.close();
    const restored = await reopen(); // from a root naming both
    await expectContents(restored, 'source', src, 'source restored');
    await expectContents(restored, 'fork', dst, 'fork restored');
    expect((await verifyRepository(restored.repo.provider)).problems).toEqual([]);
    await restored.close();
  });

  it('leaves the fork complete when the source is emptied and deleted, before and after a checkpoint', async () => {
    const { store, reopen } = await open(kind);
    const src = await populate(store, 'doomed');
    await store.forkBucket('doomed', 'survivor');
    const keys = [...(await listing(store, 'doomed')).keys()];
    await store.deleteObjects('doomed', keys);
    await store.deleteBucket('doomed');
    await expectContents(store, 'survivor', src, 'fork after the source went');
    await store.checkpoint();
    await store.close();
    const again = await reopen();
    expect(again.listBuckets().map((b) => b.name)).toEqual(['survivor']);
    await expectContents(again, 'survivor', src, 'fork after reopen');
    // Every body the fork refers to still exists (nothing deleted a blob it shares).
    expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
    await again.close();
  });

  it('forks forks, each level isolated, and keeps the deepest when its ancestors are deleted', async () => {
    const { store, reopen } = await open(kind, { maxRuns: 3 });
    const a = await populate(store, 'gen-a');
    await store.forkBucket('gen-a', 'gen-b');
    const b = new Map(a);
    await put(store, 'gen-b', 'b-only', utf8('b'));
    b.set('b-only', utf8('b'));
    await store.deleteObject('gen-b', 'run2/2');
    b.delete('run2/2');
    await put(store, 'gen-a', 'a-only', utf8('a'));
    a.set('a-only', utf8('a'));
    await store.checkpoint();
    await put(store, 'gen-b', 'b-overlay', utf8('b2'));
    b.set('b-overlay', utf8('b2'));
    await store.forkBucket('gen-b', 'gen-c');
    const c = new Map(b);
    await put(store, 'gen-c', 'run1/1', utf8('c overwrote'));
    c.set('run1/1', utf8('c overwrote'));
    await put(store, 'gen-b', 'b-after-c', utf8('b3'));
    b.set('b-after-c', utf8('b3'));
    // Enough checkpoints to push every level past maxRuns: compaction rewrites one bucket's
    // runs without touching the runs its forks share.
    for (let i = 0; i < 4; i++) {
      for (const [name, model] of [['gen-a', a], ['gen-b', b], ['gen-c', c]] as const) {
        await put(store, name, `round/${i}`, utf8(`${name} ${i}`));
        model.set(`round/${i}`, utf8(`${name} ${i}`));
      }
      await store.checkpoint();
    }
    expect(store.repo.stats.compactions).toBeGreaterThan(0);
    await expectContents(store, 'gen-a', a, 'a');
    await expectContents(store, 'gen-b', b, 'b');
    await expectContents(store, 'gen-c', c, 'c');
    for (const name of ['gen-a', 'gen-b']) {
      await store.deleteObjects(name, [...(await listing(store, name)).keys()]);
      await store.deleteBucket(name);
    }
    await store.close();
    const again = await reopen();
    await expectContents(again, 'gen-c', c, 'c alone after reopen');
    expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
    await again.close();
  });
});

describe.each(['memory', 'fs'] as const)('the version log forks with its bucket, on %s', (kind) => {
  /** "key versionId latest? marker?" lines of a bucket's ListObjectVersions, all pages. */
  async function versionLines(store: Store, bucket: string): Promise<string[]> {
    const out: string[] = [];
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    for (;;) {
      const page = await store.listVersions(bucket, { maxKeys: 3, ...(keyMarker ? { keyMarker } : {}), ...(versionIdMarker ? { versionIdMarker } : {}) });
      for (const v of page.versions) out.push(`${v.key} ${v.versionId}${v.isLatest ? ' latest' : ''}${v.version.deleteMarker ? ' marker' : ''}`);
      if (!page.isTruncated) return out;
      keyMarker = page.nextKeyMarker;
      versionIdMarker = page.nextVersionIdMarker;
    }
  }

  it('lists the same versions with the same ids, reads them by id, and diverges both ways afterwards', async () => {
    const { store, reopen } = await open(kind);
    const putV = async (bucket: string, key: string, text: string) =>
      (await store.putObject(bucket, key, stream(utf8(text)), { size: utf8(text).length })).versionId;
    await store.createBucket('versioned');
    await put(store, 'versioned', 'before', utf8('null version'));
    await store.putVersioning('versioned', 'Enabled');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await putV('versioned', 'doc', `doc v${i}`));
    await store.checkpoint(); // some history in runs, some in the overlay
    ids.push(await putV('versioned', 'doc', 'doc v3'));
    await store.deleteObject('versioned', 'gone');
    await put(store, 'versioned', 'gone', utf8('gone'));
    await store.deleteObject('versioned', 'gone'); // a delete marker on top
    const before = await versionLines(store, 'versioned');
    await store.forkBucket('versioned', 'versioned-fork');
    expect(store.getVersioning('versioned-fork')).toBe('Enabled');
    expect(await versionLines(store, 'versioned-fork')).toEqual(before);
    for (const [i, id] of ids.entries()) {
      const got = await store.getObject('versioned-fork', 'doc', { versionId: id });
      expect(Buffer.from(await collect(got.body)).toString()).toBe(`doc v${i}`);
    }
    expect(Buffer.from(await collect((await store.getObject('versioned-fork', 'before', { versionId: 'null' })).body)).toString()).toBe('null version');

    // The fork: a new version, a permanent removal of a shared one. The source: a new version.
    const forkNew = await putV('versioned-fork', 'doc', 'fork v4');
    await store.removeVersion('versioned-fork', 'doc', ids[0]!);
    const srcNew = await putV('versioned', 'doc', 'src v4');
    const check = async (s: Store) => {
      const src = await versionLines(s, 'versioned');
      const fork = await versionLines(s, 'versioned-fork');
      expect(src.filter((l) => l.startsWith('doc ')).map((l) => l.split(' ')[1])).toEqual([srcNew, ...[...ids].reverse()]);
      expect(fork.filter((l) => l.startsWith('doc ')).map((l) => l.split(' ')[1])).toEqual([forkNew, ...ids.slice(1).reverse()]);
      await expect(s.getObject('versioned', 'doc', { versionId: forkNew })).rejects.toMatchObject({ code: 'NoSuchVersion' });
      await expect(s.getObject('versioned-fork', 'doc', { versionId: srcNew })).rejects.toMatchObject({ code: 'NoSuchVersion' });
      await expect(s.getObject('versioned-fork', 'doc', { versionId: ids[0]! })).rejects.toMatchObject({ code: 'NoSuchVersion' });
      expect(Buffer.from(await collect((await s.getObject('versioned', 'doc', { versionId: ids[0]! })).body)).toString()).toBe('doc v0');
    };
    await check(store);
    await store.close();
    const replayed = await reopen();
    await check(replayed);
    await replayed.checkpoint();
    await replayed.close();
    const restored = await reopen();
    await check(restored);
    expect((await verifyRepository(restored.repo.provider)).problems).toEqual([]);
    await restored.close();
  });
});

describe('a fork is O(1): it shares, never copies', () => {
  it('writes one commit, copies no entry, and shares the frozen overlay and the runs', async () => {
    const { store, counter } = await open('memory');
    await store.createBucket('big');
    for (let i = 0; i < 300; i++) await put(store, 'big', `k/${i}`, utf8(`v${i}`));
    await store.checkpoint();
    for (let i = 300; i < 500; i++) await put(store, 'big', `k/${i}`, utf8(`v${i}`));
    const srcState = store.repo.state.buckets.get('big')!;
    const overlay = srcState.overlay;
    const runs = [...srcState.runs];
    const logOverlay = srcState.versions.overlay;
    const logRuns = [...srcState.versions.runs];
    expect(overlay.size).toBe(200);
    expect(logOverlay.size).toBe(200);
    counter.reset();
    await store.forkBucket('big', 'clone');
    const c = counter.snapshot();
    // One commit blob and the anchor; nothing read, no run written.
    expect(c.byClass.commits?.puts).toBe(1);
    expect(c.total.puts).toBe(2);
    expect(c.total.gets).toBe(0);
    expect(c.byClass.runs).toBeUndefined();
    const clone = store.repo.state.buckets.get('clone')!;
    // The very same map (frozen, shared), the very same run handles; fresh empty overlays.
    expect(clone.frozen.map((l) => l.map)).toEqual([overlay]);
    expect(clone.frozen[0]).toBe(srcState.frozen[0]);
    expect(clone.frozen[0]!.map).toBe(overlay);
    expect(clone.runs.every((r, i) => r === runs[i])).toBe(true);
    expect(srcState.overlay).not.toBe(overlay);
    expect(srcState.overlay.size + clone.overlay.size).toBe(0);
    // The version log is shared the same way.
    expect(clone.versions.frozen[0]).toBe(srcState.versions.frozen[0]);
    expect(clone.versions.frozen[0]!.map).toBe(logOverlay);
    expect(clone.versions.runs.every((r, i) => r === logRuns[i])).toBe(true);
    expect(clone.versions.overlay.size + srcState.versions.overlay.size).toBe(0);
    // Shared layers count once against the overlay budget.
    expect(store.repo.state.overlayBytes()).toBe(overlay.bytes + logOverlay.bytes);
    await store.close();
  });

  it('flushes a shared frozen layer into ONE run at the checkpoint, named by both buckets in the root and opened once on reopen', async () => {
    const { store, counter, provider, reopen } = await open('fs');
    await store.createBucket('origin');
    for (let i = 0; i < 50; i++) await put(store, 'origin', `a/${i}`, utf8(`a${i}`));
    await store.checkpoint();
    for (let i = 0; i < 40; i++) await put(store, 'origin', `b/${i}`, utf8(`b${i}`));
    await store.forkBucket('origin', 'twin');
    await put(store, 'origin', 'c/origin', utf8('o'));
    await put(store, 'twin', 'c/twin', utf8('t'));
    counter.reset();
    await store.checkpoint();
    // Runs written, for the object index and for the version log alike: the shared layer once,
    // and each bucket's own overlay.
    expect(counter.snapshot().byClass.runs?.puts).toBe(6);
    const o = store.repo.state.buckets.get('origin')!;
    const t = store.repo.state.buckets.get('twin')!;
    expect(o.frozen).toEqual([]);
    expect(t.frozen).toEqual([]);
    expect(o.runs).toHaveLength(3);
    expect(t.runs).toHaveLength(3);
    expect(o.runs[1]).toBe(t.runs[1]); // the shared layer's run
    expect(o.runs[2]).toBe(t.runs[2]); // the source's older run
    expect(o.runs[0]).not.toBe(t.runs[0]); // each one's own overlay
    expect(o.versions.runs[1]).toBe(t.versions.runs[1]);
    expect(o.versions.runs[0]).not.toBe(t.versions.runs[0]);
    const found = (await readAnchor(provider))!;
    const root = decodeRoot(await readRecord(provider, found.anchor.root, 'root'));
    const metas = (name: string) => root.buckets.find((b) => b.name === name)!.runs.map((m) => Buffer.from(m).toString('hex'));
    expect(metas('origin').slice(1)).toEqual(metas('twin').slice(1));
    const logMetas = (name: string) => root.buckets.find((b) => b.name === name)!.versionRuns!.map((m) => Buffer.from(m).toString('hex'));
    expect(logMetas('origin')[1]).toBe(logMetas('twin')[1]);
    await store.close();
    const again = await reopen();
    const o2 = again.repo.state.buckets.get('origin')!;
    const t2 = again.repo.state.buckets.get('twin')!;
    expect(o2.runs[1]).toBe(t2.runs[1]);
    expect(o2.runs[2]).toBe(t2.runs[2]);
    expect(o2.versions.runs[1]).toBe(t2.versions.runs[1]);
    expect((await listing(again, 'twin')).size).toBe(91);
    expect((await listing(again, 'origin')).size).toBe(91);
    await again.close();
  });

  it('does not rewrite the index it shares at the next checkpoint (a plain bucket in the same state is compacted)', async () => {
    const written: number[] = [];
    for (const forked of [false, true]) {
      const { store, counter } = await open('memory', { maxRuns: 3 });
      await store.createBucket('tiered');
      for (let r = 0; r < 3; r++) {
        for (let i = 0; i < 100; i++) await put(store, 'tiered', `r${r}/${i}`, utf8(`v${r}.${i}`));
        await store.checkpoint();
      }
      // Values as varied as the earlier runs': runs are compressed, "similar size" is in bytes.
      for (let i = 0; i < 100; i++) await put(store, 'tiered', `late/${i}`, utf8(`v3.${i}`));
      if (forked) {
        await store.forkBucket('tiered', 'tiered-fork');
        await put(store, 'tiered-fork', 'own', utf8('own'));
      }
      const compactions = store.repo.stats.compactions;
      counter.reset();
      await store.checkpoint();
      written.push(counter.snapshot().byClass.runs?.bytesPut ?? 0);
      if (forked) {
        // Only the shared layer (100 entries) and the fork's own write became runs, plus the
        // version log's: far less than one 400-entry copy of the index, let alone two.
        expect(store.repo.stats.compactions).toBe(compactions);
        expect(store.repo.state.buckets.get('tiered')!.runs).toHaveLength(4);
        expect(store.repo.state.buckets.get('tiered-fork')!.runs).toHaveLength(5);
        expect((await listing(store, 'tiered-fork')).size).toBe(401);
        expect((await listing(store, 'tiered')).size).toBe(400);
      } else {
        // Four runs of similar size: merged into one (size tiers, compaction-policy.ts).
        expect(store.repo.stats.compactions).toBe(compactions + 1);
        expect(store.repo.state.buckets.get('tiered')!.runs).toHaveLength(1);
        expect((await listing(store, 'tiered')).size).toBe(400);
      }
      await store.close();
    }
    // Two buckets' checkpoint without rewriting the shared index writes less than one bucket's
    // full compaction.
    expect(written[1]!).toBeLessThan(written[0]!);
  });

  it('checkpoints once a bucket holds more frozen layers than MAX_FROZEN_LAYERS (forks of a bucket being written)', async () => {
    const { store } = await open('memory');
    await store.createBucket('hot');
    for (let i = 0; i < 12; i++) {
      await put(store, 'hot', `k/${i}`, utf8(`v${i}`));
      await store.forkBucket('hot', `hot-fork-${i}`);
    }
    await store.repo.idle(); // checkpoints run beside the commit loop
    expect(store.repo.stats.checkpoints).toBeGreaterThan(0);
    expect(store.repo.state.buckets.get('hot')!.frozen.length).toBeLessThanOrEqual(9);
    for (let i = 0; i < 12; i++) expect((await listing(store, `hot-fork-${i}`)).size).toBe(i + 1);
    await store.close();
  });
});

describe('what a fork takes', () => {
  it('copies every setting but the owner and the policy, applies the caller\'s own over them, and starts with no upload', async () => {
    const { store } = await open('memory');
    await store.createBucket('settings', 'KEYONE', [
      ['cors', utf8('[{"AllowedOrigins":["*"]}]')],
      ['policy', utf8('{"Statement":[]}')],
      ['acl', utf8('public-read')],
      ['encryption', utf8('AES256')],
      ['tagging', utf8('a=b')],
      ['versioning', utf8('Enabled')],
    ]);
    await put(store, 'settings', 'obj', utf8('x'));
    const uploadId = await store.createMultipartUpload('settings', 'pending');
    const part = randomBytes(100, 5);
    const r = await store.uploadPart('settings', 'pending', uploadId, 1, stream(part), { size: part.length });
    const res = await store.forkBucket('settings', 'settings-fork', { owner: 'KEYTWO', configs: [['acl', null], ['tagging', utf8('c=d')]] });
    expect(res.copied).toEqual(['acl', 'cors', 'encryption', 'tagging', 'versioning']);
    expect([...NOT_COPIED].sort()).toEqual(['lifecycle', 'owner', 'policy']);
    const cfg = (name: string) => {
      const v = store.getBucketConfig('settings-fork', name);
      return v && new TextDecoder().decode(v);
    };
    expect(store.bucketOwner('settings-fork')).toBe('KEYTWO');
    expect(store.bucketOwner('settings')).toBe('KEYONE');
    expect(cfg('policy')).toBeUndefined();
    expect(cfg('acl')).toBeUndefined(); // the caller's null removed the copied one
    expect(cfg('tagging')).toBe('c=d');
    expect(cfg('cors')).toBe('[{"AllowedOrigins":["*"]}]');
    expect(cfg('encryption')).toBe('AES256');
    expect(cfg('versioning')).toBe('Enabled');
    // Without an owner the fork belongs to nobody (admin keys only).
    await store.forkBucket('settings', 'settings-unowned');
    expect(store.bucketOwner('settings-unowned')).toBeUndefined();
    // The upload in progress stays the source's: not listed in the fork, completes in the source only.
    expect((await store.listMultipartUploads('settings-fork')).uploads).toEqual([]);
    await expect(store.uploadPart('settings-fork', 'pending', uploadId, 2, stream(part), { size: part.length })).rejects.toMatchObject({ code: 'NoSuchUpload' });
    await store.completeMultipartUpload('settings', 'pending', uploadId, [{ partNumber: 1, etag: r.etag }]);
    expect([...(await listing(store, 'settings')).keys()]).toEqual(['obj', 'pending']);
    expect([...(await listing(store, 'settings-fork')).keys()]).toEqual(['obj']);
    // Settings changed afterwards on either side stay there.
    await store.putBucketConfig('settings', 'cors', null);
    expect(cfg('cors')).toBe('[{"AllowedOrigins":["*"]}]');
    await store.close();
  });

  it('is ordered with writes: it holds every write acknowledged before it was asked for, none asked for after it resolved, and no later overwrite', async () => {
    const { store } = await open('fs');
    await store.createBucket('busy');
    const before = new Set<string>();
    const first = Array.from({ length: 120 }, (_, i) =>
      put(store, 'busy', `k/${i % 60}/${i}`, utf8(`first ${i}`)).then(() => before.add(`k/${i % 60}/${i}`))
    );
    await Promise.race(first);
    const ackedBeforeFork = new Set(before);
    const fork = store.forkBucket('busy', 'busy-fork');
    const overwrites = Array.from({ length: 120 }, (_, i) => put(store, 'busy', `k/${i % 60}/${i}`, utf8(`second ${i}`)));
    await fork;
    const after = Array.from({ length: 20 }, (_, i) => put(store, 'busy', `late/${i}`, utf8('late')));
    await Promise.all([...first, ...overwrites, ...after]);
    expect(ackedBeforeFork.size).toBeGreaterThan(0);
    const forked = await listing(store, 'busy-fork');
    for (const key of ackedBeforeFork) expect(forked.has(key), key).toBe(true);
    for (const key of forked.keys()) {
      expect(key.startsWith('late/'), key).toBe(false);
      const body = new TextDecoder().decode(await collect((await store.getObject('busy-fork', key)).body));
      expect(body.startsWith('first'), `${key}: ${body}`).toBe(true);
    }
    // The source took every write, the second round last.
    const src = await listing(store, 'busy');
    expect(src.size).toBe(140);
    const v = new TextDecoder().decode(await collect((await store.getObject('busy', 'k/0/0')).body));
    expect(v).toBe('second 0');
    await store.close();
  });

  it('runs on committed state: operations queued before it are applied when it stages, later ones wait for its commit', async () => {
    const { store } = await open('memory');
    await store.createBucket('queue');
    const seen: string[] = [];
    const repo = store.repo;
    // All three queued at once: without `alone` they would share one batch.
    const a = repo.run(async (tx) => tx.put('queue', 'a', TOMBSTONE));
    const alone = repo.run(
      async (tx) => {
        seen.push(repo.state.buckets.get('queue')!.overlay.has('a') ? 'a applied' : 'a pending');
        tx.put('queue', 'c', TOMBSTONE);
      },
      { alone: true }
    );
    const b = repo.run(async () => {
      seen.push(repo.stats.commits >= 3 ? 'b staged after the commit of alone' : 'b staged early');
    });
    await Promise.all([a, alone, b]);
    expect(seen).toEqual(['a applied', 'b staged after the commit of alone']);
    await store.close();
  });
});

describe('fork refusals', () => {
  it('answers bad names, a missing source, an existing target, itself and a time with typed errors, changing nothing', async () => {
    const { store } = await open('memory');
    await store.createBucket('src-bucket', 'OWNER');
    await store.createBucket('taken', 'OWNER');
    await store.createBucket('theirs', 'SOMEONE');
    const seq = store.repo.seq;
    await expect(store.forkBucket('src-bucket', 'Bad_Name')).rejects.toMatchObject({ code: 'InvalidBucketName' });
    await expect(store.forkBucket('src-bucket', 'x'.repeat(64))).rejects.toMatchObject({ code: 'InvalidBucketName' });
    await expect(store.forkBucket('no-such-bucket', 'new-one')).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await expect(store.forkBucket('src-bucket', 'src-bucket')).rejects.toMatchObject({ code: 'InvalidRequest' });
    await expect(store.forkBucket('src-bucket', 'taken', { owner: 'OWNER' })).rejects.toMatchObject({ code: 'BucketAlreadyOwnedByYou' });
    await expect(store.forkBucket('src-bucket', 'taken')).rejects.toMatchObject({ code: 'BucketAlreadyOwnedByYou' });
    await expect(store.forkBucket('src-bucket', 'theirs', { owner: 'OWNER' })).rejects.toMatchObject({ code: 'BucketAlreadyExists' });
    // A time before the source existed (forks as of a time inside its window: fork-at.test.ts).
    await expect(store.forkBucket('src-bucket', 'new-one', { at: Date.now() - 60_000 })).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(/before bucket src-bucket was created/) });
    await expect(store.forkBucket('src-bucket', 'new-one', { at: Date.now() + 3_600_000 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.forkBucket('src-bucket', 'new-one', { at: Number.NaN })).rejects.toMatchObject({ code: 'InvalidArgument' });
    expect(store.repo.seq).toBe(seq);
    expect(store.listBuckets().map((b) => b.name)).toEqual(['src-bucket', 'taken', 'theirs']);
    // The queue still works after refusals of an `alone` operation.
    await store.forkBucket('src-bucket', 'new-one');
    expect(store.listBuckets().map((b) => b.name)).toContain('new-one');
    await store.close();
  });

  it('parses RFC 3339 fork times and refuses malformed, truncated, oversized and hostile ones', () => {
    expect(parseForkTime('2026-03-01T12:00:00Z')).toBe(Date.UTC(2026, 2, 1, 12));
    expect(parseForkTime('2026-03-01t12:00:00z')).toBe(Date.UTC(2026, 2, 1, 12));
    expect(parseForkTime('2026-03-01T13:30:00+01:30')).toBe(Date.UTC(2026, 2, 1, 12));
    expect(parseForkTime('2026-03-01T10:00:00-02:00')).toBe(Date.UTC(2026, 2, 1, 12));
    expect(parseForkTime('2026-03-01T12:00:00.123456789Z')).toBe(Date.UTC(2026, 2, 1, 12, 0, 0, 123));
    expect(parseForkTime('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    for (const bad of [
      '',
      '2026-03-01',
      '2026-03-01T12:00:00', // no offset
      '2026-03-01 12:00:00Z',
      '2026-03-01T12:00Z',
      '2026-3-1T12:00:00Z',
      '2026-13-01T12:00:00Z',
      '2026-02-30T12:00:00Z',
      '2025-02-29T12:00:00Z',
      '2026-03-01T24:00:00Z',
      '2026-03-01T12:60:00Z',
      '2026-03-01T12:00:60Z',
      '2026-03-01T12:00:00+24:00',
      '2026-03-01T12:00:00+01:60',
      '2026-03-01T12:00:00.1234567890Z',
      '2026-03-01T12:00:00.Z',
      ' 2026-03-01T12:00:00Z',
      '2026-03-01T12:00:00Z\n',
      '１２３４-03-01T12:00:00Z',
      '2026-03-01T12:00:00Z' + '0'.repeat(100_000),
      '1772366400',
      'now',
    ]) {
      expect(() => parseForkTime(bad), JSON.stringify(bad.slice(0, 40))).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    }
  });
});
