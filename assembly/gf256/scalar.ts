// Scalar twins of simd.ts: same signatures, same table layout, one byte at a time
// (ISA-L gf_vect_dot_prod_base). c * b = tbl[b & 15] ^ tbl[16 + (b >> 4)].

// @ts-ignore: decorator
@inline function mulByte(t: usize, b: u32): u32 {
  return <u32>load<u8>(t + (b & 15)) ^ <u32>load<u8>(t + 16 + (b >> 4));
}

/** rows = 1..4 outputs of one group; tables advance rows*32 bytes per source. */
export function dotScalar(rows: i32, tbl: usize, cols: i32, src: usize, srcStride: usize, dst: usize, dstStride: usize, len: usize, acc: bool): void {
  const step = <usize>rows << 5;
  for (let r = 0; r < rows; r++) {
    const d = dst + <usize>r * dstStride;
    const tr = tbl + (<usize>r << 5);
    for (let pos: usize = 0; pos < len; pos++) {
      let x: u32 = acc ? <u32>load<u8>(d + pos) : 0;
      let s = src + pos;
      let t = tr;
      for (let j = 0; j < cols; j++) {
        x ^= mulByte(t, <u32>load<u8>(s));
        s += srcStride;
        t += step;
      }
      store<u8>(d + pos, <u8>x);
    }
  }
}
