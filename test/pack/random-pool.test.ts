/**
 * Pooled random ids (src/pack/random-pool.ts): fresh arrays of the asked length, never the
 * same bytes twice across pool refills, large requests served outside the pool.
 */
import { describe, expect, it } from 'vitest';
import { randomIdBytes } from '../../src/pack/random-pool.js';

describe('randomIdBytes', () => {
  it('hands out distinct ids of the asked length across several refills of the pool', () => {
    const seen = new Set<string>();
    const ids: Uint8Array[] = [];
    for (let i = 0; i < 5000; i++) {
      const id = randomIdBytes(12);
      expect(id).toBeInstanceOf(Uint8Array);
      expect(id.length).toBe(12);
      seen.add(Buffer.from(id).toString('hex'));
      ids.push(id);
    }
    expect(seen.size).toBe(5000); // 60,000 bytes: about 15 refills of the 4 KiB pool
    // Each id is its own array: writing one changes no other.
    const before = Buffer.from(ids[1]!).toString('hex');
    ids[0]!.fill(0);
    expect(Buffer.from(ids[1]!).toString('hex')).toBe(before);
    expect(ids[0]!.buffer).not.toBe(ids[1]!.buffer);
  });

  it('serves odd sizes, zero and requests larger than the pool', () => {
    expect(randomIdBytes(0).length).toBe(0);
    const sizes = [1, 5, 10, 31, 1024, 1025, 4096, 10_000];
    for (const n of sizes) expect(randomIdBytes(n).length).toBe(n);
    const big = randomIdBytes(10_000);
    expect(new Set(big).size).toBeGreaterThan(200); // random bytes, not a zero-filled buffer
  });

  it('refuses a negative or fractional length', () => {
    expect(() => randomIdBytes(-1)).toThrow(RangeError);
    expect(() => randomIdBytes(1.5)).toThrow(RangeError);
  });
});
