import { describe, expect, it } from 'vitest';
import { checksum, createHasher, crc32, crc32c, crc64nvme } from '../../src/checksum/index.js';
import { availableFlavors } from '../../src/wasm/loader.js';

const FLAVORS = availableFlavors('checksum') as ('simd' | 'scalar')[];
const ascii = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const MSG_448 = 'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq';
const MSG_896 =
  'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu';

it('builds the scalar flavor and the SIMD flavor on this runtime', () => {
  expect(FLAVORS).toEqual(['simd', 'scalar']);
});

describe.each(FLAVORS)('published check values (%s kernels)', (flavor) => {
  const opts = { flavor };

  it('CRC check values of "123456789"', () => {
    const c = ascii('123456789');
    expect(crc32(c, 0, opts)).toBe(0xcbf43926);
    expect(crc32c(c, 0, opts)).toBe(0xe3069283);
    expect(crc64nvme(c, 0n, opts)).toBe(0xae8b14860a799888n);
    expect(hex(checksum('crc32', c, opts))).toBe('cbf43926');
    expect(hex(checksum('crc32c', c, opts))).toBe('e3069283');
    expect(hex(checksum('crc64nvme', c, opts))).toBe('ae8b14860a799888');
  });

  it('CRCs of the empty input are zero', () => {
    for (const alg of ['crc32', 'crc32c', 'crc64nvme'] as const) {
      expect(hex(checksum(alg, new Uint8Array(0), opts))).toMatch(/^0+$/);
    }
  });

  it('CRC32C test patterns of RFC 3720 B.4 (32 bytes of 0x00, 0xff, ascending, descending)', () => {
    const asc = Uint8Array.from({ length: 32 }, (_, i) => i);
    expect(crc32c(new Uint8Array(32), 0, opts)).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff), 0, opts)).toBe(0x62a8ab43);
    expect(crc32c(asc, 0, opts)).toBe(0x46dd794e);
    expect(crc32c(asc.reverse(), 0, opts)).toBe(0x113fdb5c);
  });

  it('SHA-256 vectors of FIPS 180-4 / NIST CSRC examples', () => {
    const sha = (s: string) => hex(checksum('sha256', ascii(s), opts));
    expect(sha('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha(MSG_448)).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    expect(sha(MSG_896)).toBe('cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1');
  });

  it('SHA-256 of one million "a", fed in uneven chunks', () => {
    const h = createHasher('sha256', opts);
    const chunk = new Uint8Array(999).fill(0x61);
    let left = 1_000_000;
    while (left > 0) {
      const n = Math.min(chunk.length, left);
      h.update(chunk.subarray(0, n));
      left -= n;
    }
    expect(hex(h.digest())).toBe(
      'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'
    );
  });

  it('MD5 test suite of RFC 1321 appendix A.5', () => {
    const md5 = (s: string) => hex(checksum('md5', ascii(s), opts));
    expect(md5('')).toBe('d41d8cd98f00b204e9800998ecf8427e');
    expect(md5('a')).toBe('0cc175b9c0f1b6a831c399e269772661');
    expect(md5('abc')).toBe('900150983cd24fb0d6963f7d28e17f72');
    expect(md5('message digest')).toBe('f96b697d7cb7938d525a2f31aaf161d0');
    expect(md5('abcdefghijklmnopqrstuvwxyz')).toBe('c3fcd3d76192e4007dfb496cca67e13b');
    expect(md5('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789')).toBe(
      'd174ab98d277d9f5a5611c2c9f419d9f'
    );
    expect(md5('1234567890'.repeat(8))).toBe('57edf4a22be3c955ac49da2e2107b67a');
  });

  it('SHA-1 vectors of FIPS 180-4 / NIST CSRC examples', () => {
    const sha1 = (s: string) => hex(checksum('sha1', ascii(s), opts));
    expect(sha1('abc')).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(sha1('')).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
    expect(sha1(MSG_448)).toBe('84983e441c3bd26ebaae4aa1f95129e5e54670f1');
    expect(sha1(MSG_896)).toBe('a49b2446a02c645bf419f995b67091253a04a259');
    const h = createHasher('sha1', opts);
    const chunk = new Uint8Array(1000).fill(0x61);
    for (let i = 0; i < 1000; i++) h.update(chunk);
    expect(hex(h.digest())).toBe('34aa973cd4c4daa4f61eeb2bdbad27316534016f');
  });
});
