// Streaming for the 64-byte-block Merkle-Damgard hashes (MD5, SHA-1, SHA-256): buffering of
// partial blocks and the final padding, shared by md5.ts, sha1.ts and sha256.ts, which only
// supply a compression function over whole blocks.
//
// Context (CTX_SIZE bytes, owned by the caller; the JS boundary may copy it out and back in
// at any point between calls, so it holds the complete state and no pointers):
//
//   ctx +  0  ┌──────────────────────────────┐
//             │ chaining state, 32 bytes     │ u32 words: MD5 4, SHA-1 5, SHA-256 8
//   ctx + 32  ├──────────────────────────────┤
//             │ bytes absorbed so far, u64   │ pending = total & 63
//   ctx + 64  ├──────────────────────────────┤
//             │ pending partial block, 64 B  │
//   ctx + 128 └──────────────────────────────┘

export const CTX_SIZE: usize = 128;
const TOTAL: usize = 32;
const PENDING: usize = 64;

/** Compresses `blocks` whole 64-byte blocks at p into the state at ctx. */
export type Compress = (ctx: usize, p: usize, blocks: usize) => void;

/** Sets the byte count to zero; the caller writes its initial chaining state. */
export function resetTotal(ctx: usize): void {
  store<u64>(ctx, 0, TOTAL);
}

/** Absorbs the len bytes at p: whole blocks straight from p, the rest into the buffer. */
export function absorb(ctx: usize, p: usize, len: usize, compress: Compress): void {
  const total = load<u64>(ctx, TOTAL);
  store<u64>(ctx, total + <u64>len, TOTAL);
  const fill = <usize>(total & 63);
  if (fill) {
    const n = min<usize>(64 - fill, len);
    memory.copy(ctx + PENDING + fill, p, n);
    if (fill + n < 64) return;
    compress(ctx, ctx + PENDING, 1);
    p += n;
    len -= n;
  }
  const blocks = len >> 6;
  if (blocks) compress(ctx, p, blocks);
  const rest = len & 63;
  if (rest) memory.copy(ctx + PENDING, p + (blocks << 6), rest);
}

/**
 * Appends the padding (0x80, zeros, the bit length as a 64-bit big- or little-endian
 * integer) and compresses the last one or two blocks. The context is spent afterwards.
 */
export function finish(ctx: usize, bigEndian: bool, compress: Compress): void {
  const total = load<u64>(ctx, TOTAL);
  const fill = <usize>(total & 63);
  const buf = ctx + PENDING;
  store<u8>(buf + fill, 0x80);
  memory.fill(buf + fill + 1, 0, 63 - fill);
  if (fill >= 56) {
    compress(ctx, buf, 1);
    memory.fill(buf, 0, 56);
  }
  const bits = total << 3;
  store<u64>(buf, bigEndian ? bswap<u64>(bits) : bits, 56);
  compress(ctx, buf, 1);
}
