/**
 * Property tests of the SIMD Reed-Solomon kernels against their scalar twin (assembly/gf256/
 * scalar.ts, a byte-at-a-time formulation sharing nothing with the blocked SIMD loops but the
 * nibble tables) and against the plain-TypeScript reference: random RS(k, m) with k in 1..20
 * and m in 1..6, shard lengths that straddle the kernels' 16- and 32-byte steps and the
 * 4 KiB cache block, and every erasure pattern of the small codes.
 */
import { describe, expect, it } from 'vitest';
import { createEncoder, type Shard } from '../../src/codec/reed-solomon.js';
import { availableFlavors, type Flavor } from '../../src/wasm/loader.js';
import { randomBytes, prng, pickDistinct, randInt, subsetsUpTo } from '../support/random.js';
import { referenceParity } from '../support/rs-reference.js';
import { expectBytes } from '../support/bytes.js';

const SIMD_FLAVORS = availableFlavors('gf256').filter((f) => f !== 'scalar');
/** Odd lengths of the brief, plus both sides of the kernel block (4096) and two blocks. */
const LENGTHS = [1, 15, 16, 17, 31, 33, 4095, 4096, 4097, 4112, 8208, 65537];
/** Random (k, m) codes tried per SIMD flavor; each runs every length. */
const RANDOM_CODES = 12;

function data(k: number, size: number, seed: number): Uint8Array[] {
  return Array.from({ length: k }, (_, i) => randomBytes(size, seed * 7919 + i + 1));
}

function encoded(k: number, m: number, size: number, seed: number, flavor: Flavor): Uint8Array[] {
  const shards: Shard[] = [...data(k, size, seed), ...Array<Shard>(m).fill(null)];
  createEncoder(k, m, { flavor }).encode(shards);
  return shards as Uint8Array[];
}

describe.each(SIMD_FLAVORS)('%s kernels against the scalar twin', (flavor) => {
  it(`encodes ${RANDOM_CODES} random codes (k 1..20, m 1..6) at every odd length like the scalar twin`, () => {
    const next = prng(0x5eed ^ flavor.length);
    for (let t = 0; t < RANDOM_CODES; t++) {
      const k = randInt(next, 1, 20);
      const m = randInt(next, 1, 6);
      for (const size of LENGTHS) {
        const simd = encoded(k, m, size, t * 100 + size, flavor);
        const scalar = encoded(k, m, size, t * 100 + size, 'scalar');
        for (let i = k; i < k + m; i++) expectBytes(simd[i], scalar[i]!, `RS(${k},${m}) size ${size} parity ${i}`);
        if (size <= 4097) {
          const ref = referenceParity(simd.slice(0, k), m);
          for (let i = 0; i < m; i++) expectBytes(simd[k + i], ref[i]!, `RS(${k},${m}) size ${size} reference ${i}`);
        }
      }
    }
  });

  it('reconstructs random erasures of random codes at every odd length, as the scalar twin does', () => {
    const next = prng(0xfeed ^ flavor.length);
    for (let t = 0; t < RANDOM_CODES; t++) {
      const k = randInt(next, 1, 20);
      const m = randInt(next, 1, 6);
      for (const size of LENGTHS) {
        const full = encoded(k, m, size, t * 31 + size, 'scalar');
        const lost = pickDistinct(next, k + m, randInt(next, 1, m));
        for (const f of [flavor, 'scalar'] as const) {
          const work: Shard[] = full.slice();
          for (const i of lost) work[i] = null;
          createEncoder(k, m, { flavor: f }).reconstruct(work);
          for (const i of lost) expectBytes(work[i], full[i]!, `${f} RS(${k},${m}) size ${size} lost ${lost}`);
        }
      }
    }
  });

  it('reconstructs every erasure pattern of RS(3,2), RS(4,2), RS(2,4) and RS(5,3)', () => {
    for (const [k, m] of [[3, 2], [4, 2], [2, 4], [5, 3]] as const) {
      for (const size of [17, 4097]) {
        const full = encoded(k, m, size, k * 10 + m, flavor);
        const rs = createEncoder(k, m, { flavor });
        for (const lost of subsetsUpTo(k + m, m)) {
          if (lost.length === 0) continue;
          const work: Shard[] = full.slice();
          for (const i of lost) work[i] = null;
          rs.reconstruct(work);
          for (const i of lost) expectBytes(work[i], full[i]!, `RS(${k},${m}) size ${size} lost ${lost}`);
          const dataOnly: Shard[] = full.slice();
          for (const i of lost) dataOnly[i] = null;
          rs.reconstructData(dataOnly);
          for (const i of lost) {
            if (i < k) expectBytes(dataOnly[i], full[i]!, `data-only RS(${k},${m}) lost ${lost}`);
            else expect(dataOnly[i]).toBeNull();
          }
        }
      }
    }
  });

  it('accumulates parity one data shard at a time (encodeIdx) exactly as encode does', () => {
    const next = prng(0xacc ^ flavor.length);
    for (let t = 0; t < 4; t++) {
      const k = randInt(next, 1, 20);
      const m = randInt(next, 1, 6);
      const size = LENGTHS[randInt(next, 0, LENGTHS.length - 1)]!;
      const full = encoded(k, m, size, t, 'scalar');
      const rs = createEncoder(k, m, { flavor });
      const parity = Array.from({ length: m }, () => new Uint8Array(size));
      for (let j = 0; j < k; j++) rs.encodeIdx(full[j]!, j, parity);
      for (let i = 0; i < m; i++) expectBytes(parity[i], full[k + i]!, `RS(${k},${m}) size ${size} parity ${i}`);
    }
  });
});
