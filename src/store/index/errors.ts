/**
 * @module Index errors. Every malformed, truncated or corrupted run, and every contract
 * violation by a caller of the index (unsorted input, a key that has no UTF-8 form), is an
 * IndexError with a stable `code`. No reader returns data that failed a check.
 */

export type IndexErrorCode =
  /** Bytes differ from what was written: a checksum mismatch, or a truncated blob. */
  | 'ERR_RUN_CORRUPT'
  /** Checksums pass but the structure is impossible (bad magic, unsupported version,
   * offsets or lengths out of range, counts that disagree, a blob that is not the run
   * its RunMeta describes). */
  | 'ERR_RUN_FORMAT'
  /** Keys out of order or duplicated: writer input, or a block on read. */
  | 'ERR_RUN_UNSORTED'
  /** A key or value the format cannot hold (lone UTF-16 surrogate, value not bytes). */
  | 'ERR_RUN_ENTRY'
  /** An encoded RunMeta that does not decode. */
  | 'ERR_RUN_META';

/** Where a failure was found, when it is about a stored run. */
export interface IndexErrorWhere {
  /** Blob key of the run. */
  blobKey?: string;
  /** Data block number (0-based), when the failure is inside one block. */
  block?: number;
  cause?: unknown;
}

export class IndexError extends Error {
  readonly code: IndexErrorCode;
  readonly blobKey: string | undefined;
  readonly block: number | undefined;
  constructor(code: IndexErrorCode, message: string, where: IndexErrorWhere = {}) {
    const place =
      where.blobKey === undefined
        ? ''
        : `${where.blobKey}${where.block === undefined ? '' : ` block ${where.block}`}: `;
    super(`${place}${message}`, where.cause === undefined ? undefined : { cause: where.cause });
    this.name = 'IndexError';
    this.code = code;
    this.blobKey = where.blobKey;
    this.block = where.block;
  }
}
