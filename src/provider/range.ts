/**
 * @module Resolving a requested ByteRange against a blob size, the same way for
 * every provider (S3's rules for a single `bytes=start-end` range).
 */
import { ProviderError, type ByteRange } from './provider.js';

export interface ResolvedRange {
  /** First byte returned. */
  start: number;
  /** Bytes returned (0 only for an empty blob). */
  length: number;
}

/**
 * The part of a blob of `size` bytes that `range` selects: the whole blob without a
 * range; `end` past the last byte is clamped; an empty blob yields nothing for any
 * range. Throws ProviderError 'InvalidRange' if `start >= size > 0`, or if the
 * range itself is malformed (negative or non-integer bounds, `end < start`).
 */
export function resolveRange(
  size: number,
  range: ByteRange | undefined,
  key: string
): ResolvedRange {
  if (!range) return { start: 0, length: size };
  validateRange(range, key);
  const { start, end } = range;
  if (size === 0) return { start: 0, length: 0 };
  if (start >= size)
    throw new ProviderError(
      'InvalidRange',
      `${key}: range starts at ${start}, blob has ${size} bytes`
    );
  const last = end === undefined ? size - 1 : Math.min(end, size - 1);
  return { start, length: last - start + 1 };
}

/** Throws ProviderError 'InvalidRange' for negative or non-integer bounds or `end < start`. */
export function validateRange(range: ByteRange, key: string): void {
  const { start, end } = range;
  if (
    !Number.isSafeInteger(start) ||
    start < 0 ||
    (end !== undefined && (!Number.isSafeInteger(end) || end < start))
  ) {
    throw new ProviderError('InvalidRange', `${key}: malformed range ${JSON.stringify(range)}`);
  }
}

/** The `Range` header value for a ByteRange (`bytes=start-` or `bytes=start-end`). */
export function rangeHeader(range: ByteRange): string {
  return `bytes=${range.start}-${range.end ?? ''}`;
}
