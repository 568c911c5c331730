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
      // Around the SIMD build's 4 KiB and 16 KiB superblocks and the 3-lane kernel's 768 and 12 KiB.
      for (const len of [0, 1, 7, 8, 9, 28, 767, 768, 1000, 4095, 4096, 4097, 4864, 12288, 12295, 16383, 16384, 16385, 21247, 36864, 39990]) {
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

  it('CRC32C: a byte changed in any stream, at any position of a 16-byte round, changes the CRC to the reference value', () => {
    // The SIMD kernel runs sixteen registers over sixteen streams of a superblock (1 KiB each in
    // a 16 KiB superblock, 256 bytes in a 4 KiB one); a wrong lane order or join would show here.
    const data = randomBytes(16384 + 4096 + 100, 14);
    for (const [stream, lane, base0] of [[0, 1024, 0], [7, 1024, 0], [15, 1024, 0], [0, 256, 16384], [9, 256, 16384], [15, 256, 16384]]) {
      for (const t of [0, 5, 15, 16 * 7 + 3, lane - 1]) {
        const d = Uint8Array.from(data);
        d[base0 + stream * lane + t] ^= 0x5a;
        mem.set(d, base);
        const got = x.crc32cUpdate(0, base, d.length) >>> 0;
        expect(got, `stream ${stream} of ${lane}, byte ${t}`).toBe(refCrc32c(d));
        expect(got).not.toBe(refCrc32c(data));
      }
    }
  });

  it('chains zlib-style: update(update(0, A), B) === crc(A || B)', () => {
    const data = randomBytes(30000, 13);
    mem.set(data, base);
    for (const cut of [0, 1, 5, 100, 4096, 12288, 16384, 16385, 29999, 30000]) {
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
