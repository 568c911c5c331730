/**
 * @module CRCs as numbers, with zlib-style chaining: crc32(B, crc32(A)) === crc32(A || B).
 * CRC32 and CRC32C are unsigned 32-bit numbers, CRC64NVME an unsigned 64-bit bigint.
 */
import { acceleratedCrc32c } from './accelerator.js';
import {
  checkCrc32Value,
  checkCrc64Value,
  checkData,
  kernelFor,
  type ChecksumOptions,
} from './validate.js';

/**
 * CRC32 (IEEE, zlib) of `data`, continuing from `crc` (default 0 = start). Reads data
 * only. Throws InvalidDataError, InvalidCrcError (crc not an integer in [0, 2^32)).
 */
export function crc32(data: Uint8Array, crc = 0, options?: ChecksumOptions): number {
  return kernelFor(options).crc32(checkData(data), checkCrc32Value('crc32', crc));
}

/**
 * CRC32C (Castagnoli) of `data`, continuing from `crc`; as {@link crc32}. Without a flavor it
 * runs the installed faster CRC32C when there is one (./accelerator.js).
 */
export function crc32c(data: Uint8Array, crc = 0, options?: ChecksumOptions): number {
  const fast = options?.flavor === undefined ? acceleratedCrc32c() : undefined;
  if (fast) return fast(checkData(data), checkCrc32Value('crc32c', crc));
  return kernelFor(options).crc32c(checkData(data), checkCrc32Value('crc32c', crc));
}

/**
 * CRC64NVME of `data`, continuing from `crc` (default 0n). Throws InvalidDataError,
 * InvalidCrcError (crc not a bigint in [0, 2^64)).
 */
export function crc64nvme(data: Uint8Array, crc = 0n, options?: ChecksumOptions): bigint {
  return kernelFor(options).crc64nvme(checkData(data), checkCrc64Value(crc));
}
