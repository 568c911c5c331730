/**
 * The fs provider's log segments make each append durable in the write itself: the segment's
 * descriptor is opened O_DSYNC (log-segment.ts), so an append is one job on libuv's thread pool
 * instead of a write and an fdatasync. Before, the descriptor was opened 'r+' and every append
 * paid a second thread-pool round trip for the fdatasync (m + 1 of them per commit over the
 * erasure log). Linux only: the open flags are read from /proc/self/fdinfo.
 */
import { constants } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { getBytes } from '../../src/provider/provider.js';
import { tempDir } from '../store/helpers.js';
import { flagsOf } from '../support/fd-flags.js';


describe.runIf(process.platform === 'linux')('fs provider log segment durability', () => {
  it('appends through an O_DSYNC descriptor (durable when the write returns), in place and past the preallocation', async () => {
    const { dir, cleanup } = tempDir('fs-log-dsync');
    try {
      const p = await createFsProvider({ dir });
      const log = await p.openLog('log/000000000001-dsync', 4096);
      // The provider holds no other descriptor under `dir` for writing: only the segment's is O_RDWR.
      const flags = flagsOf(dir).filter((f) => (f & 3) === constants.O_RDWR);
      expect(flags.length).toBeGreaterThan(0);
      expect(flags.every((f) => (f & constants.O_DSYNC) === constants.O_DSYNC)).toBe(true);
      await log.append(0, [Buffer.from('hello '), Buffer.from('world')]);
      await log.append(4090, [Buffer.alloc(5000, 7)]); // grows the file: the size rides on the synchronous write
      expect(Buffer.from(await getBytes(p, log.key, { start: 0, end: 10 })).toString()).toBe('hello world');
      expect(Buffer.from(await getBytes(p, log.key, { start: 4090, end: 9089 })).equals(Buffer.alloc(5000, 7))).toBe(true);
      await log.close();
      await p.close();
    } finally {
      cleanup();
    }
  });

  it('zero-fills through a descriptor of its own (a write-back error reaches the appends\' descriptor too), O_DSYNC, closed with the segment', async () => {
    const { dir, cleanup } = tempDir('fs-log-dsync');
    try {
      const p = await createFsProvider({ dir, exclusive: true });
      const log = await p.openLog('log/000000000002-fill', 1024 * 1024);
      for (let i = 0; i < 8; i++) await log.append(i * 4096, [Buffer.alloc(4096, i + 1)]); // small appends start fills
      await new Promise((r) => setTimeout(r, 100));
      const writers = flagsOf(dir).filter((f) => (f & 3) !== constants.O_RDONLY);
      expect(writers.filter((f) => (f & 3) === constants.O_RDWR).length).toBe(1); // the appends'
      expect(writers.filter((f) => (f & 3) === constants.O_WRONLY).length).toBe(1); // the fills'
      expect(writers.every((f) => (f & constants.O_DSYNC) === constants.O_DSYNC)).toBe(true);
      await log.seal!(8 * 4096);
      expect(flagsOf(dir).filter((f) => (f & 3) !== constants.O_RDONLY)).toEqual([]);
      await p.close();
    } finally {
      cleanup();
    }
  });
});
