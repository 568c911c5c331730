// SHA-1 (FIPS 180-4 section 6.1), for S3's x-amz-checksum-sha1: compression over whole
// 64-byte blocks and the init/update/final wrappers around block-stream.ts.
//
// Same shape as sha256-scalar.ts: 80 rounds written out, five working variables and the
// 16-word schedule in locals, rotating names. One kernel serves both builds: a v128 message
// schedule (four words per vector, stored as K + w for the rounds to read) measured ~25%
// slower than this one, whose schedule is only three XORs and a rotate per word.
import { absorb, finish, resetTotal } from './block-stream';

// @ts-ignore: decorator
@inline function ch(x: u32, y: u32, z: u32): u32 { return z ^ (x & (y ^ z)); }
// @ts-ignore: decorator
@inline function parity(x: u32, y: u32, z: u32): u32 { return x ^ (y ^ z); }
// Rounds 40..59 use Maj(b, c, d) = (b & c) + (d & (b ^ c)) (the two terms share no bits), as
// two separate additions so that neither waits for the other.

/** Compresses `blocks` 64-byte blocks at p into the five state words at ctx. */
function sha1Blocks(ctx: usize, p: usize, blocks: usize): void {
  let a = load<u32>(ctx, 0);
  let b = load<u32>(ctx, 4);
  let c = load<u32>(ctx, 8);
  let d = load<u32>(ctx, 12);
  let e = load<u32>(ctx, 16);
  const end = p + (blocks << 6);
  while (p < end) {
    const a0 = a, b0 = b, c0 = c, d0 = d, e0 = e;
    let w0 = bswap<u32>(load<u32>(p, 0));
    let w1 = bswap<u32>(load<u32>(p, 4));
    let w2 = bswap<u32>(load<u32>(p, 8));
    let w3 = bswap<u32>(load<u32>(p, 12));
    let w4 = bswap<u32>(load<u32>(p, 16));
    let w5 = bswap<u32>(load<u32>(p, 20));
    let w6 = bswap<u32>(load<u32>(p, 24));
    let w7 = bswap<u32>(load<u32>(p, 28));
    let w8 = bswap<u32>(load<u32>(p, 32));
    let w9 = bswap<u32>(load<u32>(p, 36));
    let w10 = bswap<u32>(load<u32>(p, 40));
    let w11 = bswap<u32>(load<u32>(p, 44));
    let w12 = bswap<u32>(load<u32>(p, 48));
    let w13 = bswap<u32>(load<u32>(p, 52));
    let w14 = bswap<u32>(load<u32>(p, 56));
    let w15 = bswap<u32>(load<u32>(p, 60));
    // rounds 0..19
    e = e + 0x5a827999 + w0 + ch(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    d = d + 0x5a827999 + w1 + ch(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    c = c + 0x5a827999 + w2 + ch(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    b = b + 0x5a827999 + w3 + ch(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    a = a + 0x5a827999 + w4 + ch(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    e = e + 0x5a827999 + w5 + ch(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    d = d + 0x5a827999 + w6 + ch(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    c = c + 0x5a827999 + w7 + ch(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    b = b + 0x5a827999 + w8 + ch(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    a = a + 0x5a827999 + w9 + ch(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    e = e + 0x5a827999 + w10 + ch(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    d = d + 0x5a827999 + w11 + ch(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    c = c + 0x5a827999 + w12 + ch(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    b = b + 0x5a827999 + w13 + ch(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    a = a + 0x5a827999 + w14 + ch(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    e = e + 0x5a827999 + w15 + ch(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w0 = rotl(w0 ^ w13 ^ w8 ^ w2, 1);
    d = d + 0x5a827999 + w0 + ch(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w1 = rotl(w1 ^ w14 ^ w9 ^ w3, 1);
    c = c + 0x5a827999 + w1 + ch(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w2 = rotl(w2 ^ w15 ^ w10 ^ w4, 1);
    b = b + 0x5a827999 + w2 + ch(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w3 = rotl(w3 ^ w0 ^ w11 ^ w5, 1);
    a = a + 0x5a827999 + w3 + ch(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    // rounds 20..39
    w4 = rotl(w4 ^ w1 ^ w12 ^ w6, 1);
    e = e + 0x6ed9eba1 + w4 + parity(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w5 = rotl(w5 ^ w2 ^ w13 ^ w7, 1);
    d = d + 0x6ed9eba1 + w5 + parity(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w6 = rotl(w6 ^ w3 ^ w14 ^ w8, 1);
    c = c + 0x6ed9eba1 + w6 + parity(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w7 = rotl(w7 ^ w4 ^ w15 ^ w9, 1);
    b = b + 0x6ed9eba1 + w7 + parity(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w8 = rotl(w8 ^ w5 ^ w0 ^ w10, 1);
    a = a + 0x6ed9eba1 + w8 + parity(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    w9 = rotl(w9 ^ w6 ^ w1 ^ w11, 1);
    e = e + 0x6ed9eba1 + w9 + parity(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w10 = rotl(w10 ^ w7 ^ w2 ^ w12, 1);
    d = d + 0x6ed9eba1 + w10 + parity(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w11 = rotl(w11 ^ w8 ^ w3 ^ w13, 1);
    c = c + 0x6ed9eba1 + w11 + parity(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w12 = rotl(w12 ^ w9 ^ w4 ^ w14, 1);
    b = b + 0x6ed9eba1 + w12 + parity(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w13 = rotl(w13 ^ w10 ^ w5 ^ w15, 1);
    a = a + 0x6ed9eba1 + w13 + parity(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    w14 = rotl(w14 ^ w11 ^ w6 ^ w0, 1);
    e = e + 0x6ed9eba1 + w14 + parity(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w15 = rotl(w15 ^ w12 ^ w7 ^ w1, 1);
    d = d + 0x6ed9eba1 + w15 + parity(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w0 = rotl(w0 ^ w13 ^ w8 ^ w2, 1);
    c = c + 0x6ed9eba1 + w0 + parity(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w1 = rotl(w1 ^ w14 ^ w9 ^ w3, 1);
    b = b + 0x6ed9eba1 + w1 + parity(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w2 = rotl(w2 ^ w15 ^ w10 ^ w4, 1);
    a = a + 0x6ed9eba1 + w2 + parity(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    w3 = rotl(w3 ^ w0 ^ w11 ^ w5, 1);
    e = e + 0x6ed9eba1 + w3 + parity(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w4 = rotl(w4 ^ w1 ^ w12 ^ w6, 1);
    d = d + 0x6ed9eba1 + w4 + parity(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w5 = rotl(w5 ^ w2 ^ w13 ^ w7, 1);
    c = c + 0x6ed9eba1 + w5 + parity(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w6 = rotl(w6 ^ w3 ^ w14 ^ w8, 1);
    b = b + 0x6ed9eba1 + w6 + parity(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w7 = rotl(w7 ^ w4 ^ w15 ^ w9, 1);
    a = a + 0x6ed9eba1 + w7 + parity(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    // rounds 40..59
    w8 = rotl(w8 ^ w5 ^ w0 ^ w10, 1);
    e = e + 0x8f1bbcdc + w8 + (b & c) + (d & (b ^ c)) + rotl(a, 5); b = rotl(b, 30);
    w9 = rotl(w9 ^ w6 ^ w1 ^ w11, 1);
    d = d + 0x8f1bbcdc + w9 + (a & b) + (c & (a ^ b)) + rotl(e, 5); a = rotl(a, 30);
    w10 = rotl(w10 ^ w7 ^ w2 ^ w12, 1);
    c = c + 0x8f1bbcdc + w10 + (e & a) + (b & (e ^ a)) + rotl(d, 5); e = rotl(e, 30);
    w11 = rotl(w11 ^ w8 ^ w3 ^ w13, 1);
    b = b + 0x8f1bbcdc + w11 + (d & e) + (a & (d ^ e)) + rotl(c, 5); d = rotl(d, 30);
    w12 = rotl(w12 ^ w9 ^ w4 ^ w14, 1);
    a = a + 0x8f1bbcdc + w12 + (c & d) + (e & (c ^ d)) + rotl(b, 5); c = rotl(c, 30);
    w13 = rotl(w13 ^ w10 ^ w5 ^ w15, 1);
    e = e + 0x8f1bbcdc + w13 + (b & c) + (d & (b ^ c)) + rotl(a, 5); b = rotl(b, 30);
    w14 = rotl(w14 ^ w11 ^ w6 ^ w0, 1);
    d = d + 0x8f1bbcdc + w14 + (a & b) + (c & (a ^ b)) + rotl(e, 5); a = rotl(a, 30);
    w15 = rotl(w15 ^ w12 ^ w7 ^ w1, 1);
    c = c + 0x8f1bbcdc + w15 + (e & a) + (b & (e ^ a)) + rotl(d, 5); e = rotl(e, 30);
    w0 = rotl(w0 ^ w13 ^ w8 ^ w2, 1);
    b = b + 0x8f1bbcdc + w0 + (d & e) + (a & (d ^ e)) + rotl(c, 5); d = rotl(d, 30);
    w1 = rotl(w1 ^ w14 ^ w9 ^ w3, 1);
    a = a + 0x8f1bbcdc + w1 + (c & d) + (e & (c ^ d)) + rotl(b, 5); c = rotl(c, 30);
    w2 = rotl(w2 ^ w15 ^ w10 ^ w4, 1);
    e = e + 0x8f1bbcdc + w2 + (b & c) + (d & (b ^ c)) + rotl(a, 5); b = rotl(b, 30);
    w3 = rotl(w3 ^ w0 ^ w11 ^ w5, 1);
    d = d + 0x8f1bbcdc + w3 + (a & b) + (c & (a ^ b)) + rotl(e, 5); a = rotl(a, 30);
    w4 = rotl(w4 ^ w1 ^ w12 ^ w6, 1);
    c = c + 0x8f1bbcdc + w4 + (e & a) + (b & (e ^ a)) + rotl(d, 5); e = rotl(e, 30);
    w5 = rotl(w5 ^ w2 ^ w13 ^ w7, 1);
    b = b + 0x8f1bbcdc + w5 + (d & e) + (a & (d ^ e)) + rotl(c, 5); d = rotl(d, 30);
    w6 = rotl(w6 ^ w3 ^ w14 ^ w8, 1);
    a = a + 0x8f1bbcdc + w6 + (c & d) + (e & (c ^ d)) + rotl(b, 5); c = rotl(c, 30);
    w7 = rotl(w7 ^ w4 ^ w15 ^ w9, 1);
    e = e + 0x8f1bbcdc + w7 + (b & c) + (d & (b ^ c)) + rotl(a, 5); b = rotl(b, 30);
    w8 = rotl(w8 ^ w5 ^ w0 ^ w10, 1);
    d = d + 0x8f1bbcdc + w8 + (a & b) + (c & (a ^ b)) + rotl(e, 5); a = rotl(a, 30);
    w9 = rotl(w9 ^ w6 ^ w1 ^ w11, 1);
    c = c + 0x8f1bbcdc + w9 + (e & a) + (b & (e ^ a)) + rotl(d, 5); e = rotl(e, 30);
    w10 = rotl(w10 ^ w7 ^ w2 ^ w12, 1);
    b = b + 0x8f1bbcdc + w10 + (d & e) + (a & (d ^ e)) + rotl(c, 5); d = rotl(d, 30);
    w11 = rotl(w11 ^ w8 ^ w3 ^ w13, 1);
    a = a + 0x8f1bbcdc + w11 + (c & d) + (e & (c ^ d)) + rotl(b, 5); c = rotl(c, 30);
    // rounds 60..79
    w12 = rotl(w12 ^ w9 ^ w4 ^ w14, 1);
    e = e + 0xca62c1d6 + w12 + parity(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w13 = rotl(w13 ^ w10 ^ w5 ^ w15, 1);
    d = d + 0xca62c1d6 + w13 + parity(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w14 = rotl(w14 ^ w11 ^ w6 ^ w0, 1);
    c = c + 0xca62c1d6 + w14 + parity(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w15 = rotl(w15 ^ w12 ^ w7 ^ w1, 1);
    b = b + 0xca62c1d6 + w15 + parity(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w0 = rotl(w0 ^ w13 ^ w8 ^ w2, 1);
    a = a + 0xca62c1d6 + w0 + parity(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    w1 = rotl(w1 ^ w14 ^ w9 ^ w3, 1);
    e = e + 0xca62c1d6 + w1 + parity(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w2 = rotl(w2 ^ w15 ^ w10 ^ w4, 1);
    d = d + 0xca62c1d6 + w2 + parity(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w3 = rotl(w3 ^ w0 ^ w11 ^ w5, 1);
    c = c + 0xca62c1d6 + w3 + parity(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w4 = rotl(w4 ^ w1 ^ w12 ^ w6, 1);
    b = b + 0xca62c1d6 + w4 + parity(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w5 = rotl(w5 ^ w2 ^ w13 ^ w7, 1);
    a = a + 0xca62c1d6 + w5 + parity(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    w6 = rotl(w6 ^ w3 ^ w14 ^ w8, 1);
    e = e + 0xca62c1d6 + w6 + parity(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w7 = rotl(w7 ^ w4 ^ w15 ^ w9, 1);
    d = d + 0xca62c1d6 + w7 + parity(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w8 = rotl(w8 ^ w5 ^ w0 ^ w10, 1);
    c = c + 0xca62c1d6 + w8 + parity(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w9 = rotl(w9 ^ w6 ^ w1 ^ w11, 1);
    b = b + 0xca62c1d6 + w9 + parity(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w10 = rotl(w10 ^ w7 ^ w2 ^ w12, 1);
    a = a + 0xca62c1d6 + w10 + parity(c, d, e) + rotl(b, 5); c = rotl(c, 30);
    w11 = rotl(w11 ^ w8 ^ w3 ^ w13, 1);
    e = e + 0xca62c1d6 + w11 + parity(b, c, d) + rotl(a, 5); b = rotl(b, 30);
    w12 = rotl(w12 ^ w9 ^ w4 ^ w14, 1);
    d = d + 0xca62c1d6 + w12 + parity(a, b, c) + rotl(e, 5); a = rotl(a, 30);
    w13 = rotl(w13 ^ w10 ^ w5 ^ w15, 1);
    c = c + 0xca62c1d6 + w13 + parity(e, a, b) + rotl(d, 5); e = rotl(e, 30);
    w14 = rotl(w14 ^ w11 ^ w6 ^ w0, 1);
    b = b + 0xca62c1d6 + w14 + parity(d, e, a) + rotl(c, 5); d = rotl(d, 30);
    w15 = rotl(w15 ^ w12 ^ w7 ^ w1, 1);
    a = a + 0xca62c1d6 + w15 + parity(c, d, e) + rotl(b, 5); c = rotl(c, 30);

    a += a0; b += b0; c += c0; d += d0; e += e0;
    p += 64;
  }
  store<u32>(ctx, a, 0);
  store<u32>(ctx, b, 4);
  store<u32>(ctx, c, 8);
  store<u32>(ctx, d, 12);
  store<u32>(ctx, e, 16);
}

/** Starts a SHA-1 stream in the CTX_SIZE bytes at ctx. */
export function sha1Init(ctx: usize): void {
  store<u32>(ctx, 0x67452301, 0);
  store<u32>(ctx, 0xefcdab89, 4);
  store<u32>(ctx, 0x98badcfe, 8);
  store<u32>(ctx, 0x10325476, 12);
  store<u32>(ctx, 0xc3d2e1f0, 16);
  resetTotal(ctx);
}

/** Absorbs the len bytes at p into the stream at ctx. */
export function sha1Update(ctx: usize, p: usize, len: usize): void {
  absorb(ctx, p, len, sha1Blocks);
}

/** Writes the 20-byte digest to out; the stream at ctx is spent (init again to reuse). */
export function sha1Final(ctx: usize, out: usize): void {
  finish(ctx, true, sha1Blocks);
  for (let i: usize = 0; i < 20; i += 4) store<u32>(out + i, bswap<u32>(load<u32>(ctx + i)));
}
