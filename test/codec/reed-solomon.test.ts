import { describe, expect, it } from 'vitest';
import { createEncoder, type Shard } from '../../src/codec/reed-solomon.js';
import { availableFlavors } from '../../src/wasm/loader.js';
import { gfInv, gfMul } from '../../src/codec/gf.js';
import { randomBytes, prng, pickDistinct, subsetsUpTo, randInt } from '../support/random.js';
import { referenceParity, slowMul, slowInv } from '../support/rs-reference.js';
import { expectBytes } from '../support/bytes.js';

const FLAVORS = availableFlavors('gf256');

function dataShards(k: number, size: number, seed: number): Uint8Array[] {
  return Array.from({ length: k }, (_, i) => randomBytes(size, seed * 1000 + i + 1));
}

function encodeFresh(k: number, m: number, size: number, seed: number, flavor: string): Uint8Array[] {
  const rs = createEncoder(k, m, { flavor: flavor as never });
  const shards: Shard[] = [...dataShards(k, size, seed), ...Array(m).fill(null)];
  rs.encode(shards);
  return shards as Uint8Array[];
}

describe('GF(2^8) tables', () => {
  it('agree with bitwise multiplication for every pair and invert every non-zero element', () => {
    for (let a = 0; a < 256; a++) {
      for (let b = 0; b < 256; b++) expect(gfMul(a, b)).toBe(slowMul(a, b));
      if (a) expect(gfInv(a)).toBe(slowInv(a));
    }
  });
});

it('builds the scalar flavor and a SIMD flavor on this runtime', () => {
  expect(FLAVORS).toContain('scalar');
  expect(FLAVORS).toContain('simd');
});

/** The plain-TS reference parity of each (k, m, size), computed once for every flavor. */
const referenceCache = new Map<string, { data: Uint8Array[]; parity: Uint8Array[] }>();
function reference(k: number, m: number, size: number): { data: Uint8Array[]; parity: Uint8Array[] } {
  const key = `${k},${m},${size}`;
  let r = referenceCache.get(key);
  if (!r) {
    const data = dataShards(k, size, size + k);
    r = { data, parity: referenceParity(data, m) };
    referenceCache.set(key, r);
  }
  return r;
}

describe.each(FLAVORS)('Reed-Solomon (%s kernels)', (flavor) => {
  it('matches the plain-TS reference for every shard size 1..64 and odd large sizes', () => {
    const sizes = [...Array.from({ length: 64 }, (_, i) => i + 1), 1000, 4097, 10001, 65537, 100003];
    for (const [k, m] of [[1, 1], [3, 2], [5, 5], [10, 4], [17, 7]] as const) {
      for (const size of sizes) {
        if (size > 10001 && k > 5) continue;
        const { data, parity: want } = reference(k, m, size);
        const shards: Shard[] = [...data, ...Array(m).fill(null)];
        createEncoder(k, m, { flavor }).encode(shards);
        for (let i = 0; i < m; i++) expectBytes(shards[k + i], want[i]!, `k=${k} m=${m} size=${size} parity ${i}`);
      }
    }
  });

  it('gives byte-identical parity to every other flavor on a 1,000,055-byte shard set', () => {
    const shards = encodeFresh(6, 3, 1_000_055, 7, flavor);
    for (const other of FLAVORS) {
      const theirs = encodeFresh(6, 3, 1_000_055, 7, other);
      for (let i = 6; i < 9; i++) expectBytes(theirs[i], shards[i]!, `${other} parity ${i}`);
    }
  });

  it('reconstructs every erasure pattern of up to m shards for all k + m <= 8', () => {
    for (let n = 1; n <= 8; n++) {
      for (let k = 1; k <= n; k++) {
        const m = n - k;
        const rs = createEncoder(k, m, { flavor });
        const full = encodeFresh(k, m, 37, n * 10 + k, flavor);
        for (const lost of subsetsUpTo(n, m)) {
          const shards: Shard[] = full.slice();
          for (const i of lost) shards[i] = i % 2 ? null : new Uint8Array(0);
          rs.reconstruct(shards);
          expect(shards, `k=${k} m=${m} lost=${lost}`).toEqual(full);
          const dataOnly: Shard[] = full.slice();
          for (const i of lost) dataOnly[i] = undefined;
          rs.reconstructData(dataOnly);
          for (let i = 0; i < n; i++) {
            if (i < k || !lost.includes(i)) expect(dataOnly[i]).toEqual(full[i]);
            else expect(dataOnly[i]).toBeUndefined();
          }
        }
      }
    }
  });

  it('reconstructs random erasure patterns for large codes up to (200, 56)', () => {
    const next = prng(200);
    for (const [k, m] of [[64, 16], [100, 28], [128, 128], [200, 56]] as const) {
      const rs = createEncoder(k, m, { flavor });
      const full = encodeFresh(k, m, 97, k + m, flavor);
      for (let trial = 0; trial < 6; trial++) {
        const lost = pickDistinct(next, k + m, trial === 0 ? m : randInt(next, 1, m));
        const shards: Shard[] = full.slice();
        for (const i of lost) shards[i] = null;
        rs.reconstruct(shards);
        expect(shards, `k=${k} m=${m} lost=${lost}`).toEqual(full);
      }
    }
  });

  it('detects a flipped byte with verify, and reconstructs once the bad shard is dropped', () => {
    const [k, m] = [10, 4];
    const rs = createEncoder(k, m, { flavor });
    const full = encodeFresh(k, m, 4096 + 13, 3, flavor);
    expect(rs.verify(full)).toBe(true);
    for (const victim of [0, 5, 9, 10, 13]) {
      const shards = full.map((s) => s.slice());
      shards[victim]![1234]! ^= 0x40;
      expect(rs.verify(shards), `flip in shard ${victim}`).toBe(false);
      const repaired: Shard[] = shards.slice();
      repaired[victim] = null;
      rs.reconstruct(repaired);
      expect(repaired).toEqual(full);
      expect(rs.verify(repaired as Uint8Array[])).toBe(true);
    }
  });

  it('builds parity one data shard at a time with encodeIdx', () => {
    const [k, m, size] = [7, 3, 5000];
    const full = encodeFresh(k, m, size, 11, flavor);
    const parity = Array.from({ length: m }, () => new Uint8Array(size));
    const rs = createEncoder(k, m, { flavor });
    for (const j of [3, 0, 6, 1, 5, 2, 4]) rs.encodeIdx(full[j]!, j, parity);
    expect(parity).toEqual(full.slice(k));
  });

  it('splits and joins any length', () => {
    const rs = createEncoder(4, 2, { flavor });
    for (const len of [1, 3, 4, 5, 1023, 65536, 100003]) {
      const data = randomBytes(len, len);
      const shards = rs.split(data);
      expect(shards).toHaveLength(6);
      expect(new Set(shards.map((s) => s.length)).size).toBe(1);
      rs.encode(shards);
      const lost: Shard[] = shards.slice();
      lost[0] = null;
      lost[3] = null;
      rs.reconstruct(lost);
      expect(rs.join(lost, len)).toEqual(data);
    }
  });

  it('caches decode matrices per erasure pattern', () => {
    const rs = createEncoder(6, 3, { flavor });
    const full = encodeFresh(6, 3, 100, 1, flavor);
    const run = (lost: number[]) => {
      const shards: Shard[] = full.slice();
      for (const i of lost) shards[i] = null;
      rs.reconstruct(shards);
      expect(shards).toEqual(full);
    };
    run([0, 1]);
    run([0, 1]);
    run([2, 7]);
    run([0, 1]);
    expect(rs.decodeCacheStats).toEqual({ size: 2, hits: 2, misses: 2 });
  });

  it('handles m = 0 (no parity) and k = 1 (replication)', () => {
    const rs0 = createEncoder(3, 0, { flavor });
    const shards = dataShards(3, 10, 1);
    rs0.encode(shards);
    expect(rs0.verify(shards)).toBe(true);
    const rep = encodeFresh(1, 3, 50, 2, flavor);
    const rs1 = createEncoder(1, 3, { flavor });
    for (let keep = 0; keep < 4; keep++) {
      const shards: Shard[] = [null, null, null, null];
      shards[keep] = rep[keep];
      rs1.reconstruct(shards);
      expect(shards, `from shard ${keep} alone`).toEqual(rep);
    }
  });
});

describe('bad input raises typed errors with stable codes', () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return (e as { code?: string }).code;
    }
    return 'no error';
  };
  it('rejects impossible shapes', () => {
    expect(code(() => createEncoder(0, 2))).toBe('ERR_INVALID_SHARD_NUMBER');
    expect(code(() => createEncoder(2, -1))).toBe('ERR_INVALID_SHARD_NUMBER');
    expect(code(() => createEncoder(1.5, 1))).toBe('ERR_INVALID_SHARD_NUMBER');
    expect(code(() => createEncoder(200, 57))).toBe('ERR_MAX_SHARD_NUMBER');
    expect(code(() => createEncoder(128, 128))).toBe('no error');
  });
  it('rejects wrong shard counts, sizes and types without writing output', () => {
    const rs = createEncoder(4, 2);
    const ok = dataShards(4, 64, 1);
    expect(code(() => rs.encode(ok))).toBe('ERR_SHARD_COUNT');
    expect(code(() => rs.encode([...ok, null, null, null]))).toBe('ERR_SHARD_COUNT');
    expect(code(() => rs.encode([...ok.slice(0, 3), new Uint8Array(63), null, null]))).toBe('ERR_SHARD_SIZE');
    expect(code(() => rs.encode([...ok.slice(0, 3), [1, 2] as never, null, null]))).toBe('ERR_SHARD_SIZE');
    expect(code(() => rs.encode([null, null, null, null, null, null]))).toBe('ERR_SHARD_NO_DATA');
    expect(code(() => rs.encode([...ok.slice(0, 3), null, null, null]))).toBe('ERR_TOO_FEW_SHARDS');
    const parity = [new Uint8Array(64).fill(7), new Uint8Array(65)];
    expect(code(() => rs.encode([...ok, ...parity]))).toBe('ERR_SHARD_SIZE');
    expect(parity[0]).toEqual(new Uint8Array(64).fill(7));
    expect(code(() => rs.verify([...ok, null, null]))).toBe('ERR_SHARD_SIZE');
  });
  it('refuses to reconstruct from fewer than k shards and leaves the slots missing', () => {
    const rs = createEncoder(4, 2);
    const full = encodeFresh(4, 2, 32, 1, 'simd');
    const shards: Shard[] = full.slice();
    shards[0] = shards[2] = shards[5] = null;
    expect(code(() => rs.reconstruct(shards))).toBe('ERR_TOO_FEW_SHARDS');
    expect(shards[0]).toBeNull();
    expect(code(() => rs.reconstruct(Array(6).fill(null)))).toBe('ERR_SHARD_NO_DATA');
  });
  it('rejects bad encodeIdx and join arguments', () => {
    const rs = createEncoder(4, 2);
    const p = [new Uint8Array(8), new Uint8Array(8)];
    expect(code(() => rs.encodeIdx(new Uint8Array(8), 4, p))).toBe('ERR_INVALID_INDEX');
    expect(code(() => rs.encodeIdx(new Uint8Array(8), 0, [p[0]!]))).toBe('ERR_SHARD_COUNT');
    expect(code(() => rs.encodeIdx(new Uint8Array(9), 0, p))).toBe('ERR_SHARD_SIZE');
    expect(code(() => rs.join(dataShards(4, 8, 1), 33))).toBe('ERR_SHORT_DATA');
    expect(code(() => rs.split(new Uint8Array(0)))).toBe('ERR_SHORT_DATA');
  });
});
