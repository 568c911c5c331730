// checksum module: SHA-256, MD5, SHA-1, CRC32, CRC32C and CRC64NVME, streaming and one-shot,
// plus CRC combination. One ABI shape for every algorithm: init / update / final on a
// context slot, with input copied into INPUT by the caller (src/wasm/checksum.ts).
//
// Memory (fixed; initial = maximum pages, never grown; no allocator, nothing allocated):
//
//   0 ───────────┬─ static data   CRC tables (crc32.ts, crc32c.ts, crc64nvme.ts; filled by
//                │                the start function), SHA-256 K and K+w window
//   __heap_base ─┼─ CTX      ALGORITHMS x CTX_SIZE   one context slot per algorithm
//                ├─ DIGEST   64 bytes                final() writes the digest here
//                └─ INPUT    INPUT_SIZE bytes        update() reads its bytes from here
//
// Context slots hold the complete stream state and no pointers, so the caller may save a
// slot's bytes and restore them later (to run many streams through one slot):
//
//   SHA-256, MD5, SHA-1   block-stream.ts layout, CTX_SIZE bytes
//   CRC32, CRC32C         u32 CRC so far (finished form, 0 at start), 4 bytes
//   CRC64NVME             u64 CRC so far, 8 bytes
//
// Algorithm ids (the `alg` arguments) are positions in this list, mirrored by
// src/wasm/checksum.ts: 0 sha256, 1 md5, 2 sha1, 3 crc32, 4 crc32c, 5 crc64nvme.
import { CTX_SIZE } from './block-stream';
import { sha256Final, sha256Init, sha256Update } from './sha256';
import { md5Final, md5Init, md5Update } from './md5';
import { sha1Final, sha1Init, sha1Update } from './sha1';
import { crc32Update } from './crc32';
import { crc32cUpdate } from './crc32c';
import { crc64nvmeUpdate } from './crc64nvme';

export { crc32Update, crc32cUpdate, crc64nvmeUpdate };
export { crc32Combine, crc32cCombine, crc64nvmeCombine } from './combine';

const SHA256 = 0;
const MD5 = 1;
const SHA1 = 2;
const CRC32 = 3;
const CRC32C = 4;
const CRC64NVME = 5;
const ALGORITHMS: usize = 6;

/**
 * Input area: 64 KiB. Slices of 16 to 256 KiB measured within 3% of each other for 1 MiB and
 * 8 MiB bodies; 64 KiB keeps the copy-in resident in L2 on small-cache CPUs, and the module
 * in 2 pages (static data ~40 KiB + contexts + input < 128 KiB).
 */
const INPUT_SIZE: usize = 64 << 10;

const CTX: usize = (__heap_base + 63) & ~63;
const DIGEST: usize = CTX + ALGORITHMS * CTX_SIZE;
const INPUT: usize = DIGEST + 64;

export function inputPtr(): usize { return INPUT; }
export function inputSize(): usize { return INPUT_SIZE; }
export function digestPtr(): usize { return DIGEST; }
export function ctxSize(): usize { return CTX_SIZE; }
/** Start of the context slot of algorithm `alg` (0..5); undefined for other values. */
export function ctxPtr(alg: i32): usize { return CTX + <usize>alg * CTX_SIZE; }
/** True in the SIMD build. */
export function simd(): bool { return ASC_FEATURE_SIMD; }

/** Starts a new stream in the slot of `alg`, discarding what the slot held. */
export function init(alg: i32): void {
  const ctx = ctxPtr(alg);
  switch (alg) {
    case SHA256: sha256Init(ctx); break;
    case MD5: md5Init(ctx); break;
    case SHA1: sha1Init(ctx); break;
    case CRC64NVME: store<u64>(ctx, 0); break;
    default: store<u32>(ctx, 0);
  }
}

/** Absorbs INPUT[0 .. len) (len <= INPUT_SIZE) into the stream in the slot of `alg`. */
export function update(alg: i32, len: usize): void {
  const ctx = ctxPtr(alg);
  switch (alg) {
    case SHA256: sha256Update(ctx, INPUT, len); break;
    case MD5: md5Update(ctx, INPUT, len); break;
    case SHA1: sha1Update(ctx, INPUT, len); break;
    case CRC32: store<u32>(ctx, crc32Update(load<u32>(ctx), INPUT, len)); break;
    case CRC32C: store<u32>(ctx, crc32cUpdate(load<u32>(ctx), INPUT, len)); break;
    case CRC64NVME: store<u64>(ctx, crc64nvmeUpdate(load<u64>(ctx), INPUT, len)); break;
  }
}

/**
 * Writes the digest of the stream in the slot of `alg` to DIGEST: 32 bytes for SHA-256, 16
 * MD5, 20 SHA-1, and the CRC as 4 or 8 big-endian bytes (the form S3 base64-encodes). The
 * hash slots are spent afterwards (init again); CRC slots are left as they were.
 */
export function final(alg: i32): void {
  const ctx = ctxPtr(alg);
  switch (alg) {
    case SHA256: sha256Final(ctx, DIGEST); break;
    case MD5: md5Final(ctx, DIGEST); break;
    case SHA1: sha1Final(ctx, DIGEST); break;
    case CRC64NVME: store<u64>(DIGEST, bswap<u64>(load<u64>(ctx))); break;
    default: store<u32>(DIGEST, bswap<u32>(load<u32>(ctx)));
  }
}
