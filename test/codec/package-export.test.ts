/**
 * The codec is importable as a library: plain Node (no TypeScript loader) resolves
 * `strata-s3/codec` through package.json `exports` to built JavaScript, and the browser bundle
 * runs the relaxed-SIMD kernels when the runtime accepts them (Node only behind a flag).
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEncoder } from '../../src/codec/reed-solomon.js';
import { checksum } from '../../src/checksum/index.js';
import { needsRelaxedSimdFlag, RELAXED_SIMD_FLAG } from '../../src/wasm/relaxed-simd.js';

const NEEDS_FLAG = needsRelaxedSimdFlag(process.versions.v8);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../../dist/browser/codec.js', import.meta.url));

const SCRIPT = (from: string) => `
import { createEncoder, checksum, encodePack, concatPack, decodePack, availableFlavors } from '${from}';
const data = new Uint8Array(100000).map((_, i) => (i * 7) & 255);
const rs = createEncoder(6, 3);
const shards = rs.split(data);
rs.encode(shards);
const pack = decodePack(concatPack(encodePack([data.subarray(0, 100)])));
console.log(JSON.stringify({
  flavors: availableFlavors('gf256'),
  flavor: rs.flavor,
  parity: shards.slice(6).map((s) => Buffer.from(s).toString('hex').slice(0, 64)),
  crc64: Buffer.from(checksum('crc64nvme', data)).toString('hex'),
  packed: pack.entries[0].body.length,
}));
`;

function expected() {
  const data = new Uint8Array(100000).map((_, i) => (i * 7) & 255);
  const rs = createEncoder(6, 3);
  const shards = rs.split(data);
  rs.encode(shards);
  return {
    parity: shards.slice(6).map((s) => Buffer.from(s).toString('hex').slice(0, 64)),
    crc64: Buffer.from(checksum('crc64nvme', data)).toString('hex'),
  };
}

describe('strata-s3/codec as a package', () => {
  it('resolves through package.json exports in plain Node', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT('strata-s3/codec')], { cwd: ROOT, encoding: 'utf8' });
    const got = JSON.parse(out);
    // A library does not turn relaxed SIMD on: plain SIMD where the V8 keeps it behind a flag
    // (Node 20), relaxed where it is on by default.
    expect(got.flavor).toBe(NEEDS_FLAG ? 'simd' : 'relaxed');
    expect(got).toMatchObject({ ...expected(), packed: 100 });
  });

  it('runs the relaxed-SIMD kernels where the runtime validates them, with identical output', () => {
    // The flag only where this V8 has one (a later node refuses it as a bad option).
    const out = execFileSync(process.execPath, [...(NEEDS_FLAG ? [RELAXED_SIMD_FLAG] : []), '--input-type=module', '-e', SCRIPT(BUNDLE)], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const got = JSON.parse(out);
    expect(got.flavors).toEqual(['relaxed', 'simd', 'scalar']);
    expect(got.flavor).toBe('relaxed');
    expect(got).toMatchObject({ ...expected(), packed: 100 });
  });
});
