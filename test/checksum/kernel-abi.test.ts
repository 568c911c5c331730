// The raw CRC exports are also called by other wasm modules that compile the kernel files in
// (the pack module calls crc32cUpdate on headers at arbitrary offsets), so their contract is
// tested at the ABI: any pointer alignment, zlib-style chaining, memory outside untouched.
import { describe, expect, it } from 'vitest';
import { availableFlavors, instantiate } from '../../src/wasm/loader.js';
import { randomBytes } from '../support/random.js';
import {
  CRC32C_POLY,
  CRC32_POLY,
  CRC64NVME_POLY,
  bytewiseCrc32,
  bytewiseCrc64,
} from './reference.js';

const FLAVORS = availableFlavors('checksum') as ('simd' | 'scalar')[];
const refCrc32 = bytewiseCrc32(CRC32_POLY);
const refCrc32c = bytewiseCrc32(CRC32C_POLY);
const refCrc64 = bytewiseCrc64(CRC64NVME_POLY);

interface Raw {
  memory: WebAssembly.Memory;
  inputPtr(): number;
  simd(): number;
  crc32Update(crc: number, ptr: number, len: number): number;
  crc32cUpdate(crc: number, ptr: number, len: number): number;
  crc64nvmeUpdate(crc: bigint, ptr: number, len: number): bigint;
}

describe.each(FLAVORS)('raw CRC exports (%s build)', (flavor) => {
  const x = instantiate('checksum', flavor).exports as unknown as Raw;
  const mem = new Uint8Array(x.memory.buffer);
  const base = x.inputPtr();

  it('reports its flavor', () => {
    expect(Boolean(x.simd())).toBe(flavor === 'simd');
  });

  it('computes the CRCs at every pointer alignment, reading only [ptr, ptr + len)', () => {
    const data = randomBytes(40000, 12);
    for (let off = 0; off < 8; off++) {
      for (const len of [0, 1, 7, 8, 9, 28, 767, 768, 1000, 12288, 12295, 39990]) {
        mem.fill(0xa5, base, base + 40016);
        mem.set(data.subarray(0, len), base + off);
        const d = data.subarray(0, len);
        expect(x.crc32Update(0, base + off, len) >>> 0, `crc32 ${off}/${len}`).toBe(refCrc32(d));
        expect(x.crc32cUpdate(0, base + off, len) >>> 0, `crc32c ${off}/${len}`).toBe(refCrc32c(d));
        expect(
          BigInt.asUintN(64, x.crc64nvmeUpdate(0n, base + off, len)),
          `crc64 ${off}/${len}`
        ).toBe(refCrc64(d));
      }
    }
  });

  it('chains zlib-style: update(update(0, A), B) === crc(A || B)', () => {
    const data = randomBytes(30000, 13);
    mem.set(data, base);
    for (const cut of [0, 1, 5, 100, 12288, 29999, 30000]) {
      const c = x.crc32cUpdate(x.crc32cUpdate(0, base, cut), base + cut, data.length - cut) >>> 0;
      expect(c).toBe(refCrc32c(data));
      const c64 = x.crc64nvmeUpdate(
        x.crc64nvmeUpdate(0n, base, cut),
        base + cut,
        data.length - cut
      );
      expect(BigInt.asUintN(64, c64)).toBe(refCrc64(data));
    }
  });
});
