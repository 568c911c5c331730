/**
 * @module Writing a body to a synced temp file, ready to be renamed into place.
 *
 * Temp files are `tmp/<pid>.<random>.tmp`: list and get never look there, and the
 * pid lets the next open remove the leftovers of dead writers without touching the
 * in-flight files of live ones.
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { checkedChunks, isReplayable, replayableLength } from '../body.js';
import { ProviderError, type BlobBody } from '../provider.js';
import { HEADER_BYTES, newHeader, writeAll } from './blob-file.js';
import { isPidAlive } from './lock-file.js';
import { DIRECT_MIN_BYTES, openDirect, stagePool, writeDirect } from './direct-write.js';

/** Temp files older than this are removed at open even if their pid is alive (pid reuse). */
export const STALE_TEMP_AGE_MS = 24 * 3600 * 1000;

/** Most buffers handed to one writev call (Linux IOV_MAX). */
const IOV_MAX = 1024;

/** A streamed body's chunks below this many bytes (with the file header and whatever else is
 * held) wait for the next chunk and are written with it in one writev. */
export const COALESCE_BYTES = 64 * 1024;

/**
 * Written bytes not yet flushed at which a background flush (fdatasync) starts, when none is
 * running: 1 MiB, so the disk starts working early in a large body and stays busy while the
 * rest arrives (one flush at a time: each takes all that was written meanwhile, so a disk
 * slower than the network gets fewer, larger flushes), and the final flush has only the
 * tail left. Small blobs (one write) never start one.
 */
const EARLY_SYNC_BYTES = 1024 * 1024;

const TEMP_NAME = /^(\d+)\.[0-9a-f]+\.tmp$/;

export interface TempBlob {
  path: string;
  etag: string;
  /** Blob bytes (without the header). */
  size: number;
  mtime: Date;
}

/**
 * Streams `body` (after a fresh header) into a new temp file in `tmpDir`, fsyncs it
 * and closes it; `released` is called with each streamed chunk once its write completed.
 * On any failure the temp file is removed and the error rethrown (ProviderError
 * 'LengthMismatch', 'Aborted', or 'Io').
 */
export async function writeTempBlob(
  tmpDir: string,
  key: string,
  body: BlobBody,
  contentLength: number | undefined,
  signal: AbortSignal | undefined,
  released?: (chunk: Uint8Array) => void,
  /** The directory takes O_DIRECT writes (direct-write.ts's probe said so). */
  direct = false
): Promise<TempBlob> {
  const path = join(tmpDir, `${process.pid}.${randomBytes(8).toString('hex')}.tmp`);
  const { header, etag } = newHeader();
  const length = replayableLength(body) ?? contentLength;
  const regions = direct && length !== undefined && HEADER_BYTES + length >= DIRECT_MIN_BYTES ? stagePool.takePair() : undefined;
  if (regions) {
    let given = false;
    const give = () => {
      if (!given) stagePool.give(regions); // writeDirect leaves no write running, even on failure
      given = true;
    };
    try {
      // With O_DIRECT the bytes are on the device when writeDirect returns; the allocation
      // and the size are not until the fdatasync, which runs with the regions back in the pool.
      return await synced(path, etag, await openDirect(path), async (handle) => {
        try {
          return await writeDirect(handle, header, checkedChunks(body, key, contentLength, signal), regions, isReplayable(body) ? undefined : released);
        } finally {
          give();
        }
      });
    } finally {
      give();
    }
  }
  return synced(path, etag, await open(path, 'wx', 0o644), async (handle) => {
    if (Array.isArray(body) || body instanceof Uint8Array) {
      // One vectored write for the header and every chunk.
      const list = body instanceof Uint8Array ? [body] : (body as readonly Uint8Array[]);
      return writeChunkList(handle, key, [header, ...list], contentLength, signal, HEADER_BYTES);
    }
    // One write in flight while the next chunk is produced (a body generator may hash
    // or frame it meanwhile); waiting for that write before issuing the next one is the
    // backpressure, so at most two writes' worth of chunks are held.
    // (Each write gets a no-op handler at once: it may fail while we await the body.)
    // Small chunks are not written on their own: the file header and every chunk below
    // COALESCE_BYTES wait for what follows and go out with it in one vectored write (an
    // erasure fragment's header, its cells and its trailer are pushed separately; each
    // write is a syscall and a thread-pool round trip).
    // Large bodies are flushed as they arrive (EarlyFlusher), so that the final flush has
    // only the tail left to wait for: the disk works while the rest is still coming in.
    let size = 0;
    const flusher = new EarlyFlusher(handle);
    let inFlight: Promise<void> = Promise.resolve();
    let held: Uint8Array[] = [header];
    let heldBytes = header.byteLength;
    const writeHeld = (): void => {
      const batch = held;
      const bytes = heldBytes;
      held = [];
      heldBytes = 0;
      inFlight = writeVector(handle, batch);
      inFlight.then(
        () => {
          flusher.written(bytes);
          // written: the caller may reuse them (PutOptions.released); not the file header
          if (released) for (const c of batch) if (c !== header) released(c);
        },
        () => undefined
      );
    };
    try {
      for await (const chunk of checkedChunks(body, key, contentLength, signal)) {
        held.push(chunk);
        heldBytes += chunk.byteLength;
        size += chunk.byteLength;
        if (heldBytes < COALESCE_BYTES && held.length < IOV_MAX) continue;
        await inFlight;
        writeHeld();
      }
      // Stopped before the last write (or the one in flight) completes: its bytes go with the
      // final flush, and a blob of one write never starts an early one.
      flusher.stop();
      await inFlight;
      if (held.length) writeHeld();
    } finally {
      flusher.stop(); // the last write's bytes go with the final flush below
      await inFlight.catch(() => undefined); // never leave a write running on error
      await flusher.idle();
    }
    await inFlight;
    flusher.throwIfFailed();
    return size;
  });
}

/**
 * Runs `write` (which returns the body bytes it wrote) on the new temp file `handle`, then
 * fdatasyncs it: the data and what reading it back needs (the size); the name is made durable
 * by the rename and the directory fsync that follow. Closes the handle; on failure removes
 * the file and rethrows.
 */
async function synced(path: string, etag: string, handle: FileHandle, write: (handle: FileHandle) => Promise<number>): Promise<TempBlob> {
  let ok = false;
  try {
    const size = await write(handle);
    await handle.datasync();
    ok = true;
    return { path, etag, size, mtime: new Date() };
  } finally {
    await handle.close().catch(() => {});
    if (!ok) await unlink(path).catch(() => {});
  }
}

/**
 * Background flushes of a file being appended: at most one fdatasync runs at a time, and
 * one starts whenever at least {@link EARLY_SYNC_BYTES} have been written (their write
 * completed) since the last one started. The first failure is kept and rethrown by
 * throwIfFailed(); no flush starts after it.
 */
class EarlyFlusher {
  readonly #handle: FileHandle;
  #unflushed = 0; // bytes written (write completed) since the last flush started
  #running: Promise<void> | undefined;
  #stopped = false;
  #failure: unknown;

  constructor(handle: FileHandle) {
    this.#handle = handle;
  }

  /** A write of `n` bytes completed. Starts a flush if one is due. */
  written(n: number): void {
    this.#unflushed += n;
    this.#maybeFlush();
  }

  /** No flush starts from now on (the caller flushes the end itself). */
  stop(): void {
    this.#stopped = true;
  }

  #maybeFlush(): void {
    if (this.#running || this.#stopped || this.#failure !== undefined || this.#unflushed < EARLY_SYNC_BYTES) return;
    this.#unflushed = 0;
    this.#running = this.#handle.datasync().then(
      () => {
        this.#running = undefined;
        this.#maybeFlush();
      },
      (err: unknown) => {
        this.#failure ??= err;
        this.#running = undefined;
      }
    );
  }

  /** Resolves when no flush is running (never rejects: see throwIfFailed). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Throws the first flush failure, if any. */
  throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }
}

async function writeChunkList(
  handle: FileHandle,
  key: string,
  chunks: readonly Uint8Array[],
  contentLength: number | undefined,
  signal: AbortSignal | undefined,
  /** Leading bytes of `chunks` that are not body (the file header). */
  framing = 0
): Promise<number> {
  const size = chunks.reduce((n, c) => n + c.byteLength, 0) - framing;
  if (contentLength !== undefined && size !== contentLength) {
    throw new ProviderError(
      'LengthMismatch',
      `${key}: body has ${size} bytes, contentLength says ${contentLength}`
    );
  }
  for (let i = 0; i < chunks.length; i += IOV_MAX) {
    if (signal?.aborted)
      throw new ProviderError('Aborted', `${key}: aborted`, { cause: signal.reason });
    await writeVector(handle, chunks.slice(i, i + IOV_MAX));
  }
  return size;
}

/** Writes every chunk of `batch` (at most IOV_MAX) at the file position, in one writev unless it
 * comes back short. */
async function writeVector(handle: FileHandle, batch: readonly Uint8Array[]): Promise<void> {
  const want = batch.reduce((n, c) => n + c.byteLength, 0);
  const { bytesWritten } = await handle.writev(batch as Uint8Array[]);
  if (bytesWritten === want) return;
  // libuv retries short writes itself; finish by hand if one still comes back short
  let skip = bytesWritten;
  for (const c of batch) {
    if (skip >= c.byteLength) skip -= c.byteLength;
    else {
      await writeAll(handle, c.subarray(skip));
      skip = 0;
    }
  }
}

/**
 * Removes temp files left by writers that are gone (pid dead, or older than
 * STALE_TEMP_AGE_MS). Files of live writers are kept. Returns how many were removed.
 */
export async function cleanTempDir(tmpDir: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(tmpDir)) {
    const m = TEMP_NAME.exec(name);
    const path = join(tmpDir, name);
    let stale = !m || !isPidAlive(Number(m[1]));
    if (!stale) {
      const st = await stat(path).catch(() => undefined);
      stale = st !== undefined && Date.now() - st.mtimeMs > STALE_TEMP_AGE_MS;
    }
    if (
      stale &&
      (await unlink(path).then(
        () => true,
        () => false
      ))
    )
      removed++;
  }
  return removed;
}
