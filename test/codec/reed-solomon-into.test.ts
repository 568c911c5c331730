/**
 * reconstruct / reconstructData with caller buffers (`options.into`): the rebuilt shards land
 * in the given arrays, and unusable buffers (wrong size, wrong slot count, memory shared with
 * a present shard or another buffer) are refused before anything is written.
 */
import { describe, expect, it } from 'vitest';
import { createEncoder, type Shard } from '../../src/codec/reed-solomon.js';
import { availableFlavors } from '../../src/wasm/loader.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';

const K = 4;
const M = 3;
const SIZE = 4097;

function full(flavor: 'simd' | 'scalar' | 'relaxed'): Uint8Array[] {
  const shards: Shard[] = [...Array.from({ length: K }, (_, i) => randomBytes(SIZE, 77 + i)), null, null, null];
  createEncoder(K, M, { flavor }).encode(shards);
  return shards as Uint8Array[];
}

function codeOf(f: () => void): string | undefined {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe.each(availableFlavors('gf256'))('reconstruct into caller buffers (%s)', (flavor) => {
  it('rebuilds into the given arrays, allocates for slots without one, and overwrites stale bytes', () => {
    const ref = full(flavor);
    const rs = createEncoder(K, M, { flavor });
    const work: Shard[] = ref.slice();
    work[0] = null;
    work[2] = null;
    work[5] = null;
    const into: Shard[] = Array(K + M).fill(null);
    into[0] = new Uint8Array(SIZE).fill(0xee);
    into[5] = new Uint8Array(SIZE).fill(0x11);
    rs.reconstruct(work, { into });
    expect(work[0]).toBe(into[0]);
    expect(work[5]).toBe(into[5]);
    expect(work[2]).not.toBe(ref[2]);
    for (const i of [0, 2, 5]) expectBytes(work[i], ref[i]!, `slot ${i}`);
  });

  it('reconstructData fills only data slots; the same buffers serve again and again', () => {
    const ref = full(flavor);
    const rs = createEncoder(K, M, { flavor });
    const buf = new ArrayBuffer(2 * SIZE);
    const into: Shard[] = Array(K + M).fill(null);
    into[1] = new Uint8Array(buf, 0, SIZE);
    into[3] = new Uint8Array(buf, SIZE, SIZE);
    for (let round = 0; round < 3; round++) {
      const work: Shard[] = ref.slice();
      work[1] = null;
      work[3] = null;
      work[6] = null;
      rs.reconstructData(work, { into });
      expect(work[1]).toBe(into[1]);
      expectBytes(work[1], ref[1]!, 'slot 1');
      expectBytes(work[3], ref[3]!, 'slot 3');
      expect(work[6]).toBeNull();
    }
  });

  it('refuses unusable buffers before writing anything', () => {
    const ref = full(flavor);
    const rs = createEncoder(K, M, { flavor });
    const attempt = (into: Shard[] | unknown): { code: string | undefined; work: Shard[] } => {
      const work: Shard[] = ref.slice();
      work[0] = null;
      work[1] = null;
      const code = codeOf(() => rs.reconstruct(work, { into: into as Shard[] }));
      return { code, work };
    };
    const slots = (a: Shard, b: Shard): Shard[] => [a, b, null, null, null, null, null];
    const good = new Uint8Array(SIZE).fill(0x5a);
    const cases: [string, unknown, string][] = [
      ['too short', slots(good, new Uint8Array(SIZE - 1)), 'ERR_SHARD_SIZE'],
      ['too long', slots(good, new Uint8Array(SIZE + 1)), 'ERR_SHARD_SIZE'],
      ['not bytes', slots(good, new Uint16Array(SIZE) as unknown as Uint8Array), 'ERR_SHARD_SIZE'],
      ['same buffer twice', slots(good, good), 'ERR_SHARD_SIZE'],
      ['overlapping views', (() => {
        const b = new Uint8Array(2 * SIZE);
        return slots(b.subarray(0, SIZE), b.subarray(SIZE - 1, 2 * SIZE - 1));
      })(), 'ERR_SHARD_SIZE'],
      ['a present shard', slots(good, ref[2]!), 'ERR_SHARD_SIZE'],
      ['inside a present shard buffer', (() => {
        const host = new Uint8Array(3 * SIZE);
        host.set(ref[4]!, SIZE);
        const r2 = ref.slice();
        r2[4] = host.subarray(SIZE, 2 * SIZE);
        const work: Shard[] = r2.slice();
        work[0] = null;
        work[1] = null;
        const code = codeOf(() => rs.reconstruct(work, { into: slots(good, host.subarray(SIZE + 5, 2 * SIZE + 5)) }));
        expect(work[0]).toBeNull();
        return code;
      })(), 'ERR_SHARD_SIZE'],
      ['wrong slot count', [good, null], 'ERR_SHARD_COUNT'],
      ['not an array', 'nope', 'ERR_SHARD_COUNT'],
    ];
    for (const [label, into, code] of cases) {
      if (typeof into === 'string' && into.startsWith('ERR_')) {
        expect(into, label).toBe(code);
        continue;
      }
      const r = attempt(into);
      expect(r.code, label).toBe(code);
      expect(r.work[0], label).toBeNull();
      expect(r.work[1], label).toBeNull();
      expect(good.every((b) => b === 0x5a), label).toBe(true);
    }
  });
});
