/**
 * A put that creates directories makes every new entry durable before it resolves: the blob's
 * entry in its directory, and each created directory's entry in its parent. A new directory's
 * name lives in its parent's data, so a crash after the put answered, with only the new
 * directory itself synced, could lose the directory and the blob in it. So could a new
 * repository's own directories (blobs/, tmp/, locks/, and a --data path made for it).
 *
 * Power loss cannot be staged here (a killed process keeps the page cache), so the test
 * records which directories are fsynced (test/support/sync-recorder.ts) and checks the set
 * against the directories the put or the open created.
 */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { makeDirectory } from '../../src/provider/fs/directory-lock.js';
import { ProviderError } from '../../src/provider/provider.js';
import { keyPath } from '../../src/provider/fs/key-path.js';
import { getBytes } from '../../src/provider/provider.js';
import { tempDir } from '../store/helpers.js';
import { recordSyncs, type SyncRecorder } from '../support/sync-recorder.js';

/** The directories a key's blob file sits under, outermost first (absolute). */
function dirsOf(root: string, key: string): string[] {
  const out: string[] = [];
  let d = join(root, 'blobs');
  for (const name of keyPath(Buffer.from(key)).dirs) out.push((d = join(d, name)));
  return out;
}

/** Polls `what` every 2 ms, for up to about 4 s; its last answer. */
async function until(what: () => boolean): Promise<boolean> {
  for (let i = 0; i < 2000 && !what(); i++) await new Promise((r) => setTimeout(r, 2));
  return what();
}

/** A body that sends `first`, then waits for `release`: then sends `last`, or fails (`release(true)`). */
function heldBody(first: string, last: string): { body: AsyncGenerator<Buffer>; release: (fail?: boolean) => void } {
  let release!: (fail?: boolean) => void;
  const released = new Promise<boolean>((r) => (release = (fail = false) => r(fail)));
  async function* body() {
    yield Buffer.from(first);
    if (await released) throw new Error('client went away');
    yield Buffer.from(last);
  }
  return { body: body(), release };
}

/** A key whose blob sits two 16-byte directory levels down, as an erasure fragment's does. */
const twoLevelKey = (leaf: string) => `chunks/0000a1b2c-d3e4f5a6b7c8d9e!${leaf}`;

/** Writes each key (its own name as its bytes) through a provider that is closed again: blobs
 * an earlier process left, whose directories the next provider knows nothing of. */
async function writtenBefore(dir: string, keys: string[]): Promise<void> {
  const p = await createFsProvider({ dir, exclusive: true });
  for (const k of keys) await p.put(k, [Buffer.from(k)]);
  await p.close();
}

let rec: SyncRecorder | undefined;
let cleanup: (() => void) | undefined;

beforeEach(async () => {
  rec = await recordSyncs();
});

afterEach(() => {
  rec?.restore();
  rec = undefined;
  cleanup?.();
  cleanup = undefined;
});

describe.each([false, true])('fs provider directory entries (exclusive: %s)', (exclusive) => {
  it('syncs the leaf directory and the parent of every directory a put creates', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const p = await createFsProvider({ dir: t.dir, exclusive });
    try {
      // 40 key bytes: two directory levels of 16 bytes, then the file.
      const first = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.1';
      const [d1, d2] = dirsOf(t.dir, first);
      expect(d2).toBeDefined();
      expect(existsSync(d1!)).toBe(false);

      rec!.synced.length = 0;
      await p.put(first, [Buffer.from('one')]);
      // The blob's entry (d2), d2's entry (in d1) and d1's entry (in blobs/).
      expect(rec!.synced).toEqual(expect.arrayContaining([d2, d1, join(t.dir, 'blobs')]));

      // Same leaf directory, nothing created: its own sync is the one needed.
      rec!.synced.length = 0;
      await p.put(`${first.slice(0, 32)}other123`, [Buffer.from('two')]);
      expect(dirsOf(t.dir, `${first.slice(0, 32)}other123`)).toEqual([d1, d2]);
      expect(rec!.synced).toContain(d2);

      // A new leaf directory under an existing one: its entry lives in d1.
      const third = `${first.slice(0, 16)}ffffffffffffffff!s.meta.3`;
      const [e1, e2] = dirsOf(t.dir, third);
      expect(e1).toBe(d1);
      expect(existsSync(e2!)).toBe(false);
      rec!.synced.length = 0;
      await p.put(third, [Buffer.from('three')]);
      expect(rec!.synced).toEqual(expect.arrayContaining([e2, d1]));

      expect(Buffer.from(await getBytes(p, first)).toString()).toBe('one');
      expect(Buffer.from(await getBytes(p, third)).toString()).toBe('three');
    } finally {
      await p.close();
    }
  });

  it('opening a new repository syncs the entries of every directory it creates, the --data path included', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const repo = join(t.dir, 'a', 'b', 'repo');
    rec!.synced.length = 0;
    const p = await createFsProvider({ dir: repo, exclusive });
    try {
      for (const d of [join(repo, 'blobs'), join(repo, 'tmp'), join(repo, 'locks'), repo, join(t.dir, 'a', 'b'), join(t.dir, 'a')]) {
        expect(existsSync(d)).toBe(true);
        expect(rec!.synced).toContain(dirname(d));
      }
      // An existing repository creates nothing: its open syncs the data directory and its
      // entry once (a previous process may have died before syncing them), nothing above.
      await p.close();
      rec!.synced.length = 0;
      const again = await createFsProvider({ dir: repo, exclusive });
      await again.close();
      expect(rec!.synced.filter((s) => s.startsWith(t.dir)).sort()).toEqual([repo, join(t.dir, 'a', 'b')].sort());
    } finally {
      await p.close().catch(() => undefined);
    }
  });
});

describe('fs provider directory entries under concurrency, restarts and failures', () => {
  it('a put into a directory another put is creating answers only after that directory\'s entry is durable', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const keyA = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.A';
    const keyB = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.B';
    const [d1, d2] = dirsOf(t.dir, keyA);
    const events: string[] = [];
    let slowed = false;
    rec!.restore();
    // The first sync of d1 (d2's entry) takes 300 ms: the disk is slow to write it.
    rec = await recordSyncs(async (path) => {
      if (path === d1 && !slowed) {
        slowed = true;
        await new Promise((r) => setTimeout(r, 300));
        events.push('d1 synced');
      }
    });
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    try {
      const a = p.put(keyA, [Buffer.from('a')]).then(() => events.push('A answered'));
      // B starts once A's blob is in place (its directories exist), while d1's sync is slow.
      while (!existsSync(join(d2!, keyPath(Buffer.from(keyA)).leaf))) await new Promise((r) => setTimeout(r, 2));
      await p.put(keyB, [Buffer.from('b')]);
      events.push('B answered');
      await a;
      expect(slowed).toBe(true);
      expect(events.indexOf('d1 synced')).toBeGreaterThanOrEqual(0);
      expect(events.indexOf('d1 synced')).toBeLessThan(events.indexOf('B answered'));
    } finally {
      await p.close();
    }
  });

  it('a restarted provider syncs the entries of directories it finds, once, on its first put under them', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const key = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.1';
    const [d1, d2] = dirsOf(t.dir, key);
    const first = await createFsProvider({ dir: t.dir, exclusive: true });
    await first.put(key, [Buffer.from('one')]);
    await first.close();
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    try {
      rec!.synced.length = 0;
      await p.put(`${key.slice(0, 32)}second12`, [Buffer.from('two')]);
      expect(rec!.synced).toEqual(expect.arrayContaining([d2, d1, join(t.dir, 'blobs')]));
      rec!.synced.length = 0;
      await p.put(`${key.slice(0, 32)}third123`, [Buffer.from('three')]);
      expect(rec!.synced).toContain(d2);
      expect(rec!.synced).not.toContain(d1);
    } finally {
      await p.close();
    }
  });

  it('a directory sync that fails after a blob was published stops the provider: no call answers from bytes that may not be durable', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const key = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.1';
    // The blob's own directory: synced after the rename (its new directories' entries were
    // made durable before, while its body was written).
    const [, d2] = dirsOf(t.dir, key);
    rec!.restore();
    rec = await recordSyncs((path) => {
      if (path === d2) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    });
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    try {
      // A put that fails before its rename leaves nothing: not marked.
      const early = await p.put('early', [Buffer.from('abc')], { contentLength: 4 }).then(() => undefined, (e: unknown) => e);
      expect(early).toMatchObject({ code: 'LengthMismatch', mayLand: false });
      const failed = await p.put(key, [Buffer.from('one')]).then(() => undefined, (e: unknown) => e);
      expect(String(failed)).toMatch(/EIO/);
      // Published before the sync failed: the error says the blob may be there (mayLand), so a
      // caller that reads back to settle a failure (an erasure anchor copy) does not trust it.
      expect(failed).toMatchObject({ mayLand: true });
      // The blob is in place and its bytes are in the page cache, but nothing reads them back.
      const stopped = /stopped after a failed directory sync .*EIO/;
      await expect(getBytes(p, key)).rejects.toThrow(stopped);
      await expect(p.head(key)).rejects.toThrow(stopped);
      await expect(p.put('other', [Buffer.from('x')])).rejects.toSatisfy((e: unknown) => e instanceof ProviderError && e.code === 'Io' && stopped.test(e.message));
      await expect(p.list({})).rejects.toThrow(stopped);
    } finally {
      await p.close().catch(() => undefined);
    }
  });

  it('a sync of a new directory\'s entry that fails while the body is still written stops the provider, and the blob never lands', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const key = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.1';
    const [d1, d2] = dirsOf(t.dir, key);
    rec!.restore();
    // d1 holds the entry of the new d2: its sync runs before the blob's rename.
    rec = await recordSyncs((path) => {
      if (path === d1) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    });
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    try {
      const failed = await p.put(key, [Buffer.from('one')]).then(() => undefined, (e: unknown) => e);
      expect(String(failed)).toMatch(/EIO/);
      expect(failed).toMatchObject({ mayLand: false });
      // Not renamed into place, and the directories made for it are gone again.
      expect(existsSync(d2!)).toBe(false);
      expect(existsSync(d1!)).toBe(false);
      await expect(p.put('other', [Buffer.from('x')])).rejects.toThrow(/stopped after a failed directory sync .*EIO/);
    } finally {
      await p.close().catch(() => undefined);
    }
  });

  it('exclusive: a put makes its new directories, their entries durable, while its body is still arriving; a put cut off removes them again', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    try {
      const key = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.1';
      const [d1, d2] = dirsOf(t.dir, key);
      rec!.synced.length = 0;
      const held = heldBody('first ', 'last');
      const put = p.put(key, held.body);
      // Before the body is complete: both directories exist, and the entries of both are
      // synced in their parents (d2's in d1, d1's in blobs/); the blob is not there yet.
      expect(await until(() => rec!.synced.includes(d1!) && rec!.synced.includes(join(t.dir, 'blobs')))).toBe(true);
      expect(existsSync(d2!)).toBe(true);
      expect(existsSync(join(d2!, keyPath(Buffer.from(key)).leaf))).toBe(false);
      held.release(false);
      await put;
      expect(Buffer.from(await getBytes(p, key)).toString()).toBe('first last');

      // Cut off after its directories were made: they go again, the sibling's stay.
      const cut = 'chunks/0000a1b2c-ffffffffffffff!s.meta.2';
      const [c1, c2] = dirsOf(t.dir, cut);
      expect(c1).toBe(d1);
      const cutHeld = heldBody('first ', 'last');
      const cutPut = p.put(cut, cutHeld.body).then(() => undefined, (e: unknown) => e);
      expect(await until(() => existsSync(c2!))).toBe(true);
      cutHeld.release(true);
      expect(String(await cutPut)).toMatch(/client went away/);
      expect(existsSync(c2!)).toBe(false);
      expect(existsSync(d2!)).toBe(true);
      expect(Buffer.from(await getBytes(p, key)).toString()).toBe('first last');
      // The provider goes on: a put under the removed directory makes it again.
      await p.put(cut, [Buffer.from('again')]);
      expect(Buffer.from(await getBytes(p, cut)).toString()).toBe('again');
    } finally {
      await p.close();
    }
  });

  it('remembers at most rememberedDirs directories: a forgotten one is synced (and made) again, never trusted blindly', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const p = await createFsProvider({ dir: t.dir, exclusive: true, rememberedDirs: 4 });
    try {
      // 41-byte keys differing in their second 16 bytes: each blob has a leaf directory of its own.
      const keyOf = (i: number) => `chunks/0000a1b2c-${String(i).padStart(15, '0')}!s.meta.1`;
      const leafOf = (i: number) => dirsOf(t.dir, keyOf(i))[1]!;
      const d1 = dirsOf(t.dir, keyOf(0))[0]!;
      await p.put(keyOf(0), [Buffer.from('b0')]);
      // Remembered: a second blob in the first leaf needs no sync of its parent.
      rec!.synced.length = 0;
      await p.put(`${keyOf(0).slice(0, 32)}again123`, [Buffer.from('b0 again')]);
      expect(rec!.synced).not.toContain(d1);
      for (let i = 1; i <= 8; i++) await p.put(keyOf(i), [Buffer.from(`b${i}`)]);
      // Eight newer directories later the first one is forgotten: its entry is synced again.
      rec!.synced.length = 0;
      await p.put(`${keyOf(0).slice(0, 32)}third123`, [Buffer.from('b0 third')]);
      expect(rec!.synced).toEqual(expect.arrayContaining([leafOf(0), d1]));
      for (let i = 0; i <= 8; i++) expect(Buffer.from(await getBytes(p, keyOf(i))).toString()).toBe(`b${i}`);
    } finally {
      await p.close();
    }
    await expect(createFsProvider({ dir: t.dir, rememberedDirs: 0 })).rejects.toThrow(/rememberedDirs/);
  });

  it('opening a new repository in an existing empty directory syncs nothing above that directory\'s parent', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const repo = join(t.dir, 'empty');
    await makeDirectory(repo);
    rec!.synced.length = 0;
    const p = await createFsProvider({ dir: repo, exclusive: true });
    await p.close();
    // blobs/, tmp/, locks/ were made: their entries (repo) and repo's own (t.dir); nothing higher.
    expect(rec!.synced).toEqual(expect.arrayContaining([repo, t.dir]));
    expect(rec!.synced.filter((d) => !d.startsWith(t.dir))).toEqual([]);
  });

  it('a directory gone before its entry was synced (a delete pruned it) neither fails the put nor stops the provider', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const key = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.1';
    const [d1] = dirsOf(t.dir, key);
    let once = false;
    rec!.restore();
    rec = await recordSyncs((path) => {
      if (path === d1 && !once) {
        once = true;
        throw Object.assign(new Error(`ENOENT: no such file or directory, open '${d1}'`), { code: 'ENOENT' });
      }
    });
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    try {
      rec!.synced.length = 0;
      await p.put(key, [Buffer.from('one')]);
      expect(once).toBe(true);
      // Not remembered as synced: after the rename the put finds d2's entry not known durable
      // and syncs d1 again (the first try ran while the body was written).
      expect(rec!.synced.filter((s) => s === d1)).toHaveLength(2);
      await p.put('other', [Buffer.from('two')]);
      expect(Buffer.from(await getBytes(p, key)).toString()).toBe('one');
    } finally {
      await p.close();
    }
  });

  it('exclusive: sibling puts racing the prune of a failed put in their new shared directory all land', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    const stem = (round: number, j: number) => `chunks/0000a1b2c${`r${round}j${j}`.padEnd(16, '-')}`; // 32 bytes: two levels
    const failures: unknown[] = [];
    try {
      for (let round = 0; round < 40; round++) {
        await Promise.all(
          Array.from({ length: 8 }, async (_, j) => {
            // An upload cut off after its first bytes: its put prunes the directories it made.
            async function* cut() {
              yield Buffer.from('partial');
              await new Promise((r) => setImmediate(r));
              throw new Error('client went away');
            }
            const failing = p.put(`${stem(round, j)}gone`, cut()).then(
              () => failures.push(new Error('the cut put landed')),
              () => undefined
            );
            // Siblings in the same new directory, started around the prune.
            const siblings = [0, 1, 2].map(async (k) => {
              for (let w = 0; w < k; w++) await new Promise((r) => setImmediate(r));
              const key = `${stem(round, j)}ok${k}`;
              await p.put(key, [Buffer.from(key)]).catch((e: unknown) => failures.push(e));
            });
            await Promise.all([failing, ...siblings]);
          })
        );
      }
      expect(failures.map(String)).toEqual([]);
      for (let round = 0; round < 40; round++)
        for (let j = 0; j < 8; j++)
          for (const k of [0, 1, 2]) {
            const key = `${stem(round, j)}ok${k}`;
            expect(Buffer.from(await getBytes(p, key)).toString()).toBe(key);
          }
    } finally {
      await p.close();
    }
  });

  it('exclusive: a directory sync that ends after a prune removed the directory does not count for the directory made again', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const key = twoLevelKey;
    const [d1, d2] = dirsOf(t.dir, key('w'));
    // Blobs of an earlier process (the next one has not synced d2's entry yet): w alone in d2,
    // and one in another directory under d1, so that d1 outlives the prune of d2 and a sync of
    // d1 can still succeed after that prune.
    const neighbour = 'chunks/0000a1b2c-ffffffffffffff!other';
    expect(dirsOf(t.dir, neighbour)[0]).toBe(d1);
    await writtenBefore(t.dir, [key('w'), neighbour]);
    // Syncs of d1 (which holds d2's entry) wait for the test's gate while one is set.
    let hold: Promise<void> | undefined;
    let held = 0;
    rec!.restore();
    rec = await recordSyncs(async (path) => {
      if (path === d1 && hold) {
        held++;
        await hold;
      }
    });
    const gate = () => {
      let open!: () => void;
      hold = new Promise<void>((r) => (open = r));
      held = 0;
      return open;
    };
    const d1Syncs = () => rec!.synced.filter((s) => s === d1).length;
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    try {
      // B's body is held; its early sync of d1 (for d2's entry) is held too.
      const openFirst = gate();
      const { body, release } = heldBody('b-', 'done');
      const b = p.put(key('b'), body);
      expect(await until(() => held === 1)).toBe(true);
      // The delete of the only blob in d2 prunes d2 while that sync is on its way (and closes
      // d1's cached handle: the sync then goes again through a handle of its own).
      await p.delete(key('w'));
      expect(existsSync(d2!)).toBe(false);
      expect(existsSync(d1!)).toBe(true);
      // That sync now ends, successfully, after the prune.
      openFirst();
      expect(await until(() => d1Syncs() >= 2)).toBe(true);
      await new Promise((r) => setTimeout(r, 100));
      // B goes on: it makes d2 again; its sync of d2's new entry (in d1) is held.
      const openSecond = gate();
      release();
      expect(await until(() => held === 1)).toBe(true);
      // Z, under the new d2, must not answer before d2's new entry is durable.
      let zDone = false;
      const z = p.put(key('z'), [Buffer.from('z')]).then(() => (zDone = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(zDone).toBe(false);
      openSecond();
      await Promise.all([b, z]);
      expect(Buffer.from(await getBytes(p, key('b'))).toString()).toBe('b-done');
      expect(Buffer.from(await getBytes(p, key('z'))).toString()).toBe('z');
    } finally {
      hold = undefined;
      await p.close();
    }
  });

  it('exclusive: a directory handle opened while a prune removed that directory is never cached for later syncs', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const key = twoLevelKey;
    const [d1] = dirsOf(t.dir, key('w'));
    // w alone under d1, written by an earlier process (the next one has no handle of d1).
    await writtenBefore(t.dir, [key('w')]);
    // Opens of d1 answer when the test says; every sync of d1 notes whether its handle is of
    // the directory now at d1 (an inode check: a handle of a removed directory syncs nothing).
    let openHold: Promise<void> | undefined;
    let openHeld = 0;
    const deadSyncs: string[] = [];
    rec!.restore();
    rec = await recordSyncs(
      async (path, handle) => {
        if (path !== d1) return;
        const now = await stat(d1!).catch(() => undefined);
        if (now && now.ino !== (await handle.stat()).ino) deadSyncs.push(path);
      },
      async (path) => {
        if (path === d1 && openHold) {
          openHeld++;
          await openHold;
        }
      }
    );
    const p = await createFsProvider({ dir: t.dir, exclusive: true });
    try {
      let openNow!: () => void;
      openHold = new Promise<void>((r) => (openNow = r));
      const { body, release } = heldBody('b-', 'done');
      // B's early sync of d2's entry opens d1; the open has its handle but has not answered.
      const b = p.put(key('b'), body);
      expect(await until(() => openHeld === 1)).toBe(true);
      // The delete of w prunes d2 and d1 meanwhile.
      await p.delete(key('w'));
      expect(existsSync(d1!)).toBe(false);
      openHold = undefined;
      openNow();
      // B makes d1 and d2 again and syncs d2's new entry in the new d1.
      release();
      await b;
      await p.put(key('z'), [Buffer.from('z')]);
      expect(deadSyncs).toEqual([]);
      expect(rec!.synced.filter((s) => s === d1).length).toBeGreaterThanOrEqual(2);
      expect(Buffer.from(await getBytes(p, key('b'))).toString()).toBe('b-done');
    } finally {
      openHold = undefined;
      await p.close();
    }
  });

  it('shared mode: directories another process pruned and this put made again are synced again', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const key = 'chunks/0000a1b2c-d3e4f5a6b7c8d9e!s.meta.1';
    const [d1, d2] = dirsOf(t.dir, key);
    const a = await createFsProvider({ dir: t.dir });
    const b = await createFsProvider({ dir: t.dir });
    try {
      await a.put(key, [Buffer.from('one')]);
      await b.delete(key); // prunes d2 and d1
      expect(existsSync(d1!)).toBe(false);
      rec!.synced.length = 0;
      await a.put(key, [Buffer.from('again')]);
      expect(rec!.synced).toEqual(expect.arrayContaining([d2, d1, join(t.dir, 'blobs')]));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('the directory lock\'s makeDirectory syncs the entry of every directory it creates', async () => {
    const t = tempDir('fs-dir-durability');
    cleanup = t.cleanup;
    const deep = join(t.dir, 'x', 'y', 'data');
    rec!.synced.length = 0;
    await makeDirectory(deep);
    expect(rec!.synced).toEqual([t.dir, join(t.dir, 'x'), join(t.dir, 'x', 'y')]);
    rec!.synced.length = 0;
    await makeDirectory(deep); // exists: nothing to sync
    expect(rec!.synced).toEqual([]);
  });
});
