/**
 * src/wasm/relaxed-simd.ts: which V8 versions get the flag, the opt-out, that a process which
 * imports it first runs the relaxed Reed-Solomon build in its worker threads too, and that the
 * relaxed build computes the same bytes as the scalar twin.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { enableRelaxedSimd, needsRelaxedSimdFlag } from '../../src/wasm/relaxed-simd.js';

const dist = (p: string) => fileURLToPath(new URL(`../../dist/src/${p}`, import.meta.url));
const NEEDS_FLAG = needsRelaxedSimdFlag(process.versions.v8);

/** Runs `body` (an ES module) in a fresh node with `env`; returns its last stdout line as JSON. */
function child(body: string, env: NodeJS.ProcessEnv = {}): unknown {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', body], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(out.trim().split('\n').pop()!);
}

const FLAVORS_HERE_AND_IN_A_WORKER = `
  const { relaxedSimdState } = await import(${JSON.stringify(dist('wasm/relaxed-simd.js'))});
  const { availableFlavors, defaultFlavor } = await import(${JSON.stringify(dist('wasm/loader.js'))});
  const { Worker } = await import('node:worker_threads');
  const inWorker = await new Promise((resolve, reject) => {
    const w = new Worker(\`Promise.all([import('node:worker_threads'), import(\${JSON.stringify(${JSON.stringify(dist('wasm/loader.js'))})})]).then(([wt, l]) => wt.parentPort.postMessage(l.availableFlavors('gf256')))\`, { eval: true });
    w.once('message', (m) => { resolve(m); w.terminate(); });
    w.once('error', reject);
  });
  console.log(JSON.stringify({ state: relaxedSimdState, main: availableFlavors('gf256'), worker: inWorker, flavor: defaultFlavor('gf256') }));
`;

describe('relaxed SIMD for the strata command', () => {
  it('sets the flag only for a V8 that has relaxed SIMD behind it (before 11.4)', () => {
    expect(needsRelaxedSimdFlag('11.3.244.8-node.38')).toBe(true);
    expect(needsRelaxedSimdFlag('10.2.154.26-node.26')).toBe(true);
    expect(needsRelaxedSimdFlag('11.4.183.1')).toBe(false);
    expect(needsRelaxedSimdFlag('12.4.254.21-node.33')).toBe(false);
    expect(needsRelaxedSimdFlag('13.6.233.10')).toBe(false);
    for (const bad of ['', 'x', '11', '11.x.1', 'eleven.3.1']) expect(needsRelaxedSimdFlag(bad)).toBe(false);
    expect(enableRelaxedSimd({ STRATA_RELAXED_SIMD: '0' }, '11.3.244.8')).toBe('off');
    expect(enableRelaxedSimd({}, '12.4.254.21')).toBe('default');
    // Bun reports a V8 version but runs JavaScriptCore: never touches the flags.
    expect(enableRelaxedSimd({}, '11.3.244.8', { bun: '1.2.0' })).toBe('unavailable');
  });

  it('makes the relaxed build the default, in worker threads too; STRATA_RELAXED_SIMD=0 leaves the flag unset', () => {
    const on = child(FLAVORS_HERE_AND_IN_A_WORKER) as { state: string; main: string[]; worker: string[]; flavor: string };
    expect(on.state).toBe(NEEDS_FLAG ? 'flag' : 'default');
    expect(on.main).toEqual(['relaxed', 'simd', 'scalar']);
    expect(on.worker).toEqual(['relaxed', 'simd', 'scalar']);
    expect(on.flavor).toBe('relaxed');
    const off = child(FLAVORS_HERE_AND_IN_A_WORKER, { STRATA_RELAXED_SIMD: '0' }) as { state: string; main: string[]; flavor: string };
    expect(off.state).toBe('off');
    // Without the flag a Node 20 runs plain SIMD; a later V8 has relaxed SIMD on by default.
    expect(off.flavor).toBe(NEEDS_FLAG ? 'simd' : 'relaxed');
    const forced = child(FLAVORS_HERE_AND_IN_A_WORKER, { STRATA_WASM_FLAVOR: 'simd' }) as { flavor: string };
    expect(forced.flavor).toBe('simd');
  });

  it('computes what the scalar build computes: encode and every reconstruction, odd lengths and offsets', () => {
    const run = child(`
      await import(${JSON.stringify(dist('wasm/relaxed-simd.js'))});
      const { createEncoder } = await import(${JSON.stringify(dist('codec/reed-solomon.js'))});
      // xorshift32 (integer arithmetic only: a float LCG loses its low bits and repeats zeros).
      let seed = 0x9e3779b9;
      const rnd = (n) => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed % n; };
      const cases = [];
      const lostSeen = new Set();
      const nibbles = new Set();
      for (const [k, m] of [[1, 1], [2, 1], [4, 2], [6, 3], [10, 4], [12, 4], [20, 6]]) {
        for (const len of [1, 15, 16, 17, 31, 33, 4095, 65536 + 7, 300000 + 3]) {
          const off = rnd(16);
          const data = Array.from({ length: k }, () => { const b = new Uint8Array(len + off); for (let i = 0; i < b.length; i++) b[i] = rnd(256); return b.subarray(off); });
          const out = {};
          const gone = new Set(); while (gone.size < m) gone.add(rnd(k + m));
          for (const i of gone) lostSeen.add(i);
          for (const d of data) for (const b of d) { nibbles.add(b & 15); nibbles.add(b >> 4); }
          for (const flavor of ['relaxed', 'scalar']) {
            const rs = createEncoder(k, m, { flavor });
            const shards = [...data, ...Array(m).fill(null)];
            rs.encode(shards);
            const lost = shards.slice();
            for (const i of gone) lost[i] = null;
            rs.reconstruct(lost);
            out[flavor] = { parity: shards.slice(k).map((p) => Buffer.from(p).toString('base64')), rebuilt: lost.map((s) => Buffer.from(s).toString('base64')) };
          }
          cases.push({ k, m, len, same: JSON.stringify(out.relaxed.parity) === JSON.stringify(out.scalar.parity), full: out.relaxed.rebuilt.every((s, i) => i >= k || s === Buffer.from(data[i]).toString('base64')) && JSON.stringify(out.relaxed.rebuilt.slice(k)) === JSON.stringify(out.relaxed.parity) });
        }
      }
      console.log(JSON.stringify({ cases, lost: lostSeen.size, nibbles: nibbles.size }));
    `) as { cases: { k: number; m: number; len: number; same: boolean; full: boolean }[]; lost: number; nibbles: number };
    // The inputs are varied: every nibble value (each table entry is looked up) and every shard index lost somewhere.
    expect(run.nibbles).toBe(16);
    expect(run.lost).toBe(26);
    const got = run.cases;
    expect(got.length).toBe(63);
    for (const c of got) {
      expect(c.same, `RS(${c.k},${c.m}) ${c.len} B: relaxed parity = scalar parity`).toBe(true);
      expect(c.full, `RS(${c.k},${c.m}) ${c.len} B: relaxed rebuilds every lost shard`).toBe(true);
    }
  });
});
