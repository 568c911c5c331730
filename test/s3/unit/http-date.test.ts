/**
 * The GET path's HTTP-date cache (s3/object-headers.ts httpDateOf): always the text
 * `new Date(ms).toUTCString()` gives — whole, fractional, negative and far times, many
 * seconds (past the cache's bound) and the same second reached by different milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { httpDateOf } from '../../../src/s3/object-headers.js';

describe('httpDateOf', () => {
  it('is toUTCString for any time', () => {
    const base = Date.UTC(2026, 11, 2, 3, 4, 5);
    const times = [0, -1, -999, -1000, -1001, 999, 1000, 1.5, base, base + 999, base + 1000, 8.64e15, -8.64e15, NaN];
    for (let i = 0; i < 5000; i++) times.push(base + Math.floor(Math.random() * 3e9) - 1.5e9, base + i * 1000 + (i % 1000));
    for (const t of times) expect(httpDateOf(t), String(t)).toBe(new Date(t).toUTCString());
    // Twice over, now from the cache.
    for (const t of times) expect(httpDateOf(t), String(t)).toBe(new Date(t).toUTCString());
  });
});
