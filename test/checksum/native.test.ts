import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CHECKSUM_ALGORITHMS, checksum, createHasher } from '../../src/checksum/index.js';
import { FAST_IMPLEMENTATIONS, createFastHasher } from '../../src/checksum/native.js';
import { nativeCrc32cUnavailable } from '../../src/checksum/native-crc32c.js';
import { availableFlavors } from '../../src/wasm/loader.js';
import { prng, randInt, randomBytes } from '../support/random.js';

const FLAVORS = availableFlavors('checksum') as ('simd' | 'scalar')[];
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

it('uses OpenSSL for SHA-256 and SHA-1 (SHA-NI), the native CRC32C, wasm for MD5 and CRC64NVME', () => {
  expect(FAST_IMPLEMENTATIONS.sha256).toBe('node:crypto');
  expect(FAST_IMPLEMENTATIONS.sha1).toBe('node:crypto');
  expect(FAST_IMPLEMENTATIONS.md5).toBe('wasm');
  expect(FAST_IMPLEMENTATIONS.crc32c).toBe(nativeCrc32cUnavailable === undefined ? 'native' : 'wasm');
  expect(FAST_IMPLEMENTATIONS.crc64nvme).toBe('wasm');
  expect(['node:zlib', 'wasm']).toContain(FAST_IMPLEMENTATIONS.crc32);
});

describe.each(FLAVORS)('fast hashers agree with the wasm hashers (%s kernels)', (flavor) => {
  it.each(CHECKSUM_ALGORITHMS)('%s on random data in random chunks, with reset', (alg) => {
    const next = prng(alg.length * 31 + 1);
    for (const size of [0, 1, 63, 64, 65, 1000, 65537, 1000055]) {
      const data = randomBytes(size, size + 17);
      const fast = createFastHasher(alg);
      const wasm = createHasher(alg, { flavor });
      for (let off = 0; off < size;) {
        const n = randInt(next, 0, 50000);
        fast.update(data.subarray(off, off + n));
        wasm.update(data.subarray(off, off + n));
        off += n;
      }
      const digest = fast.digest();
      expect(digest).toBeInstanceOf(Uint8Array);
      expect(hex(digest), `${alg} ${size}`).toBe(hex(wasm.digest()));
      expect(hex(fast.reset().update(data).digest())).toBe(hex(checksum(alg, data, { flavor })));
    }
  });
});

it('fast digests are plain arrays the caller owns', () => {
  const a = createFastHasher('sha256').update(Uint8Array.of(1)).digest();
  expect(hex(a)).toBe(createHash('sha256').update(Uint8Array.of(1)).digest('hex'));
  expect(a.buffer.byteLength).toBe(32);
});
