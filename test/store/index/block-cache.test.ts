import { describe, expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';

const block = (byteSize: number, tag = '') => ({ byteSize, tag });

describe('BlockCache', () => {
  test('keeps blocks up to maxBytes and evicts the least recently used first', async () => {
    const cache = new BlockCache({ maxBytes: 300, encodedBytes: 0, seekBytes: 0 });
    let loads = 0;
    const get = (k: string, size = 100) =>
      cache.getOrLoad(k, async () => (loads++, block(size, k)));
    await get('a');
    await get('b');
    await get('c');
    expect(cache.stats()).toMatchObject({ blocks: 3, bytes: 300, misses: 3, hits: 0 });
    await get('a'); // a becomes most recent; b is now the oldest
    await get('d');
    expect(cache.stats()).toMatchObject({ blocks: 3, bytes: 300, evictions: 1, hits: 1 });
    loads = 0;
    await get('a');
    await get('c');
    await get('d');
    expect(loads).toBe(0);
    await get('b');
    expect(loads).toBe(1);
  });

  test('a block larger than the bound is returned but not kept', async () => {
    const cache = new BlockCache({ maxBytes: 100, encodedBytes: 0, seekBytes: 0 });
    await cache.getOrLoad('small', async () => block(50));
    const big = await cache.getOrLoad('big', async () => block(500, 'big'));
    expect(big.tag).toBe('big');
    expect(cache.stats()).toMatchObject({ blocks: 1, bytes: 50 });
  });

  test('concurrent requests share one load; a failed load is not cached', async () => {
    const cache = new BlockCache();
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 5));
      return block(10);
    };
    const [x, y] = await Promise.all([cache.getOrLoad('k', load), cache.getOrLoad('k', load)]);
    expect(x).toBe(y);
    expect(loads).toBe(1);
    const boom = () => Promise.reject(new Error('boom'));
    await expect(
      Promise.all([cache.getOrLoad('e', boom), cache.getOrLoad('e', boom)])
    ).rejects.toThrow('boom');
    await expect(cache.getOrLoad('e', async () => block(1, 'ok'))).resolves.toMatchObject({
      tag: 'ok',
    });
  });

  test('rejects a negative bound, and an encoded tier outside it', () => {
    expect(() => new BlockCache({ maxBytes: -1 })).toThrow(RangeError);
    expect(() => new BlockCache({ maxBytes: 100, encodedBytes: 101 })).toThrow(RangeError);
    expect(() => new BlockCache({ maxBytes: 100, encodedBytes: -1 })).toThrow(RangeError);
    expect(() => new BlockCache({ maxBytes: 100, encodedBytes: 1.5 })).toThrow(RangeError);
  });

  test('splits the bound: a third for encoded blocks by default', () => {
    expect(new BlockCache({ maxBytes: 240 }).stats()).toMatchObject({ maxBytes: 130, maxEncodedBytes: 80, maxSeekBytes: 30 });
    expect(new BlockCache({ maxBytes: 300, encodedBytes: 0, seekBytes: 0 }).stats()).toMatchObject({ maxBytes: 300, maxEncodedBytes: 0 });
    expect(() => new BlockCache({ maxBytes: 100, encodedBytes: 60, seekBytes: 41 })).toThrow(RangeError);
  });

  test('keeps encoded copies within their own bound, least recently used out, exact-size', () => {
    const cache = new BlockCache({ maxBytes: 1000, encodedBytes: 300 });
    const slab = new Uint8Array(4096).fill(7);
    cache.putEncoded('a', slab.subarray(0, 100));
    cache.putEncoded('b', slab.subarray(100, 200));
    cache.putEncoded('c', slab.subarray(200, 300));
    const a = cache.peekEncoded('a')!; // a becomes most recent; b is the oldest
    expect(a.byteLength).toBe(100);
    expect(a.buffer.byteLength).toBe(100); // a copy, not a view pinning the slab
    cache.putEncoded('d', slab.subarray(0, 100));
    expect(cache.peekEncoded('b')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ encodedBlocks: 3, encodedBytes: 300, blocks: 0 });
    cache.putEncoded('huge', new Uint8Array(301));
    expect(cache.peekEncoded('huge')).toBeUndefined();
    cache.clear();
    expect(cache.stats()).toMatchObject({ encodedBlocks: 0, encodedBytes: 0, seekBytes: 0 });
  });

  test('peek never loads; put replaces a block without counting it twice', async () => {
    const cache = new BlockCache({ maxBytes: 1000, encodedBytes: 0, seekBytes: 0 });
    expect(cache.peek('k')).toBeUndefined();
    expect(cache.stats().misses).toBe(0);
    let release!: () => void;
    const loading = cache.getOrLoad('k', () => new Promise<{ byteSize: number }>((r) => (release = () => r(block(100)))));
    cache.put('k', block(100, 'put'));
    release();
    await loading;
    expect(cache.stats()).toMatchObject({ blocks: 1, bytes: 100 });
    expect(cache.peek<{ byteSize: number; tag: string }>('k')).toBeDefined();
  });
});
