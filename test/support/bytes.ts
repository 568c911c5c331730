/** @module Fast byte comparisons for tests (vitest's deep equality is slow on big arrays). */
import { expect } from 'vitest';
import { closeSync, openSync, writeSync } from 'node:fs';

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

/** Writes `bytes` into the existing file at `path` at byte `at` (damage, in place). */
export function overwriteFile(path: string, at: number, bytes: Uint8Array): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}
