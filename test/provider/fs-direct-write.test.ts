/**
 * The fs provider's O_DIRECT path for bulk blobs (fs/direct-write.ts): exact bytes and sizes
 * around the alignment, the region and the threshold; which puts really open their temp file
 * with O_DIRECT (read back from /proc/self/fdinfo while the put is in flight); and that a
 * failed, aborted or short body leaves no temp file and gives its staging regions back, and
 * an exhausted pool falls back to buffered writes.
 */
import { constants, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIRECT_ALIGN, DIRECT_MIN_BYTES, STAGE_BYTES, stagePool } from '../../src/provider/fs/direct-write.js';
import { HEADER_BYTES } from '../../src/provider/fs/blob-file.js';
import { createFsProvider, type FsProvider } from '../../src/provider/fs/index.js';
import { ProviderError, getBytes } from '../../src/provider/provider.js';
import { prng, randomBytes } from '../support/random.js';
import { tempDir } from '../store/helpers.js';
import { takesDirect } from '../support/o-direct.js';
import { flagsOf } from '../support/fd-flags.js';

const KIB = 1024;
const MIB = 1024 * KIB;
/** O_DIRECT in fdinfo's octal `flags` (x86-64 and arm64 differ, so from node's constants). */
const O_DIRECT = constants.O_DIRECT;

let direct: FsProvider;
let buffered: FsProvider;
let dirA: string;
let dirB: string;
const cleanups: (() => void)[] = [];
beforeAll(async () => {
  const a = tempDir('fs-direct');
  const b = tempDir('fs-buffered');
  cleanups.push(a.cleanup, b.cleanup);
  dirA = a.dir;
  dirB = b.dir;
  direct = await createFsProvider({ dir: dirA, exclusive: true, directWrites: true });
  buffered = await createFsProvider({ dir: dirB, exclusive: true }); // the default: buffered
});
afterAll(async () => {
  await direct?.close();
  await buffered?.close();
  for (const c of cleanups) c();
});

/** `data` cut at seeded random points (1 B to 200 KiB, sometimes tiny), as a network delivers it. */
function* cut(data: Uint8Array, seed: number): Generator<Uint8Array> {
  const next = prng(seed);
  for (let off = 0; off < data.length; ) {
    const r = next();
    const n = Math.min(data.length - off, r % 5 === 0 ? 1 + (r % 17) : 1 + (r % (200 * KIB)));
    yield data.slice(off, off + n); // a fresh copy each, as a socket gives
    off += n;
  }
}


/** Puts `size` bytes under `key` and, while the body is half sent, reads the temp file's flags. */
async function flagsDuringPut(p: FsProvider, dir: string, key: string, size: number, bulk: boolean): Promise<number | undefined> {
  const data = randomBytes(size, size);
  let flags: number | undefined;
  async function* body(): AsyncGenerator<Uint8Array> {
    yield data.slice(0, size >> 1);
    await new Promise((r) => setTimeout(r, 20));
    flags = flagsOf(`${join(dir, 'tmp')}/`)[0];
    yield data.slice(size >> 1);
  }
  await p.put(key, body(), { contentLength: size, bulk });
  expect(Buffer.from(await getBytes(p, key)).equals(Buffer.from(data))).toBe(true);
  expect(flags, 'a temp file was open mid-body').toBeDefined();
  return flags;
}

/** The pieces of cut() as a stream body. */
async function* stream(data: Uint8Array, seed: number): AsyncGenerator<Uint8Array> {
  yield* cut(data, seed);
}

const tempFiles = (dir: string) => readdirSync(join(dir, 'tmp'));

describe('fs provider: bulk blobs written with O_DIRECT', () => {
  it('probes the directory as an aligned O_DIRECT write of its own finds it', () => {
    expect(direct.directWrites).toBe(takesDirect(join(dirA, 'tmp')));
    expect(buffered.directWrites).toBe(false);
  });

  it('opens the temp file O_DIRECT exactly for bulk puts at or past the threshold, when enabled', async () => {
    const isDirect = (f: number | undefined) => ((f ?? 0) & O_DIRECT) !== 0;
    const big = DIRECT_MIN_BYTES - HEADER_BYTES;
    expect(isDirect(await flagsDuringPut(direct, dirA, 'f/big-bulk', big, true))).toBe(direct.directWrites);
    expect(isDirect(await flagsDuringPut(direct, dirA, 'f/small-bulk', big - 1, true))).toBe(false);
    expect(isDirect(await flagsDuringPut(direct, dirA, 'f/big-plain', 2 * MIB, false))).toBe(false);
    expect(isDirect(await flagsDuringPut(buffered, dirB, 'f/big-bulk', 2 * MIB, true))).toBe(false);
  });

  it('stores exact bytes and sizes around the alignment, one region and the threshold', async () => {
    const region = STAGE_BYTES - HEADER_BYTES; // header + body fill one region exactly
    const sizes = [
      DIRECT_MIN_BYTES - HEADER_BYTES - 1,
      DIRECT_MIN_BYTES - HEADER_BYTES,
      DIRECT_MIN_BYTES - HEADER_BYTES + 1,
      region - 1,
      region,
      region + 1,
      region + DIRECT_ALIGN,
      2 * region + HEADER_BYTES, // two regions exactly
      MIB,
      2.5 * MIB + 7,
      5 * MIB + DIRECT_ALIGN + 1,
    ];
    const freeBefore = stagePool.free;
    for (const [i, size] of sizes.entries()) {
      for (const p of [direct, buffered]) {
        const data = randomBytes(size, 1000 + i);
        const key = `exact/${size}`;
        const info = await p.put(key, stream(data, i), { contentLength: size, bulk: true });
        expect(info.size, `size ${size}`).toBe(size);
        expect((await p.head(key)).size).toBe(size);
        expect(Buffer.from(await getBytes(p, key)).equals(Buffer.from(data)), `bytes of ${size}`).toBe(true);
        // A ranged read across the last aligned block and into the padded-then-truncated tail.
        const from = Math.max(0, size - DIRECT_ALIGN - 3);
        expect(Buffer.from(await getBytes(p, key, { start: from })).equals(Buffer.from(data.subarray(from)))).toBe(true);
      }
    }
    // The same for a body given as one array and as a list of chunks (no stream).
    const data = randomBytes(3 * MIB + 5, 77);
    await direct.put('exact/array', data, { bulk: true });
    await direct.put('exact/list', [...cut(data, 78)], { bulk: true });
    for (const k of ['exact/array', 'exact/list']) expect(Buffer.from(await getBytes(direct, k)).equals(Buffer.from(data))).toBe(true);
    expect(tempFiles(dirA)).toEqual([]);
    expect(stagePool.free).toBe(freeBefore);
  });

  it('releases each streamed chunk once, after copying it: scribbling over it changes nothing', async () => {
    const data = randomBytes(3 * MIB + 11, 5);
    const chunks = [...cut(data, 6)];
    const seen = new Map<Uint8Array, number>();
    async function* body(): AsyncGenerator<Uint8Array> {
      yield* chunks;
    }
    await direct.put('released', body(), {
      contentLength: data.length,
      bulk: true,
      released: (c) => {
        seen.set(c, (seen.get(c) ?? 0) + 1);
        c.fill(0xee);
      },
    });
    expect(Buffer.from(await getBytes(direct, 'released')).equals(Buffer.from(data))).toBe(true);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // All but possibly the last (held back until the body proves it ended) are released.
    for (const c of chunks.slice(0, -1)) expect(seen.get(c)).toBe(1);
  });

  it('a body that fails, is aborted or ends short leaves no temp file, no blob, and the regions free', async () => {
    const freeBefore = stagePool.free;
    const data = randomBytes(3 * MIB, 9);
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield data.subarray(0, 2 * MIB);
      throw new Error('client went away');
    }
    await expect(direct.put('fail/throw', failing(), { contentLength: data.length, bulk: true })).rejects.toThrow(/client went away/);

    const ac = new AbortController();
    async function* aborting(): AsyncGenerator<Uint8Array> {
      yield data.subarray(0, MIB + 1);
      ac.abort(new Error('deadline'));
      yield data.subarray(MIB + 1);
    }
    const aborted = await direct.put('fail/abort', aborting(), { contentLength: data.length, bulk: true, signal: ac.signal }).catch((e: unknown) => e);
    expect(aborted).toBeInstanceOf(ProviderError);
    expect((aborted as ProviderError).code).toBe('Aborted');

    const short = await direct.put('fail/short', stream(data.subarray(0, 2 * MIB), 3), { contentLength: data.length, bulk: true }).catch((e: unknown) => e);
    expect((short as ProviderError).code).toBe('LengthMismatch');
    const long = await direct.put('fail/long', stream(data, 4), { contentLength: data.length - 1, bulk: true }).catch((e: unknown) => e);
    expect((long as ProviderError).code).toBe('LengthMismatch');

    for (const k of ['fail/throw', 'fail/abort', 'fail/short', 'fail/long']) {
      const e = await direct.head(k).catch((err: unknown) => err);
      expect((e as ProviderError).code, k).toBe('NotFound');
    }
    expect(tempFiles(dirA)).toEqual([]);
    expect(stagePool.free).toBe(freeBefore);
  });

  it('with every staging region taken, bulk puts are written buffered and still exact', async () => {
    const taken: Uint8Array[] = [];
    for (let pair = stagePool.takePair(); pair; pair = stagePool.takePair()) taken.push(...pair);
    try {
      expect(taken.length).toBeGreaterThanOrEqual(2);
      const flags = await flagsDuringPut(direct, dirA, 'exhausted', 2 * MIB + 1, true);
      expect((flags ?? 0) & O_DIRECT).toBe(0);
    } finally {
      stagePool.give(taken);
    }
    expect(stagePool.made).toBeLessThanOrEqual(64 * MIB);
  });

  it('a busy pool does not make the probe answer no', async () => {
    const taken: Uint8Array[] = [];
    for (let pair = stagePool.takePair(); pair; pair = stagePool.takePair()) taken.push(...pair);
    try {
      const t = tempDir('fs-direct-busy');
      cleanups.push(t.cleanup);
      const p = await createFsProvider({ dir: t.dir, exclusive: true, directWrites: true });
      expect(p.directWrites).toBe(takesDirect(join(t.dir, 'tmp')));
      await p.close();
    } finally {
      stagePool.give(taken);
    }
  });

  it('where no WebAssembly memory can be had (an address-space limit), opens and writes buffered', () => {
    const t = tempDir('fs-direct-ulimit');
    cleanups.push(t.cleanup);
    const dist = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;
    const script = [
      `const { createFsProvider } = await import('${dist('provider/fs/index.js')}');`,
      `const { stagePool } = await import('${dist('provider/fs/direct-write.js')}');`,
      `const p = await createFsProvider({ dir: ${JSON.stringify(t.dir)}, exclusive: true, directWrites: true });`,
      `const data = new Uint8Array(2 * 1024 * 1024 + 1).map((_, i) => i % 251);`,
      `await p.put('x', data, { bulk: true });`,
      `const back = await p.read('x');`,
      `console.log(JSON.stringify({ direct: p.directWrites, pair: stagePool.takePair() === undefined ? 'none' : 'some', same: Buffer.from(back).equals(Buffer.from(data)) }));`,
    ].join('\n');
    // 6 GB of address space: node runs, but a WebAssembly memory (with its guard region) does not fit.
    const r = spawnSync('sh', ['-c', 'ulimit -v 6000000 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({ direct: false, pair: 'none', same: true });
  });

  it('many bulk puts at once stay exact (regions are not shared between writers)', async () => {
    const datas = Array.from({ length: 12 }, (_, i) => randomBytes(MIB + i * 97_001, 500 + i));
    await Promise.all(datas.map((d, i) => direct.put(`many/${i}`, stream(d, 600 + i), { contentLength: d.length, bulk: true })));
    for (const [i, d] of datas.entries()) expect(Buffer.from(await getBytes(direct, `many/${i}`)).equals(Buffer.from(d)), `many/${i}`).toBe(true);
  });
});
