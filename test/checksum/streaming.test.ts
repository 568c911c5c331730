import { describe, expect, it } from 'vitest';
import {
  CHECKSUM_ALGORITHMS,
  checksum,
  crc32c,
  createHasher,
  type ChecksumAlgorithm,
} from '../../src/checksum/index.js';
import { availableFlavors } from '../../src/wasm/loader.js';
import { prng, randInt, randomBytes } from '../support/random.js';

const FLAVORS = availableFlavors('checksum') as ('simd' | 'scalar')[];
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Chunks of increasing then cycling lengths covering `data` (hash-wasm's "chunked
 * increasing length" idea): 1, 2, 3, ... bytes, so every block-buffer fill level is hit. */
function increasingChunks(data: Uint8Array, start: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let off = 0, n = start; off < data.length; off += n, n = (n % 257) + 1)
    out.push(data.subarray(off, off + n));
  return out;
}

/** Random chunk lengths 0..max drawn from `seed`. */
function randomChunks(data: Uint8Array, max: number, seed: number): Uint8Array[] {
  const next = prng(seed);
  const out: Uint8Array[] = [];
  for (let off = 0; off < data.length;) {
    const n = randInt(next, 0, max);
    out.push(data.subarray(off, off + n));
    off += n;
  }
  return out;
}

describe.each(FLAVORS)('streaming equals one-shot (%s kernels)', (flavor) => {
  const opts = { flavor };

  it.each(CHECKSUM_ALGORITHMS)(
    '%s: every split point of a 300-byte message, in two and three parts',
    (alg) => {
      const msg = randomBytes(300, 3);
      const whole = hex(checksum(alg, msg, opts));
      for (let i = 0; i <= msg.length; i++) {
        const h = createHasher(alg, opts).update(msg.subarray(0, i)).update(msg.subarray(i));
        expect(hex(h.digest()), `split at ${i}`).toBe(whole);
        const j = (i * 7) % (msg.length + 1);
        const [p, q] = i < j ? [i, j] : [j, i];
        const h3 = createHasher(alg, opts);
        h3.update(msg.subarray(0, p)).update(msg.subarray(p, q)).update(msg.subarray(q));
        expect(hex(h3.digest()), `split at ${p}, ${q}`).toBe(whole);
      }
    }
  );

  it.each(CHECKSUM_ALGORITHMS)(
    '%s: increasing and random chunk lengths, across input slices',
    (alg) => {
      for (const size of [1000, 70001, 300007]) {
        const data = randomBytes(size, size);
        const whole = hex(checksum(alg, data, opts));
        for (const start of [1, 13, 64]) {
          const h = createHasher(alg, opts);
          for (const c of increasingChunks(data, start)) h.update(c);
          expect(hex(h.digest()), `${size} bytes from chunk ${start}`).toBe(whole);
        }
        for (const max of [3, 200, 100000]) {
          const h = createHasher(alg, opts);
          for (const c of randomChunks(data, max, max + size)) h.update(c);
          expect(hex(h.digest()), `${size} bytes in chunks <= ${max}`).toBe(whole);
        }
      }
    }
  );

  it('interleaved hashers (A, B, A, B, ...) give the same digests as one at a time', () => {
    // Many streams of every algorithm share one slot per algorithm; each update may evict
    // another stream, so this checks the save/restore of every slot layout.
    const streams = CHECKSUM_ALGORITHMS.flatMap((alg, a) =>
      [0, 1, 2].map((k) => ({ alg, data: randomBytes(5000 + 977 * k + a, 50 + 3 * a + k) }))
    );
    const expected = streams.map((s) => hex(checksum(s.alg, s.data, opts)));
    const hashers = streams.map((s) => createHasher(s.alg, opts));
    const next = prng(99);
    const offsets = streams.map(() => 0);
    for (let round = 0; offsets.some((o, i) => o < streams[i]!.data.length); round++) {
      for (let i = 0; i < streams.length; i++) {
        const j = round % 2 ? streams.length - 1 - i : i; // alternate directions: A,B,C / C,B,A
        const n = randInt(next, 0, 700);
        hashers[j]!.update(streams[j]!.data.subarray(offsets[j]!, offsets[j]! + n));
        offsets[j]! += n;
      }
    }
    expect(hashers.map((h) => hex(h.digest()))).toEqual(expected);
  });

  it('one-shot calls and numeric CRCs between updates leave a stream intact', () => {
    for (const alg of CHECKSUM_ALGORITHMS) {
      const data = randomBytes(10000, 7);
      const h = createHasher(alg, opts).update(data.subarray(0, 3333));
      checksum(alg, randomBytes(777, 8), opts);
      crc32c(randomBytes(100, 9), 0, opts);
      h.update(data.subarray(3333));
      expect(hex(h.digest()), alg).toBe(hex(checksum(alg, data, opts)));
    }
  });

  it('reset() starts over, whether the hasher holds the slot or another one does', () => {
    for (const alg of CHECKSUM_ALGORITHMS) {
      const a = randomBytes(3000, 1);
      const b = randomBytes(2000, 2);
      const h = createHasher(alg, opts).update(a);
      h.reset().update(b); // reset while resident
      expect(hex(h.digest())).toBe(hex(checksum(alg, b, opts)));
      h.reset().update(a);
      const other = createHasher(alg, opts).update(b); // takes the slot
      h.reset(); // reset while evicted
      h.update(b);
      other.update(a);
      expect(hex(h.digest())).toBe(hex(checksum(alg, b, opts)));
      expect(hex(other.digest())).toBe(hex(checksum(alg, new Uint8Array([...b, ...a]), opts)));
    }
  });

  it('a hasher with no updates digests the empty input', () => {
    for (const alg of CHECKSUM_ALGORITHMS) {
      expect(hex(createHasher(alg, opts).digest())).toBe(
        hex(checksum(alg, new Uint8Array(0), opts))
      );
    }
  });

  it('the two flavors hold separate slots: streams on both interleave safely', () => {
    const other = FLAVORS.find((f) => f !== flavor) ?? flavor;
    const data = randomBytes(50000, 4);
    const algs: ChecksumAlgorithm[] = ['sha256', 'crc64nvme'];
    for (const alg of algs) {
      const h1 = createHasher(alg, opts);
      const h2 = createHasher(alg, { flavor: other });
      for (let off = 0; off < data.length; off += 4096) {
        h1.update(data.subarray(off, off + 4096));
        h2.update(data.subarray(off, off + 4096));
      }
      expect(hex(h1.digest())).toBe(hex(h2.digest()));
    }
  });
});
