// SHA-256 compression, SIMD: the message schedule runs four words at a time in v128 lanes
// (on the vector ports, beside the scalar rounds), and the rounds read K[i] + w[i] from a
// 64-byte window that the schedule fills four words ahead. Same signature and result as
// sha256BlocksScalar; the rounds themselves are scalar (one block is one dependency chain).
//
//   vectors v0..v3 = w[4g .. 4g+3] for the last four groups g (names rotate)
//   KW window      = 16 u32: slot (i & 15) holds K[i] + w[i]; group g+4 is computed and
//                    stored into group g's slots right after group g's rounds read them
//
// w[i] = sig1(w[i-2]) + w[i-7] + sig0(w[i-15]) + w[i-16] for i = 4g .. 4g+3: w[i-2] of the
// two upper lanes are the two lower lanes of the same vector, so sig1 is applied twice
// (sig1(0) = 0 keeps the other lanes unchanged).
import { ch, ep0, ep1, maj } from './sha256-scalar';

const KV: usize = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
], 16);
const KW: usize = memory.data(64, 16);

// @ts-ignore: decorator
@inline function bswap32x4(v: v128): v128 {
  return i8x16.shuffle(v, v, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
}
// @ts-ignore: decorator
@inline function rotrv(x: v128, n: i32): v128 {
  return v128.or(i32x4.shr_u(x, n), i32x4.shl(x, 32 - n));
}
// @ts-ignore: decorator
@inline function sig0v(x: v128): v128 {
  return v128.xor(v128.xor(rotrv(x, 7), rotrv(x, 18)), i32x4.shr_u(x, 3));
}
// @ts-ignore: decorator
@inline function sig1v(x: v128): v128 {
  return v128.xor(v128.xor(rotrv(x, 17), rotrv(x, 19)), i32x4.shr_u(x, 10));
}

/** w[4g .. 4g+3] from the previous four groups, oldest first. */
// @ts-ignore: decorator
@inline function schedule(w0: v128, w1: v128, w2: v128, w3: v128): v128 {
  const z = i32x4.splat(0);
  const w15 = i8x16.shuffle(w0, w1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
  const w7 = i8x16.shuffle(w2, w3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
  let t = i32x4.add(i32x4.add(w0, sig0v(w15)), w7);
  // lanes 0, 1 += sig1(w[14], w[15]); then lanes 2, 3 += sig1 of the new lanes 0, 1
  const w2lo = i8x16.shuffle(w3, z, 8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 16, 16, 16, 16, 16, 16);
  t = i32x4.add(t, sig1v(w2lo));
  const w2hi = i8x16.shuffle(z, t, 0, 0, 0, 0, 0, 0, 0, 0, 16, 17, 18, 19, 20, 21, 22, 23);
  return i32x4.add(t, sig1v(w2hi));
}

/** Compresses `blocks` 64-byte blocks at p into the eight state words at ctx. */
export function sha256BlocksSimd(ctx: usize, p: usize, blocks: usize): void {
  let a = load<u32>(ctx, 0);
  let b = load<u32>(ctx, 4);
  let c = load<u32>(ctx, 8);
  let d = load<u32>(ctx, 12);
  let e = load<u32>(ctx, 16);
  let f = load<u32>(ctx, 20);
  let g = load<u32>(ctx, 24);
  let h = load<u32>(ctx, 28);
  const end = p + (blocks << 6);
  while (p < end) {
    const a0 = a, b0 = b, c0 = c, d0 = d, e0 = e, f0 = f, g0 = g, h0 = h;
    let x0: u32 = 0;
    let x1: u32 = b ^ c;
    let v0 = bswap32x4(v128.load(p, 0));
    let v1 = bswap32x4(v128.load(p, 16));
    let v2 = bswap32x4(v128.load(p, 32));
    let v3 = bswap32x4(v128.load(p, 48));
    v128.store(KW, i32x4.add(v0, v128.load(KV, 0)), 0);
    v128.store(KW, i32x4.add(v1, v128.load(KV, 16)), 16);
    v128.store(KW, i32x4.add(v2, v128.load(KV, 32)), 32);
    v128.store(KW, i32x4.add(v3, v128.load(KV, 48)), 48);
    // rounds 0..15
    h = h + load<u32>(KW, 0) + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + load<u32>(KW, 4) + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + load<u32>(KW, 8) + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + load<u32>(KW, 12) + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    v0 = schedule(v0, v1, v2, v3);
    v128.store(KW, i32x4.add(v0, v128.load(KV, 64)), 0);
    d = d + load<u32>(KW, 16) + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + load<u32>(KW, 20) + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + load<u32>(KW, 24) + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + load<u32>(KW, 28) + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    v1 = schedule(v1, v2, v3, v0);
    v128.store(KW, i32x4.add(v1, v128.load(KV, 80)), 16);
    h = h + load<u32>(KW, 32) + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + load<u32>(KW, 36) + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + load<u32>(KW, 40) + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + load<u32>(KW, 44) + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    v2 = schedule(v2, v3, v0, v1);
    v128.store(KW, i32x4.add(v2, v128.load(KV, 96)), 32);
    d = d + load<u32>(KW, 48) + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + load<u32>(KW, 52) + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + load<u32>(KW, 56) + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + load<u32>(KW, 60) + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    v3 = schedule(v3, v0, v1, v2);
    v128.store(KW, i32x4.add(v3, v128.load(KV, 112)), 48);
    // rounds 16..31
    h = h + load<u32>(KW, 0) + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + load<u32>(KW, 4) + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + load<u32>(KW, 8) + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + load<u32>(KW, 12) + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    v0 = schedule(v0, v1, v2, v3);
    v128.store(KW, i32x4.add(v0, v128.load(KV, 128)), 0);
    d = d + load<u32>(KW, 16) + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + load<u32>(KW, 20) + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + load<u32>(KW, 24) + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + load<u32>(KW, 28) + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    v1 = schedule(v1, v2, v3, v0);
    v128.store(KW, i32x4.add(v1, v128.load(KV, 144)), 16);
    h = h + load<u32>(KW, 32) + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + load<u32>(KW, 36) + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + load<u32>(KW, 40) + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + load<u32>(KW, 44) + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    v2 = schedule(v2, v3, v0, v1);
    v128.store(KW, i32x4.add(v2, v128.load(KV, 160)), 32);
    d = d + load<u32>(KW, 48) + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + load<u32>(KW, 52) + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + load<u32>(KW, 56) + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + load<u32>(KW, 60) + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    v3 = schedule(v3, v0, v1, v2);
    v128.store(KW, i32x4.add(v3, v128.load(KV, 176)), 48);
    // rounds 32..47
    h = h + load<u32>(KW, 0) + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + load<u32>(KW, 4) + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + load<u32>(KW, 8) + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + load<u32>(KW, 12) + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    v0 = schedule(v0, v1, v2, v3);
    v128.store(KW, i32x4.add(v0, v128.load(KV, 192)), 0);
    d = d + load<u32>(KW, 16) + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + load<u32>(KW, 20) + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + load<u32>(KW, 24) + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + load<u32>(KW, 28) + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    v1 = schedule(v1, v2, v3, v0);
    v128.store(KW, i32x4.add(v1, v128.load(KV, 208)), 16);
    h = h + load<u32>(KW, 32) + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + load<u32>(KW, 36) + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + load<u32>(KW, 40) + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + load<u32>(KW, 44) + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    v2 = schedule(v2, v3, v0, v1);
    v128.store(KW, i32x4.add(v2, v128.load(KV, 224)), 32);
    d = d + load<u32>(KW, 48) + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + load<u32>(KW, 52) + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + load<u32>(KW, 56) + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + load<u32>(KW, 60) + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    v3 = schedule(v3, v0, v1, v2);
    v128.store(KW, i32x4.add(v3, v128.load(KV, 240)), 48);
    // rounds 48..63
    h = h + load<u32>(KW, 0) + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + load<u32>(KW, 4) + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + load<u32>(KW, 8) + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + load<u32>(KW, 12) + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    d = d + load<u32>(KW, 16) + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + load<u32>(KW, 20) + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + load<u32>(KW, 24) + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + load<u32>(KW, 28) + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    h = h + load<u32>(KW, 32) + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + load<u32>(KW, 36) + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + load<u32>(KW, 40) + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + load<u32>(KW, 44) + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    d = d + load<u32>(KW, 48) + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + load<u32>(KW, 52) + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + load<u32>(KW, 56) + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + load<u32>(KW, 60) + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);


    a += a0; b += b0; c += c0; d += d0; e += e0; f += f0; g += g0; h += h0;
    p += 64;
  }
  store<u32>(ctx, a, 0);
  store<u32>(ctx, b, 4);
  store<u32>(ctx, c, 8);
  store<u32>(ctx, d, 12);
  store<u32>(ctx, e, 16);
  store<u32>(ctx, f, 20);
  store<u32>(ctx, g, 24);
  store<u32>(ctx, h, 28);
}
