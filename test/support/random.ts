/** @module Seeded randomness for tests: the same seed gives the same bytes on every run. */

/** xorshift32 PRNG; returns a function yielding uint32s. */
export function prng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

/** `n` seeded random bytes. */
export function randomBytes(n: number, seed: number): Uint8Array {
  const next = prng(seed);
  const words = new Uint32Array(Math.ceil(n / 4));
  for (let i = 0; i < words.length; i++) words[i] = next();
  return new Uint8Array(words.buffer, 0, n);
}

/** A random integer in [lo, hi] from `next`. */
export function randInt(next: () => number, lo: number, hi: number): number {
  return lo + (next() % (hi - lo + 1));
}

/** `count` distinct indices from 0..n-1, ascending. */
export function pickDistinct(next: () => number, n: number, count: number): number[] {
  const all = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.slice(0, count).sort((a, b) => a - b);
}

/** Every subset of 0..n-1 with at most `max` elements (as ascending arrays). */
export function subsetsUpTo(n: number, max: number): number[][] {
  const out: number[][] = [];
  const rec = (start: number, cur: number[]) => {
    out.push(cur.slice());
    if (cur.length === max) return;
    for (let i = start; i < n; i++) {
      cur.push(i);
      rec(i + 1, cur);
      cur.pop();
    }
  };
  rec(0, []);
  return out;
}
