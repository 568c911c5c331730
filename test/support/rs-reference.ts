/**
 * @module A plain-TypeScript Reed-Solomon reference for differential tests.
 *
 * Deliberately independent of the production path: field multiplication by shift-and-add
 * ("Russian peasant") with reduction by 0x11d, the Cauchy parity matrix written out from
 * its definition, and a byte-at-a-time dot product. Slow and obviously right.
 */

/** a * b in GF(2^8) mod x^8 + x^4 + x^3 + x^2 + 1, bit by bit. */
export function slowMul(a: number, b: number): number {
  let p = 0;
  while (b) {
    if (b & 1) p ^= a;
    b >>= 1;
    a <<= 1;
    if (a & 0x100) a ^= 0x11d;
  }
  return p;
}

export function slowInv(a: number): number {
  for (let x = 1; x < 256; x++) if (slowMul(a, x) === 1) return x;
  throw new Error(`no inverse for ${a}`);
}

/** Parity shards for data shards `data` with the Cauchy matrix 1 / ((k + i) ^ j). */
export function referenceParity(data: Uint8Array[], m: number): Uint8Array[] {
  const k = data.length;
  const size = data[0]!.length;
  const out: Uint8Array[] = [];
  for (let i = 0; i < m; i++) {
    const p = new Uint8Array(size);
    for (let j = 0; j < k; j++) {
      const c = slowInv((k + i) ^ j);
      const d = data[j]!;
      const row = new Uint8Array(256);
      for (let b = 0; b < 256; b++) row[b] = slowMul(c, b);
      for (let x = 0; x < size; x++) p[x]! ^= row[d[x]!]!;
    }
    out.push(p);
  }
  return out;
}
