/**
 * @module Argument checks shared by the checksum API. Each returns the checked value (or
 * narrows it) and throws the matching error of errors.ts; none mutates anything.
 */
import { availableFlavors, type Flavor } from '../wasm/loader.js';
import { checksumKernel, type ChecksumKernel } from '../wasm/checksum.js';
import {
  isChecksumAlgorithm,
  isCrcAlgorithm,
  type ChecksumAlgorithm,
  type CrcAlgorithm,
} from './algorithms.js';
import {
  FlavorUnavailableError,
  InvalidCrcError,
  InvalidDataError,
  InvalidLengthError,
  UnknownAlgorithmError,
  UnsupportedAlgorithmError,
} from './errors.js';

/** Options of every checksum entry point. */
export interface ChecksumOptions {
  /** Kernel build: 'simd' (default where the runtime validates it) or 'scalar'. */
  flavor?: 'simd' | 'scalar';
}

const TWO_64 = 1n << 64n;

/** Throws UnknownAlgorithmError unless `x` names a checksum algorithm. */
export function checkAlgorithm(x: unknown): ChecksumAlgorithm {
  if (!isChecksumAlgorithm(x)) throw new UnknownAlgorithmError(x);
  return x;
}

/** Throws UnknownAlgorithmError, or UnsupportedAlgorithmError for a hash, unless `x` is a CRC. */
export function checkCrcAlgorithm(x: unknown, operation: string): CrcAlgorithm {
  if (isCrcAlgorithm(x)) return x;
  if (isChecksumAlgorithm(x)) throw new UnsupportedAlgorithmError(x, operation);
  throw new UnknownAlgorithmError(x);
}

/** Throws InvalidDataError unless `x` is a Uint8Array (a Buffer is one). */
export function checkData(x: unknown): Uint8Array {
  if (!(x instanceof Uint8Array)) throw new InvalidDataError(x);
  return x;
}

/** A byte length as a bigint; throws InvalidLengthError unless an integer in [0, 2^64). */
export function checkLength(x: unknown): bigint {
  if (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0) return BigInt(x);
  if (typeof x === 'bigint' && x >= 0n && x < TWO_64) return x;
  throw new InvalidLengthError(x);
}

/** A 32-bit CRC value; throws InvalidCrcError unless an integer in [0, 2^32). */
export function checkCrc32Value(algorithm: CrcAlgorithm, x: unknown): number {
  if (typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 0xffffffff) return x;
  throw new InvalidCrcError(algorithm, x);
}

/** A 64-bit CRC value; throws InvalidCrcError unless a bigint in [0, 2^64). */
export function checkCrc64Value(x: unknown): bigint {
  if (typeof x === 'bigint' && x >= 0n && x < TWO_64) return x;
  throw new InvalidCrcError('crc64nvme', x);
}

/** The kernel for `options.flavor`; throws FlavorUnavailableError for an unknown or absent one. */
export function kernelFor(options?: ChecksumOptions): ChecksumKernel {
  const flavor = options?.flavor;
  if (flavor === undefined) return checksumKernel();
  const available = availableFlavors('checksum');
  if (!available.includes(flavor as Flavor)) throw new FlavorUnavailableError(flavor, available);
  return checksumKernel(flavor);
}
