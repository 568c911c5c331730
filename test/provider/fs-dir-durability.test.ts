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
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
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
      // An existing repository creates nothing: no directory of it is synced at open.
      await p.close();
      rec!.synced.length = 0;
      const again = await createFsProvider({ dir: repo, exclusive });
      await again.close();
      expect(rec!.synced.filter((s) => s === repo || s.startsWith(`${t.dir}/a`))).toEqual([]);
    } finally {
      await p.close().catch(() => undefined);
    }
  });
});
