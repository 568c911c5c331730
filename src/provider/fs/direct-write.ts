/**
 * @module Large blob files written with O_DIRECT, from page-aligned staging memory.
 *
 * A buffered write copies every byte into new page-cache pages, and on this kind of machine
 * (a VM whose guest memory is first touched by those pages) that copy is most of a large
 * PUT's cost, and swings tenfold from one minute to the next. O_DIRECT skips it: the device
 * reads the bytes straight from the process's memory. The fdatasync at the end still makes the
 * file durable (the allocation and the size are metadata that O_DIRECT does not flush), so
 * nothing about durability changes; the later reads of the blob fill the page cache instead.
 *
 * O_DIRECT wants the file offset, the length and the memory address aligned to the device's
 * logical block ({@link DIRECT_ALIGN} covers 512 and 4096). JavaScript cannot choose an
 * address, but a WebAssembly.Memory starts on a page boundary, so the staging regions are
 * carved out of one: the body is copied into a region (one memcpy on the main thread, which
 * is cheaper than the kernel's copy into new pages), and whole regions are written at
 * aligned offsets while the next fills. The last region is zero-padded to the alignment and
 * the file truncated back to its length before the fdatasync.
 *
 * Whether a directory takes O_DIRECT at all (tmpfs does not, some filesystems accept the
 * flag and then fail the write) is probed once per provider with a real aligned write
 * ({@link probeDirectWrites}); when it fails, blobs are written buffered as before.
 *
 * Memory: regions come from a process-wide pool of at most {@link STAGE_POOL_BYTES}, made as
 * needed in WebAssembly memories of {@link STAGE_MEMORY_BYTES} (a memory cannot grow without
 * detaching the regions in use, so more are made instead). A writer takes two regions; when
 * the pool has none left, its blob is written buffered. So however many large uploads a
 * client opens, staging holds no more than the cap.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ProviderError } from '../provider.js';

/** File offsets, lengths and addresses of O_DIRECT writes are multiples of this. */
export const DIRECT_ALIGN = 4096;
/** Bulk blobs (PutOptions.bulk) at least this long, header included, are written with O_DIRECT
 * when the directory takes it: a (10,4) fragment of a 64 MiB chunk blob is 6.4 MiB, of a body's
 * last, shorter chunk or an 8 MiB one 0.8 MiB or less. Below it,
 * a device write per put costs more than the page-cache copy it saves. */
export const DIRECT_MIN_BYTES = 256 * 1024;
/** One staging region: one write of this many bytes (512 KiB to 2 MiB writes run at the same
 * pace here; 128 KiB at half of it). */
export const STAGE_BYTES = 512 * 1024;
/** Bytes of one WebAssembly memory carved into regions. */
export const STAGE_MEMORY_BYTES = 16 * 1024 * 1024;
/** Most staging memory the process holds: 128 regions, 64 writers at once. */
export const STAGE_POOL_BYTES = 64 * 1024 * 1024;
/** Open flags of a new temp file written with O_DIRECT (undefined where the platform has none). */
const DIRECT_FLAGS =
  constants.O_DIRECT === undefined
    ? undefined
    : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT;

const WASM_PAGE = 64 * 1024;

/** Process-wide pool of aligned staging regions (module doc). */
class StagePool {
  readonly #free: Uint8Array[] = [];
  #made = 0; // bytes of WebAssembly memory made so far
  #cannotGrow = false; // a memory could not be had (address-space limit): no more tries

  /** Two regions, or undefined when the pool is at its cap or memory cannot be had (the
   * caller writes buffered). Never throws. */
  takePair(): [Uint8Array, Uint8Array] | undefined {
    while (this.#free.length < 2 && !this.#cannotGrow && this.#made + STAGE_MEMORY_BYTES <= STAGE_POOL_BYTES) {
      try {
        this.#grow();
      } catch {
        this.#cannotGrow = true; // RangeError from WebAssembly.Memory: stay buffered
      }
    }
    if (this.#free.length < 2) return undefined;
    return [this.#free.pop()!, this.#free.pop()!];
  }

  give(regions: readonly Uint8Array[]): void {
    for (const r of regions) this.#free.push(r);
  }

  /** Regions free now (tests). */
  get free(): number {
    return this.#free.length;
  }

  /** Bytes of memory made so far (tests). */
  get made(): number {
    return this.#made;
  }

  #grow(): void {
    const memory = new WebAssembly.Memory({ initial: STAGE_MEMORY_BYTES / WASM_PAGE, maximum: STAGE_MEMORY_BYTES / WASM_PAGE });
    this.#made += STAGE_MEMORY_BYTES;
    for (let at = 0; at < STAGE_MEMORY_BYTES; at += STAGE_BYTES) this.#free.push(new Uint8Array(memory.buffer, at, STAGE_BYTES));
  }
}

export const stagePool = new StagePool();

/**
 * True when files in `dir` can be written with O_DIRECT from WebAssembly memory, as the staging
 * regions are: creates a probe temp file (a name cleanTempDir removes if we die), writes one
 * aligned block to it from a memory of its own (so a busy pool cannot make it answer no), and
 * removes it (also when the open made the file and then refused the flag). Never throws.
 */
export async function probeDirectWrites(dir: string): Promise<boolean> {
  if (DIRECT_FLAGS === undefined) return false;
  const path = join(dir, `${process.pid}.${randomBytes(8).toString('hex')}.tmp`);
  let handle: FileHandle | undefined;
  try {
    const block = new Uint8Array(new WebAssembly.Memory({ initial: 1, maximum: 1 }).buffer, 0, DIRECT_ALIGN);
    handle = await open(path, DIRECT_FLAGS, 0o644);
    const { bytesWritten } = await handle.write(block, 0, DIRECT_ALIGN, 0);
    return bytesWritten === DIRECT_ALIGN;
  } catch {
    return false;
  } finally {
    await handle?.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
  }
}

/** Opens `path` (new) for O_DIRECT writes; when that fails, removes what the open may have
 * created (a filesystem can create the file and then refuse the flag) and rethrows. */
export async function openDirect(path: string): Promise<FileHandle> {
  try {
    return await open(path, DIRECT_FLAGS!, 0o644);
  } catch (err) {
    await unlink(path).catch(() => undefined);
    throw err;
  }
}

/** Writes all of `data` at `position` (loops over short writes, which O_DIRECT rarely makes). */
async function writeAllAt(handle: FileHandle, data: Uint8Array, position: number): Promise<void> {
  let off = 0;
  while (off < data.byteLength) {
    const { bytesWritten } = await handle.write(data, off, data.byteLength - off, position + off);
    if (bytesWritten <= 0) throw new ProviderError('Io', 'write made no progress');
    off += bytesWritten;
  }
}

/**
 * Writes `header` and then every chunk of `chunks` to the O_DIRECT `handle` from offset 0,
 * through the two staging `regions`: one region is written while the other fills, so at
 * most one write is in flight. `released` hears of each chunk once it is copied. The file
 * ends exactly after the last byte (the padded last write is truncated back). Returns the
 * bytes of `chunks`. On failure no write is left running (the regions may be given back).
 */
export async function writeDirect(
  handle: FileHandle,
  header: Uint8Array,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  regions: readonly [Uint8Array, Uint8Array],
  released?: (chunk: Uint8Array) => void
): Promise<number> {
  let cur = 0; // region being filled
  let fill = 0; // bytes in it
  let position = 0; // file offset of its first byte
  let inFlight: Promise<void> | undefined;
  const flush = async (length: number): Promise<void> => {
    if (inFlight) await inFlight;
    inFlight = writeAllAt(handle, regions[cur]!.subarray(0, length), position);
    inFlight.catch(() => undefined); // awaited before the next write and at the end
    position += length;
    cur ^= 1;
    fill = 0;
  };
  const copy = async (bytes: Uint8Array): Promise<void> => {
    for (let off = 0; off < bytes.byteLength; ) {
      const n = Math.min(STAGE_BYTES - fill, bytes.byteLength - off);
      regions[cur]!.set(off === 0 && n === bytes.byteLength ? bytes : bytes.subarray(off, off + n), fill);
      fill += n;
      off += n;
      if (fill === STAGE_BYTES) await flush(STAGE_BYTES);
    }
  };
  let size = 0;
  try {
    await copy(header);
    for await (const chunk of chunks) {
      await copy(chunk);
      size += chunk.byteLength;
      released?.(chunk);
    }
    const end = position + fill;
    const padded = Math.ceil(fill / DIRECT_ALIGN) * DIRECT_ALIGN;
    if (padded > 0) {
      regions[cur]!.fill(0, fill, padded);
      await flush(padded);
    }
    await inFlight;
    if (padded !== fill) await handle.truncate(end);
    return size;
  } finally {
    await inFlight?.catch(() => undefined);
  }
}
