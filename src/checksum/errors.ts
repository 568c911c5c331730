/**
 * @module Checksum errors: one class per condition, each with a stable `code`.
 *
 * Callers branch on `code` (or `instanceof`), never on messages. Every error is thrown
 * before anything is mutated: a hasher that throws is in the state it was before the call.
 */

export type ChecksumErrorCode =
  | 'ERR_CHECKSUM_UNKNOWN_ALGORITHM'
  | 'ERR_CHECKSUM_UNSUPPORTED_ALGORITHM'
  | 'ERR_CHECKSUM_INVALID_DATA'
  | 'ERR_CHECKSUM_INVALID_LENGTH'
  | 'ERR_CHECKSUM_INVALID_CRC'
  | 'ERR_CHECKSUM_FINISHED'
  | 'ERR_CHECKSUM_FLAVOR_UNAVAILABLE';

export class ChecksumError extends Error {
  readonly code: ChecksumErrorCode;
  constructor(code: ChecksumErrorCode, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The algorithm name is not one of CHECKSUM_ALGORITHMS. */
export class UnknownAlgorithmError extends ChecksumError {
  constructor(algorithm: unknown) {
    super('ERR_CHECKSUM_UNKNOWN_ALGORITHM', `unknown checksum algorithm: ${String(algorithm)}`);
  }
}

/** A known algorithm that the operation does not apply to (combine of a hash). */
export class UnsupportedAlgorithmError extends ChecksumError {
  constructor(algorithm: string, operation: string) {
    super('ERR_CHECKSUM_UNSUPPORTED_ALGORITHM', `${operation} does not support ${algorithm}`);
  }
}

/** The data is not a Uint8Array (Buffer is one). */
export class InvalidDataError extends ChecksumError {
  constructor(data: unknown) {
    const what =
      data === null ? 'null' : typeof data === 'object' ? data.constructor?.name : typeof data;
    super('ERR_CHECKSUM_INVALID_DATA', `checksum data must be a Uint8Array, got ${what}`);
  }
}

/** A length that is not an integer in [0, 2^64): negative, fractional, unsafe, or not a number. */
export class InvalidLengthError extends ChecksumError {
  constructor(length: unknown) {
    super(
      'ERR_CHECKSUM_INVALID_LENGTH',
      `invalid length: ${String(length)} (integer in [0, 2^64) expected)`
    );
  }
}

/** A CRC value or seed outside its width (or a number where a bigint is needed, or back). */
export class InvalidCrcError extends ChecksumError {
  constructor(algorithm: string, value: unknown) {
    const want = algorithm === 'crc64nvme' ? 'a bigint in [0, 2^64)' : 'an integer in [0, 2^32)';
    super(
      'ERR_CHECKSUM_INVALID_CRC',
      `invalid ${algorithm} value ${String(value)}: ${want} expected`
    );
  }
}

/** update() or digest() after digest(), without reset() in between. */
export class HasherFinishedError extends ChecksumError {
  constructor(algorithm: string) {
    super(
      'ERR_CHECKSUM_FINISHED',
      `${algorithm} hasher already finished: call reset() before reusing it`
    );
  }
}

/** The requested kernel flavor is not built or not valid in this runtime. */
export class FlavorUnavailableError extends ChecksumError {
  constructor(flavor: unknown, available: readonly string[]) {
    super(
      'ERR_CHECKSUM_FLAVOR_UNAVAILABLE',
      `checksum flavor ${String(flavor)} unavailable (have: ${available.join(', ')})`
    );
  }
}
