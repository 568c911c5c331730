/**
 * The fs provider's append-log segments (src/provider/fs/log-segment.ts): created durable and
 * create-only, preallocated (reads as zeros), appended in place at any offset (also past the
 * preallocation, then readable through the exclusive mode's cached handles), listed and deleted
 * like any blob, and refusing bad offsets and appends after close with AppendError 'write'.
 * Zero-filling ahead of the appends allocates the file's blocks past the furthest append and
 * never writes over an append's bytes, whatever the appends' sizes, retries and seal timing.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { keyPath } from '../../src/provider/fs/key-path.js';
import { AppendError } from '../../src/provider/append-log.js';
import { getBytes, ProviderError } from '../../src/provider/provider.js';
import { tempDir } from '../store/helpers.js';
import { until } from '../integration/support/bounds.js';

/** Path of the blob file of `key` under the provider directory `dir`. */
function fileOf(dir: string, key: string): string {
  const leaf = keyPath(Buffer.from(key)).leaf;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[]) {
    if (e.isFile() && e.name === leaf) return join(e.parentPath ?? (e as { path?: string }).path ?? dir, e.name);
  }
  throw new Error(`no file for ${key} under ${dir}`);
}

/** Bytes the file at `path` has allocated on disk. */
const allocated = (path: string) => statSync(path).blocks * 512;

/** A deterministic byte pattern (so a zeroed range shows up as a mismatch). */
const pattern = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => ((i * 31 + seed * 7) % 251) + 1));

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

  it('zero-fills ahead of small appends: the blocks past the furthest append are allocated, and sealing cuts them off', async () => {
    const { dir, cleanup } = tempDir('fs-log-fill');
    try {
      const p = await createFsProvider({ dir, exclusive: true });
      const log = await p.openLog('log/000000000004-dd', 4 * 1024 * 1024);
      const path = fileOf(dir, log.key);
      expect(allocated(path)).toBeLessThan(64 * 1024); // created sparse
      let at = 0;
      for (let i = 0; i < 40; i++, at += 8 * 1024) await log.append(at, [pattern(8 * 1024, i)]);
      // Fills of 64 KiB and more run ahead of 8 KiB appends.
      expect(await until(() => allocated(path) >= at + 64 * 1024, 5000)).toBe(true);
      expect(allocated(path)).toBeLessThan(at + 1024 * 1024);
      // Appends of 32 KiB: the fills grow with the segment (1 MiB at most) and keep ahead.
      for (let i = 0; i < 48; i++, at += 32 * 1024) await log.append(at, [pattern(32 * 1024, i)]);
      expect(await until(() => allocated(path) >= at + 256 * 1024, 5000)).toBe(true);
      expect(Buffer.from(await getBytes(p, log.key, { start: 0, end: 8 * 1024 - 1 })).equals(pattern(8 * 1024, 0))).toBe(true);
      expect(Buffer.from(await getBytes(p, log.key, { start: at - 32 * 1024, end: at - 1 })).equals(pattern(32 * 1024, 47))).toBe(true);
      expect(Buffer.from(await getBytes(p, log.key, { start: at, end: at + 4095 })).equals(Buffer.alloc(4096))).toBe(true);
      await log.seal!(at);
      expect(statSync(path).size).toBeLessThanOrEqual(at + 64);
      expect(allocated(path)).toBeLessThan(at + 64 * 1024);
      await p.close();
    } finally {
      cleanup();
    }
  });

  it('starts no fill after a large append (its own write dwarfs the allocation)', async () => {
    const { dir, cleanup } = tempDir('fs-log-fill');
    try {
      const p = await createFsProvider({ dir, exclusive: true });
      const log = await p.openLog('log/000000000005-ee', 4 * 1024 * 1024);
      const path = fileOf(dir, log.key);
      await log.append(0, [pattern(1024 * 1024, 3)]);
      await log.append(1024 * 1024, [pattern(512 * 1024, 4)]);
      await new Promise((r) => setTimeout(r, 200));
      expect(allocated(path)).toBeLessThan(1536 * 1024 + 64 * 1024);
      await log.close();
      await p.close();
    } finally {
      cleanup();
    }
  });

  it('never writes zeros over an append: random sizes, appends into a fill in flight, retries at the same offset, seal at once', async () => {
    const { dir, cleanup } = tempDir('fs-log-fill');
    try {
      const p = await createFsProvider({ dir, exclusive: true });
      for (let round = 0; round < 4; round++) {
        const key = `log/00000000001${round}-ee`;
        const size = 256 * 1024; // small, so appends also cross the end (growth) while fills run
        const log = await p.openLog(key, size);
        const model = Buffer.alloc(4 * 1024 * 1024);
        let end = 0;
        let seed = round * 1000;
        const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
        for (let i = 0; i < 120; i++) {
          const n = 1 + Math.floor(rand() ** 3 * 300 * 1024); // mostly small, some past a whole fill
          const bytes = pattern(n, i + round * 7);
          // Every fourth append is a retry at the previous offset with other, longer bytes.
          const offset = i % 4 === 3 && end > 0 ? Math.max(0, end - Math.floor(rand() * 8192)) : end;
          await log.append(offset, [bytes.subarray(0, n >> 1), bytes.subarray(n >> 1)]);
          bytes.copy(model, offset);
          end = Math.max(end, offset + n);
          if (end > 3 * 1024 * 1024) break;
        }
        if (round % 2 === 0) await log.seal!(end); // a fill may still be in flight: seal waits for it
        else await log.close();
        if (round % 2 === 0) expect((await p.head(key)).size).toBe(end); // nothing written past the cut
        const back = Buffer.from(await getBytes(p, key, { start: 0, end: end - 1 }));
        expect(back.length).toBe(end);
        expect(back.equals(model.subarray(0, end))).toBe(true);
      }
      await p.close();
      // And from a fresh provider (what recovery reads).
      const again = await createFsProvider({ dir });
      expect((await again.list({ prefix: 'log/' })).items.length).toBe(4);
      await again.close();
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
