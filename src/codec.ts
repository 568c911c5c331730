/**
 * @module strata/codec — the WebAssembly codec as a library, for Node and browsers.
 *
 * Reed-Solomon erasure coding (createEncoder), streaming and one-shot checksums (SHA-256,
 * MD5, SHA-1, CRC32, CRC32C, CRC64NVME, CRC combine) and the pack format. Nothing in this
 * entry imports a Node built-in; `esbuild` bundles it unchanged for browsers.
 *
 * @example
 * import { createEncoder } from 'strata/codec';
 * const rs = createEncoder(10, 4);
 * const shards = rs.split(data);
 * rs.encode(shards);
 */
export { createEncoder, ReedSolomon, MAX_SHARDS, DEFAULTS as ENCODER_DEFAULTS } from './codec/reed-solomon.js';
export type { EncoderOptions, Shard } from './codec/reed-solomon.js';
export { ResidentStripe, ArenaBudgetError, ArenaMemoryError, ArenaRegionError } from './codec/resident-stripe.js';
export type { ShardRange } from './codec/resident-stripe.js';
export * from './codec/errors.js';
export {
  CHECKSUM_ALGORITHMS,
  CRC_ALGORITHMS,
  DIGEST_LENGTH,
  isChecksumAlgorithm,
  isCrcAlgorithm,
  createHasher,
  checksum,
  crc32,
  crc32c,
  crc64nvme,
  combine,
} from './checksum/index.js';
export type { ChecksumAlgorithm, CrcAlgorithm, Hasher, ChecksumOptions } from './checksum/index.js';
export * from './checksum/errors.js';
export { encodePack, concatPack, tagOf, packSize, PackStream } from './pack/writer.js';
export type { EncodedPack, PackEntryRef, PackWriteOptions } from './pack/writer.js';
export { decodePack, readEntry, readEntryAt, entryRange } from './pack/reader.js';
export type { DecodedPack, EntryExpectation } from './pack/reader.js';
export { PackError } from './pack/errors.js';
export type { PackErrorCode } from './pack/errors.js';
export { availableFlavors, defaultFlavor } from './wasm/loader.js';
export type { Flavor } from './wasm/loader.js';
