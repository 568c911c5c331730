import { describe, expect, test } from 'vitest';
import { BlockCache } from '../../../src/store/index/block-cache.js';

const block = (byteSize: number, tag = '') => ({ byteSize, tag });

describe('BlockCache', () => {
  test('keeps blocks up to maxBytes and evicts the least recently used first', async () => {
    const cache = new BlockCache({ maxBytes: 300 });
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
    const cache = new BlockCache({ maxBytes: 100 });
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

  test('rejects a negative bound', () => {
    expect(() => new BlockCache({ maxBytes: -1 })).toThrow(RangeError);
  });
});
