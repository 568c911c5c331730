/**
 * The pieces of the s3 provider's large-body and conditional-write support that need no
 * server: PartReader cutting streams into parts (odd chunk sizes, exact boundaries, empty
 * and failing sources, early close), and the capability probe against in-memory backends
 * that behave like AWS S3, like Ceph RGW 16.2 (bare If-Match, prefix comparison), and like
 * servers that ignore or half-enforce conditions.
 */
import { describe, expect, it } from 'vitest';
import { PartReader } from '../../src/provider/s3/parts.js';
import { probeConditionalWrites, type ProbeTarget } from '../../src/provider/s3/probe.js';
import { ProviderError, type BlobInfo, type PutOptions } from '../../src/provider/provider.js';
import { createHash } from 'node:crypto';

async function* chunksOf(sizes: number[], fail?: Error): AsyncGenerator<Uint8Array> {
  let v = 0;
  for (const n of sizes) {
    const c = new Uint8Array(n);
    for (let i = 0; i < n; i++) c[i] = v++ & 0xff;
    yield c;
  }
  if (fail) throw fail;
}

async function allParts(reader: PartReader): Promise<number[][]> {
  const out: number[][] = [];
  for (let p = await reader.next(); p; p = await reader.next()) {
    out.push(p.flatMap((c) => [...c]));
  }
  return out;
}

describe('PartReader', () => {
  it('cuts odd-sized chunks into exact parts, the last one short, bytes in order', async () => {
    const reader = new PartReader(chunksOf([3, 7, 1, 0, 10, 4]), 8);
    const parts = await allParts(reader);
    expect(parts.map((p) => p.length)).toEqual([8, 8, 8, 1]);
    expect(parts.flat()).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('knows a body that ends exactly at one part is whole (one PUT, not multipart)', async () => {
    const reader = new PartReader(chunksOf([4, 4]), 8);
    await reader.fill();
    expect(reader.whole).toBe(true);
    expect(reader.held).toBe(8);
    expect((await allParts(reader)).map((p) => p.length)).toEqual([8]);
  });

  it('knows one byte over a part is not whole, and ends with a one-byte part', async () => {
    const reader = new PartReader(chunksOf([8, 1]), 8);
    await reader.fill();
    expect(reader.whole).toBe(false);
    expect((await allParts(reader)).map((p) => p.length)).toEqual([8, 1]);
  });

  it('never holds more than a part plus one chunk', async () => {
    let pulled = 0;
    async function* counting(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 100; i++) {
        pulled += 5;
        yield new Uint8Array(5);
      }
    }
    const reader = new PartReader(counting(), 12);
    let taken = 0;
    for (let p = await reader.next(); p; p = await reader.next()) {
      taken += p.reduce((n, c) => n + c.byteLength, 0);
      expect(pulled - taken).toBeLessThanOrEqual(5);
    }
    expect(taken).toBe(500);
  });

  it('yields nothing for an empty source, and passes on a source error', async () => {
    expect(await allParts(new PartReader(chunksOf([]), 8))).toEqual([]);
    expect(await allParts(new PartReader(chunksOf([0, 0]), 8))).toEqual([]);
    const reader = new PartReader(chunksOf([9], new Error('broken')), 8);
    expect((await reader.next())?.length).toBe(1);
    await expect(reader.next()).rejects.toThrow('broken');
  });

  it('close() stops the source early', async () => {
    let finished = false;
    async function* source(): AsyncGenerator<Uint8Array> {
      try {
        for (;;) yield new Uint8Array(4);
      } finally {
        finished = true;
      }
    }
    const reader = new PartReader(source(), 8);
    await reader.next();
    await reader.close();
    expect(finished).toBe(true);
  });

  it('refuses a part size that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => new PartReader(chunksOf([]), bad)).toThrow(RangeError);
    }
  });
});

/** An in-memory backend whose If-Match handling is configurable. */
function fakeBackend(rules: {
  ifNoneMatch: boolean;
  ifMatch: 'quoted' | 'bare' | 'ignored';
  prefix?: boolean;
  etag?: (body: Uint8Array, n: number) => string;
}): ProbeTarget & { keys: Map<string, string> } {
  const keys = new Map<string, string>();
  let writes = 0;
  const etagOf = rules.etag ?? ((b: Uint8Array) => createHash('md5').update(b).digest('hex'));
  const store = (key: string, body: Uint8Array): BlobInfo => {
    const etag = etagOf(body, ++writes);
    keys.set(key, etag);
    return { key, size: body.length, etag, lastModified: new Date() };
  };
  const refuse = (): never => {
    throw new ProviderError('PreconditionFailed', 'refused');
  };
  return {
    keys,
    async put(key: string, body: Uint8Array, options: PutOptions = {}) {
      if (options.ifNoneMatch === '*' && rules.ifNoneMatch && keys.has(key)) refuse();
      return store(key, body);
    },
    async putIfMatch(key: string, body: Uint8Array, header: string) {
      const current = keys.get(key);
      if (rules.ifMatch !== 'ignored') {
        if (current === undefined) refuse();
        const quotedForm = header.startsWith('"') && header.endsWith('"');
        if ((rules.ifMatch === 'quoted') !== quotedForm) refuse();
        const value = quotedForm ? header.slice(1, -1) : header;
        const ok = rules.prefix ? value.startsWith(current!) : value === current;
        if (!ok) refuse();
      }
      return store(key, body);
    },
    async delete(key: string) {
      keys.delete(key);
    },
  };
}

describe('probeConditionalWrites', () => {
  it('AWS S3 / Strata: quoted If-Match, exact comparison', async () => {
    const b = fakeBackend({ ifNoneMatch: true, ifMatch: 'quoted' });
    expect(await probeConditionalWrites(b)).toEqual({
      conditionalWrites: true,
      ifMatch: { quoted: true, prefixCompare: false },
    });
    expect(b.keys.size).toBe(0);
  });

  it('Ceph RGW 16.2: bare If-Match compared by prefix, safe with 32-hex etags', async () => {
    const b = fakeBackend({ ifNoneMatch: true, ifMatch: 'bare', prefix: true });
    expect(await probeConditionalWrites(b)).toEqual({
      conditionalWrites: true,
      ifMatch: { quoted: false, prefixCompare: true },
    });
    expect(b.keys.size).toBe(0);
  });

  it('refuses a prefix comparison over etags that are not fixed-length hex', async () => {
    const b = fakeBackend({
      ifNoneMatch: true,
      ifMatch: 'bare',
      prefix: true,
      etag: (_b, n) => `v${n}`,
    });
    const r = await probeConditionalWrites(b);
    expect(r.conditionalWrites).toBe(false);
    expect(r.reason).toContain('prefix');
  });

  it('finds servers that ignore If-None-Match or If-Match', async () => {
    expect(
      await probeConditionalWrites(fakeBackend({ ifNoneMatch: false, ifMatch: 'quoted' }))
    ).toEqual({ conditionalWrites: false, reason: 'If-None-Match: * did not refuse an existing key' });
    expect(
      await probeConditionalWrites(fakeBackend({ ifNoneMatch: true, ifMatch: 'ignored' }))
    ).toEqual({ conditionalWrites: false, reason: 'If-Match did not refuse a wrong etag' });
  });

  it('passes on an unreachable backend as Unavailable, and still cleans up', async () => {
    const b = fakeBackend({ ifNoneMatch: true, ifMatch: 'quoted' });
    const deleted: string[] = [];
    const target: ProbeTarget = {
      put: b.put,
      putIfMatch: async () => {
        throw new ProviderError('Unavailable', 'down');
      },
      delete: async (k) => void deleted.push(k),
    };
    await expect(probeConditionalWrites(target)).rejects.toMatchObject({ code: 'Unavailable' });
    expect(deleted).toHaveLength(1);
  });
});
