/**
 * @module The fs provider's blob file: a fixed header, then the blob bytes.
 *
 *   offset  size  field
 *        0     4  magic "SBLB"
 *        4     1  format version (1)
 *        5     3  reserved, zero
 *        8    16  version id: random per write; its hex is the blob's etag
 *       24     8  reserved, zero
 *       32     …  the blob
 *
 * The version id makes the etag change on every replacement, even when a rename
 * reuses an inode within one timestamp tick (which a stat-derived etag would miss),
 * and across delete-then-recreate.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { ProviderError } from '../provider.js';

/** Bytes before the blob itself. */
export const HEADER_BYTES = 32;
const MAGIC = Buffer.from('SBLB', 'latin1');
const FORMAT_VERSION = 1;
const ID_OFFSET = 8;
const ID_BYTES = 16;

/** A fresh header and the etag it carries. */
export function newHeader(): { header: Buffer; etag: string } {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header[4] = FORMAT_VERSION;
  const id = randomBytes(ID_BYTES);
  id.copy(header, ID_OFFSET);
  return { header, etag: id.toString('hex') };
}

/**
 * Reads the header of an open blob file and returns its etag. Throws ProviderError
 * 'Corrupt' if the file is too short or not a blob file of this format.
 */
export async function readEtag(handle: FileHandle, path: string): Promise<string> {
  const header = Buffer.alloc(HEADER_BYTES);
  const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
  return etagOfHeader(header, bytesRead, path);
}

/** The etag in `header` (the first `bytesRead` bytes of a file); throws ProviderError
 * 'Corrupt' when they are not a blob file's header of this format: that file is damaged (or
 * foreign), which says nothing of the directory's health. */
function etagOfHeader(header: Buffer, bytesRead: number, path: string): string {
  if (
    bytesRead !== HEADER_BYTES ||
    !header.subarray(0, 4).equals(MAGIC) ||
    header[4] !== FORMAT_VERSION
  ) {
    throw new ProviderError('Corrupt', `${path}: not a blob file (bad header)`);
  }
  return header.subarray(ID_OFFSET, ID_OFFSET + ID_BYTES).toString('hex');
}

/**
 * A read that found the file ending before the size it had when it was opened (or stat'd).
 * Blob files are replaced by rename and removed by unlink, which leave an open file whole; the
 * only cut in place is a commit log segment's seal, of preallocated bytes past its last record
 * that no reader is owed. So the file is damaged, or the read asked for bytes that were never
 * written: either way that blob alone cannot answer ('Corrupt'), and the directory is not
 * failing (an erasure domain stays in service and the read goes to the other fragments).
 */
export function cutShort(what: string): ProviderError {
  return new ProviderError('Corrupt', `${what}: file shorter than its size (cut short since it was opened)`);
}

/**
 * Opens blob file `path` for reading, with O_DIRECT when `direct`. Throws ProviderError
 * 'NotFound' when there is no such file, 'Io' when the open fails otherwise; returns undefined
 * when `direct` and the filesystem refuses O_DIRECT (the caller reads buffered).
 */
function openBlobSync(path: string, direct: boolean): number | undefined {
  try {
    return openSync(path, direct ? constants.O_RDONLY | constants.O_DIRECT : constants.O_RDONLY);
  } catch (err) {
    return openRefused(path, direct, err);
  }
}

/** What a failed open of blob file `path` means (openBlobSync): throws ProviderError
 * 'NotFound' or 'Io'; undefined when `direct` and the filesystem refuses O_DIRECT. */
function openRefused(path: string, direct: boolean, err: unknown): undefined {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') throw new ProviderError('NotFound', `${path}: no such blob`);
  if (direct && refusesDirect(err)) return undefined;
  throw new ProviderError('Io', `${path}: open failed: ${(err as Error)?.message ?? err}`, { cause: err });
}

/** What a read of `path` that threw `err` is reported as: a ProviderError as it is, else 'Io'. */
function readFailed(path: string, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError('Io', `${path}: read failed: ${(err as Error)?.message ?? err}`, { cause: err });
}

/** Header scratch of readBlobRangeSync (synchronous, so one per thread suffices). */
const HEADER_SCRATCH = Buffer.alloc(HEADER_BYTES);

/**
 * Reads up to `length` bytes of the blob in file `path` from blob byte `start` into `into`
 * (at least `length` long), synchronously: for a worker thread whose job is to read
 * (Provider.blobFilePath), never for an event loop. Returns the view of `into` filled, shorter
 * than `length` when the blob ends first. Throws ProviderError 'NotFound' when there is no
 * such file, 'Corrupt' when it is not a blob file or is cut short while read, 'Io' when the
 * system fails to open or read it.
 */
export function readBlobRangeSync(path: string, start: number, length: number, into: Uint8Array): Uint8Array {
  const fd = openBlobSync(path, false)!;
  try {
    etagOfHeader(HEADER_SCRATCH, readSync(fd, HEADER_SCRATCH, 0, HEADER_BYTES, 0), path);
    const size = fstatSync(fd).size - HEADER_BYTES;
    const out = into.subarray(0, Math.max(0, Math.min(length, size - start)));
    let off = 0;
    while (off < out.length) {
      const n = readSync(fd, out, off, out.length - off, HEADER_BYTES + start + off);
      if (n === 0) throw cutShort(path);
      off += n;
    }
    return out;
  } catch (err) {
    throw readFailed(path, err);
  } finally {
    closeSync(fd);
  }
}

/** File offsets, lengths and memory addresses of O_DIRECT reads are multiples of this (covers
 * devices with 512 B and 4 KiB logical blocks; direct-write.ts aligns writes alike). */
export const DIRECT_READ_ALIGN = 4096;
const WASM_PAGE = 64 * 1024;

/** This thread's page-aligned scratch for O_DIRECT reads (readBlobRangeDirectSync): a
 * WebAssembly memory, since JavaScript cannot choose the address of an ArrayBuffer but a
 * memory starts on a page. Replaced by a larger one when a read needs more, so it holds the
 * largest range read so far on this thread (a pass group: stripe-pass.ts). */
let directScratch: Uint8Array | undefined;

function alignedScratch(bytes: number): Uint8Array {
  if (!directScratch || directScratch.length < bytes) directScratch = alignedBuffer(bytes);
  return directScratch;
}

/** Size of a transparent huge page (x86-64 and arm64 with 4 KiB pages). */
const HUGE_PAGE = 2 * 2 ** 20;

/** The glibc tunable that makes malloc ask for transparent huge pages (the strata command's
 * GLIBC_TUNABLES holds it, cli/node-flags.ts). */
export const HEAP_HUGE_TUNABLE = 'glibc.malloc.hugetlb=1';

/** Whether {@link heapHugePages} is forced (tests), else undefined. */
let heapHugeForced: boolean | undefined;
let heapHugeSeen: boolean | undefined;

/**
 * Whether this process's malloc'd memory can lie on transparent huge pages where the kernel's
 * default does not put WebAssembly memories: glibc was told to ask for them
 * (`GLIBC_TUNABLES` holds {@link HEAP_HUGE_TUNABLE}; the strata command sets it)
 * and the kernel grants them to memory that asks (`/sys/kernel/mm/transparent_hugepage/enabled`
 * is `[madvise]`; with `[always]` every memory has them already, with `[never]` none does).
 * Then the synchronous direct reads go through a heap scratch (readBlobRangeDirectSync, and
 * readBlobRangeDirectInPlaceSync with a copy): on this VM, 2 MiB O_DIRECT reads of (10,4)
 * fragments into one huge-page buffer ran at 4.8-5.6 GiB/s against 2.7-3.3 into one
 * WebAssembly memory of 4 KiB pages (2 threads, 6.4 GiB, interleaved runs); the device's
 * transfer maps every page of the buffer, and a huge page is one mapping where 4 KiB pages are
 * 512. Read once per thread (a worker thread has its own copy of this module).
 */
export function heapHugePages(): boolean {
  if (heapHugeForced !== undefined) return heapHugeForced;
  if (heapHugeSeen === undefined) {
    const asked = (process.env.GLIBC_TUNABLES ?? '').split(':').includes(HEAP_HUGE_TUNABLE);
    let mode = '';
    try {
      mode = /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1] ?? '';
    } catch {
      // no THP on this system
    }
    heapHugeSeen = asked && mode === 'madvise';
  }
  return heapHugeSeen;
}

/** Forces heapHugePages' answer (undefined: what the process has), for tests of both paths. */
export function useHeapHugePages(on: boolean | undefined): void {
  heapHugeForced = on;
}

/** This thread's heap scratch for direct reads (heapDirectScratch) and the offset of its first
 * aligned byte (-1: none found, the WebAssembly scratch is used). */
let heapScratch: { mem: Buffer; at: number | undefined } | undefined;

/**
 * A view of at least `bytes` of this thread's heap scratch that O_DIRECT reads of `fd` accept,
 * or undefined when no offset of it is accepted (the caller uses alignedScratch). JavaScript
 * cannot see an address, so the offset is found by reading the file's first aligned block at
 * candidate offsets until the system takes one (once per scratch): first where the view would
 * start a huge page, then a page, if glibc placed the buffer as it places its own mappings
 * (16 bytes into a mapping that the kernel starts on a huge page when its length is a multiple
 * of one), then every 16 bytes of the first page. The scratch is `bytes` and a huge page more,
 * its length chosen so that glibc's mapping is a whole number of huge pages (glibc maps a
 * request of n bytes as n + 32 rounded to a page, on x86-64).
 */
function heapDirectScratch(fd: number, bytes: number): Uint8Array | undefined {
  if (!heapScratch || (heapScratch.at !== -1 && heapScratch.mem.length - HUGE_PAGE < bytes)) {
    const mapped = Math.ceil((bytes + HUGE_PAGE + 32) / HUGE_PAGE) * HUGE_PAGE;
    heapScratch = { mem: Buffer.allocUnsafeSlow(mapped - 32), at: undefined };
  }
  const s = heapScratch;
  if (s.at === undefined) {
    s.at = -1;
    const tries = [HUGE_PAGE - 16, DIRECT_READ_ALIGN - 16, ...Array.from({ length: DIRECT_READ_ALIGN / 16 }, (_, i) => i * 16)];
    for (const at of tries) {
      try {
        readSync(fd, s.mem, at, DIRECT_READ_ALIGN, 0);
        s.at = at;
        break;
      } catch (err) {
        if (!refusesDirect(err)) throw err;
      }
    }
  }
  return s.at < 0 || s.mem.length - s.at < bytes ? undefined : s.mem.subarray(s.at, s.at + bytes);
}

/**
 * The scratch this thread's synchronous direct reads of `fd` use for `bytes`: the heap scratch
 * when heapHugePages holds and `fd` takes it, else the page-aligned WebAssembly scratch. Its
 * view lives until this thread's next direct read. For a caller that reads on its own (the disk
 * floor of bench:erasure reads as the repair reads).
 */
export function directReadScratch(fd: number, bytes: number): Uint8Array {
  return (heapHugePages() ? heapDirectScratch(fd, bytes) : undefined) ?? alignedScratch(bytes);
}

/** A fresh page-aligned buffer of at least `bytes` (whole WebAssembly pages): a window for
 * readBlobRangeDirectInPlaceSync at any offset that is a multiple of DIRECT_READ_ALIGN. */
export function alignedBuffer(bytes: number): Uint8Array {
  const pages = Math.ceil(bytes / WASM_PAGE);
  return new Uint8Array(new WebAssembly.Memory({ initial: pages, maximum: pages }).buffer);
}

/** Whether `err` is the system refusing O_DIRECT (a filesystem without it: tmpfs, some FUSE). */
const refusesDirect = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'EINVAL';

/**
 * readBlobRangeSync around the page cache: the file is opened O_DIRECT and the aligned blocks
 * that cover the range are read into this thread's page-aligned scratch, then copied to
 * `into`. For a reader of many large ranges that nobody will read again soon (a scrub or
 * repair pass over fragments): on this kind of machine a buffered read of bytes not in the
 * page cache fills new page-cache pages first (a first touch of guest memory each), which
 * cost a cold repair of a (10,4) domain three times the system time of the direct reads, and
 * a pass over everything evicts what the server's readers have cached. A direct read also
 * checks what the device holds, not a cached copy of it. Where the filesystem refuses O_DIRECT
 * (EINVAL), the range is read buffered instead.
 *
 * The blob file's header is checked when the range starts within its first aligned block (the
 * read covers it); a range further in is not given a second device read for it: the caller
 * checks the bytes themselves (erasure fragments: every block's CRC32C, bound to the blob's
 * generation, the fragment index and the block's position). Errors as readBlobRangeSync, and
 * 'Corrupt' when the file ends before the range does.
 */
export function readBlobRangeDirectSync(path: string, start: number, length: number, into: Uint8Array): Uint8Array {
  return withDirectFile(path, start, length, into, (fd, span) => {
    let scratch = directReadScratch(fd, span.a1 - span.a0);
    let got = readSpan(fd, span, scratch);
    if (got === undefined && scratch.buffer !== directScratch?.buffer) got = readSpan(fd, span, (scratch = alignedScratch(span.a1 - span.a0)));
    return got === undefined ? readBlobRangeSync(path, start, length, into) : directOut(path, span, scratch, got, into);
  });
}

/**
 * The frame of a synchronous direct read of blob bytes [start, start + length) of `path`: a
 * buffered read into `into` where the platform or the filesystem has no O_DIRECT (at the
 * open); else `read` with the file opened O_DIRECT and the aligned span to read (nothing to
 * read: an empty view of `into`), closed after. Errors as readBlobRangeSync.
 */
function withDirectFile(path: string, start: number, length: number, into: Uint8Array, read: (fd: number, span: DirectSpan) => Uint8Array): Uint8Array {
  if (constants.O_DIRECT === undefined) return readBlobRangeSync(path, start, length, into);
  const fd = openBlobSync(path, true);
  if (fd === undefined) return readBlobRangeSync(path, start, length, into);
  try {
    const span = directSpan(fstatSync(fd).size, start, length);
    return span ? read(fd, span) : into.subarray(0, 0);
  } catch (err) {
    throw readFailed(path, err);
  } finally {
    closeSync(fd);
  }
}

/**
 * The layout of an O_DIRECT read of blob bytes [start, start + length) straight into a window
 * whose memory starts on a DIRECT_READ_ALIGN boundary (readBlobRangeDirectInPlaceSync): the
 * window's first byte is the file's aligned byte before the range, so the blob's byte `start`
 * lands at `offset`, and the window needs `bytes` bytes (the range and its alignment on both
 * sides). Pure.
 */
export function directWindow(start: number, length: number): { offset: number; bytes: number } {
  const offset = (HEADER_BYTES + start) % DIRECT_READ_ALIGN;
  return { offset, bytes: Math.ceil((offset + length) / DIRECT_READ_ALIGN) * DIRECT_READ_ALIGN };
}

/**
 * readBlobRangeDirectSync with no copy: the aligned blocks that cover the range are read
 * straight into `window`, whose memory must start on a DIRECT_READ_ALIGN boundary (a
 * WebAssembly memory at an offset that is a multiple of it: a memory starts on a page) and hold
 * directWindow(start, length).bytes; the bytes before and after the range in it are undefined
 * (read directly, the file's neighbouring bytes; on the fallbacks below, untouched). Returns
 * the view of the range, at directWindow's offset in the window, shorter when the blob ends
 * first; a window that is too short or lies at an unaligned offset is a RangeError (the
 * caller's mistake). Where the system refuses the read
 * (EINVAL: a filesystem without O_DIRECT, or memory the device cannot take at that address)
 * the range is read as readBlobRangeDirectSync reads it (through its aligned scratch, or
 * buffered), into the same place. Where the heap has huge pages (heapHugePages) the range is
 * read that way too, through the heap scratch and copied: the copy costs less than the reads
 * into 4 KiB pages lose (a (10,4) repair of a wiped domain, 9 interleaved runs each: a median
 * 227 MiB/s against 187). Errors as readBlobRangeDirectSync.
 */
export function readBlobRangeDirectInPlaceSync(path: string, start: number, length: number, window: Uint8Array): Uint8Array {
  const at = directWindow(start, length);
  if (window.length < at.bytes || window.byteOffset % DIRECT_READ_ALIGN !== 0)
    throw new RangeError(`direct read window of ${window.length} bytes at offset ${window.byteOffset}: needs ${at.bytes} bytes at a multiple of ${DIRECT_READ_ALIGN}`);
  const into = window.subarray(at.offset, at.offset + length);
  if (heapHugePages()) return readBlobRangeDirectSync(path, start, length, into);
  return withDirectFile(path, start, length, into, (fd, span) => {
    const got = readSpan(fd, span, window);
    return got === undefined ? readBlobRangeDirectSync(path, start, length, into) : directChecked(path, span, window, got);
  });
}

/** The aligned file span an O_DIRECT read of blob bytes [start, start + length) covers in a
 * file of `fileSize` bytes: [a0, a1), of which [a0, need) must be read (the range, and the
 * header when the range starts in the file's first block); the range is file bytes
 * [from, to). Undefined when there is nothing to read (nothing of the blob there, and no
 * header to check). */
interface DirectSpan {
  a0: number;
  a1: number;
  need: number;
  from: number;
  to: number;
}

function directSpan(fileSize: number, start: number, length: number): DirectSpan | undefined {
  const want = Math.max(0, Math.min(length, fileSize - HEADER_BYTES - start));
  const from = HEADER_BYTES + start;
  const to = from + want;
  const a0 = from - (from % DIRECT_READ_ALIGN);
  if (want === 0 && a0 > 0) return undefined;
  const need = Math.max(want > 0 ? to : 0, a0 === 0 ? HEADER_BYTES : 0);
  return { a0, a1: Math.ceil(need / DIRECT_READ_ALIGN) * DIRECT_READ_ALIGN, need, from, to };
}

/** Whether an O_DIRECT read of `span` that has `got` bytes, the last read `n` (-1 before the
 * first), reads on: a read short of the aligned end is the end of the file (the next one would
 * not even be aligned), which is then shorter than it was at the open. */
const directMore = (span: DirectSpan, got: number, n: number): boolean => n !== 0 && got % DIRECT_READ_ALIGN === 0 && span.a0 + got < span.need;

/** Reads `span` of `fd` (opened O_DIRECT) into `buf` (aligned memory, from its start): the
 * bytes read (short at the end of the file), or undefined when the system refused the first
 * read (EINVAL: the caller reads another way). Throws the read's other errors. */
function readSpan(fd: number, span: DirectSpan, buf: Uint8Array): number | undefined {
  let got = 0;
  for (let n = -1; directMore(span, got, n); got += n) {
    try {
      n = readSync(fd, buf, got, span.a1 - span.a0 - got, span.a0 + got);
    } catch (err) {
      if (refusedAtStart(got, err)) return undefined;
      throw err;
    }
  }
  return got;
}

/** Whether a read that threw `err` with nothing read yet is the filesystem refusing O_DIRECT
 * (a caller then reads buffered). */
const refusedAtStart = (got: number, err: unknown): boolean => got === 0 && refusesDirect(err);

/** Checks what an O_DIRECT read of `span` got (`got` bytes into `buf` from a0: the header
 * when read, the range whole) and returns the range's view of `buf`. */
function directChecked(path: string, span: DirectSpan, buf: Uint8Array, got: number): Uint8Array {
  if (span.a0 === 0) etagOfHeader(Buffer.from(buf.buffer, buf.byteOffset, HEADER_BYTES), Math.min(got, HEADER_BYTES), path);
  if (span.to > span.from && span.a0 + got < span.to) throw cutShort(path);
  return buf.subarray(span.from - span.a0, span.to - span.a0);
}

/** directChecked, the range then copied into `into`. */
function directOut(path: string, span: DirectSpan, scratch: Uint8Array, got: number, into: Uint8Array): Uint8Array {
  const range = directChecked(path, span, scratch, got);
  const out = into.subarray(0, range.length);
  out.set(range);
  return out;
}

/** Page-aligned buffers of the asynchronous direct reads (readBlobRangeDirect), kept for the
 * next reads: an event loop has many reads in flight, each with a buffer of its own. At most
 * DIRECT_POOL_KEEP are kept, each of DIRECT_POOL_BYTES (a larger read gets one of its own). */
const directPool: Uint8Array[] = [];
const DIRECT_POOL_KEEP = 16;
const DIRECT_POOL_BYTES = 17 * WASM_PAGE; // a 1 MiB window and its alignment

/**
 * readBlobRangeDirectSync for an event loop: the same O_DIRECT read on the thread pool, into a
 * page-aligned buffer of its own (pooled), the range copied to `into`. For a pass that reads
 * many bytes nobody will read again soon from the main thread (an erasure scrub's log copies,
 * read in 1 MiB windows). Resolves undefined when O_DIRECT cannot be had (no such flag, or the
 * filesystem refuses it): the caller reads buffered. Errors as readBlobRangeDirectSync.
 */
export async function readBlobRangeDirect(path: string, start: number, length: number, into: Uint8Array): Promise<Uint8Array | undefined> {
  if (constants.O_DIRECT === undefined) return undefined;
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_DIRECT);
  } catch (err) {
    return openRefused(path, true, err);
  }
  let scratch: Uint8Array | undefined;
  try {
    const span = directSpan((await handle.stat()).size, start, length);
    if (!span) return into.subarray(0, 0);
    const bytes = span.a1 - span.a0;
    scratch = bytes <= DIRECT_POOL_BYTES ? (directPool.pop() ?? alignedBuffer(DIRECT_POOL_BYTES)) : alignedBuffer(bytes);
    let got = 0;
    for (let n = -1; directMore(span, got, n); got += n) {
      try {
        n = (await handle.read(scratch, got, bytes - got, span.a0 + got)).bytesRead;
      } catch (err) {
        if (refusedAtStart(got, err)) return undefined;
        throw err;
      }
    }
    return directOut(path, span, scratch, got, into);
  } catch (err) {
    throw readFailed(path, err);
  } finally {
    if (scratch?.length === DIRECT_POOL_BYTES && directPool.length < DIRECT_POOL_KEEP) directPool.push(scratch);
    await handle.close().catch(() => undefined);
  }
}

/** Writes all of `data` at the handle's current position (loops over short writes). */
export async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.byteLength) {
    const { bytesWritten } = await handle.write(data, off, data.byteLength - off);
    if (bytesWritten <= 0) throw new ProviderError('Io', 'write made no progress');
    off += bytesWritten;
  }
}
