/**
 * readBlobRangeDirectSync and readBlobRangeDirect (fs/blob-file.ts; the second for an event
 * loop, falling back to a buffered read where it resolves undefined, as its callers do): the
 * bytes of every range a buffered read gives, around the 4 KiB alignment O_DIRECT needs and
 * past the blob's end; the same errors for a missing, foreign or cut-short file; a fall-back
 * to buffered reads where the filesystem refuses O_DIRECT; and, where the directory takes it,
 * nothing left in the page cache.
 */
import { closeSync, constants, openSync, readFileSync, readSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alignedBuffer,
  DIRECT_READ_ALIGN,
  directReadScratch,
  directWindow,
  HEADER_BYTES,
  readBlobRangeDirect,
  readBlobRangeDirectInPlaceSync,
  readBlobRangeDirectSync,
  readBlobRangeSync,
  useHeapHugePages,
} from '../../src/provider/fs/blob-file.js';
import { createFsProvider, type FsProvider } from '../../src/provider/fs/index.js';
import { ProviderError } from '../../src/provider/provider.js';
import { expectBytes, overwriteFile } from '../support/bytes.js';
import { takesDirect } from '../support/o-direct.js';
import { dropFromPageCache, pageCacheToolsAvailable, residentPages } from '../support/page-cache.js';
import { randomBytes } from '../support/random.js';
import { tempDir } from '../store/helpers.js';

const KIB = 1024;
let fs: FsProvider;
let dir: string;
let cleanup: () => void;
beforeAll(async () => {
  ({ dir, cleanup } = tempDir('fs-direct-read'));
  fs = await createFsProvider({ dir, exclusive: true });
});
afterAll(async () => {
  await fs?.close();
  cleanup?.();
});

type Read = (path: string, start: number, length: number, into: Uint8Array) => Uint8Array | Promise<Uint8Array>;

/** Bytes written past a window by the in-place read's harness, to see that nothing past it
 * changes. */
const CANARY = 0xa5;

/**
 * readBlobRangeDirectInPlaceSync as a Read: into a window one alignment unit into a fresh
 * page-aligned memory, followed by canary bytes; checks that the answer is the view at the
 * window's offset and that nothing past the window was written, then copies it to `into`.
 */
function inPlace(path: string, start: number, length: number, into: Uint8Array): Uint8Array {
  const at = directWindow(start, length);
  const mem = alignedBuffer(DIRECT_READ_ALIGN + at.bytes + 64);
  mem.fill(CANARY);
  const window = mem.subarray(DIRECT_READ_ALIGN, DIRECT_READ_ALIGN + at.bytes);
  const got = readBlobRangeDirectInPlaceSync(path, start, length, window);
  expect(got.buffer).toBe(mem.buffer);
  expect(got.byteOffset).toBe(DIRECT_READ_ALIGN + at.offset);
  expect(mem.subarray(DIRECT_READ_ALIGN + at.bytes).every((b) => b === CANARY)).toBe(true);
  const out = into.subarray(0, got.length);
  out.set(got);
  return out;
}

/** The direct reads under test: the synchronous one, its copy-free twin, and the asynchronous
 * one with the buffered read its callers make when it resolves undefined; the synchronous two
 * also as they read in a process whose heap has huge pages (heapHugePages: through the heap
 * scratch, the in-place one then copying into its window). */
const DIRECT: [string, Read, boolean][] = [
  ['readBlobRangeDirectSync', readBlobRangeDirectSync, false],
  ['readBlobRangeDirectInPlaceSync', inPlace, false],
  ['readBlobRangeDirect', async (path, start, length, into) => (await readBlobRangeDirect(path, start, length, into)) ?? readBlobRangeSync(path, start, length, into), false],
  ['readBlobRangeDirectSync through the huge-page heap scratch', readBlobRangeDirectSync, true],
  ['readBlobRangeDirectInPlaceSync through the huge-page heap scratch', inPlace, true],
];

describe.each(DIRECT)('%s', (_, direct, heap) => {
  beforeAll(() => useHeapHugePages(heap));
  afterAll(() => useHeapHugePages(undefined));

  /** Both reads of [start, start + length) of `path`, into arrays of their own. */
  async function both(path: string, start: number, length: number): Promise<[Uint8Array | ProviderError, Uint8Array | ProviderError]> {
    const run = async (f: Read) => {
      try {
        return (await f(path, start, length, new Uint8Array(Math.max(length, 1)))).slice();
      } catch (err) {
        if (err instanceof ProviderError) return err;
        throw err;
      }
    };
    return [await run(readBlobRangeSync), await run(direct)];
  }

  it('gives the bytes a buffered read gives, for ranges around the alignment, whole blobs and past the end', async () => {
    for (const size of [1, 4 * KIB - HEADER_BYTES, 4 * KIB - HEADER_BYTES + 1, 3 * 4 * KIB + 77, 300 * KIB + 5]) {
      const body = randomBytes(size, size);
      await fs.put(`b/${size}`, body);
      const path = fs.blobFilePath(`b/${size}`);
      const starts = [0, 1, 4 * KIB - HEADER_BYTES - 1, 4 * KIB - HEADER_BYTES, 4 * KIB - HEADER_BYTES + 1, 8 * KIB, size >> 1, size - 1, size, size + 10];
      const lengths = [0, 1, 31, 4 * KIB - 1, 4 * KIB, 4 * KIB + 1, 64 * KIB + 3, size];
      for (const start of starts) {
        for (const length of lengths) {
          const [buffered, got] = await both(path, start, length);
          const what = `blob of ${size} B, [${start}, +${length})`;
          expect(buffered, what).toBeInstanceOf(Uint8Array);
          expectBytes(got as Uint8Array, buffered as Uint8Array, what);
          expectBytes(got as Uint8Array, body.subarray(Math.min(start, size), Math.min(start + length, size)), what);
        }
      }
    }
  });

  it('reads a range larger than any before it (the aligned scratch grows) and then smaller ones', async () => {
    const body = randomBytes(5 * 1024 * KIB + 123, 9);
    await fs.put('big', body);
    const path = fs.blobFilePath('big');
    expectBytes(await direct(path, 7, body.length, new Uint8Array(body.length)), body.subarray(7), 'whole but 7');
    expectBytes(await direct(path, 4100, 10, new Uint8Array(10)), body.subarray(4100, 4110), 'small after');
    // Many at once (an event loop's reads each hold an aligned buffer of their own while in
    // flight; more than the pool keeps): each its own bytes.
    const starts = Array.from({ length: 40 }, (_, i) => i * 131_071);
    const got = await Promise.all(starts.map((s) => direct(path, s, 1024 * KIB, new Uint8Array(1024 * KIB))));
    got.forEach((g, i) => expectBytes(g, body.subarray(starts[i], starts[i]! + 1024 * KIB), `concurrent read ${i}`));
  });

  it('fails as a buffered read does: no file, a foreign file, a file shorter than a blob header', async () => {
    const missing = join(dir, 'nope');
    await expect(async () => direct(missing, 0, 10, new Uint8Array(10))).rejects.toMatchObject({ code: 'NotFound' });

    await fs.put('foreign', randomBytes(20 * KIB, 3));
    const foreign = fs.blobFilePath('foreign');
    overwriteFile(foreign, 0, Buffer.from('XXXX'));
    for (const start of [0, 100, 4 * KIB - HEADER_BYTES - 1]) {
      const [buffered, got] = await both(foreign, start, 64);
      expect(buffered).toMatchObject({ code: 'Corrupt', message: expect.stringMatching(/not a blob file/) });
      expect(got, `from ${start}`).toMatchObject({ code: 'Corrupt', message: expect.stringMatching(/not a blob file/) });
    }
    // Further in, the header is not read again: the bytes come back as they are, for the
    // caller's own checks (erasure fragments: a CRC32C per block, bound to blob and position).
    const [, further] = await both(foreign, 8 * KIB, 64);
    expect(further).toBeInstanceOf(Uint8Array);

    const tiny = join(dir, 'tiny');
    writeFileSync(tiny, Buffer.from('SBLB\x01'));
    expect((await both(tiny, 0, 10))[1]).toMatchObject({ code: 'Corrupt', message: expect.stringMatching(/not a blob file/) });
  });

  it('a file cut short: the read is short (the size at open), as a buffered read', async () => {
    await fs.put('cut', randomBytes(50 * KIB, 4));
    const path = fs.blobFilePath('cut');
    truncateSync(path, HEADER_BYTES + 10 * KIB + 5);
    const [buffered, got] = await both(path, 8 * KIB, 16 * KIB);
    expect((got as Uint8Array).length).toBe(2 * KIB + 5);
    expectBytes(got as Uint8Array, buffered as Uint8Array, 'cut');
  });

  it('where the filesystem refuses O_DIRECT (procfs: EINVAL at the open), reads buffered: the answer of a buffered read', async () => {
    // Not a blob file either way; without the fall-back the open itself would fail ('Io').
    const [buffered, got] = await both('/proc/self/status', 0, 64);
    expect(buffered).toMatchObject({ code: 'Corrupt', message: expect.stringMatching(/not a blob file/) });
    expect(got).toMatchObject({ code: 'Corrupt', message: expect.stringMatching(/not a blob file/) });
  });

  it('leaves nothing of the range in the page cache where the directory takes O_DIRECT (a buffered read does)', async (ctx) => {
    if (!pageCacheToolsAvailable || !takesDirect(dir)) ctx.skip(); // checked where fincore and O_DIRECT are (CI: both)
    const body = randomBytes(2 * 1024 * KIB, 6);
    await fs.put('cache', body);
    const path = fs.blobFilePath('cache');
    dropFromPageCache(path);
    expect(residentPages(path)).toBe(0);
    expectBytes(await direct(path, 0, body.length, new Uint8Array(body.length)), body, 'direct');
    expect(residentPages(path)).toBe(0);
    expectBytes(readFileSync(path).subarray(HEADER_BYTES), body, 'buffered');
    expect(residentPages(path)).toBeGreaterThan(400); // 2 MiB: 513 pages of 4 KiB
  });
});

it('readBlobRangeDirect resolves undefined where the filesystem refuses O_DIRECT (its caller reads buffered)', async () => {
  expect(await readBlobRangeDirect('/proc/self/status', 0, 64, new Uint8Array(64))).toBeUndefined();
});

describe('readBlobRangeDirectInPlaceSync', () => {
  it('reads the aligned blocks around the range into the window: the range at directWindow\'s offset, the file\'s own bytes beside it', async () => {
    const body = randomBytes(40 * KIB + 9, 21);
    await fs.put('window', body);
    const path = fs.blobFilePath('window');
    const file = readFileSync(path);
    for (const [start, length] of [[0, 100], [5000, 9000], [4 * KIB - HEADER_BYTES, 4 * KIB], [30 * KIB + 1, 10 * KIB + 8]] as const) {
      const at = directWindow(start, length);
      expect(at.offset).toBe((HEADER_BYTES + start) % DIRECT_READ_ALIGN);
      expect(at.bytes % DIRECT_READ_ALIGN).toBe(0);
      const window = alignedBuffer(at.bytes).subarray(0, at.bytes);
      const got = readBlobRangeDirectInPlaceSync(path, start, length, window);
      expectBytes(got, body.subarray(start, start + length), `[${start}, +${length})`);
      // Read directly, what the window holds beside the range is the file where the window lies
      // (the blob file's header, in the first block), up to the file's end; read buffered (a
      // directory without O_DIRECT), only the range is written.
      if (!takesDirect(dir)) continue;
      const a0 = HEADER_BYTES + start - at.offset;
      const fileEnd = Math.min(at.bytes, file.length - a0);
      expectBytes(window.subarray(0, fileEnd), file.subarray(a0, a0 + fileEnd), `window of [${start}, +${length})`);
    }
  });

  it('refuses a window that is too short or not on an aligned offset (a RangeError, nothing read)', async () => {
    await fs.put('refuse', randomBytes(10 * KIB, 22));
    const path = fs.blobFilePath('refuse');
    const at = directWindow(100, 5000);
    const mem = alignedBuffer(at.bytes + DIRECT_READ_ALIGN);
    expect(() => readBlobRangeDirectInPlaceSync(path, 100, 5000, mem.subarray(0, at.bytes - 1))).toThrow(RangeError);
    expect(() => readBlobRangeDirectInPlaceSync(path, 100, 5000, mem.subarray(512, 512 + at.bytes))).toThrow(RangeError);
  });

  it('a window whose memory the device may not take at its address (an ordinary heap array) still gets the bytes (read through the aligned scratch if refused)', async () => {
    const body = randomBytes(64 * KIB + 3, 23);
    await fs.put('heap', body);
    const path = fs.blobFilePath('heap');
    for (let i = 0; i < 8; i++) {
      const start = i * 7001;
      const at = directWindow(start, 20 * KIB);
      const window = new Uint8Array(at.bytes + 48 * i).subarray(0, at.bytes);
      expectBytes(readBlobRangeDirectInPlaceSync(path, start, 20 * KIB, window), body.subarray(start, start + 20 * KIB), `heap window ${i}`);
    }
  });
});

describe('directReadScratch (the scratch of this thread\'s synchronous direct reads)', () => {
  afterAll(() => useHeapHugePages(undefined));

  it('with huge pages in the heap: one heap buffer reused across reads, that O_DIRECT reads of the file take; grown for a larger read', async (ctx) => {
    if (!takesDirect(dir)) ctx.skip(); // CI's directory takes O_DIRECT
    useHeapHugePages(true);
    await fs.put('scratch', randomBytes(64 * KIB, 31));
    const fd = openSync(fs.blobFilePath('scratch'), constants.O_RDONLY | constants.O_DIRECT);
    try {
      const a = directReadScratch(fd, 8 * KIB);
      const b = directReadScratch(fd, 16 * KIB);
      expect(b.buffer).toBe(a.buffer);
      expect(b.byteOffset).toBe(a.byteOffset);
      expect(b.length).toBe(16 * KIB);
      // Not a WebAssembly memory (those are whole 64 KiB pages): the heap buffer, a huge page
      // and the read larger, a whole number of huge pages once glibc's 32 bytes are added back.
      expect((a.buffer.byteLength + 32) % (2 * 1024 * KIB)).toBe(0);
      expect(readSync(fd, b, 0, 16 * KIB, 0)).toBe(16 * KIB);
      expect(readFileSync(fs.blobFilePath('scratch')).subarray(0, 16 * KIB).equals(b)).toBe(true);
      const big = directReadScratch(fd, 9 * 1024 * KIB); // larger than any read of this file before it
      expect(big.buffer).not.toBe(a.buffer);
      expect(big.length).toBe(9 * 1024 * KIB);
      expect(readSync(fd, big, 0, 64 * KIB, 0)).toBeGreaterThan(0);
    } finally {
      closeSync(fd);
    }
  });

  it('without huge pages in the heap: the page-aligned WebAssembly scratch (whole 64 KiB pages)', async () => {
    useHeapHugePages(false);
    await fs.put('scratch2', randomBytes(8 * KIB, 32));
    const fd = openSync(fs.blobFilePath('scratch2'), constants.O_RDONLY);
    try {
      const a = directReadScratch(fd, 8 * KIB);
      expect(a.byteOffset).toBe(0);
      expect(a.buffer.byteLength % (64 * KIB)).toBe(0);
    } finally {
      closeSync(fd);
    }
  });
});
