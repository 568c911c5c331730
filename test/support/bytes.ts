/** @module Fast byte comparisons for tests (vitest's deep equality is slow on big arrays). */
import { expect } from 'vitest';

/** Index of the first differing byte, or -1 when equal (lengths must match too). */
export function firstDiff(a: Uint8Array, b: Uint8Array): number {
  if (Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length))) return -1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

/** Asserts byte equality, reporting the first difference instead of dumping arrays. */
export function expectBytes(actual: Uint8Array | null | undefined, expected: Uint8Array, label = ''): void {
  expect(actual, `${label}: missing`).toBeInstanceOf(Uint8Array);
  const at = firstDiff(actual!, expected);
  expect(at, `${label}: lengths ${actual!.length}/${expected.length}, first difference at byte ${at}`).toBe(-1);
}
