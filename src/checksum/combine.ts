/**
 * @module CRC combination: the CRC of A || B from crc(A), crc(B) and len(B), without the
 * data. S3 full-object checksums of multipart uploads are the parts' CRCs combined in order.
 *
 * @example
 * let whole = partCrcs[0];
 * for (let i = 1; i < partCrcs.length; i++) {
 *   whole = combine('crc64nvme', whole, partCrcs[i], partSizes[i]);
 * }
 */
import {
  checkCrc32Value,
  checkCrc64Value,
  checkCrcAlgorithm,
  checkLength,
  kernelFor,
  type ChecksumOptions,
} from './validate.js';

/**
 * crc(A || B) given crcA = crc(A), crcB = crc(B) and lengthB = len(B) in bytes (a safe
 * integer or a bigint below 2^64). Pure; the flavor only picks which kernel computes it.
 * Throws UnknownAlgorithmError, UnsupportedAlgorithmError (a hash), InvalidCrcError (a
 * value outside the CRC's width, or a number for crc64nvme / a bigint for the 32-bit CRCs),
 * InvalidLengthError, FlavorUnavailableError.
 */
export function combine(
  algorithm: 'crc32' | 'crc32c',
  crcA: number,
  crcB: number,
  lengthB: number | bigint,
  options?: ChecksumOptions
): number;
export function combine(
  algorithm: 'crc64nvme',
  crcA: bigint,
  crcB: bigint,
  lengthB: number | bigint,
  options?: ChecksumOptions
): bigint;
export function combine(
  algorithm: 'crc32' | 'crc32c' | 'crc64nvme',
  crcA: number | bigint,
  crcB: number | bigint,
  lengthB: number | bigint,
  options?: ChecksumOptions
): number | bigint {
  const alg = checkCrcAlgorithm(algorithm, 'combine');
  const kernel = kernelFor(options);
  if (alg === 'crc64nvme') {
    const a = checkCrc64Value(crcA);
    const b = checkCrc64Value(crcB);
    return kernel.crc64nvmeCombine(a, b, checkLength(lengthB));
  }
  const a = checkCrc32Value(alg, crcA);
  const b = checkCrc32Value(alg, crcB);
  const n = checkLength(lengthB);
  return alg === 'crc32' ? kernel.crc32Combine(a, b, n) : kernel.crc32cCombine(a, b, n);
}
