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
        // Past the preallocation: the file grows and cached read handles see the new size.
        await getBytes(p, log.key, { start: 4000, end: 4095 });
        await log.append(4090, [Buffer.alloc(100, 7)]);
        expect((await p.head(log.key)).size).toBe(4190);
        expect(Buffer.from(await getBytes(p, log.key, { start: 4090, end: 4189 })).equals(Buffer.alloc(100, 7))).toBe(true);
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
