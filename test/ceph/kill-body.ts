/**
 * @module What kill-worker.ts writes and kill.test.ts checks: the bucket, and the bytes of a
 * put as a pure function of its size and seed.
 */

export const BUCKET = 'killed';

/** The bytes of a put of `size` bytes with `seed` (xorshift32): cheap, distinct per seed. */
export function bodyOf(size: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}
