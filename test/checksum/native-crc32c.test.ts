import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { crc32c } from '../../src/checksum/index.js';
import { acceleratedCrc32c, crc32cImplementation, installCrc32c } from '../../src/checksum/accelerator.js';
import { fastCrc32c, nativeCrc32cLibrary, nativeCrc32cUnavailable } from '../../src/checksum/native-crc32c.js';
import { encodePack } from '../../src/pack/writer.js';
import { decodePack, readEntryAt } from '../../src/pack/reader.js';
import { checksumKernel } from '../../src/wasm/checksum.js';
import { availableFlavors } from '../../src/wasm/loader.js';
import { prng, randInt, randomBytes } from '../support/random.js';

const FLAVORS = availableFlavors('checksum') as ('simd' | 'scalar')[];
const installed = acceleratedCrc32c();
/** The suite may run with the wasm kernels forced (the fallback's own run): then none is installed. */
const forcedWasm = process.env.STRATA_NATIVE_CRC32C === '0' || Boolean(process.env.STRATA_WASM_FLAVOR);
afterEach(() => installCrc32c(installed, installed ? 'native' : 'wasm'));

describe('the native CRC32C (aws-crt, else @node-rs/crc32)', () => {
  it('is installed where the package ships a binary (x64 and arm64 Linux), unless the wasm kernels are forced', () => {
    if (forcedWasm) {
      expect(nativeCrc32cUnavailable).toMatch(/STRATA_NATIVE_CRC32C=0|STRATA_WASM_FLAVOR/);
      expect(crc32cImplementation()).toBe('wasm');
    } else if (process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch)) {
      expect(nativeCrc32cUnavailable).toBeUndefined();
      expect(crc32cImplementation()).toBe('native');
      expect(acceleratedCrc32c()).toBe(fastCrc32c);
      // aws-crt ships bindings for both architectures, glibc and musl: the faster one is taken.
      expect(nativeCrc32cLibrary).toBe('aws-crt');
    }
  });

  it.each(FLAVORS)('agrees with the %s kernel: random lengths, unaligned views, chained calls', (flavor) => {
    const wasm = checksumKernel(flavor);
    const next = prng(7);
    for (let t = 0; t < 300; t++) {
      const n = t < 40 ? t : randInt(next, 0, t % 10 === 0 ? 300_000 : 20_000);
      const off = randInt(next, 0, 16);
      const view = randomBytes(n + 16, t + 1).subarray(off, off + n);
      const cut = randInt(next, 0, n);
      const expected = wasm.crc32c(view, 0);
      expect(fastCrc32c(view, 0)).toBe(expected);
      expect(fastCrc32c(view.subarray(cut), fastCrc32c(view.subarray(0, cut), 0))).toBe(expected);
      expect(crc32c(view)).toBe(expected);
    }
  });

  it('reads views of shared and wasm memory in place', () => {
    const shared = new Uint8Array(new SharedArrayBuffer(70_000));
    shared.set(randomBytes(70_000, 3));
    expect(fastCrc32c(shared.subarray(5), 0)).toBe(checksumKernel().crc32c(shared.subarray(5), 0));
    const memory = new Uint8Array(new WebAssembly.Memory({ initial: 2 }).buffer);
    memory.set(randomBytes(100_000, 4));
    expect(fastCrc32c(memory.subarray(9, 99_999), 0)).toBe(checksumKernel().crc32c(memory.subarray(9, 99_999), 0));
  });

  it('is what flavorless callers get; a named flavor always runs its wasm kernel', () => {
    const data = randomBytes(4096, 5);
    const right = checksumKernel().crc32c(data, 0);
    installCrc32c(() => 42, 'fake');
    expect(crc32cImplementation()).toBe('fake');
    expect(crc32c(data)).toBe(42);
    expect(crc32c(data, 0, { flavor: FLAVORS[0] })).toBe(right);
    installCrc32c(undefined);
    expect(crc32cImplementation()).toBe('wasm');
    expect(crc32c(data)).toBe(right);
  });

  it('checks pack entries: a wrong installed CRC fails every read closed, a named flavor still reads', () => {
    const bodies = [randomBytes(1000, 6), randomBytes(70_000, 7)];
    const pack = encodePack(bodies);
    const blob = new Uint8Array(Buffer.concat(pack.chunks));
    expect(decodePack(blob).entries.map((e) => e.length)).toEqual([1000, 70_000]);
    installCrc32c((d, c) => (fastCrc32c(d, c) ^ 1) >>> 0, 'broken');
    expect(() => decodePack(blob)).toThrow(/CRC|mismatch/i);
    expect(() => readEntryAt(blob, pack.entries[1]!.offset)).toThrow();
    expect(readEntryAt(blob, pack.entries[1]!.offset, FLAVORS[0])).toEqual(bodies[1]);
  });

  it('STRATA_NATIVE_CRC32C=0 or a forced STRATA_WASM_FLAVOR keeps the wasm kernel, with the same results', () => {
    const url = new URL('../../dist/src/checksum/native.js', import.meta.url);
    const script = `
      const n = await import(${JSON.stringify(url.href)});
      const a = await import(${JSON.stringify(new URL('../../dist/src/checksum/accelerator.js', import.meta.url).href)});
      const c = await import(${JSON.stringify(new URL('../../dist/src/checksum/crc.js', import.meta.url).href)});
      const l = await import(${JSON.stringify(new URL('../../dist/src/checksum/native-crc32c.js', import.meta.url).href)});
      const h = n.createFastHasher('crc32c').update(new TextEncoder().encode('123456789')).digest();
      const big = new Uint8Array(1 << 20).map((_, i) => (i * 2654435761) >>> 24);
      console.log(JSON.stringify({ fast: n.FAST_IMPLEMENTATIONS.crc32c, impl: a.crc32cImplementation(), library: l.nativeCrc32cLibrary ?? null, crc: c.crc32c(new TextEncoder().encode('123456789')), digest: Buffer.from(h).toString('hex'), big: c.crc32c(big) }));`;
    const run = (env: Record<string, string>) =>
      JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env }, cwd: fileURLToPath(new URL('../..', import.meta.url)) }).toString());
    const off = run({ STRATA_NATIVE_CRC32C: '0' });
    expect(off).toMatchObject({ fast: 'wasm', impl: 'wasm', library: null, crc: 0xe3069283, digest: 'e3069283' });
    expect(run({ STRATA_NATIVE_CRC32C: '', STRATA_WASM_FLAVOR: 'scalar' })).toMatchObject({ fast: 'wasm', impl: 'wasm', library: null, crc: 0xe3069283, digest: 'e3069283', big: off.big });
    if (forcedWasm) return;
    const on = run({});
    expect(on).toMatchObject({ crc: 0xe3069283, digest: 'e3069283', big: off.big, library: nativeCrc32cLibrary ?? null });
    expect(on.impl).toBe(nativeCrc32cUnavailable === undefined ? 'native' : 'wasm');
    // STRATA_NATIVE_CRC32C=node-rs skips aws-crt: the same results from the other library.
    if (process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch))
      expect(run({ STRATA_NATIVE_CRC32C: 'node-rs' })).toMatchObject({ impl: 'native', library: '@node-rs/crc32', crc: 0xe3069283, digest: 'e3069283', big: off.big });
  });
});
