/**
 * Reused memory on the erasure write path: framed stripe buffers go back to the pool only once
 * every child put said it wrote its cell (PutOptions.released), and the body's chunks are
 * reported released only once copied out. Each test scribbles over or holds memory the way a
 * reuse bug would expose, then reads every blob back byte-exact.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { BlobBody, Provider, PutOptions } from '../../src/provider/provider.js';
import { StripeBuffer, takeStripeBuffer, releaseCell } from '../../src/provider/erasure/stripe-buffers.js';
import { bytes, chunked, readAll } from './helpers.js';
import { cleanupRigs, KiB, makeRig, MiB } from './erasure-helpers.js';

afterAll(cleanupRigs);

/** A property of the wrapped child, methods bound to it (its #private fields need it). */
function bound(target: Provider, prop: string | symbol, recv: unknown): unknown {
  const v = Reflect.get(target, prop, recv) as unknown;
  return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
}

/** Wraps a child: records the ArrayBuffer of every chunk its puts are given. */
function recording(seen: Set<ArrayBufferLike>): (p: Provider) => Provider {
  return (p) =>
    new Proxy(p, {
      get(target, prop, recv) {
        if (prop !== 'put') return bound(target, prop, recv);
        return (key: string, body: BlobBody, o?: PutOptions) => {
          async function* tap(): AsyncGenerator<Uint8Array> {
            for await (const c of body as AsyncIterable<Uint8Array>) {
              if (c.length >= 16 * KiB) seen.add(c.buffer);
              yield c;
            }
          }
          return target.put(key, tap(), o);
        };
      },
    });
}

/** Wraps a child like a put that keeps the chunks it was given (a socket queue) and writes
 * them only at the end, never reporting them released. */
function hoarding(p: Provider): Provider {
  return new Proxy(p, {
    get(target, prop, recv) {
      if (prop !== 'put') return bound(target, prop, recv);
      return async (key: string, body: BlobBody, o: PutOptions = {}) => {
        const held: Uint8Array[] = [];
        for await (const c of body as AsyncIterable<Uint8Array>) held.push(c);
        await new Promise((r) => setTimeout(r, 20)); // let other writes reuse what they can
        const { released: _dropped, ...rest } = o;
        return target.put(key, held, rest);
      };
    },
  });
}

describe('stripe buffer pool', () => {
  it('returns a buffer only after it is sealed and every held cell is released', () => {
    const size = 3 * 64 * KiB + 17; // a size no other test uses, so the pool holds none yet
    const a = takeStripeBuffer(size);
    const cells = [a.buf.subarray(0, 64 * KiB), a.buf.subarray(64 * KiB, 128 * KiB)];
    for (const c of cells) a.hold(c);
    releaseCell(cells[0]!);
    releaseCell(cells[0]!); // reported twice: counted once
    a.seal();
    expect(takeStripeBuffer(size).buf === a.buf).toBe(false); // one cell still held
    releaseCell(cells[1]!);
    expect(takeStripeBuffer(size).buf === a.buf).toBe(true);
  });

  it('never returns a buffer with a cell that is not released', () => {
    const size = 3 * 64 * KiB + 29;
    const a = takeStripeBuffer(size);
    a.hold(a.buf.subarray(0, 10));
    a.seal();
    releaseCell(new Uint8Array(10)); // a chunk of no stripe buffer: ignored
    expect(takeStripeBuffer(size).buf === a.buf).toBe(false);
    expect(new StripeBuffer(Buffer.alloc(1)).buf.length).toBe(1);
  });
});

describe('erasure writes with reused memory', () => {
  it('reuses stripe buffers over fs children and reads every blob back byte-exact', async () => {
    const seen = new Set<ArrayBufferLike>();
    const wrapRec = recording(seen);
    const { provider: p } = await makeRig({ kind: 'fs', k: 4, m: 2, wrap: (c) => wrapRec(c) });
    const blobs = Array.from({ length: 4 }, (_, i) => bytes(2 * MiB + 4321 * i, 1000 + i));
    for (const [i, b] of blobs.entries()) await p.put(`r/${i}`, chunked(b, 300 * KiB, i), { contentLength: b.length });
    for (const [i, b] of blobs.entries()) expect((await readAll(p, `r/${i}`)).equals(b)).toBe(true);
    // 4 blobs x 2 stripes of 6 framed cells each: without reuse every stripe had its own buffer.
    expect(seen.size).toBeLessThan(8);
    await p.close();
  });

  it('does not reuse a stripe buffer that a child still holds, with concurrent writes', async () => {
    // Half the domains keep their chunks until the end of the body and never report them
    // released: if their buffers were reused, another write's bytes would land in them.
    const { provider: p } = await makeRig({ kind: 'fs', k: 4, m: 2, wrap: (c, i) => (i % 2 ? hoarding(c) : c) });
    const blobs = Array.from({ length: 3 }, (_, i) => bytes(MiB + 777 * i, 2000 + i));
    await Promise.all(blobs.map((b, i) => p.put(`h/${i}`, chunked(b, 100 * KiB, i), { contentLength: b.length })));
    for (const [i, b] of blobs.entries()) expect((await readAll(p, `h/${i}`)).equals(b)).toBe(true);
    await p.close();
  });

  it('reports each body chunk released only after copying it, so the caller may overwrite it', async () => {
    const { provider: p } = await makeRig({ kind: 'fs', k: 4, m: 2 });
    for (const size of [300 * KiB, 2 * MiB + 5]) {
      const data = bytes(size, size);
      const chunks = chunked(Buffer.from(data), 70 * KiB, 3);
      const released: Uint8Array[] = [];
      async function* body(): AsyncGenerator<Uint8Array> {
        for (const c of chunks) yield c;
      }
      // The caller reuses a released chunk at once: scribbling over it must not reach the blob.
      await p.put(`s/${size}`, body(), { contentLength: size, released: (c) => (released.push(c), c.fill(0xee)) });
      expect(released.length).toBe(chunks.length);
      expect(released.every((c, i) => c === chunks[i])).toBe(true);
      expect((await readAll(p, `s/${size}`)).equals(data)).toBe(true);
    }
    await p.close();
  });
});
