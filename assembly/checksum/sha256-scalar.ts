// SHA-256 compression, scalar: the twin of sha256-simd.ts (same signature and result), and
// home of the round functions both use (FIPS 180-4 section 4.1.2).
//
// The 64 rounds are written out with the eight working variables and the 16-word message
// schedule in locals (w[i & 15] is overwritten in place), so the schedule never goes through
// memory. Names rotate instead of values: round i's "h" is round i+1's "g". Each round sums
// the terms known early (h + K[i] + w[i]) before those on the critical path (ch, ep1).
//
// Maj(a, b, c) = ((a ^ b) & (b ^ c)) ^ b, and b ^ c is the previous round's a ^ b, so the
// rounds alternate two locals x0/x1 to carry it (one operation fewer per round).

// @ts-ignore: decorator
@inline export function ch(x: u32, y: u32, z: u32): u32 { return z ^ (x & (y ^ z)); }
/** Maj(a, b, c) from ab = a ^ b and bc = b ^ c. */
// @ts-ignore: decorator
@inline export function maj(ab: u32, bc: u32, b: u32): u32 { return (ab & bc) ^ b; }
// @ts-ignore: decorator
@inline export function ep0(x: u32): u32 { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
// @ts-ignore: decorator
@inline export function ep1(x: u32): u32 { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
// @ts-ignore: decorator
@inline function sig0(x: u32): u32 { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
// @ts-ignore: decorator
@inline function sig1(x: u32): u32 { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }

/** Compresses `blocks` 64-byte blocks at p into the eight state words at ctx. */
export function sha256BlocksScalar(ctx: usize, p: usize, blocks: usize): void {
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
    // rounds 0..15
    h = h + 0x428a2f98 + w0 + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + 0x71374491 + w1 + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + 0xb5c0fbcf + w2 + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + 0xe9b5dba5 + w3 + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    d = d + 0x3956c25b + w4 + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + 0x59f111f1 + w5 + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + 0x923f82a4 + w6 + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + 0xab1c5ed5 + w7 + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    h = h + 0xd807aa98 + w8 + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    g = g + 0x12835b01 + w9 + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    f = f + 0x243185be + w10 + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    e = e + 0x550c7dc3 + w11 + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    d = d + 0x72be5d74 + w12 + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    c = c + 0x80deb1fe + w13 + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    b = b + 0x9bdc06a7 + w14 + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    a = a + 0xc19bf174 + w15 + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);

    // rounds 16..31: schedule w[i] = s1(w[i-2]) + w[i-7] + s0(w[i-15]) + w[i-16] in place
    w0 += sig1(w14) + w9 + sig0(w1);
    h = h + 0xe49b69c1 + w0 + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    w1 += sig1(w15) + w10 + sig0(w2);
    g = g + 0xefbe4786 + w1 + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    w2 += sig1(w0) + w11 + sig0(w3);
    f = f + 0x0fc19dc6 + w2 + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    w3 += sig1(w1) + w12 + sig0(w4);
    e = e + 0x240ca1cc + w3 + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    w4 += sig1(w2) + w13 + sig0(w5);
    d = d + 0x2de92c6f + w4 + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    w5 += sig1(w3) + w14 + sig0(w6);
    c = c + 0x4a7484aa + w5 + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    w6 += sig1(w4) + w15 + sig0(w7);
    b = b + 0x5cb0a9dc + w6 + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    w7 += sig1(w5) + w0 + sig0(w8);
    a = a + 0x76f988da + w7 + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    w8 += sig1(w6) + w1 + sig0(w9);
    h = h + 0x983e5152 + w8 + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    w9 += sig1(w7) + w2 + sig0(w10);
    g = g + 0xa831c66d + w9 + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    w10 += sig1(w8) + w3 + sig0(w11);
    f = f + 0xb00327c8 + w10 + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    w11 += sig1(w9) + w4 + sig0(w12);
    e = e + 0xbf597fc7 + w11 + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    w12 += sig1(w10) + w5 + sig0(w13);
    d = d + 0xc6e00bf3 + w12 + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    w13 += sig1(w11) + w6 + sig0(w14);
    c = c + 0xd5a79147 + w13 + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    w14 += sig1(w12) + w7 + sig0(w15);
    b = b + 0x06ca6351 + w14 + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    w15 += sig1(w13) + w8 + sig0(w0);
    a = a + 0x14292967 + w15 + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    // rounds 32..47: schedule w[i] = s1(w[i-2]) + w[i-7] + s0(w[i-15]) + w[i-16] in place
    w0 += sig1(w14) + w9 + sig0(w1);
    h = h + 0x27b70a85 + w0 + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    w1 += sig1(w15) + w10 + sig0(w2);
    g = g + 0x2e1b2138 + w1 + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    w2 += sig1(w0) + w11 + sig0(w3);
    f = f + 0x4d2c6dfc + w2 + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    w3 += sig1(w1) + w12 + sig0(w4);
    e = e + 0x53380d13 + w3 + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    w4 += sig1(w2) + w13 + sig0(w5);
    d = d + 0x650a7354 + w4 + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    w5 += sig1(w3) + w14 + sig0(w6);
    c = c + 0x766a0abb + w5 + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    w6 += sig1(w4) + w15 + sig0(w7);
    b = b + 0x81c2c92e + w6 + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    w7 += sig1(w5) + w0 + sig0(w8);
    a = a + 0x92722c85 + w7 + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    w8 += sig1(w6) + w1 + sig0(w9);
    h = h + 0xa2bfe8a1 + w8 + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    w9 += sig1(w7) + w2 + sig0(w10);
    g = g + 0xa81a664b + w9 + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    w10 += sig1(w8) + w3 + sig0(w11);
    f = f + 0xc24b8b70 + w10 + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    w11 += sig1(w9) + w4 + sig0(w12);
    e = e + 0xc76c51a3 + w11 + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    w12 += sig1(w10) + w5 + sig0(w13);
    d = d + 0xd192e819 + w12 + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    w13 += sig1(w11) + w6 + sig0(w14);
    c = c + 0xd6990624 + w13 + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    w14 += sig1(w12) + w7 + sig0(w15);
    b = b + 0xf40e3585 + w14 + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    w15 += sig1(w13) + w8 + sig0(w0);
    a = a + 0x106aa070 + w15 + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    // rounds 48..63: schedule w[i] = s1(w[i-2]) + w[i-7] + s0(w[i-15]) + w[i-16] in place
    w0 += sig1(w14) + w9 + sig0(w1);
    h = h + 0x19a4c116 + w0 + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    w1 += sig1(w15) + w10 + sig0(w2);
    g = g + 0x1e376c08 + w1 + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    w2 += sig1(w0) + w11 + sig0(w3);
    f = f + 0x2748774c + w2 + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    w3 += sig1(w1) + w12 + sig0(w4);
    e = e + 0x34b0bcb5 + w3 + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    w4 += sig1(w2) + w13 + sig0(w5);
    d = d + 0x391c0cb3 + w4 + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    w5 += sig1(w3) + w14 + sig0(w6);
    c = c + 0x4ed8aa4a + w5 + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    w6 += sig1(w4) + w15 + sig0(w7);
    b = b + 0x5b9cca4f + w6 + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    w7 += sig1(w5) + w0 + sig0(w8);
    a = a + 0x682e6ff3 + w7 + ch(f, g, h) + ep1(f); e += a;
    x1 = b ^ c; a = a + maj(x1, x0, c) + ep0(b);
    w8 += sig1(w6) + w1 + sig0(w9);
    h = h + 0x748f82ee + w8 + ch(e, f, g) + ep1(e); d += h;
    x0 = a ^ b; h = h + maj(x0, x1, b) + ep0(a);
    w9 += sig1(w7) + w2 + sig0(w10);
    g = g + 0x78a5636f + w9 + ch(d, e, f) + ep1(d); c += g;
    x1 = h ^ a; g = g + maj(x1, x0, a) + ep0(h);
    w10 += sig1(w8) + w3 + sig0(w11);
    f = f + 0x84c87814 + w10 + ch(c, d, e) + ep1(c); b += f;
    x0 = g ^ h; f = f + maj(x0, x1, h) + ep0(g);
    w11 += sig1(w9) + w4 + sig0(w12);
    e = e + 0x8cc70208 + w11 + ch(b, c, d) + ep1(b); a += e;
    x1 = f ^ g; e = e + maj(x1, x0, g) + ep0(f);
    w12 += sig1(w10) + w5 + sig0(w13);
    d = d + 0x90befffa + w12 + ch(a, b, c) + ep1(a); h += d;
    x0 = e ^ f; d = d + maj(x0, x1, f) + ep0(e);
    w13 += sig1(w11) + w6 + sig0(w14);
    c = c + 0xa4506ceb + w13 + ch(h, a, b) + ep1(h); g += c;
    x1 = d ^ e; c = c + maj(x1, x0, e) + ep0(d);
    w14 += sig1(w12) + w7 + sig0(w15);
    b = b + 0xbef9a3f7 + w14 + ch(g, h, a) + ep1(g); f += b;
    x0 = c ^ d; b = b + maj(x0, x1, d) + ep0(c);
    w15 += sig1(w13) + w8 + sig0(w0);
    a = a + 0xc67178f2 + w15 + ch(f, g, h) + ep1(f); e += a;
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
