/**
 * @module The checksum algorithms Strata computes, named as S3 names them (lower case:
 * x-amz-checksum-crc32, -crc32c, -crc64nvme, -sha1, -sha256; MD5 is the ETag / Content-MD5).
 */
import { KERNEL_ALGORITHMS } from '../wasm/checksum.js';

/** Every algorithm, in a fixed order. */
export const CHECKSUM_ALGORITHMS = KERNEL_ALGORITHMS;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

/** The CRCs: numeric values, chaining seeds and {@link combine}. */
export const CRC_ALGORITHMS = ['crc32', 'crc32c', 'crc64nvme'] as const;
export type CrcAlgorithm = (typeof CRC_ALGORITHMS)[number];

/** Digest length in bytes (CRCs: their big-endian width). */
export const DIGEST_LENGTH: Readonly<Record<ChecksumAlgorithm, number>> = {
  sha256: 32,
  md5: 16,
  sha1: 20,
  crc32: 4,
  crc32c: 4,
  crc64nvme: 8,
};

export function isChecksumAlgorithm(x: unknown): x is ChecksumAlgorithm {
  return typeof x === 'string' && (CHECKSUM_ALGORITHMS as readonly string[]).includes(x);
}

export function isCrcAlgorithm(x: unknown): x is CrcAlgorithm {
  return typeof x === 'string' && (CRC_ALGORITHMS as readonly string[]).includes(x);
}
