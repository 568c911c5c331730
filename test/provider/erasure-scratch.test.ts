/**
 * The fragment-read scratch pool (scratch.ts): buffers at least as large as asked, none for
 * requests above the pooled size, a bounded pool, and reuse only of what was given back. The
 * read path's use of it is covered by the erasure read suites (byte-exact under damage and
 * hung domains); a buffer whose read failed is never given back.
 */
import { describe, expect, it } from 'vitest';
import { giveScratch, MAX_POOLED, MAX_SCRATCH_BYTES, takeScratch } from '../../src/provider/erasure/scratch.js';

describe('erasure read scratch pool', () => {
  it('hands out buffers large enough, refuses oversized requests, and bounds the pool', () => {
    for (const n of [1, 16 * 1024 + 4, 262_208, MAX_SCRATCH_BYTES]) expect(takeScratch(n)!.length).toBeGreaterThanOrEqual(n);
    expect(takeScratch(MAX_SCRATCH_BYTES + 1)).toBeUndefined();
    const taken = Array.from({ length: MAX_POOLED + 5 }, () => takeScratch(100_000)!);
    for (const b of taken) giveScratch(b);
    // Only MAX_POOLED came back into the pool: taking that many reuses them, one more is new.
    const again = Array.from({ length: MAX_POOLED }, () => takeScratch(100_000)!);
    expect(again.every((b) => taken.includes(b))).toBe(true);
    expect(new Set(again).size).toBe(MAX_POOLED);
    expect(taken.includes(takeScratch(100_000)!)).toBe(false);
    giveScratch(undefined); // a read that did not pool is a no-op
  });
});
