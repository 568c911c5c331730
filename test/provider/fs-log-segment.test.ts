/**
 * The fs provider's append-log segments (src/provider/fs/log-segment.ts): created durable and
 * create-only, preallocated (reads as zeros), appended in place at any offset (also past the
 * preallocation, then readable through the exclusive mode's cached handles), listed and deleted
 * like any blob, and refusing bad offsets and appends after close with AppendError 'write'.
 */
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { AppendError } from '../../src/provider/append-log.js';
import { getBytes, ProviderError } from '../../src/provider/provider.js';
import { tempDir } from '../store/helpers.js';

describe('fs provider log segments', () => {
  for (const exclusive of [false, true]) {
    it(`appends in place and reads back (${exclusive ? 'exclusive' : 'shared'} mode)`, async () => {
      const { dir, cleanup } = tempDir('fs-log');
      try {
        const p = await createFsProvider({ dir, exclusive });
        const log = await p.openLog('log/000000000001-aa', 4096);
        expect((await p.head(log.key)).size).toBe(4096);
        expect(Buffer.from(await getBytes(p, log.key, { start: 0, end: 4095 })).equals(Buffer.alloc(4096))).toBe(true);
        await log.append(0, [Buffer.from('hello '), Buffer.from('world')]);
        await log.append(100, [Buffer.from('x'.repeat(50))]);
        expect(Buffer.from(await getBytes(p, log.key, { start: 0, end: 10 })).toString()).toBe('hello world');
        // Past the preallocation: the file grows by whole steps (the preallocated size) and
        // cached read handles see the new size.
        await getBytes(p, log.key, { start: 4000, end: 4095 });
        await log.append(4090, [Buffer.alloc(100, 7)]);
        expect((await p.head(log.key)).size).toBe(8192);
        expect(Buffer.from(await getBytes(p, log.key, { start: 4090, end: 4189 })).equals(Buffer.alloc(100, 7))).toBe(true);
        expect(Buffer.from(await getBytes(p, log.key, { start: 4190, end: 8191 })).equals(Buffer.alloc(4002))).toBe(true);
        await log.append(8190, [Buffer.alloc(4096 * 2 + 10, 9)]); // a frame of several steps
        expect((await p.head(log.key)).size).toBe(4096 * 5);
        await expect(log.append(-1, [Buffer.from('a')])).rejects.toBeInstanceOf(AppendError);
        await expect(p.openLog(log.key, 10)).rejects.toMatchObject({ code: 'PreconditionFailed' });
        await log.close();
        await expect(log.append(0, [Buffer.from('a')])).rejects.toMatchObject({ stage: 'write' });
        await p.close();
        const again = await createFsProvider({ dir });
        expect(Buffer.from(await getBytes(again, 'log/000000000001-aa', { start: 100, end: 149 })).toString()).toBe('x'.repeat(50));
        expect((await again.list({ prefix: 'log/' })).items.map((i) => i.key)).toEqual(['log/000000000001-aa']);
        await again.delete('log/000000000001-aa');
        await expect(again.head('log/000000000001-aa')).rejects.toBeInstanceOf(ProviderError);
        await again.close();
      } finally {
        cleanup();
      }
    });
  }

  it('seals a segment at its written end: cut, durable, closed; a bad end is refused', async () => {
    const { dir, cleanup } = tempDir('fs-log');
    try {
      const p = await createFsProvider({ dir, exclusive: true });
      const log = await p.openLog('log/000000000003-cc', 4096);
      await log.append(0, [Buffer.from('abc')]);
      await expect(log.seal!(4097)).rejects.toThrow(RangeError);
      await expect(log.seal!(-1)).rejects.toThrow(RangeError);
      await getBytes(p, log.key, { start: 0, end: 4095 }); // a cached handle that knows 4096
      await log.seal!(3);
      expect((await p.head(log.key)).size).toBe(3);
      expect((await p.list({ prefix: 'log/' })).items.map((i) => i.size)).toEqual([3]);
      expect(Buffer.from(await getBytes(p, log.key, { start: 0, end: 2 })).toString()).toBe('abc');
      expect((await getBytes(p, log.key, { start: 0, end: 4095 })).length).toBe(3); // the cut tail is gone
      await expect(log.append(3, [Buffer.from('d')])).rejects.toMatchObject({ stage: 'write' });
      await expect(log.seal!(3)).rejects.toBeInstanceOf(ProviderError);
      await log.close(); // after a seal: nothing left to release
      await p.close();
    } finally {
      cleanup();
    }
  });

  it('refuses a size out of range', async () => {
    const { dir, cleanup } = tempDir('fs-log');
    try {
      const p = await createFsProvider({ dir });
      await expect(p.openLog('log/000000000002-bb', -1)).rejects.toThrow(RangeError);
      expect((await p.list({ prefix: 'log/' })).items).toEqual([]); // nothing was created
      await p.close();
    } finally {
      cleanup();
    }
  });
});
