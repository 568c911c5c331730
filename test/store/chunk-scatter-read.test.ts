/**
 * Carrier reads by scatter read (chunk-scatter-read.ts, fs provider's readv): every range of
 * a stored body comes back exactly, a damaged or short chunk blob fails with StoreError
 * 'Corrupt' naming it before any byte of the damaged span is yielded, and a span buffer goes
 * back to the pool only through its written-callback, once, and never after a failed write.
 */
import { readFileSync, writeFileSync, truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsProvider, type FsProvider } from '../../src/provider/fs/index.js';
import { HEADER_BYTES } from '../../src/provider/fs/blob-file.js';
import { keyPath } from '../../src/provider/fs/key-path.js';
import { ProviderError } from '../../src/provider/provider.js';
import { ExactReader, writeCarrier } from '../../src/store/carrier.js';
import { readBody } from '../../src/store/body-reader.js';
import { idleSpanBuffers, scatterReadChunk, writtenCallback, SPAN_BODY_BYTES } from '../../src/store/chunk-scatter-read.js';
import { SEGMENT_SIZE } from '../../src/store/layout.js';
import { ENTRY_HEADER_SIZE, PACK_HEADER_SIZE } from '../../src/pack/stream-writer.js';
import { StoreError } from '../../src/store/errors.js';
import type { ChunkRef, Location } from '../../src/store/records.js';
import { randomBytes } from '../support/random.js';
import { HashPool } from '../../src/checksum/hash-pool.js';
import { collect, stream, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
let provider: FsProvider;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('scatter'));
  provider = await createFsProvider({ dir });
});
afterAll(async () => {
  await provider.close();
  cleanup();
});

async function store(body: Uint8Array): Promise<ChunkRef[]> {
  return writeCarrier(provider, new ExactReader(stream(body, 100_003)), body.length, () => undefined);
}

function fileOf(key: string): string {
  const p = keyPath(Buffer.from(key));
  return join(dir, 'blobs', ...p.dirs, p.leaf);
}

const loc = (chunks: ChunkRef[]): Location => ({ kind: 'chunks', chunks });

describe('scatter read of a carrier', () => {
  // One span of full segments, one more segment and a 12,345-byte tail: two spans, the second short.
  const size = SPAN_BODY_BYTES + SEGMENT_SIZE + 12_345;
  const body = randomBytes(size, 11);
  let chunks: ChunkRef[];
  beforeAll(async () => {
    chunks = await store(body);
  });

  it('returns the whole body and every range across segment and span edges exactly', async () => {
    expect(Buffer.from(await collect(readBody(provider, loc(chunks), size)))).toEqual(Buffer.from(body));
    const edges = [0, SEGMENT_SIZE, SPAN_BODY_BYTES - 1, SPAN_BODY_BYTES, size - 1];
    for (const start of edges) {
      for (const end of edges) {
        if (end < start) continue;
        const got = await collect(readBody(provider, loc(chunks), size, { start, end }));
        expect(Buffer.from(got).equals(Buffer.from(body.subarray(start, end + 1))), `${start}-${end}`).toBe(true);
      }
    }
  });

  it('yields one chunk per span (large writes), not one per segment', async () => {
    const pieces: number[] = [];
    for await (const p of readBody(provider, loc(chunks), size)) pieces.push(p.length);
    expect(pieces).toEqual([SPAN_BODY_BYTES, size - SPAN_BODY_BYTES]);
  });

  it('gives a span buffer back once after a successful write, never after a failed one', async () => {
    const it1 = scatterReadChunk(provider, chunks[0]!, 0, size - 1);
    const first = (await it1.next()).value as Uint8Array;
    const second = (await it1.next()).value as Uint8Array;
    expect((await it1.next()).done).toBe(true);
    const idle = idleSpanBuffers();
    const cb = writtenCallback(first)!;
    expect(cb).toBeTypeOf('function');
    expect(writtenCallback(first)).toBeUndefined(); // handed out once
    cb(new Error('socket destroyed'));
    expect(idleSpanBuffers()).toBe(idle); // a failed write keeps the buffer out of the pool
    // The short last span is not a pooled size: its callback exists but pools nothing.
    writtenCallback(second)!(null);
    expect(idleSpanBuffers()).toBe(idle);
    expect(writtenCallback(new Uint8Array(4))).toBeUndefined();
    // A second read reuses nothing it should not: bytes are right whatever the pool holds.
    const again = scatterReadChunk(provider, chunks[0]!, 0, size - 1);
    const a = (await again.next()).value as Uint8Array;
    writtenCallback(a)!(null);
    expect(idleSpanBuffers()).toBe(Math.min(idle + 1, 16));
    await again.return(undefined);
    const third = await collect(scatterReadChunk(provider, chunks[0]!, 0, size - 1));
    expect(Buffer.from(third).equals(Buffer.from(body))).toBe(true);
  });

  it('fails closed on a flipped byte: Corrupt naming the blob, no byte of the damaged span', async () => {
    const own = await store(body);
    const file = fileOf(own[0]!.blob);
    const bytes = readFileSync(file);
    // A byte in the body of the second span's first segment.
    const seg = SPAN_BODY_BYTES / SEGMENT_SIZE;
    const at = HEADER_BYTES + PACK_HEADER_SIZE + seg * (ENTRY_HEADER_SIZE + SEGMENT_SIZE) + ENTRY_HEADER_SIZE + 777;
    bytes[at]! ^= 0x40;
    writeFileSync(file, bytes);
    const got: Uint8Array[] = [];
    const err = await (async () => {
      for await (const p of readBody(provider, loc(own), size)) got.push(p);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('Corrupt');
    expect((err as StoreError).message).toContain(own[0]!.blob);
    expect(got.reduce((n, p) => n + p.length, 0)).toBe(SPAN_BODY_BYTES); // the first span only
    expect(Buffer.from(Buffer.concat(got)).equals(Buffer.from(body.subarray(0, SPAN_BODY_BYTES)))).toBe(true);
  });

  it('fails closed on a damaged entry header and on a truncated blob', async () => {
    const own = await store(body);
    const file = fileOf(own[0]!.blob);
    const bytes = readFileSync(file);
    bytes[HEADER_BYTES + PACK_HEADER_SIZE + 1 * (ENTRY_HEADER_SIZE + SEGMENT_SIZE) + 12]! ^= 1; // entry 1's length
    writeFileSync(file, bytes);
    await expect(collect(readBody(provider, loc(own), size))).rejects.toMatchObject({ code: 'Corrupt' });
    const cut = await store(body);
    const cutFile = fileOf(cut[0]!.blob);
    truncateSync(cutFile, statSync(cutFile).size - 40_000); // into the last segment
    await expect(collect(readBody(provider, loc(cut), size, { start: size - 10, end: size - 1 }))).rejects.toMatchObject({ code: 'Corrupt' });
  });

  it('names a missing chunk blob MissingBlob', async () => {
    const gone = await store(body);
    await provider.delete(gone[0]!.blob);
    await expect(collect(readBody(provider, loc(gone), size))).rejects.toMatchObject({ code: 'MissingBlob' });
  });
});

describe('scatter read with the CRCs on a hash worker', () => {
  const size = 3 * SPAN_BODY_BYTES + 5;
  const body = randomBytes(size, 31);
  const CRASHING = new URL('../support/crash-hash-worker.mjs', import.meta.url);
  const pools: HashPool[] = [];
  afterAll(async () => {
    for (const p of pools) await p.close();
    delete process.env.CRASH_HASH_AFTER;
  });
  const read = async (chunks: ChunkRef[], pool: HashPool, from = 0, to = size - 1) => collect(scatterReadChunk(provider, chunks[0]!, from, to, pool));

  it('returns exactly the bytes, whole and in ranges, and frees its worker slot', async () => {
    const pool = new HashPool({ threads: 1 });
    pools.push(pool);
    const chunks = await store(body);
    expect(Buffer.from(await read(chunks, pool)).equals(Buffer.from(body))).toBe(true);
    for (const [a, b] of [[1, size - 2], [SPAN_BODY_BYTES - 3, 2 * SPAN_BODY_BYTES + 3], [size - 1, size - 1]] as const) {
      expect(Buffer.from(await read(chunks, pool, a, b)).equals(Buffer.from(body.subarray(a, b + 1))), `${a}-${b}`).toBe(true);
    }
    expect(pool.openJobs).toBe(0);
  });

  it('fails closed on a flipped body byte: Corrupt, and no byte of the damaged span', async () => {
    const pool = new HashPool({ threads: 1 });
    pools.push(pool);
    const chunks = await store(body);
    const file = fileOf(chunks[0]!.blob);
    const bytes = readFileSync(file);
    const seg = SPAN_BODY_BYTES / SEGMENT_SIZE + 1; // span 1's second segment
    bytes[HEADER_BYTES + PACK_HEADER_SIZE + seg * (ENTRY_HEADER_SIZE + SEGMENT_SIZE) + ENTRY_HEADER_SIZE + 9]! ^= 2;
    writeFileSync(file, bytes);
    const got: Uint8Array[] = [];
    const err = await (async () => {
      for await (const p of scatterReadChunk(provider, chunks[0]!, 0, size - 1, pool)) got.push(p);
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'Corrupt' });
    expect((err as Error).message).toContain(chunks[0]!.blob);
    expect(got.reduce((n, p) => n + p.length, 0)).toBe(SPAN_BODY_BYTES);
    expect(pool.openJobs).toBe(0);
  });

  it('fails closed on a flipped byte in a span read two ahead: the spans before it whole, none of it', async () => {
    // Spans are read READ_AHEAD_SPANS ahead, span i+2 while span i+1 is checked: a damaged
    // span 2 must still end the stream before any of its bytes, after spans 0 and 1 exactly.
    const pool = new HashPool({ threads: 1 });
    pools.push(pool);
    const chunks = await store(body);
    const file = fileOf(chunks[0]!.blob);
    const bytes = readFileSync(file);
    const seg = 2 * (SPAN_BODY_BYTES / SEGMENT_SIZE) + 1; // in span 2
    bytes[HEADER_BYTES + PACK_HEADER_SIZE + seg * (ENTRY_HEADER_SIZE + SEGMENT_SIZE) + ENTRY_HEADER_SIZE + 4242]! ^= 0x10;
    writeFileSync(file, bytes);
    for (const p of [pool, undefined]) {
      const got: Uint8Array[] = [];
      const err = await (async () => {
        for await (const piece of scatterReadChunk(provider, chunks[0]!, 0, size - 1, p)) got.push(piece.slice());
      })().catch((e: unknown) => e);
      expect(err, p ? 'worker' : 'this thread').toMatchObject({ code: 'Corrupt' });
      expect(Buffer.concat(got).equals(Buffer.from(body.subarray(0, 2 * SPAN_BODY_BYTES)))).toBe(true);
    }
    expect(pool.openJobs).toBe(0);
  });

  it('reads on with the CRCs computed here when the worker dies, and fails closed when it answers wrong CRCs', async () => {
    const chunks = await store(body);
    process.env.CRASH_HASH_AFTER = '1'; // read when the thread starts: dies at its first slice
    const dying = new HashPool({ threads: 1, script: CRASHING });
    pools.push(dying);
    expect(Buffer.from(await read(chunks, dying)).equals(Buffer.from(body))).toBe(true);
    process.env.CRASH_HASH_AFTER = '1000'; // answers every slice with CRC 0
    const lying = new HashPool({ threads: 1, script: CRASHING });
    pools.push(lying);
    await expect(read(chunks, lying)).rejects.toMatchObject({ code: 'Corrupt' });
  });
});

describe('fs provider readv', () => {
  it('fills targets in order from any offset, exclusive or not, and refuses what is out of range', async () => {
    const data = randomBytes(300_001, 5);
    await provider.put('rv', data);
    const ex = await createFsProvider({ dir, exclusive: true });
    try {
      for (const p of [provider, ex]) {
        const t = [new Uint8Array(7), new Uint8Array(0), new Uint8Array(200_000), new Uint8Array(1)];
        await p.readv('rv', 99_993, t);
        expect(Buffer.concat(t).equals(Buffer.from(data.subarray(99_993, 300_001)))).toBe(true);
        await expect(p.readv('rv', 99_994, t)).rejects.toMatchObject({ code: 'InvalidRange' });
        await expect(p.readv('rv', -1, [new Uint8Array(1)])).rejects.toBeInstanceOf(ProviderError);
        await expect(p.readv('nope', 0, [new Uint8Array(1)])).rejects.toMatchObject({ code: 'NotFound' });
      }
    } finally {
      await ex.close();
    }
  });
});
