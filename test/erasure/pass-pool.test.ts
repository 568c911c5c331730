/**
 * The stripe pass's CPU work gives the same answer on a worker thread as inline: rebuilt cells
 * byte-identical to the ones encoded, CRC folds equal, a flipped byte reported as a failed
 * source, and too few good sources reported rather than rebuilt. The worker path runs from the
 * built module (dist/, as the CLI does: `npm run build:js` first); the inline one from source.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createEncoder } from '../../src/codec/reed-solomon.js';
import { ArenaBudgetError, type ResidentStripe } from '../../src/codec/resident-stripe.js';
import { encodeHeader, encodeTrailer, frameCell, keyHash } from '../../src/provider/erasure/fragment.js';
import { framedLength, Geometry } from '../../src/provider/erasure/geometry.js';
import { processGroup, type GroupJob, type GroupResult } from '../../src/provider/erasure/stripe-group.js';
import { randomBytes } from '../support/random.js';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, truncateSync, unlinkSync } from 'node:fs';
import { overwriteFile } from '../support/bytes.js';
import { afterAll, beforeAll } from 'vitest';
import { createFsProvider, type FsProvider } from '../../src/provider/fs/index.js';
import { HEADER_BYTES as BLOB_HEADER_BYTES, useHeapHugePages } from '../../src/provider/fs/blob-file.js';
import { tempDir } from '../store/helpers.js';
import { takesDirect } from '../support/o-direct.js';

type Pool = {
  runGroup(job: GroupJob, codec: () => ReturnType<typeof createEncoder>, readTimeoutMs?: number): Promise<GroupResult>;
  poolSize(): number;
  warmPassWorkers(): number;
  recycle(chunk: Uint8Array): void;
  spareSize(): number;
  SPARE_MAX_BYTES: number;
};
const built = (): Promise<Pool> => import(pathToFileURL(resolve('dist/src/provider/erasure/pass-pool.js')).href) as Promise<Pool>;

const K = 4;
const M = 2;
const CELL = 64 * 1024;
const GEN = 123456789;
const KEY = 'chunks/pool-test';

/** Whole framed fragments (header, cells, trailer) of a blob of `length` bytes. */
function fragments(body: Uint8Array): { frags: Uint8Array[]; g: Geometry } {
  const g = new Geometry(K, CELL, body.length);
  const codec = createEncoder(K, M);
  const frags = Array.from({ length: K + M }, () => new Uint8Array(g.fragmentSize));
  const folds = new Array<number>(K + M).fill(0);
  frags.forEach((f, i) => f.set(encodeHeader({ layout: 'striped', k: K, m: M, index: i, cellSize: CELL, length: body.length, generation: GEN, keyHash: keyHash(KEY) })));
  for (let s = 0; s < g.stripes; s++) {
    const cl = g.cellLength(s);
    const data = new Uint8Array(K * cl);
    data.set(body.subarray(g.stripeStart(s), g.stripeStart(s) + g.stripeData(s)));
    const shards = [...Array.from({ length: K }, (_, i) => data.subarray(i * cl, (i + 1) * cl)), ...Array.from({ length: M }, () => new Uint8Array(cl))];
    codec.encode(shards);
    shards.forEach((sh, i) => {
      const at = g.sectionOffset(s);
      folds[i] = frameCell(sh, frags[i]!.subarray(at, at + framedLength(cl)), GEN, i, g.firstBlock(s), folds[i]!);
    });
  }
  frags.forEach((f, i) => f.set(encodeTrailer({ length: body.length, blockCount: g.blockCount, fold: folds[i]! }), g.trailerOffset));
  return { frags, g };
}

/** The whole blob as one group: every source but `skip`, rebuilding `targets`. */
function job(frags: Uint8Array[], g: Geometry, length: number, sources: number[], targets: number[]): GroupJob {
  return {
    key: KEY, k: K, m: M, cellSize: CELL, length, generation: GEN, keyHash: keyHash(KEY),
    s0: 0, s1: g.stripes, first: true, last: true,
    sources: sources.map((i) => ({ index: i, bytes: frags[i]!.slice() })),
    targets, folds: targets.map(() => 0),
  };
}

describe('stripe pass pool', () => {
  const body = randomBytes(3 * K * CELL + 12_345, 4);
  const { frags, g } = fragments(body);
  const sections = (i: number) => frags[i]!.subarray(g.sectionOffset(0), g.trailerOffset);

  it('inline: rebuilds two lost fragments byte-exact and flags a flipped source', () => {
    const codec = createEncoder(K, M);
    const r = processGroup(job(frags, g, body.length, [0, 2, 3, 5], [1, 4]), codec);
    expect(r.failed).toEqual([]);
    expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(sections(1)))).toBe(0);
    expect(Buffer.compare(Buffer.from(r.outputs[1]!), Buffer.from(sections(4)))).toBe(0);
    const bad = job(frags, g, body.length, [0, 2, 3, 5], [1]);
    bad.sources[1]!.bytes[g.sectionOffset(1) + 10]! ^= 1;
    const r2 = processGroup(bad, codec);
    expect(r2.failed.map((f) => f.index)).toEqual([2]);
    expect(r2.good).toBe(3);
    expect(r2.outputs).toEqual([]);
  });

  it('inline, with the resident budget spent: the heap path gives the same bytes and folds, and the resident one releases its stripe', () => {
    const codec = createEncoder(K, M);
    for (const [sources, targets] of [[[0, 2, 3, 5], [1, 4]], [[1, 2, 3, 4], [0, 5]], [[0, 1, 2, 3], [4]], [[2, 3, 4, 5], [0, 1]]] as const) {
      const resident = processGroup(job(frags, g, body.length, [...sources], [...targets]), codec);
      const held: ResidentStripe[] = [];
      try {
        for (;;) held.push(codec.allocStripe(g.stripes * CELL));
      } catch (err) {
        expect(err).toBeInstanceOf(ArenaBudgetError);
      }
      expect(held.length).toBeGreaterThan(0); // the resident path had a stripe: it was released
      const heap = processGroup(job(frags, g, body.length, [...sources], [...targets]), codec);
      for (const h of held) h.release();
      expect(heap.failed).toEqual([]);
      expect(heap.folds).toEqual(resident.folds);
      targets.forEach((t, j) => {
        expect(Buffer.compare(Buffer.from(resident.outputs[j]!), Buffer.from(sections(t)))).toBe(0);
        expect(Buffer.compare(Buffer.from(heap.outputs[j]!), Buffer.from(sections(t)))).toBe(0);
      });
    }
    // A source that fails its CRC halfway (its cells partly unframed into the stripe) while k
    // others pass: rebuilt from those k, byte-exact, the failed one reported and not used.
    const bad = job(frags, g, body.length, [0, 1, 2, 3, 5], [4]);
    bad.sources[1]!.bytes[g.sectionOffset(2) + 100]! ^= 0x40; // fragment 1, third stripe
    const r = processGroup(bad, codec);
    expect(r.failed.map((f) => f.index)).toEqual([1]);
    expect(r.good).toBe(4);
    expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(sections(4)))).toBe(0);
  });

  it('inline: a source given twice counts once (too few sources is a result, not a throw)', () => {
    const codec = createEncoder(K, M);
    const twice = job(frags, g, body.length, [0, 2, 3, 3], [1]);
    const r = processGroup(twice, codec);
    expect(r.good).toBe(3);
    expect(r.outputs).toEqual([]);
    const enough = job(frags, g, body.length, [0, 2, 2, 3, 5], [1]);
    const r2 = processGroup(enough, codec);
    expect(r2.good).toBe(4);
    expect(Buffer.compare(Buffer.from(r2.outputs[0]!), Buffer.from(sections(1)))).toBe(0);
  });

  it('inline, group by group (header only in the first, trailer only in the last): the bytes and folds of one group', () => {
    const codec = createEncoder(K, M);
    const whole = processGroup(job(frags, g, body.length, [0, 2, 3, 5], [1, 4]), codec);
    let folds = [0, 0];
    const parts: Uint8Array[][] = [[], []];
    for (let s = 0; s < g.stripes; s++) {
      const from = s === 0 ? 0 : g.sectionOffset(s);
      const to = s === g.stripes - 1 ? g.fragmentSize : g.sectionOffset(s + 1);
      const r = processGroup({
        ...job(frags, g, body.length, [], [1, 4]),
        s0: s, s1: s + 1, first: s === 0, last: s === g.stripes - 1, folds,
        sources: [0, 2, 3, 5].map((i) => ({ index: i, bytes: frags[i]!.slice(from, to) })),
      }, codec);
      expect(r.failed).toEqual([]);
      folds = r.folds;
      r.outputs.forEach((o, j) => parts[j]!.push(o));
    }
    expect(folds).toEqual(whole.folds);
    parts.forEach((p, j) => expect(Buffer.compare(Buffer.concat(p), Buffer.from(whole.outputs[j]!))).toBe(0));
  });

  it('on a worker thread: the same bytes and folds as inline', async () => {
    const pool = await built();
    const codec = createEncoder(K, M);
    const inline = processGroup(job(frags, g, body.length, [1, 2, 3, 4, 5], [0]), codec);
    const viaWorker = await pool.runGroup(job(frags, g, body.length, [1, 2, 3, 4, 5], [0]), () => codec);
    expect(pool.poolSize()).toBeGreaterThan(0);
    expect(viaWorker.failed).toEqual([]);
    expect(viaWorker.folds).toEqual(inline.folds);
    expect(Buffer.compare(Buffer.from(viaWorker.outputs[0]!), Buffer.from(sections(0)))).toBe(0);
    const bad = job(frags, g, body.length, [1, 2, 3, 4, 5], [0]);
    bad.sources[0]!.bytes[5]! ^= 0xff; // the header of fragment 1
    const r = await pool.runGroup(bad, () => codec);
    expect(r.failed.map((f) => f.index)).toEqual([1]);
    expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(sections(0)))).toBe(0);
  });
});

describe('stripe pass pool: started ahead of the first job', () => {
  const body = randomBytes(3 * K * CELL + 12_345, 5);
  const { frags, g } = fragments(body);
  const sections = (i: number) => frags[i]!.subarray(g.sectionOffset(0), g.trailerOffset);

  it('warmPassWorkers starts the asked-for workers, jobs then run on them, and they keep no process alive', () => {
    // In a process of its own: the pool's worker count is module state.
    const url = pathToFileURL(resolve('dist/src/provider/erasure/pass-pool.js')).href;
    const script = `
      const pool = await import(${JSON.stringify(url)});
      const before = pool.poolSize();
      pool.usePassWorkers(3);
      const warmed = pool.warmPassWorkers();
      const again = pool.warmPassWorkers();
      console.log(JSON.stringify({ before, warmed, again, size: pool.poolSize() }));`;
    const t0 = performance.now();
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(out)).toEqual({ before: 0, warmed: 3, again: 3, size: 3 });
    // Idle workers are unreferenced: the process ended on its own, well before the timeout.
    expect(performance.now() - t0).toBeLessThan(20_000);
  });

  it('a job after warmPassWorkers runs on the warmed workers, byte-exact, without starting more', async () => {
    const pool = await built();
    const warmed = pool.warmPassWorkers();
    expect(warmed).toBeGreaterThan(0);
    const codec = createEncoder(K, M);
    const inline = processGroup(job(frags, g, body.length, [1, 2, 3, 4, 5], [0]), codec);
    const viaWorker = await pool.runGroup(job(frags, g, body.length, [1, 2, 3, 4, 5], [0]), () => codec);
    expect(pool.poolSize()).toBe(warmed);
    expect(viaWorker.folds).toEqual(inline.folds);
    expect(Buffer.compare(Buffer.from(viaWorker.outputs[0]!), Buffer.from(sections(0)))).toBe(0);
  });
});

describe('stripe pass pool: output memory reused', () => {
  const body = randomBytes(3 * K * CELL + 12_345, 6);
  const { frags, g } = fragments(body);
  const sections = (i: number) => frags[i]!.subarray(g.sectionOffset(0), g.trailerOffset);

  it('frames rebuilt cells into recycled memory, byte-exact whatever it held, inline and on a worker', async () => {
    const pool = await built();
    const codec = createEncoder(K, M);
    // Inline: the first spare large enough is taken; a small one is passed over.
    const small = new ArrayBuffer(1024);
    const big = new Uint8Array(4 * 2 ** 20).fill(0xee).buffer;
    const j = job(frags, g, body.length, [0, 2, 3, 5], [1, 4]);
    j.spare = [small, big];
    const r = processGroup(j, codec);
    expect(r.outputs[0]!.buffer).toBe(big);
    expect(r.outputs[1]!.buffer).not.toBe(small);
    expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(sections(1)))).toBe(0);
    expect(Buffer.compare(Buffer.from(r.outputs[1]!), Buffer.from(sections(4)))).toBe(0);

    // Through the pool and a worker: a recycled 4 MiB buffer of junk comes back as the output.
    pool.recycle(new Uint8Array(new Uint8Array(4 * 2 ** 20).fill(0xdd).buffer));
    expect(pool.spareSize()).toBe(4 * 2 ** 20);
    const w = await pool.runGroup(job(frags, g, body.length, [1, 2, 3, 4, 5], [0]), () => codec);
    expect(pool.poolSize()).toBeGreaterThan(0);
    expect(pool.spareSize()).toBe(0);
    expect(w.outputs[0]!.buffer.byteLength).toBe(4 * 2 ** 20);
    expect(Buffer.compare(Buffer.from(w.outputs[0]!), Buffer.from(sections(0)))).toBe(0);
  });

  it('keeps only what it can reuse: not small chunks, views, detached or repeated buffers, nor beyond its cap', async () => {
    const pool = await built();
    const before = pool.spareSize();
    pool.recycle(new Uint8Array(1000)); // a header's size
    const whole = new Uint8Array(2 ** 20);
    pool.recycle(whole.subarray(4096)); // a view at an offset
    const detached = new Uint8Array(2 ** 20);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    pool.recycle(detached);
    expect(pool.spareSize()).toBe(before);
    pool.recycle(whole);
    pool.recycle(whole); // released twice: kept once
    expect(pool.spareSize()).toBe(before + 2 ** 20);
    for (let i = 0; i < 64; i++) pool.recycle(new Uint8Array(2 ** 20));
    expect(pool.spareSize()).toBe(pool.SPARE_MAX_BYTES);
  });
});

describe.each([
  ['through the page cache', false, false],
  ['around the page cache (O_DIRECT)', true, false],
  // As in a process whose heap has huge pages (blob-file.ts heapHugePages): inline, every direct
  // read goes through the heap scratch and is copied where the group uses it.
  ['around the page cache (O_DIRECT), through the huge-page heap scratch', true, true],
])('stripe pass pool: a worker reads the fragments itself, %s', (_, direct, heap) => {
  beforeAll(() => useHeapHugePages(heap));
  afterAll(() => useHeapHugePages(undefined));
  const body = randomBytes(3 * K * CELL + 12_345, 5);
  const { frags, g } = fragments(body);
  const sections = (i: number) => frags[i]!.subarray(g.sectionOffset(0), g.trailerOffset);
  const { dir, cleanup } = tempDir('pass-files');
  afterAll(cleanup);
  let fs: FsProvider;
  const keyOf = (i: number) => `frag-${i}`;
  /** Writes every fragment as an fs blob file (again: undoing a test's damage). */
  const writeAll = async () => {
    fs ??= await createFsProvider({ dir });
    for (let i = 0; i < K + M; i++) await fs.put(keyOf(i), frags[i]!.slice());
  };
  /** The whole blob as one group read from the files of `sources`. */
  const fileJob = (sources: number[], targets: number[]): GroupJob => ({
    ...job(frags, g, body.length, [], targets),
    files: sources.map((i) => ({ index: i, path: fs.blobFilePath(keyOf(i)), start: 0, length: g.fragmentSize, direct })),
  });

  it('gives the bytes and folds of the inline pass, and reports a missing, short, foreign or flipped file instead of using it', async () => {
    const pool = await built();
    const codec = createEncoder(K, M);
    await writeAll();
    const inline = processGroup(job(frags, g, body.length, [1, 2, 3, 4, 5], [0]), codec);
    const r = await pool.runGroup(fileJob([1, 2, 3, 4, 5], [0]), () => codec, 10_000);
    expect(r.failed).toEqual([]);
    expect(r.good).toBe(5);
    expect(r.folds).toEqual(inline.folds);
    expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(sections(0)))).toBe(0);

    const path = (i: number) => fs.blobFilePath(keyOf(i));
    const damage: [string, (p: string) => void, (f: GroupResult['failed'][number]) => void][] = [
      ['missing', (p) => unlinkSync(p), (f) => (expect(f.code).toBe('NotFound'), expect(f.message).toMatch(/no such blob/))],
      ['short', (p) => truncateSync(p, BLOB_HEADER_BYTES + g.fragmentSize - 100), (f) => (expect(f.code).toBeUndefined(), expect(f.message).toMatch(/short/))],
      ['not a blob file', (p) => overwriteFile(p, 0, Buffer.from('XXXX')), (f) => (expect(f.code).toBe('Corrupt'), expect(f.message).toMatch(/not a blob file/))],
      ['flipped cell byte', (p) => overwriteFile(p, BLOB_HEADER_BYTES + g.sectionOffset(1) + 10, Buffer.from([0x5a])), (f) => expect(f.code).toBeUndefined()],
    ];
    for (const [what, hurt, check] of damage) {
      await writeAll();
      hurt(path(2));
      const d = await pool.runGroup(fileJob([1, 2, 3, 4, 5], [0]), () => codec, 10_000);
      expect(d.failed.map((f) => f.index), what).toEqual([2]);
      check(d.failed[0]!);
      expect(d.good, what).toBe(4);
      // Rebuilt from the four good sources all the same, byte-exact.
      expect(Buffer.compare(Buffer.from(d.outputs[0]!), Buffer.from(sections(0))), what).toBe(0);
    }
    // Too few good sources: reported, nothing rebuilt.
    await writeAll();
    unlinkSync(path(1));
    unlinkSync(path(3));
    const few = await pool.runGroup(fileJob([1, 2, 3, 4, 5], [0]), () => codec, 10_000);
    expect(few.failed.map((f) => f.index).sort()).toEqual([1, 3]);
    expect(few.good).toBe(3);
    expect(few.outputs).toEqual([]);
  });

  it('groups of one stripe each, the first, middle and last: rebuilt byte-exact, checked in place and a flipped byte found, read where the codec and the checks use them', async () => {
    const codec = createEncoder(K, M);
    await writeAll();
    const inPlace = direct && takesDirect(dir);
    for (let s = 0; s < g.stripes; s++) {
      const first = s === 0;
      const last = s === g.stripes - 1;
      const start = first ? 0 : g.sectionOffset(s);
      const length = (last ? g.fragmentSize : g.sectionOffset(s + 1)) - start;
      const groupJob = (sources: number[], targets: number[]): GroupJob => ({
        ...job(frags, g, body.length, [], targets),
        s0: s, s1: s + 1, first, last,
        files: sources.map((i) => ({ index: i, path: fs.blobFilePath(keyOf(i)), start, length, direct })),
      });
      const cells = (i: number) => frags[i]!.subarray(g.sectionOffset(s), last ? g.trailerOffset : g.sectionOffset(s + 1));
      // A rebuild: into the resident stripe.
      const rebuild = groupJob([1, 2, 3, 5], [0, 4]);
      const r = processGroup(rebuild, codec);
      expect(r.failed, `stripe ${s}`).toEqual([]);
      expect(Buffer.compare(Buffer.from(r.outputs[0]!), Buffer.from(cells(0))), `stripe ${s} target 0`).toBe(0);
      expect(Buffer.compare(Buffer.from(r.outputs[1]!), Buffer.from(cells(4))), `stripe ${s} target 4`).toBe(0);
      // Read around the page cache, the sources are streamed through one window (stripe-group.ts
      // streamFramed; where the directory refuses O_DIRECT, read buffered into that same
      // window): none is held as a source; read buffered, each is a source of its own.
      expect(rebuild.sources.map((x) => x.index), `stripe ${s}`).toEqual(direct ? [] : [1, 2, 3, 5]);
      for (const src of rebuild.sources) expect(src.bytes.length).toBe(length);
      // Every present fragment read (a full repair): the first k streamed into the targets,
      // the one past them checked too.
      const full = processGroup(groupJob([1, 2, 3, 4, 5], [0]), codec);
      expect(full).toMatchObject({ failed: [], good: 5 });
      expect(Buffer.compare(Buffer.from(full.outputs[0]!), Buffer.from(cells(0))), `stripe ${s} from all five`).toBe(0);
      // A check only (no targets): every source passes; read around the page cache, each is
      // checked in this thread's one aligned window before the next is read, none held after.
      const check = groupJob([0, 1, 2, 3, 4, 5], []);
      expect(processGroup(check, codec)).toMatchObject({ failed: [], good: 6 });
      expect(check.sources.map((x) => x.index)).toEqual(direct ? [] : [0, 1, 2, 3, 4, 5]);
      // A byte flipped in this stripe's cell of fragment 3: found by both.
      overwriteFile(fs.blobFilePath(keyOf(3)), BLOB_HEADER_BYTES + g.sectionOffset(s) + 7, Buffer.from([frags[3]![g.sectionOffset(s) + 7]! ^ 0x40]));
      expect(processGroup(groupJob([0, 1, 2, 3, 4, 5], []), codec).failed.map((f) => f.index)).toEqual([3]);
      const healed = groupJob([1, 2, 3, 4, 5], [0]);
      const h = processGroup(healed, codec);
      expect(h.failed.map((f) => f.index)).toEqual([3]);
      expect(Buffer.compare(Buffer.from(h.outputs[0]!), Buffer.from(cells(0))), `stripe ${s} rebuilt around the flipped source`).toBe(0);
      // A source that fails its check sends the group the long way (every file read again, into
      // a window of its own): every source is then a view of the codec's memory, at the offset
      // of its bytes in an aligned window (the blob file's header, then `start`, modulo 4 KiB).
      const probe = codec.allocStripe(64);
      const memory = probe.bytes.buffer;
      probe.release();
      expect(healed.sources.map((x) => x.index)).toEqual([1, 2, 3, 4, 5]);
      for (const src of healed.sources) {
        expect(src.bytes.length).toBe(length);
        if (inPlace) {
          expect(src.bytes.buffer, `stripe ${s} source ${src.index}`).toBe(memory);
          expect(src.bytes.byteOffset % 4096).toBe((BLOB_HEADER_BYTES + start) % 4096);
        }
      }
      // A flipped byte in the fragment past the first k: the streamed path checks it too.
      await writeAll();
      overwriteFile(fs.blobFilePath(keyOf(5)), BLOB_HEADER_BYTES + g.sectionOffset(s) + 3, Buffer.from([frags[5]![g.sectionOffset(s) + 3]! ^ 0x01]));
      const past = processGroup(groupJob([1, 2, 3, 4, 5], [0]), codec);
      expect(past.failed.map((f) => f.index)).toEqual([5]);
      expect(Buffer.compare(Buffer.from(past.outputs[0]!), Buffer.from(cells(0)))).toBe(0);
      await writeAll();
    }
  });

  it('a worker whose read never returns (a FIFO for a file) is given up on after the bound, and the next job runs', async () => {
    const pool = await built();
    const codec = createEncoder(K, M);
    await writeAll();
    const stuck = fs.blobFilePath(keyOf(2));
    unlinkSync(stuck);
    execFileSync('mkfifo', [stuck]);
    try {
      const t0 = Date.now();
      const hung = pool.runGroup(fileJob([1, 2, 3, 4, 5], [0]), () => codec, 300);
      await expect(hung).rejects.toMatchObject({ name: 'ProviderError', code: 'Unavailable', message: expect.stringMatching(/did not answer within 300 ms/) });
      expect(Date.now() - t0).toBeLessThan(5_000);
      // The same job without the FIFO: answered, on a worker that is not stuck.
      const ok = await pool.runGroup(fileJob([1, 3, 4, 5], [0]), () => codec, 10_000);
      expect(ok.failed).toEqual([]);
      expect(Buffer.compare(Buffer.from(ok.outputs[0]!), Buffer.from(sections(0)))).toBe(0);
    } finally {
      // Let the stuck thread's open return (a writer appears and goes): it then ends.
      closeSync(openSync(stuck, constants.O_WRONLY | constants.O_NONBLOCK));
    }
  });
});

