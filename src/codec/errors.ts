/**
 * @module Codec errors: one class per condition, each with a stable `code`.
 *
 * Callers branch on `code` (or `instanceof`), never on messages. Nothing in the codec
 * returns wrong output on bad input: it throws one of these instead.
 */

export class CodecError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** k < 1, m < 0, or a non-integer shard count. */
export class InvalidShardNumberError extends CodecError {
  constructor(message: string) {
    super('ERR_INVALID_SHARD_NUMBER', message);
  }
}

/** k + m > 256: GF(2^8) has no more distinct evaluation points. */
export class MaxShardNumberError extends CodecError {
  constructor(message: string) {
    super('ERR_MAX_SHARD_NUMBER', message);
  }
}

/** The shard array has the wrong length. */
export class ShardCountError extends CodecError {
  constructor(message: string) {
    super('ERR_SHARD_COUNT', message);
  }
}

/** Shards that are present have different sizes, or a shard is not a Uint8Array. */
export class ShardSizeError extends CodecError {
  constructor(message: string) {
    super('ERR_SHARD_SIZE', message);
  }
}

/** Every shard is empty: there is nothing to encode or verify. */
export class ShardNoDataError extends CodecError {
  constructor(message: string) {
    super('ERR_SHARD_NO_DATA', message);
  }
}

/** More shards are missing than there are parity shards. */
export class TooFewShardsError extends CodecError {
  constructor(message: string) {
    super('ERR_TOO_FEW_SHARDS', message);
  }
}

/** join() was asked for more bytes than the data shards hold. */
export class ShortDataError extends CodecError {
  constructor(message: string) {
    super('ERR_SHORT_DATA', message);
  }
}

/** A shard index is out of range. */
export class InvalidIndexError extends CodecError {
  constructor(message: string) {
    super('ERR_INVALID_INDEX', message);
  }
}

/** A singular matrix where every square submatrix must be invertible: a bug, never input. */
export class SingularMatrixError extends CodecError {
  constructor(message: string) {
    super('ERR_SINGULAR_MATRIX', message);
  }
}
