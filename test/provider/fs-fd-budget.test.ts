/**
 * The descriptor budget of the fs providers' handle caches (fd-budget.ts): the soft open-files
 * limit read from /proc/self/limits text (well-formed, unlimited, absent and hostile lines),
 * the per-provider split, and a handle cache that keeps no more handles than it is given.
 */
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { handleBudget, openFilesLimit, parseOpenFilesLimit, MAX_DIR_HANDLES } from '../../src/provider/fs/fd-budget.js';
import { HandleCache, MAX_CACHED_HANDLES } from '../../src/provider/fs/handle-cache.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { getBytes } from '../../src/provider/provider.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

describe('parseOpenFilesLimit', () => {
  it('reads the soft limit, not the hard one', () => {
    expect(parseOpenFilesLimit(LIMITS)).toBe(1024);
  });
  it('reads unlimited as Infinity', () => {
    expect(parseOpenFilesLimit(LIMITS.replace('1024                 524288', 'unlimited            unlimited'))).toBe(Infinity);
  });
  it('gives undefined for an absent, truncated, zero or malformed line', () => {
    expect(parseOpenFilesLimit('')).toBeUndefined();
    expect(parseOpenFilesLimit(LIMITS.replace(/Max open files.*\n/, ''))).toBeUndefined();
    expect(parseOpenFilesLimit('Max open files')).toBeUndefined();
    expect(parseOpenFilesLimit('Max open files   0   0   files')).toBeUndefined();
    expect(parseOpenFilesLimit('Max open files   -5   10   files')).toBeUndefined();
    expect(parseOpenFilesLimit('Max open files   1e9   10   files')).toBeUndefined();
    expect(parseOpenFilesLimit(`Max open files   ${'9'.repeat(40)}   10   files`)).toBeUndefined();
    expect(parseOpenFilesLimit('\u0000\uffff'.repeat(1000))).toBeUndefined();
  });
  it('reads this process’s limit as a positive number', () => {
    const n = openFilesLimit();
    expect(n).toBeGreaterThan(0);
  });
});

describe('handleBudget', () => {
  it('keeps the defaults when the limit leaves room for them', () => {
    expect(handleBudget(14, 20_000)).toEqual({ blobHandles: MAX_CACHED_HANDLES, dirHandles: MAX_DIR_HANDLES });
    expect(handleBudget(3, Infinity)).toEqual({ blobHandles: MAX_CACHED_HANDLES, dirHandles: MAX_DIR_HANDLES });
  });
  it('splits a quarter of a 1,024-file limit over 14 domains', () => {
    const b = handleBudget(14, 1024);
    expect(b).toEqual({ blobHandles: 14, dirHandles: 4 });
    expect(14 * (b.blobHandles + b.dirHandles)).toBeLessThanOrEqual(1024 / 4);
  });
  it('gives one provider a quarter of the limit', () => {
    const b = handleBudget(1, 1024);
    expect(b.blobHandles + b.dirHandles).toBe(256);
  });
  it('never goes below a few handles, whatever the limit', () => {
    expect(handleBudget(100, 10)).toEqual({ blobHandles: 4, dirHandles: 2 });
    expect(handleBudget(1, 0)).toEqual({ blobHandles: 4, dirHandles: 2 });
  });
  it('refuses a count that is not a positive whole number', () => {
    for (const n of [0, -1, 1.5, NaN]) expect(() => handleBudget(n, 1024)).toThrow(RangeError);
  });
});

describe('a handle cache of a given size', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-fd-budget-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a size below one', () => {
    expect(() => new HandleCache(0)).toThrow(RangeError);
  });

  it('keeps at most that many descriptors open for reads, and reads every blob right', async () => {
    const p = await createFsProvider({ dir, exclusive: true, blobHandles: 3, dirHandles: 2 });
    const fds = () => readdirSync('/proc/self/fd').length;
    const keys = Array.from({ length: 40 }, (_, i) => `k/${i}`);
    for (const [i, k] of keys.entries()) await p.put(k, Buffer.from(`blob ${i}`));
    const before = fds();
    for (let round = 0; round < 2; round++) {
      for (const [i, k] of keys.entries()) expect(Buffer.from(await getBytes(p, k)).toString()).toBe(`blob ${i}`);
    }
    // 3 blob handles at most (more would be up to 40): a few descriptors of slack for the runtime.
    expect(fds() - before).toBeLessThanOrEqual(3 + 2);
    // 40 reads at once: each waits for one of the 3 descriptors rather than opening a 4th.
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, fds() - before);
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let round = 0; round < 3; round++) {
      const got = await Promise.all(keys.map((k) => p.read!(k)));
      got.forEach((b, i) => expect(Buffer.from(b).toString()).toBe(`blob ${i}`));
    }
    sampling = false;
    await sampler;
    expect(peak).toBeLessThanOrEqual(3 + 2);
    await p.close();
  });

  it('never holds more than its size open, cached or in use, and serves every waiter', async () => {
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('-b'))
      .map((e) => join(e.parentPath, e.name));
    expect(files.length).toBeGreaterThanOrEqual(40);
    const cache = new HandleCache(3);
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    let inUse = 0;
    let peakInUse = 0;
    let peakOpen = 0;
    let peakFds = 0;
    const sizes = await Promise.all(
      files.map((f) =>
        cache.with(f, async (_h, size) => {
          inUse++;
          peakInUse = Math.max(peakInUse, inUse);
          peakOpen = Math.max(peakOpen, cache.open);
          peakFds = Math.max(peakFds, fds() - before);
          await new Promise((r) => setTimeout(r, 2));
          inUse--;
          return size;
        })
      )
    );
    expect(sizes.every((n) => typeof n === 'number' && n > 0)).toBe(true);
    expect(peakOpen).toBe(3);
    expect(peakInUse).toBeLessThanOrEqual(3);
    // Counted by the system, not the cache: 3, plus a close in progress at most.
    expect(peakFds).toBeGreaterThanOrEqual(1);
    expect(peakFds).toBeLessThanOrEqual(4);
    // The same file read by many at once shares one descriptor.
    const same = await Promise.all(Array.from({ length: 20 }, () => cache.with(files[0]!, async () => cache.open)));
    expect(Math.max(...(same as number[]))).toBeLessThanOrEqual(3);
    // A missing file gives its descriptor slot back.
    expect(await cache.with(join(dir, 'nope-b'), async () => 1)).toBeUndefined();
    await cache.closeAll();
    await new Promise((r) => setTimeout(r, 10));
    expect(cache.open).toBe(0);
  });

  it('fails a read that waits too long for a descriptor as EMFILE would (the fs provider answers that Unavailable)', async () => {
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('-b'))
      .map((e) => join(e.parentPath, e.name));
    const cache = new HandleCache(1, 50);
    let release!: () => void;
    const held = cache.with(files[0]!, () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 5));
    const err = await cache.with(files[1]!, async () => 1).catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe('EMFILE');
    expect((err as Error).message).toMatch(/no read descriptor free within 50 ms \(all 1 of this cache in use\)/);
    release();
    await held;
    expect(await cache.with(files[1]!, async (_h, size) => size)).toBeGreaterThan(0);
    await cache.closeAll();

  });
});
