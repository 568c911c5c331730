// SHA-256 (FIPS 180-4): init/update/final over block-stream.ts. The compression function is
// sha256-simd.ts in the SIMD build and its twin sha256-scalar.ts otherwise (chosen at compile
// time; the other is not compiled in).
import { absorb, finish, resetTotal } from './block-stream';
import { sha256BlocksScalar } from './sha256-scalar';
import { sha256BlocksSimd } from './sha256-simd';

/** The compression function of this build (Compress of block-stream.ts). */
function compress(ctx: usize, p: usize, blocks: usize): void {
  if (ASC_FEATURE_SIMD) sha256BlocksSimd(ctx, p, blocks);
  else sha256BlocksScalar(ctx, p, blocks);
}

/** Starts a SHA-256 stream in the CTX_SIZE bytes at ctx (FIPS 180-4 section 5.3.3). */
export function sha256Init(ctx: usize): void {
  store<u32>(ctx, 0x6a09e667, 0);
  store<u32>(ctx, 0xbb67ae85, 4);
  store<u32>(ctx, 0x3c6ef372, 8);
  store<u32>(ctx, 0xa54ff53a, 12);
  store<u32>(ctx, 0x510e527f, 16);
  store<u32>(ctx, 0x9b05688c, 20);
  store<u32>(ctx, 0x1f83d9ab, 24);
  store<u32>(ctx, 0x5be0cd19, 28);
  resetTotal(ctx);
}

/** Absorbs the len bytes at p into the stream at ctx. */
export function sha256Update(ctx: usize, p: usize, len: usize): void {
  absorb(ctx, p, len, compress);
}

/** Writes the 32-byte digest to out; the stream at ctx is spent (init again to reuse). */
export function sha256Final(ctx: usize, out: usize): void {
  finish(ctx, true, compress);
  for (let i: usize = 0; i < 32; i += 4) store<u32>(out + i, bswap<u32>(load<u32>(ctx + i)));
}
