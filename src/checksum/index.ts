/**
 * @module Checksums: streaming and one-shot SHA-256, MD5, SHA-1, CRC32, CRC32C, CRC64NVME on
 * the wasm kernels, CRCs as numbers, and CRC combination. Browser-safe (no Node imports);
 * the Node-only fastest-per-primitive hashers are in `./native.js`.
 */
export {
  CHECKSUM_ALGORITHMS,
  CRC_ALGORITHMS,
  DIGEST_LENGTH,
  isChecksumAlgorithm,
  isCrcAlgorithm,
  type ChecksumAlgorithm,
  type CrcAlgorithm,
} from './algorithms.js';
export { createHasher, type Hasher } from './hasher.js';
export { checksum } from './one-shot.js';
export { crc32, crc32c, crc64nvme } from './crc.js';
export { combine } from './combine.js';
export type { ChecksumOptions } from './validate.js';
export * from './errors.js';
