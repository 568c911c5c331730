/**
 * @module The fs provider: blobs in a local directory (the embedded default).
 *
 *   <dir>/blobs/   one file per blob, at a path derived from the key's hex (key-path.ts)
 *   <dir>/tmp/     temp files being written (never listed; dead writers' are cleaned at open)
 *   <dir>/locks/   per-key lock files (key-lock.ts; dead owners' are cleaned at open)
 *   <dir>/LOCK     the repository's exclusive lock, when taken (directory-lock.ts)
 *
 * A put streams into a temp file, fsyncs it, then — holding the key lock — checks
 * its precondition, renames the file into place and fsyncs the directory. The parent of every
 * directory it had to create is fsynced too (a new directory's entry lives in its parent): in
 * exclusive mode while the body is still being written, else after the rename. Only then
 * does it resolve. Readers open the file once and stream from that descriptor, so a
 * concurrent replacement never mixes two versions.
 */
import { mkdir, open, rename, rmdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable, addAbortSignal } from 'node:stream';
import { discardBody, throwIfAborted } from '../body.js';
import { keyBytes, listLimit } from '../key.js';
import {
  ProviderError,
  type BlobBody,
  type BlobInfo,
  type ByteRange,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type Provider,
  type ProviderCapabilities,
  type PutOptions,
  withMayLand,
} from '../provider.js';
import { resolveRange } from '../range.js';
import { cutShort, HEADER_BYTES, readEtag } from './blob-file.js';
import { fromKeyHex, keyPath, toKeyHex } from './key-path.js';
import { withKeyLock } from './key-lock.js';
import { cleanLockDir } from './lock-file.js';
import { walkKeys, type WalkEntry } from './walk.js';
import { HandleCache } from './handle-cache.js';
import { preadAt, preadvAt, syncDirectory, syncDirectoryIfReadable } from './fd-io.js';
import { cleanTempDir, writeTempBlob } from './write-temp.js';
import { probeDirectWrites } from './direct-write.js';
import { checkSegmentSize, openSegmentFile } from './log-segment.js';
import { MAX_DIR_HANDLES } from './fd-budget.js';
import type { AppendLog } from '../append-log.js';

export { acquireDirectoryLock, DIRECTORY_LOCK_NAME, type DirectoryLock } from './directory-lock.js';

export interface FsProviderOptions {
  /** Root directory; created (with its sub-directories) if missing. */
  dir: string;
  /**
   * The caller holds the directory lock (acquireDirectoryLock), so no other process
   * mutates this directory: key locks are taken in memory instead of as lock files, and
   * directories known to exist are not re-created. Several times fewer syscalls per put.
   */
  exclusive?: boolean;
  /**
   * Write bulk blobs (PutOptions.bulk) with O_DIRECT when the directory takes it
   * (direct-write.ts). Default false: every write buffered.
   */
  directWrites?: boolean;
  /**
   * Exclusive mode: blob read handles and directory handles kept open at most (default 256
   * and 64; fd-budget.ts handleBudget sizes them when a process opens many providers).
   */
  blobHandles?: number;
  dirHandles?: number;
  /** Exclusive mode: how long a read waits for a free blob handle when all are in use before it
   * fails 'Unavailable' (EMFILE under it), ms; default handle-cache.ts HANDLE_WAIT_MS. */
  handleWaitMs?: number;
  /** Directories remembered as existing and as synced in their parent, each (default
   * MAX_REMEMBERED_DIRS): older ones are forgotten, and cost a mkdir or a sync again. */
  rememberedDirs?: number;
}

/** Read-stream chunk size: 64 KiB, as Node's own fs streams. */
const READ_HIGH_WATER_MARK = 64 * 1024;

/** Times a put re-creates its directory when a concurrent delete pruned it before the rename. */
const RENAME_ATTEMPTS = 5;

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

function ioError(what: string, err: unknown, mayLand = false): ProviderError {
  if (err instanceof ProviderError) return mayLand ? withMayLand(err) : err;
  const code = errno(err);
  const retryable = code === 'EMFILE' || code === 'ENFILE' || code === 'EAGAIN' || code === 'EBUSY';
  return new ProviderError(
    retryable ? 'Unavailable' : 'Io',
    `${what}: ${(err as Error)?.message ?? err}`,
    { cause: err, mayLand }
  );
}

/**
 * Most directories the fs provider remembers per set (#knownDirs: exist; #durableDirs: entry
 * synced). Every erasure fragment of a chunk sits in directories of its own, so without a cap
 * these sets grow with the number of blobs written for the life of the process (two strings per
 * fragment per domain). Forgetting is safe: a forgotten directory costs one mkdir or one sync
 * of its parent again on its next put.
 */
export const MAX_REMEMBERED_DIRS = 16_384;

/** Adds `value` to `set`, first dropping the oldest entries (insertion order) past `max`. */
function addBounded(set: Set<string>, value: string, max: number): void {
  if (set.has(value)) return;
  if (set.size >= max) {
    const it = set.values();
    for (let drop = set.size - max + 1; drop > 0; drop--) set.delete(it.next().value as string);
  }
  set.add(value);
}

/** The directories `mkdir(dir, { recursive: true })` created when it returned `first`: `dir`
 * and its ancestors up to `first`. Pure. */
function createdChain(first: string, dir: string): string[] {
  const top = resolve(first);
  const chain: string[] = [];
  let c = resolve(dir);
  if (c !== top && !c.startsWith(top.endsWith(sep) ? top : top + sep)) return chain; // `first` is not `dir` or above it
  for (; ; c = dirname(c)) {
    chain.push(c);
    if (c === top || dirname(c) === c) return chain;
  }
}

/** Errors of a directory sync that say nothing about what the disk holds: the directory is gone
 * (a concurrent delete pruned it), no descriptor was left, or it may not be opened. */
function isOpenError(err: unknown): boolean {
  const code = errno(err);
  return code === 'ENOENT' || code === 'EMFILE' || code === 'ENFILE' || code === 'EACCES' || code === 'EPERM' || code === 'ENOTDIR';
}

/** Opens a blob file; undefined if the key has no blob. */
async function openBlob(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, 'r');
  } catch (err) {
    if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return undefined;
    throw err;
  }
}

async function infoOf(handle: FileHandle, key: string, path: string): Promise<BlobInfo> {
  const etag = await readEtag(handle, path);
  const st = await handle.stat();
  return { key, size: st.size - HEADER_BYTES, etag, lastModified: st.mtime };
}

/** Listed entries whose files are opened (or stat'ed) at once: a list costs round trips
 * through the thread pool per entry, and one after the other they bound its speed; 16 keeps
 * libuv's 4 threads busy without queueing hundreds of jobs ahead of commit-log appends when
 * a census lists every domain at once. */
const LIST_BATCH = 16;

/** BlobInfo of a listed file, undefined when it was deleted since its directory was read.
 * Without `etag`, one stat instead of open, header read, stat and close (ListOptions.etags). */
async function listedInfo(entry: WalkEntry, etag: boolean): Promise<BlobInfo | undefined> {
  const key = fromKeyHex(entry.keyHex);
  if (!etag) {
    let st;
    try {
      st = await stat(entry.path);
    } catch (err) {
      if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return undefined;
      throw err;
    }
    // A file cut below its header is a blob whose header is damaged: listed (at size 0, never
    // a negative one) like any other, so that one damaged file does not fail the listing of a
    // whole directory; its reads fail ('Corrupt').
    return { key, size: Math.max(0, st.size - HEADER_BYTES), etag: '', lastModified: st.mtime };
  }
  const handle = await openBlob(entry.path);
  if (!handle) return undefined;
  try {
    return await infoOf(handle, key, entry.path).catch((err: unknown) => {
      // A listing cannot go on past a file that is not a blob file: the listing fails ('Io',
      // as without etags), where a read of that one blob says it is damaged ('Corrupt').
      throw err instanceof ProviderError && err.code === 'Corrupt' ? new ProviderError('Io', err.message, { cause: err }) : err;
    });
  } finally {
    await handle.close();
  }
}

/** Current etag at `path`, undefined when absent. */
async function currentEtag(path: string): Promise<string | undefined> {
  const handle = await openBlob(path);
  if (!handle) return undefined;
  try {
    return await readEtag(handle, path);
  } finally {
    await handle.close();
  }
}

function checkPrecondition(key: string, current: string | undefined, options: PutOptions): void {
  if (options.ifNoneMatch === '*' && current !== undefined) {
    throw new ProviderError('PreconditionFailed', `${key}: exists (ifNoneMatch: '*')`);
  }
  if (options.ifMatch !== undefined && current !== options.ifMatch) {
    throw new ProviderError(
      'PreconditionFailed',
      `${key}: etag is ${current ?? 'absent'}, not ${options.ifMatch}`
    );
  }
}

/** Where a key's blob lives: its UTF-8 bytes, the directories from the blob root down, the file. */
interface Location {
  bytes: Buffer;
  dirs: string[];
  file: string;
}

export class FsProvider implements Provider {
  readonly kind = 'fs';
  readonly capabilities: ProviderCapabilities = { conditionalWrites: true, sortedList: true };
  readonly dir: string;
  readonly #blobs: string;
  readonly #tmp: string;
  readonly #locks: string;
  readonly #exclusive: boolean;
  /** Exclusive mode: tails of the in-process per-key lock chains. */
  readonly #keyTails = new Map<string, Promise<void>>();
  /** Exclusive mode: directories known to exist (only this process creates or prunes them). */
  readonly #knownDirs = new Set<string>();
  /** Exclusive mode: etags of the blobs this process wrote (a conditional put needs no read). */
  readonly #etags = new Map<string, string>();
  /** Exclusive mode: open handles of directories, kept for fsync (the commit path fsyncs the
   * same few directories over and over: open + close each time is two syscalls of waste). */
  readonly #dirHandles = new Map<string, FileHandle>();
  /** Exclusive mode: open handles for positional reads (see handle-cache.ts). */
  readonly #handles: HandleCache;
  readonly #maxDirHandles: number;
  readonly #maxRemembered: number;
  #closed = false;
  /** Directories under blobs/ whose entry in their parent this provider made durable (or found
   * already synced by one of its puts): a put under them syncs only its own directory. */
  readonly #durableDirs = new Set<string>();
  /** Syncs of a directory's entry in flight, by directory: a put under a directory another put
   * just created waits for that sync instead of answering before it. A prune of the directory
   * marks its sync stale and forgets it: the entry that sync makes durable may be the removed
   * directory's, not the one a later mkdir makes, so it no longer counts as done. */
  readonly #dirSyncs = new Map<string, { done: Promise<void>; stale: boolean }>();
  /** Count of #forgetDir calls: a directory handle whose open spans one is used once and not
   * cached (it may be of a directory removed meanwhile). */
  #forgets = 0;
  /** Set when a directory sync failed (before or after a rename published a blob): what this
   * provider wrote may not be durable while its bytes still read back from the page cache, so
   * every later call fails (a caller that read a failed put back could otherwise take it as
   * done). */
  #syncFailed: Error | undefined;
  /** Large blobs are written with O_DIRECT (set by init when asked for and the probe passes). */
  #direct = false;
  readonly #wantDirect: boolean;

  constructor(dir: string, exclusive = false, directWrites = false, handles: Pick<FsProviderOptions, 'blobHandles' | 'dirHandles' | 'handleWaitMs' | 'rememberedDirs'> = {}) {
    this.#handles = new HandleCache(handles.blobHandles, handles.handleWaitMs);
    this.#maxDirHandles = handles.dirHandles ?? MAX_DIR_HANDLES;
    if (!Number.isInteger(this.#maxDirHandles) || this.#maxDirHandles < 1) throw new RangeError(`fs provider: dirHandles ${this.#maxDirHandles}`);
    this.#maxRemembered = handles.rememberedDirs ?? MAX_REMEMBERED_DIRS;
    if (!Number.isInteger(this.#maxRemembered) || this.#maxRemembered < 1) throw new RangeError(`fs provider: rememberedDirs ${this.#maxRemembered}`);
    this.#exclusive = exclusive;
    this.#wantDirect = directWrites;
    this.dir = resolve(dir);
    this.#blobs = join(this.dir, 'blobs');
    this.#tmp = join(this.dir, 'tmp');
    this.#locks = join(this.dir, 'locks');
  }

  /** Whether large blobs are written with O_DIRECT (asked for, and the directory takes it). */
  get directWrites(): boolean {
    return this.#direct;
  }

  /** Provider.directFileReads: with direct writes, a pass reading many blob files on another
   * thread reads them around the page cache as well. */
  get directFileReads(): boolean {
    return this.#direct;
  }

  /** Creates the layout and removes dead writers' temp files. Called by createFsProvider. */
  async init(): Promise<void> {
    try {
      let first: string | undefined;
      for (const d of [this.#blobs, this.#tmp, this.#locks]) {
        const made = await mkdir(d, { recursive: true });
        if (made !== undefined && (first === undefined || made.length < first.length)) first = made;
      }
      // Once per open, before any blob is published under them: the entries of blobs/, tmp/
      // and locks/, the data directory's own entry in its parent (a previous process may have
      // created it and died before syncing), and those of ancestors created for it here.
      await syncDirectory(this.dir);
      for (const c of first !== undefined ? createdChain(first, this.dir) : []) await syncDirectoryIfReadable(dirname(c));
      await syncDirectoryIfReadable(dirname(this.dir));
      await cleanTempDir(this.#tmp);
      await cleanLockDir(this.#locks);
      this.#direct = this.#wantDirect && (await probeDirectWrites(this.#tmp));
    } catch (err) {
      throw ioError(`${this.dir}: cannot open`, err);
    }
  }

  #locate(key: string): Location {
    const bytes = keyBytes(key);
    const p = keyPath(bytes);
    const dirs = [this.#blobs];
    for (const d of p.dirs) dirs.push(join(dirs[dirs.length - 1], d));
    return { bytes, dirs, file: join(dirs[dirs.length - 1], p.leaf) };
  }

  /** Provider.blobFilePath: where `key`'s blob file is (or would be). */
  blobFilePath(key: string): string {
    this.#checkOpen();
    return this.#locate(key).file;
  }

  #checkOpen(): void {
    if (this.#closed) throw new ProviderError('Io', `${this.dir}: provider is closed`);
    if (this.#syncFailed)
      throw new ProviderError('Io', `${this.dir}: stopped after a failed directory sync (${this.#syncFailed.message}): what it wrote may not be durable; check the disk and restart`);
  }

  /** Records a failed directory sync (see #syncFailed); returns the error. */
  #fence(err: unknown): unknown {
    this.#syncFailed ??= err instanceof Error ? err : new Error(String(err));
    return err;
  }

  /**
   * Makes the entry of each directory of `dirs` below blobs/ (dirs[0], synced at open) durable
   * in its parent, unless this provider already did. Concurrent callers share one sync per
   * directory; a failed sync is not remembered as done, and fences the provider.
   */
  async #entriesDurable(dirs: readonly string[], created: ReadonlySet<string>): Promise<void> {
    const waits: Promise<void>[] = [];
    for (let i = 1; i < dirs.length; i++) {
      const d = dirs[i]!;
      // A directory this put's mkdir made is synced whatever is remembered of it: it may have
      // been pruned and made again since (by this process or, in shared mode, another).
      const fresh = created.has(d);
      if (!fresh && this.#durableDirs.has(d)) continue;
      let sync = fresh ? undefined : this.#dirSyncs.get(d);
      if (!sync) {
        const entry = { done: Promise.resolve(), stale: false };
        const started: Promise<void> = this.#fsyncDir(dirs[i - 1]!).then(
          () => {
            // Pruned meanwhile: what it synced may be the removed directory's entry.
            if (!entry.stale) addBounded(this.#durableDirs, d, this.#maxRemembered);
          },
          (err: unknown) => {
            // Gone since (a delete pruned it): nothing of it to make durable, and not remembered.
            if (errno(err) === 'ENOENT') return;
            throw isOpenError(err) ? err : this.#fence(err);
          }
        );
        entry.done = started.finally(() => {
          if (this.#dirSyncs.get(d) === entry) this.#dirSyncs.delete(d);
        });
        entry.done.catch(() => undefined); // awaited by every put that needs it
        // (A sync of an earlier incarnation of a directory this put made was marked stale when
        // #makeLeafDir forgot it.)
        this.#dirSyncs.set(d, (sync = entry));
      }
      waits.push(sync.done);
    }
    if (waits.length) await Promise.all(waits);
  }

  async put(key: string, body: BlobBody, options: PutOptions = {}): Promise<BlobInfo> {
    let loc: Location;
    try {
      this.#checkOpen();
      loc = this.#locate(key);
      throwIfAborted(options.signal, key);
      const len = options.contentLength;
      if (len !== undefined && (!Number.isSafeInteger(len) || len < 0)) {
        throw new ProviderError('LengthMismatch', `${key}: invalid contentLength ${len}`);
      }
      // Fail fast before writing a body that cannot be published (re-checked under the
      // lock). In exclusive mode the locked check is the only one worth its syscalls.
      if (!this.#exclusive && (options.ifNoneMatch === '*' || options.ifMatch !== undefined)) {
        checkPrecondition(key, await currentEtag(loc.file), options);
      }
    } catch (err) {
      discardBody(body);
      throw ioError(`${key}: put`, err);
    }
    let tempPath: string | undefined; // set while a temp file exists that is ours to remove
    // Once the rename published the blob, a failure (a directory sync) leaves it in place and
    // readable, maybe not durable: the error says so (mayLand), so that a caller resolving the
    // failure by reading back (an erasure anchor copy) does not take it for "not written".
    const state = { published: false };
    const dirsReady = this.#prepareDirs(loc);
    try {
      const temp = await writeTempBlob(this.#tmp, key, body, options.contentLength, options.signal, options.released, this.#direct && options.bulk === true);
      tempPath = temp.path;
      await dirsReady;
      const created = await this.#publish(loc, temp.path, temp.etag, key, options, state);
      tempPath = undefined; // renamed into place
      // The entry of every directory under blobs/ lives in its parent: each one this provider
      // has not made durable yet (created by this put, by a concurrent one, or by an earlier
      // process) is synced there too before the put answers.
      await this.#entriesDurable(loc.dirs, created);
      return { key, size: temp.size, etag: temp.etag, lastModified: temp.mtime };
    } catch (err) {
      if (tempPath && !state.published) await unlink(tempPath).catch(() => {});
      // Empty directories on the path of a blob that never landed (an upload cut off, a refused
      // condition) go again, or every abandoned upload would leave its new ones behind. Such a
      // directory may be a sibling's that has no blob yet: that put makes it again (#publish).
      if (dirsReady && !state.published) {
        await dirsReady.catch(() => undefined);
        await this.#pruneEmpty(loc.dirs);
      }
      throw ioError(`${key}: put`, err, state.published);
    }
  }

  /**
   * Exclusive mode: makes the blob's directories exist, with their entries durable in their
   * parents, while its body is still being written, instead of after its data sync: a blob
   * whose directories are new (an erasure fragment's are, on every write and repair: its child
   * key names two directories of its own) then has only the rename and the sync of its own
   * directory left once its temp file is durable. The directories are shared with sibling
   * keys, which the key lock does not cover: a delete, or a sibling's failed put, may prune one
   * while it is empty. #publish checks again under the key lock, makes it again if so, and the
   * put then syncs its entry after the rename, as before. Undefined when there is nothing to
   * do; never rejects unobserved.
   */
  #prepareDirs(loc: Location): Promise<void> | undefined {
    if (!this.#exclusive) return undefined;
    const leafDir = loc.dirs[loc.dirs.length - 1]!;
    if (this.#knownDirs.has(leafDir)) {
      let durable = true;
      for (let i = 1; i < loc.dirs.length && durable; i++) durable = this.#durableDirs.has(loc.dirs[i]!);
      if (durable) return undefined;
    }
    const ready = (async () => {
      const created = new Set<string>();
      await this.#makeLeafDir(loc, created);
      await this.#entriesDurable(loc.dirs, created);
    })();
    ready.catch(() => undefined); // awaited by put once its temp file is written
    return ready;
  }

  /**
   * mkdir -p of the blob's directory; adds the directories it created to `created`. A prune
   * racing it (an rmdir of a level between mkdir's EEXIST and its check of that level) fails
   * it with ENOENT or ENOTDIR: then it tries again, up to RENAME_ATTEMPTS times, and counts
   * every level below blobs/ as created (an earlier try may have made some), so each one's
   * entry is synced.
   */
  async #makeLeafDir(loc: Location, created: Set<string>): Promise<void> {
    const leafDir = loc.dirs[loc.dirs.length - 1]!;
    for (let attempt = 1; ; attempt++) {
      try {
        const first = await mkdir(leafDir, { recursive: true });
        const made = new Set<string>();
        if (attempt > 1) {
          for (const d of loc.dirs.slice(1)) made.add(d);
        } else if (first !== undefined) {
          const at = loc.dirs.indexOf(first); // mkdir answers with the path as it was joined
          for (const d of at >= 0 ? loc.dirs.slice(at) : createdChain(first, leafDir)) made.add(d);
        }
        // Nothing known of a directory's earlier incarnation holds for the one made now (a
        // put that saw the old one may have learnt something after the prune removed it).
        for (const d of made) {
          this.#forgetDir(d);
          created.add(d);
        }
        break;
      } catch (err) {
        const code = errno(err);
        if ((code !== 'ENOENT' && code !== 'ENOTDIR') || attempt >= RENAME_ATTEMPTS) throw err;
      }
    }
    if (this.#exclusive) addBounded(this.#knownDirs, leafDir, this.#maxRemembered);
  }

  /** Check + mkdir + rename + fsync of the blob's directory, under the key lock; returns the
   * directories its mkdir created. */
  async #publish(
    loc: Location,
    tempPath: string,
    etag: string,
    key: string,
    options: PutOptions,
    state: { published: boolean }
  ): Promise<Set<string>> {
    const leafDir = loc.dirs[loc.dirs.length - 1];
    const created = new Set<string>();
    return this.#withKey(loc, async (stillHeld) => {
      if (options.ifNoneMatch === '*' || options.ifMatch !== undefined) {
        checkPrecondition(key, this.#etags.get(loc.file) ?? (await currentEtag(loc.file)), options);
      }
      throwIfAborted(options.signal, key); // the last moment a put can still leave nothing behind
      for (let attempt = 1; ; attempt++) {
        if (!this.#knownDirs.has(leafDir) || attempt > 1) await this.#makeLeafDir(loc, created);
        if (!(await stillHeld()))
          throw new ProviderError('Unavailable', `${key}: key lock was taken over`);
        try {
          this.#handles.evict(loc.file);
          this.#etags.delete(loc.file);
          await rename(tempPath, loc.file);
          state.published = true;
          if (this.#exclusive) this.#etags.set(loc.file, etag);
          break;
        } catch (err) {
          // A concurrent delete pruned the (empty) directory between mkdir and rename.
          if (errno(err) !== 'ENOENT' || attempt >= RENAME_ATTEMPTS) throw err;
        }
      }
      // The blob is published: a failed sync now leaves it readable but maybe not durable.
      await this.#fsyncDir(leafDir).catch((err: unknown) => {
        throw isOpenError(err) ? err : this.#fence(err);
      });
      return created;
    });
  }

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    this.#checkOpen();
    const { file } = this.#locate(key);
    throwIfAborted(options.signal, key);
    let handle: FileHandle | undefined;
    try {
      handle = await openBlob(file);
      if (!handle) throw new ProviderError('NotFound', `${key}: no such blob`);
      const info = await infoOf(handle, key, file);
      const { start, length } = resolveRange(info.size, options.range, key);
      let body: Readable;
      if (length === 0) {
        await handle.close();
        body = Readable.from([]);
      } else {
        body = handle.createReadStream({
          start: HEADER_BYTES + start,
          end: HEADER_BYTES + start + length - 1,
          highWaterMark: READ_HIGH_WATER_MARK,
        });
      }
      handle = undefined; // owned by the stream now
      if (options.signal) addAbortSignal(options.signal, body);
      return { info, start, length, body };
    } catch (err) {
      await handle?.close().catch(() => {});
      throw ioError(`${key}: get`, err);
    }
  }

  /**
   * The bytes of `key` in `range` (all of it by default), read positionally. Throws
   * ProviderError 'NotFound' / 'InvalidRange' like get(). In exclusive mode the file
   * handle is cached, so a hot blob costs one pread per call.
   */
  async read(key: string, range?: ByteRange, into?: Uint8Array): Promise<Uint8Array> {
    this.#checkOpen();
    const { file } = this.#locate(key);
    const readAt = async (handle: FileHandle, size: number): Promise<Uint8Array> => {
      const { start, length } = resolveRange(size, range, key);
      const out = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
      let off = 0;
      while (off < length) {
        const bytesRead = await preadAt(handle, out, off, length - off, HEADER_BYTES + start + off);
        if (bytesRead === 0) throw cutShort(key);
        off += bytesRead;
      }
      return out;
    };
    try {
      if (this.#exclusive) {
        const out = await this.#handles.with(file, readAt);
        if (out === undefined) throw new ProviderError('NotFound', `${key}: no such blob`);
        return out;
      }
      const handle = await openBlob(file);
      if (!handle) throw new ProviderError('NotFound', `${key}: no such blob`);
      try {
        await readEtag(handle, file);
        const st = await handle.stat();
        return await readAt(handle, st.size - HEADER_BYTES);
      } finally {
        await handle.close();
      }
    } catch (err) {
      throw ioError(`${key}: read`, err);
    }
  }

  /**
   * Scatter read (Provider.readv): preadv(2) of the bytes of `key` from `start` into
   * `targets`, looping over short reads. In exclusive mode through the cached handle.
   * Throws ProviderError 'NotFound', 'InvalidRange' (the blob ends before the targets are
   * full), 'Corrupt' (the file was cut short since it was opened: blob-file.ts cutShort), 'Io'.
   */
  async readv(key: string, start: number, targets: readonly Uint8Array[]): Promise<void> {
    this.#checkOpen();
    const { file } = this.#locate(key);
    let want = 0;
    for (const t of targets) want += t.length;
    const readAll = async (handle: FileHandle, size: number): Promise<void> => {
      if (!(Number.isSafeInteger(start) && start >= 0 && start + want <= size)) {
        throw new ProviderError('InvalidRange', `${key}: bytes ${start}+${want} outside its ${size}`);
      }
      let list = targets.filter((t) => t.length > 0);
      let pos = HEADER_BYTES + start;
      while (list.length > 0) {
        const bytesRead = await preadvAt(handle, list, pos);
        if (bytesRead === 0) throw cutShort(key);
        pos += bytesRead;
        // Drop the targets that are full; the first one left may be partly filled.
        let skip = bytesRead;
        let i = 0;
        while (i < list.length && skip >= list[i]!.length) skip -= list[i++]!.length;
        list = list.slice(i);
        if (skip > 0) list[0] = list[0]!.subarray(skip);
      }
    };
    try {
      if (this.#exclusive) {
        const done = await this.#handles.with(file, async (h, size) => {
          await readAll(h, size);
          return true;
        });
        if (done === undefined) throw new ProviderError('NotFound', `${key}: no such blob`);
        return;
      }
      const handle = await openBlob(file);
      if (!handle) throw new ProviderError('NotFound', `${key}: no such blob`);
      try {
        await readEtag(handle, file);
        const st = await handle.stat();
        await readAll(handle, st.size - HEADER_BYTES);
      } finally {
        await handle.close();
      }
    } catch (err) {
      throw ioError(`${key}: readv`, err);
    }
  }

  /**
   * Creates the log segment `key` (create-only, durable) and opens it for appends
   * (log-segment.ts). Throws ProviderError 'PreconditionFailed' if `key` exists, 'Io'.
   */
  async openLog(key: string, bytes: number): Promise<AppendLog> {
    checkSegmentSize(bytes); // before anything is created
    await this.put(key, [], { ifNoneMatch: '*', contentLength: 0 });
    const { file } = this.#locate(key);
    return openSegmentFile(key, file, bytes, () => {
      this.#handles.evict(file);
      this.#etags.delete(file);
    });
  }

  async head(key: string): Promise<BlobInfo> {
    this.#checkOpen();
    const { file } = this.#locate(key);
    const handle = await openBlob(file).catch((err) => {
      throw ioError(`${key}: head`, err);
    });
    if (!handle) throw new ProviderError('NotFound', `${key}: no such blob`);
    try {
      return await infoOf(handle, key, file);
    } catch (err) {
      throw ioError(`${key}: head`, err);
    } finally {
      await handle.close();
    }
  }

  async list(options: ListOptions = {}): Promise<ListPage> {
    this.#checkOpen();
    const limit = listLimit(options.limit);
    const etags = options.etags !== false;
    const items: BlobInfo[] = [];
    const batch: WalkEntry[] = [];
    const flush = async () => {
      for (const info of await Promise.all(batch.map((e) => listedInfo(e, etags)))) if (info) items.push(info);
      batch.length = 0;
    };
    try {
      const walk = walkKeys(
        this.#blobs,
        toKeyHex(options.prefix ?? ''),
        toKeyHex(options.startAfter ?? '')
      );
      for await (const entry of walk) {
        throwIfAborted(options.signal, 'list');
        if (items.length + batch.length === limit) {
          await flush(); // some may have gone since their directory was read
          if (items.length === limit) {
            await walk.return(undefined);
            return { items, next: items[items.length - 1].key };
          }
        }
        batch.push(entry);
        if (batch.length === LIST_BATCH) await flush();
      }
      await flush();
    } catch (err) {
      throw ioError('list', err);
    }
    return { items };
  }

  async delete(key: string): Promise<void> {
    this.#checkOpen();
    const loc = this.#locate(key);
    const leafDir = loc.dirs[loc.dirs.length - 1];
    try {
      const removed = await this.#withKey(loc, async () => {
        try {
          this.#handles.evict(loc.file);
          this.#etags.delete(loc.file);
          await unlink(loc.file);
        } catch (err) {
          if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return false;
          throw err;
        }
        await this.#syncAfterUnlink(leafDir);
        return true;
      });
      if (removed) await this.#pruneEmpty(loc.dirs);
    } catch (err) {
      throw ioError(`${key}: delete`, err);
    }
  }

  /**
   * fsync(2) of the directory an unlink changed. A delete of a sibling blob may prune the
   * emptied directory meanwhile (then the entry went with it: nothing is left to sync), or
   * close the cached handle during the sync (then sync through a fresh one).
   */
  async #syncAfterUnlink(dir: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#fsyncDir(dir);
      } catch (err) {
        if (errno(err) === 'ENOENT') return;
        if (errno(err) !== 'EBADF' || attempt > 0) throw err;
      }
    }
  }

  /** Removes now-empty directories from the deepest up (never the blob root). */
  async #pruneEmpty(dirs: string[]): Promise<void> {
    for (let i = dirs.length - 1; i > 0; i--) {
      const d = dirs[i]!;
      try {
        this.#forgetDir(d);
        await rmdir(d);
      } catch {
        return; // not empty (or already gone): its ancestors are not empty either
      }
      // What a put learnt of d while the rmdir was on its way is of the removed directory.
      this.#forgetDir(d);
    }
  }

  /**
   * Forgets what this provider knows of directory `d` (a prune removes it, or a put made it
   * anew): that it exists, that its entry is durable, a sync of that entry in flight (marked
   * stale: it must not mark it durable when it ends, #dirSyncs), and its cached handle (closed:
   * a sync through it would sync the removed directory and report nothing). Handles being
   * opened meanwhile are not cached (#forgets).
   */
  #forgetDir(d: string): void {
    this.#forgets++;
    this.#knownDirs.delete(d);
    this.#durableDirs.delete(d);
    const sync = this.#dirSyncs.get(d);
    if (sync) {
      sync.stale = true;
      this.#dirSyncs.delete(d);
    }
    const h = this.#dirHandles.get(d);
    if (h) {
      this.#dirHandles.delete(d);
      void h.close().catch(() => undefined);
    }
  }

  /**
   * fsync(2) of a directory, through a cached handle in exclusive mode. A concurrent prune of
   * an emptied sibling directory or the cache's eviction may close the cached handle while
   * this sync runs (EBADF, "file closed"): then it syncs again through a handle of its own,
   * opened for this one sync and never cached, which no prune or eviction can close under it
   * (a re-cached handle could be evicted again by the next opens, as 100,000-blob GC sweeps
   * showed), so a PUT never fails because a GC deleted blobs beside it.
   */
  async #fsyncDir(path: string): Promise<void> {
    if (!this.#exclusive) return syncDirectory(path);
    const h = await this.#dirHandle(path);
    if ('uncached' in h) {
      try {
        return await h.uncached.sync();
      } finally {
        await h.uncached.close().catch(() => undefined);
      }
    }
    try {
      return await h.sync();
    } catch (err) {
      if (errno(err) !== 'EBADF') throw err;
      if (this.#dirHandles.get(path) === h) this.#dirHandles.delete(path);
    }
    return syncDirectory(path);
  }

  /** The cached directory handle of `path`, opened (and cached, evicting the oldest) if none;
   * `{ uncached }` for a handle opened while a directory was forgotten (the caller closes it). */
  async #dirHandle(path: string): Promise<FileHandle | { uncached: FileHandle }> {
    let h = this.#dirHandles.get(path);
    if (h) return h;
    const forgets = this.#forgets;
    h = await open(path, 'r');
    // A directory was forgotten (pruned, or made anew) while this opened: the handle may be of
    // a directory removed since, so it serves this one sync and is never cached.
    if (this.#forgets !== forgets) return { uncached: h };
    const raced = this.#dirHandles.get(path);
    if (raced) {
      await h.close();
      return raced;
    }
    this.#dirHandles.set(path, h);
    if (this.#dirHandles.size > this.#maxDirHandles) {
      const [oldest, handle] = this.#dirHandles.entries().next().value as [string, FileHandle];
      this.#dirHandles.delete(oldest);
      void handle.close().catch(() => undefined);
    }
    return h;
  }

  /**
   * Runs `fn` holding the key's lock: a lock file shared with other processes, or in
   * exclusive mode an in-memory chain (the directory lock already excludes them).
   */
  async #withKey<T>(loc: Location, fn: (stillHeld: () => Promise<boolean>) => Promise<T>): Promise<T> {
    if (!this.#exclusive) return withKeyLock(this.#locks, loc.bytes, fn);
    const id = loc.file;
    const prev = this.#keyTails.get(id) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((r) => (release = r));
    this.#keyTails.set(id, tail);
    await prev;
    try {
      return await fn(async () => true);
    } finally {
      release();
      if (this.#keyTails.get(id) === tail) this.#keyTails.delete(id);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#handles.closeAll();
    for (const h of this.#dirHandles.values()) await h.close().catch(() => undefined);
    this.#dirHandles.clear();
  }
}

/**
 * Opens (creating if needed) an fs provider rooted at `options.dir`. Removes temp
 * files of dead writers. Does not take the directory lock: the repository does, with
 * acquireDirectoryLock. Throws ProviderError 'Io' if the directory is unusable.
 */
export async function createFsProvider(options: FsProviderOptions): Promise<FsProvider> {
  const provider = new FsProvider(options.dir, options.exclusive ?? false, options.directWrites ?? false, options);
  await provider.init();
  return provider;
}
