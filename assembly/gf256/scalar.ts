// Scalar twins of simd.ts: same table layout, one byte at a time (ISA-L
// gf_vect_dot_prod_base). c * b = tbl[b & 15] ^ tbl[16 + (b >> 4)].

// @ts-ignore: decorator
@inline function mulByte(t: usize, b: u32): u32 {
  return <u32>load<u8>(t + (b & 15)) ^ <u32>load<u8>(t + 16 + (b >> 4));
}

/**
 * rows = 1..4 outputs of one group, bytes [from, to) of each: output r is at load<u32>(dsts +
 * 4r), source j at load<u32>(srcs + 4j); tables advance rows*32 bytes per source. Used for
 * whole shards by the scalar build and for the last len % 16 bytes by the SIMD build.
 */
export function dotScalar(rows: i32, tbl: usize, cols: i32, srcs: usize, dsts: usize, from: usize, to: usize, acc: bool): void {
  const step = <usize>rows << 5;
  for (let r = 0; r < rows; r++) {
    const d = <usize>load<u32>(dsts + (<usize>r << 2));
    const tr = tbl + (<usize>r << 5);
    for (let pos = from; pos < to; pos++) {
      let x: u32 = acc ? <u32>load<u8>(d + pos) : 0;
      let t = tr;
      for (let j = 0; j < cols; j++) {
        x ^= mulByte(t, <u32>load<u8>(<usize>load<u32>(srcs + (<usize>j << 2)) + pos));
        t += step;
      }
      store<u8>(d + pos, <u8>x);
    }
  }
}
