// crc(A || B) from crc(A), crc(B) and len(B), for the three CRCs: what S3 full-object
// checksums of multipart uploads need (the object CRC from the part CRCs, no data re-read).
// The math is in crc-math.ts; this costs up to 2 x 64 GF(2) multiplications (~10 µs for a
// length near 2^64), independent of the data.

import { mulmod32, mulmod64, xpow8n32, xpow8n64 } from './crc-math';
import { CRC32_POLY } from './crc32';
import { CRC32C_POLY } from './crc32c';
import { CRC64NVME_POLY } from './crc64nvme';

/** CRC32 of A || B, given crcA = crc32(A), crcB = crc32(B), lenB = len(B) in bytes. */
export function crc32Combine(crcA: u32, crcB: u32, lenB: u64): u32 {
  return mulmod32(crcA, xpow8n32(lenB, CRC32_POLY), CRC32_POLY) ^ crcB;
}

/** CRC32C of A || B, given crcA = crc32c(A), crcB = crc32c(B), lenB = len(B) in bytes. */
export function crc32cCombine(crcA: u32, crcB: u32, lenB: u64): u32 {
  return mulmod32(crcA, xpow8n32(lenB, CRC32C_POLY), CRC32C_POLY) ^ crcB;
}

/** CRC64NVME of A || B, given crcA, crcB and lenB = len(B) in bytes. */
export function crc64nvmeCombine(crcA: u64, crcB: u64, lenB: u64): u64 {
  return mulmod64(crcA, xpow8n64(lenB, CRC64NVME_POLY), CRC64NVME_POLY) ^ crcB;
}
