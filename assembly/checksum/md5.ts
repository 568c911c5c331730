// MD5 (RFC 1321): compression over whole 64-byte blocks, plus the init/update/final
// wrappers around block-stream.ts. Kept for S3 ETags and Content-MD5, not for security.
//
// The 64 steps are written out with the four state words in locals and the message words
// read straight from the block (MD5 is little-endian, like wasm, so no byte swap). Each step
// sums the terms known early (a + T[i] + X[k]) before the boolean function of b, c, d,
// which is on the critical path; G is computed as (c & ~d) + (b & d) (the two terms have
// no common bits) so that b meets only one AND and one ADD.
import { absorb, finish, resetTotal } from './block-stream';

// @ts-ignore: decorator
@inline function ff(b: u32, c: u32, d: u32): u32 { return d ^ (b & (c ^ d)); }
// @ts-ignore: decorator
@inline function hh(b: u32, c: u32, d: u32): u32 { return b ^ (c ^ d); }
// @ts-ignore: decorator
@inline function ii(b: u32, c: u32, d: u32): u32 { return c ^ (b | ~d); }

/** Compresses `blocks` 64-byte blocks at p into the four state words at ctx. */
function md5Blocks(ctx: usize, p: usize, blocks: usize): void {
  let a = load<u32>(ctx, 0);
  let b = load<u32>(ctx, 4);
  let c = load<u32>(ctx, 8);
  let d = load<u32>(ctx, 12);
  const end = p + (blocks << 6);
  while (p < end) {
    const a0 = a, b0 = b, c0 = c, d0 = d;
    // round 1: ff
    a = b + rotl(a + 0xd76aa478 + load<u32>(p, 0) + ff(b, c, d), 7);
    d = a + rotl(d + 0xe8c7b756 + load<u32>(p, 4) + ff(a, b, c), 12);
    c = d + rotl(c + 0x242070db + load<u32>(p, 8) + ff(d, a, b), 17);
    b = c + rotl(b + 0xc1bdceee + load<u32>(p, 12) + ff(c, d, a), 22);
    a = b + rotl(a + 0xf57c0faf + load<u32>(p, 16) + ff(b, c, d), 7);
    d = a + rotl(d + 0x4787c62a + load<u32>(p, 20) + ff(a, b, c), 12);
    c = d + rotl(c + 0xa8304613 + load<u32>(p, 24) + ff(d, a, b), 17);
    b = c + rotl(b + 0xfd469501 + load<u32>(p, 28) + ff(c, d, a), 22);
    a = b + rotl(a + 0x698098d8 + load<u32>(p, 32) + ff(b, c, d), 7);
    d = a + rotl(d + 0x8b44f7af + load<u32>(p, 36) + ff(a, b, c), 12);
    c = d + rotl(c + 0xffff5bb1 + load<u32>(p, 40) + ff(d, a, b), 17);
    b = c + rotl(b + 0x895cd7be + load<u32>(p, 44) + ff(c, d, a), 22);
    a = b + rotl(a + 0x6b901122 + load<u32>(p, 48) + ff(b, c, d), 7);
    d = a + rotl(d + 0xfd987193 + load<u32>(p, 52) + ff(a, b, c), 12);
    c = d + rotl(c + 0xa679438e + load<u32>(p, 56) + ff(d, a, b), 17);
    b = c + rotl(b + 0x49b40821 + load<u32>(p, 60) + ff(c, d, a), 22);
    // round 2: gg
    a = b + rotl(a + 0xf61e2562 + load<u32>(p, 4) + (c & ~d) + (b & d), 5);
    d = a + rotl(d + 0xc040b340 + load<u32>(p, 24) + (b & ~c) + (a & c), 9);
    c = d + rotl(c + 0x265e5a51 + load<u32>(p, 44) + (a & ~b) + (d & b), 14);
    b = c + rotl(b + 0xe9b6c7aa + load<u32>(p, 0) + (d & ~a) + (c & a), 20);
    a = b + rotl(a + 0xd62f105d + load<u32>(p, 20) + (c & ~d) + (b & d), 5);
    d = a + rotl(d + 0x02441453 + load<u32>(p, 40) + (b & ~c) + (a & c), 9);
    c = d + rotl(c + 0xd8a1e681 + load<u32>(p, 60) + (a & ~b) + (d & b), 14);
    b = c + rotl(b + 0xe7d3fbc8 + load<u32>(p, 16) + (d & ~a) + (c & a), 20);
    a = b + rotl(a + 0x21e1cde6 + load<u32>(p, 36) + (c & ~d) + (b & d), 5);
    d = a + rotl(d + 0xc33707d6 + load<u32>(p, 56) + (b & ~c) + (a & c), 9);
    c = d + rotl(c + 0xf4d50d87 + load<u32>(p, 12) + (a & ~b) + (d & b), 14);
    b = c + rotl(b + 0x455a14ed + load<u32>(p, 32) + (d & ~a) + (c & a), 20);
    a = b + rotl(a + 0xa9e3e905 + load<u32>(p, 52) + (c & ~d) + (b & d), 5);
    d = a + rotl(d + 0xfcefa3f8 + load<u32>(p, 8) + (b & ~c) + (a & c), 9);
    c = d + rotl(c + 0x676f02d9 + load<u32>(p, 28) + (a & ~b) + (d & b), 14);
    b = c + rotl(b + 0x8d2a4c8a + load<u32>(p, 48) + (d & ~a) + (c & a), 20);
    // round 3: hh
    a = b + rotl(a + 0xfffa3942 + load<u32>(p, 20) + hh(b, c, d), 4);
    d = a + rotl(d + 0x8771f681 + load<u32>(p, 32) + hh(a, b, c), 11);
    c = d + rotl(c + 0x6d9d6122 + load<u32>(p, 44) + hh(d, a, b), 16);
    b = c + rotl(b + 0xfde5380c + load<u32>(p, 56) + hh(c, d, a), 23);
    a = b + rotl(a + 0xa4beea44 + load<u32>(p, 4) + hh(b, c, d), 4);
    d = a + rotl(d + 0x4bdecfa9 + load<u32>(p, 16) + hh(a, b, c), 11);
    c = d + rotl(c + 0xf6bb4b60 + load<u32>(p, 28) + hh(d, a, b), 16);
    b = c + rotl(b + 0xbebfbc70 + load<u32>(p, 40) + hh(c, d, a), 23);
    a = b + rotl(a + 0x289b7ec6 + load<u32>(p, 52) + hh(b, c, d), 4);
    d = a + rotl(d + 0xeaa127fa + load<u32>(p, 0) + hh(a, b, c), 11);
    c = d + rotl(c + 0xd4ef3085 + load<u32>(p, 12) + hh(d, a, b), 16);
    b = c + rotl(b + 0x04881d05 + load<u32>(p, 24) + hh(c, d, a), 23);
    a = b + rotl(a + 0xd9d4d039 + load<u32>(p, 36) + hh(b, c, d), 4);
    d = a + rotl(d + 0xe6db99e5 + load<u32>(p, 48) + hh(a, b, c), 11);
    c = d + rotl(c + 0x1fa27cf8 + load<u32>(p, 60) + hh(d, a, b), 16);
    b = c + rotl(b + 0xc4ac5665 + load<u32>(p, 8) + hh(c, d, a), 23);
    // round 4: ii
    a = b + rotl(a + 0xf4292244 + load<u32>(p, 0) + ii(b, c, d), 6);
    d = a + rotl(d + 0x432aff97 + load<u32>(p, 28) + ii(a, b, c), 10);
    c = d + rotl(c + 0xab9423a7 + load<u32>(p, 56) + ii(d, a, b), 15);
    b = c + rotl(b + 0xfc93a039 + load<u32>(p, 20) + ii(c, d, a), 21);
    a = b + rotl(a + 0x655b59c3 + load<u32>(p, 48) + ii(b, c, d), 6);
    d = a + rotl(d + 0x8f0ccc92 + load<u32>(p, 12) + ii(a, b, c), 10);
    c = d + rotl(c + 0xffeff47d + load<u32>(p, 40) + ii(d, a, b), 15);
    b = c + rotl(b + 0x85845dd1 + load<u32>(p, 4) + ii(c, d, a), 21);
    a = b + rotl(a + 0x6fa87e4f + load<u32>(p, 32) + ii(b, c, d), 6);
    d = a + rotl(d + 0xfe2ce6e0 + load<u32>(p, 60) + ii(a, b, c), 10);
    c = d + rotl(c + 0xa3014314 + load<u32>(p, 24) + ii(d, a, b), 15);
    b = c + rotl(b + 0x4e0811a1 + load<u32>(p, 52) + ii(c, d, a), 21);
    a = b + rotl(a + 0xf7537e82 + load<u32>(p, 16) + ii(b, c, d), 6);
    d = a + rotl(d + 0xbd3af235 + load<u32>(p, 44) + ii(a, b, c), 10);
    c = d + rotl(c + 0x2ad7d2bb + load<u32>(p, 8) + ii(d, a, b), 15);
    b = c + rotl(b + 0xeb86d391 + load<u32>(p, 36) + ii(c, d, a), 21);

    a += a0; b += b0; c += c0; d += d0;
    p += 64;
  }
  store<u32>(ctx, a, 0);
  store<u32>(ctx, b, 4);
  store<u32>(ctx, c, 8);
  store<u32>(ctx, d, 12);
}

/** Starts an MD5 stream in the CTX_SIZE bytes at ctx. */
export function md5Init(ctx: usize): void {
  store<u32>(ctx, 0x67452301, 0);
  store<u32>(ctx, 0xefcdab89, 4);
  store<u32>(ctx, 0x98badcfe, 8);
  store<u32>(ctx, 0x10325476, 12);
  resetTotal(ctx);
}

/** Absorbs the len bytes at p into the stream at ctx. */
export function md5Update(ctx: usize, p: usize, len: usize): void {
  absorb(ctx, p, len, md5Blocks);
}

/** Writes the 16-byte digest to out; the stream at ctx is spent (init again to reuse). */
export function md5Final(ctx: usize, out: usize): void {
  finish(ctx, false, md5Blocks);
  memory.copy(out, ctx, 16);
}
