/**
 * Merging small body chunks before the socket (src/provider/s3/coalesce.ts): the bytes and
 * their order never change, merged buffers respect the limit, large chunks are not copied;
 * and a put of thousands of tiny chunks (a commit blob's shape) stores exactly those bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COALESCE_BYTES, coalesceChunks } from '../../src/provider/s3/coalesce.js';
import { createS3Provider, type S3Provider } from '../../src/provider/s3/index.js';
import { bytes, chunked, readAll } from './helpers.js';
import { S3RVER_BUCKET, S3RVER_CREDENTIALS, startS3rver, type RunningS3rver } from './s3rver.js';

const collect = (chunks: readonly Uint8Array[], limit?: number) => [...coalesceChunks(chunks, limit)];
const joined = (chunks: readonly Uint8Array[]) => Buffer.concat(chunks.map((c) => Buffer.from(c)));

describe('coalesceChunks', () => {
  it('keeps the bytes in order and merges runs of small chunks up to the limit', () => {
    for (const limit of [1, 5, 64, 1000]) {
      const data = bytes(5000, limit);
      const chunks = chunked(data, 40, limit);
      const out = collect(chunks, limit);
      expect(joined(out).equals(data)).toBe(true);
      for (const c of out) {
        // Merged buffers never exceed the limit; a longer one is an original chunk.
        if (c.byteLength > limit) expect(chunks).toContain(c);
      }
      if (limit === 1000) expect(out.length).toBeLessThanOrEqual(Math.ceil(5000 / (1000 - 40)) + 1);
    }
  });

  it('passes large chunks through uncopied and drops empty ones', () => {
    const big = bytes(300, 1);
    const small = [bytes(10, 2), new Uint8Array(0), bytes(20, 3)];
    const out = collect([...small, big, new Uint8Array(0), bytes(5, 4)], 100);
    expect(out.length).toBe(3);
    expect(out[1]).toBe(big); // the same object: not copied
    expect(out[0].byteLength).toBe(30);
    expect(joined(out).equals(joined([...small, big, bytes(5, 4)]))).toBe(true);
    expect(collect([new Uint8Array(0), new Uint8Array(0)])).toEqual([]);
    expect(collect([])).toEqual([]);
  });

  it('returns a lone small chunk as it is', () => {
    const one = bytes(10, 5);
    expect(collect([one])[0]).toBe(one);
  });

  it('splits a long run of tiny chunks into buffers of at most the default limit', () => {
    const tiny = Array.from({ length: 40_000 }, (_, i) => Buffer.from([i & 0xff, (i >> 8) & 0xff, 7, 9, 11, 13, 17, 19, 23, 29]));
    const out = collect(tiny);
    expect(out.length).toBe(Math.ceil((40_000 * 10) / COALESCE_BYTES));
    for (const c of out) expect(c.byteLength).toBeLessThanOrEqual(COALESCE_BYTES);
    expect(joined(out).equals(joined(tiny))).toBe(true);
  });

  it('merges lazily: one buffer per step, made when asked for', () => {
    const tiny = Array.from({ length: 1000 }, (_, i) => Buffer.alloc(100, i & 0xff));
    const it = coalesceChunks(tiny, 1000);
    const first = it.next();
    expect(first.done).toBe(false);
    expect((first.value as Uint8Array).byteLength).toBe(1000);
    tiny[10]!.fill(0xee); // not merged yet: the next buffer sees the change
    expect(Buffer.from(it.next().value as Uint8Array).subarray(0, 100).every((b) => b === 0xee)).toBe(true);
  });

  it('refuses a limit that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, NaN, Infinity]) expect(() => collect([], bad)).toThrow(RangeError);
  });
});

describe('a put of thousands of small chunks', () => {
  let server: RunningS3rver;
  let provider: S3Provider;
  beforeAll(async () => {
    server = await startS3rver();
    provider = await createS3Provider({ endpoint: server.endpoint, bucket: S3RVER_BUCKET, prefix: 'coalesce/', ...S3RVER_CREDENTIALS });
  });
  afterAll(async () => {
    await provider?.close();
    await server?.stop();
  });

  it('stores exactly the bytes given', async () => {
    // ~2,000 pieces of 1-60 bytes with empty ones among them, as a commit blob of tiny bodies.
    const data = bytes(60_000, 11);
    const pieces = chunked(data, 60, 3).flatMap((c, i) => (i % 97 === 0 ? [new Uint8Array(0), c] : [c]));
    expect(pieces.length).toBeGreaterThan(1500);
    const info = await provider.put('many', pieces);
    expect(info.size).toBe(data.length);
    expect((await readAll(provider, 'many')).equals(data)).toBe(true);
    // Past 1 MiB: merged buffers and an uncopied large chunk in one body.
    const big = bytes(2 * COALESCE_BYTES + 3, 12);
    const mixed = [...chunked(bytes(4000, 13), 30, 4), big, ...chunked(bytes(900_000, 14), 50, 5)];
    await provider.put('mixed', mixed);
    expect((await readAll(provider, 'mixed')).equals(joined(mixed))).toBe(true);
  });
});
