/**
 * Writes of known length build each stripe in its framed layout (framed-stripe.ts):
 * sealFramed over blocks already in place gives exactly frameCell's bytes and fold; a body
 * shorter or longer than its contentLength fails with LengthMismatch and leaves no fragment;
 * sizes whose last stripe has whole cells of padding round-trip byte-exact, cold too.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/provider/provider.js';
import { frameCell, sealFramed } from '../../src/provider/erasure/fragment.js';
import { BLOCK_BYTES, CRC_BYTES, framedLength } from '../../src/provider/erasure/geometry.js';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import { bytes, chunked, readAll } from './helpers.js';
import { cleanupRigs, KiB, makeRig } from './erasure-helpers.js';

afterAll(cleanupRigs);

describe('framed stripes', () => {
  it('sealFramed over placed blocks equals frameCell, bytes and fold', () => {
    for (const len of [1, BLOCK_BYTES - 1, BLOCK_BYTES, BLOCK_BYTES + 1, 3 * BLOCK_BYTES + 77, 256 * KiB]) {
      const cell = bytes(len, len);
      const viaFrame = new Uint8Array(framedLength(len));
      const fold = frameCell(cell, viaFrame, 1_700_000_000_123_456, 3, 17, 99);
      const placed = new Uint8Array(framedLength(len)).fill(0xee);
      for (let off = 0, o = 0; off < len; off += BLOCK_BYTES) {
        const block = cell.subarray(off, Math.min(len, off + BLOCK_BYTES));
        placed.set(block, o);
        o += block.length + CRC_BYTES;
      }
      expect(sealFramed(placed, 1_700_000_000_123_456, 3, 17, 99), `len ${len}`).toBe(fold);
      expect(Buffer.from(placed).equals(Buffer.from(viaFrame)), `len ${len}`).toBe(true);
    }
  });

  it('a body shorter or longer than contentLength fails with LengthMismatch and leaves nothing', async () => {
    const rig = await makeRig({ k: 4, m: 2, cellSize: 64 * KiB, stripeThreshold: 64 * KiB });
    const p = rig.provider;
    const data = bytes(600 * KiB, 3);
    for (const [label, body, claimed] of [
      ['short', chunked(data.subarray(0, 500 * KiB), 70_000), 600 * KiB],
      ['long', chunked(data, 70_000), 500 * KiB],
    ] as const) {
      const err = await p.put(`x-${label}`, body, { contentLength: claimed }).catch((e: unknown) => e);
      expect(err, label).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).code, label).toBe('LengthMismatch');
      for (const d of rig.domains) {
        const left = (await d.provider.list({})).items.filter((i) => i.key.startsWith(`x-${label}!`));
        expect(left, `${label} on ${d.id}`).toEqual([]);
      }
    }
    await p.close();
  });

  it('round-trips sizes whose last stripe is short or mostly padding, warm and cold', async () => {
    const rig = await makeRig({ k: 4, m: 2, cellSize: 64 * KiB, stripeThreshold: 64 * KiB });
    const stripe = 4 * 64 * KiB;
    const sizes = [stripe, stripe + 1, 2 * stripe + 3, 3 * stripe - 1, stripe + 3 * 64 * KiB + 5, 5 * stripe + BLOCK_BYTES];
    for (const size of sizes) {
      const data = bytes(size, size);
      await rig.provider.put(`s${size}`, chunked(data, 33_333, size), { contentLength: size });
      expect((await readAll(rig.provider, `s${size}`)).equals(data), `size ${size}`).toBe(true);
    }
    const cold = await createErasureProvider({
      config: { k: 4, m: 2, domains: [], policy: {}, cellSize: 64 * KiB, stripeThreshold: 64 * KiB, degradedWrites: false, domainTimeoutMs: 5_000 },
      domains: rig.domains,
    });
    for (const size of sizes) expect((await readAll(cold, `s${size}`)).equals(bytes(size, size)), `cold ${size}`).toBe(true);
    const check = await cold.checkBlob(`s${sizes[3]}`);
    expect(check.fragments.every((f) => f.state === 'ok')).toBe(true);
    await cold.close();
  });
});
