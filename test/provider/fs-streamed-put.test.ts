/**
 * The fs provider's streamed put (write-temp.ts): background flushes while the body arrives
 * and PutOptions.released. A chunk is released once, only after its write completed: the
 * test scribbles over every released chunk at once (as a caller reusing the memory would),
 * so a chunk released before its bytes reached the file would store garbage.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFsProvider, type FsProvider } from '../../src/provider/fs/index.js';
import { COALESCE_BYTES } from '../../src/provider/fs/write-temp.js';
import { getBytes } from '../../src/provider/provider.js';
import { randomBytes } from '../support/random.js';
import { tempDir } from '../store/helpers.js';

let provider: FsProvider;
let cleanup: () => void;
let dir: string;
beforeAll(async () => {
  const t = tempDir('fs-streamed');
  cleanup = t.cleanup;
  dir = t.dir;
  provider = await createFsProvider({ dir: t.dir, exclusive: true });
});
afterAll(async () => {
  await provider.close();
  cleanup();
});

/** `data` as fresh copies of `piece` bytes, each yielded after a macrotask (a slow client). */
function pieces(data: Uint8Array, piece: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < data.length; i += piece) out.push(Uint8Array.from(data.subarray(i, i + piece)));
  return out;
}
async function* slowly(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) {
    await new Promise((r) => setImmediate(r));
    yield c;
  }
}

type Method = (...a: unknown[]) => unknown;

/** FileHandle's prototype, as the provider's handles have it: spied on to count one put's calls. */
async function fileHandlePrototype(): Promise<{ write: Method; writev: Method; datasync: Method }> {
  const probe = await open(join(dir, 'probe'), 'w');
  await probe.close();
  return Object.getPrototypeOf(probe) as { write: Method; writev: Method; datasync: Method };
}

describe('fs streamed put', () => {
  it('releases each chunk once, after its write: reusing released memory never changes the blob', async () => {
    for (const [size, piece] of [
      [5 * 1024 * 1024 + 3, 256 * 1024],
      [3 * 1024 * 1024, 100_003],
      [1, 1],
    ] as const) {
      const data = randomBytes(size, size);
      const chunks = pieces(data, piece);
      const seen = new Map<Uint8Array, number>();
      const info = await provider.put(`s${size}`, slowly(chunks), {
        contentLength: size,
        released: (c) => {
          seen.set(c, (seen.get(c) ?? 0) + 1);
          c.fill(0xee); // the caller reuses it at once
        },
      });
      expect(info.size).toBe(size);
      expect(Buffer.from(await getBytes(provider, `s${size}`)).equals(Buffer.from(data)), `size ${size}`).toBe(true);
      // Every chunk but the last (flushed and written with the end) is released exactly once.
      for (const c of chunks.slice(0, -1)) expect(seen.get(c), `chunk of ${size}`).toBe(1);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
      expect([...seen.keys()].every((c) => chunks.includes(c))).toBe(true);
    }
  });

  it('releases nothing it did not write when the body fails, and leaves no blob', async () => {
    const chunks = pieces(randomBytes(3 * 1024 * 1024, 7), 512 * 1024);
    const released: Uint8Array[] = [];
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield* slowly(chunks.slice(0, 3));
      throw new Error('client went away');
    }
    await expect(provider.put('failed', failing(), { contentLength: 3 * 1024 * 1024, released: (c) => void released.push(c) })).rejects.toThrow();
    expect(released.every((c) => chunks.slice(0, 3).includes(c))).toBe(true);
    await expect(provider.head('failed')).rejects.toMatchObject({ code: 'NotFound' });
  });

  it('writes small chunks together with what follows: a header, a cell and a trailer take two writes', async () => {
    const proto = await fileHandlePrototype();
    const write = vi.spyOn(proto, 'write');
    const writev = vi.spyOn(proto, 'writev');
    try {
      const parts = [randomBytes(64, 1), randomBytes(COALESCE_BYTES * 4, 2), randomBytes(24, 3)];
      const released: Uint8Array[] = [];
      await provider.put('coalesced', slowly(parts), { contentLength: 64 + COALESCE_BYTES * 4 + 24, released: (c) => void released.push(c) });
      // [file header, 64 B, cell] in one writev, then the 24 B tail on its own
      expect(write.mock.calls.length + writev.mock.calls.length).toBe(2);
      expect(writev.mock.calls[0]![0]).toHaveLength(3);
      expect(Buffer.from(await getBytes(provider, 'coalesced')).equals(Buffer.concat(parts))).toBe(true);
      expect(released.length === 3 && released.every((c, i) => c === parts[i])).toBe(true);
    } finally {
      write.mockRestore();
      writev.mockRestore();
    }
  });

  it('a body of thousands of 1-byte chunks is stored whole: no write holds more than IOV_MAX buffers, each chunk released once, after its write', async () => {
    const writev = vi.spyOn(await fileHandlePrototype(), 'writev');
    try {
      const data = randomBytes(5000 + 70_000, 9);
      const chunks = [...pieces(data.subarray(0, 5000), 1), Uint8Array.from(data.subarray(5000))];
      const seen = new Map<Uint8Array, number>();
      await provider.put('tiny', slowly(chunks), {
        contentLength: data.length,
        released: (c) => {
          seen.set(c, (seen.get(c) ?? 0) + 1);
          c.fill(0xee); // the caller reuses it at once
        },
      });
      expect(writev.mock.calls.length).toBeGreaterThan(4);
      for (const call of writev.mock.calls) expect((call[0] as unknown[]).length).toBeLessThanOrEqual(1024);
      expect(Buffer.from(await getBytes(provider, 'tiny')).equals(Buffer.from(data))).toBe(true);
      expect(seen.size).toBe(chunks.length);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
    } finally {
      writev.mockRestore();
    }
  });

  it('a blob written in one write starts no early flush: one fdatasync per put', async () => {
    const datasync = vi.spyOn(await fileHandlePrototype(), 'datasync');
    try {
      const one = randomBytes(2 * 1024 * 1024, 4);
      await provider.put('one-write', slowly([one]), { contentLength: one.length });
      expect(datasync).toHaveBeenCalledTimes(1);
    } finally {
      datasync.mockRestore();
    }
  });
});
