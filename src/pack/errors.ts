/**
 * @module Pack errors. Every malformed, truncated or corrupted pack is reported as a
 * PackError with a stable `code`; no reader ever returns bytes that failed a check.
 */

export type PackErrorCode =
  | 'ERR_PACK_MAGIC'
  | 'ERR_PACK_VERSION'
  | 'ERR_PACK_CHECKSUM'
  | 'ERR_PACK_BOUNDS'
  | 'ERR_PACK_MISMATCH'
  | 'ERR_PACK_TRUNCATED'
  | 'ERR_PACK_TOO_LARGE';

/** Wasm status codes (assembly/pack/format.ts) in order, 1-based. */
export const STATUS_CODES: readonly PackErrorCode[] = [
  'ERR_PACK_MAGIC',
  'ERR_PACK_VERSION',
  'ERR_PACK_CHECKSUM',
  'ERR_PACK_BOUNDS',
  'ERR_PACK_MISMATCH',
  'ERR_PACK_TRUNCATED',
];

export class PackError extends Error {
  readonly code: PackErrorCode;
  constructor(code: PackErrorCode, message: string) {
    super(message);
    this.name = 'PackError';
    this.code = code;
  }
}

/** Throws the PackError for a non-zero wasm status, describing `what` was being checked. */
export function throwIfBad(status: number, what: string): void {
  if (status === 0) return;
  const code = STATUS_CODES[status - 1] ?? 'ERR_PACK_BOUNDS';
  const why: Record<PackErrorCode, string> = {
    ERR_PACK_MAGIC: 'bad magic (not a pack, or a misaligned read)',
    ERR_PACK_VERSION: 'unsupported pack version',
    ERR_PACK_CHECKSUM: 'checksum mismatch (corrupted bytes)',
    ERR_PACK_BOUNDS: 'offsets or lengths out of bounds',
    ERR_PACK_MISMATCH: 'belongs to another pack or entry',
    ERR_PACK_TRUNCATED: 'truncated',
    ERR_PACK_TOO_LARGE: 'too large',
  };
  throw new PackError(code, `${what}: ${why[code]}`);
}
