/**
 * @module The blob provider interface: the only way the repository touches storage.
 *
 * A provider stores opaque immutable blobs under string keys (any UTF-8, at most
 * {@link MAX_KEY_BYTES} bytes), plus the one mutable anchor which moves only by
 * compare-and-swap (`put` with `ifMatch` / `ifNoneMatch: '*'`).
 *
 * Implementations (one folder each, identical shape): fs/ (embedded default), memory/
 * (tests), s3/ (any S3-compatible endpoint).
 */
import type { Readable } from 'node:stream';
import type { AppendLog } from './append-log.js';

/** Longest key a provider must accept, in UTF-8 bytes (S3's own object-key limit). */
export const MAX_KEY_BYTES = 1024;

export interface BlobInfo {
  key: string;
  /** Size in bytes of the whole blob. */
  size: number;
  /** Opaque version tag; changes whenever the blob is replaced. Used by `ifMatch`. */
  etag: string;
  lastModified: Date;
}

/** What a provider can guarantee; the repository decides what it may rely on. */
export interface ProviderCapabilities {
  /** `ifNoneMatch: '*'` and `ifMatch` are enforced atomically by the backend. */
  conditionalWrites: boolean;
  /** `list` returns keys in ascending byte order of their UTF-8 encoding. */
  sortedList: boolean;
  /**
   * Data bytes per carrier chunk blob this provider prefers for large bodies, when each blob
   * it stores has a cost worth amortising over more bytes (an erasure blob is k + m files, each
   * in new directories). Absent (or not a whole number of segments from the store's default up
   * to its largest): the store's default. Only writes use it; a carrier is read whatever its
   * chunks' sizes, so changing it never strands what is stored.
   */
  chunkBytes?: number;
}

/** A request body: bytes, a list of byte chunks written in order, or a stream. */
export type BlobBody = Uint8Array | readonly Uint8Array[] | Readable | AsyncIterable<Uint8Array>;

export interface PutOptions {
  /** `'*'`: fail with PreconditionFailed if the key exists (atomic create). */
  ifNoneMatch?: '*';
  /** Fail with PreconditionFailed unless the current blob's etag equals this. */
  ifMatch?: string;
  /** Exact body length; required for stream bodies (checked: a short or long body fails). */
  contentLength?: number;
  signal?: AbortSignal;
  /**
   * Called with each chunk of a streamed body once the provider no longer needs it (fs: its
   * write to the temp file completed), so the caller may reuse the chunk's memory. Optional
   * both ways: a provider that does not call it, or a chunk it is not called for (a failed
   * write), is simply left to the garbage collector. A wrapper that hands the same chunks to
   * more than one provider (replicas) must not pass it on: the first to finish would free
   * memory the others still read.
   */
  released?: (chunk: Uint8Array) => void;
  /**
   * The body is bulk data (an object's body, an erasure fragment), not metadata read back
   * soon: a provider may write it around its cache (fs: O_DIRECT for large bodies,
   * fs/direct-write.ts). Only a hint; what the blob holds and when the put resolves do not
   * change.
   */
  bulk?: boolean;
  /**
   * Whom a bulk write is for (an access key; '' for anonymous requests), when the request has
   * a per-key share (s3/key-share.ts): a provider that admits writes against shared limits
   * (the erasure set's write gate) lets one owner hold at most its share of them.
   */
  owner?: string;
  /**
   * The put replaces what `key` holds without a compare, and later puts will replace it again
   * (the anchor of a repository whose provider has no conditional writes): an earlier attempt
   * applied after a later put would bring old content back. A provider whose attempts may be
   * applied late (s3: a request received and never answered) retries such a put only while no
   * attempt may have been received, and otherwise fails it marked mayLand.
   */
  replaces?: boolean;
}

/** How messages name an owner (PutOptions.owner): its access key, or anonymous requests. */
export function ownerText(owner: string): string {
  return owner === '' ? 'anonymous requests' : `access key ${owner}`;
}

/** Inclusive byte range; `end` past the blob end is clamped. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface GetOptions {
  range?: ByteRange;
  signal?: AbortSignal;
  /**
   * The caller needs the newest write of a key replaced in place (the anchor): a provider that
   * cannot be sure what it found is the newest fails with 'Unavailable' instead of answering
   * an older write (erasure: more than m domains did not answer, and the newest write's copies
   * may all be on them).
   */
  newest?: boolean;
}

export interface GetResult {
  info: BlobInfo;
  /** Byte offset of the first byte of `body` within the blob. */
  start: number;
  /** Number of bytes `body` will yield. */
  length: number;
  /** The bytes, streamed with backpressure; consume or destroy it. */
  body: Readable;
}

export interface ListOptions {
  prefix?: string;
  /** Only keys strictly greater than this. */
  startAfter?: string;
  /** Page size (default and maximum 1000). */
  limit?: number;
  signal?: AbortSignal;
  /** false: the caller needs keys, sizes and times only, and a provider that would have to
   * read each blob for its etag (fs: open and read its header) may answer `etag: ''`
   * instead (default true). Such a provider then does not read the blob at all: a blob
   * whose header is damaged (or cut short of it: listed at size 0) is listed, and its reads
   * fail ('Corrupt'), where a list with etags fails. */
  etags?: boolean;
}

export interface ListPage {
  items: BlobInfo[];
  /** Pass as `startAfter` to get the next page; absent on the last page. */
  next?: string;
}

export interface ReadOptions {
  /**
   * The caller checks every byte it asked for against checksums of its own (the store: the
   * CRC32C of each pack entry it reads, by read or readv) and, when one fails, reads the same bytes again without this
   * option. The provider may then skip the per-block checks it would make on the way (erasure:
   * each fragment block's CRC32C, which costs as much as the caller's own check): damage is
   * caught by the caller, and the read without the option finds, rebuilds around and reports
   * it. Fragments known to be missing, and domains that fail, are still rebuilt around.
   */
  endToEnd?: boolean;
}

/** The options of a read whose every byte the caller checks itself (ReadOptions.endToEnd). */
export const END_TO_END: Readonly<ReadOptions> = Object.freeze({ endToEnd: true });

export interface Provider {
  readonly kind: 'fs' | 'memory' | 's3' | string;
  readonly capabilities: ProviderCapabilities;
  /** Stores `body` under `key`; atomic (readers see the old blob or the whole new one). */
  put(key: string, body: BlobBody, options?: PutOptions): Promise<BlobInfo>;
  /** Throws ProviderError 'NotFound' if absent, 'InvalidRange' if start >= size > 0. */
  get(key: string, options?: GetOptions): Promise<GetResult>;
  /** Throws ProviderError 'NotFound' if absent. */
  head(key: string): Promise<BlobInfo>;
  list(options?: ListOptions): Promise<ListPage>;
  /** Idempotent: deleting a missing key succeeds. */
  delete(key: string): Promise<void>;
  /** Releases sockets, file handles and locks. */
  close(): Promise<void>;
  /**
   * Optional fast path for small reads: the bytes of `key` in `range`, whole. Same errors
   * as get(). Providers that can (fs: one positional read) implement it; getBytes uses it.
   * `into`, when given and at least as long as the range, may receive the bytes (the result
   * is then a view of it): a caller that consumes the bytes at once reuses one buffer
   * instead of allocating per read. Providers may ignore it.
   */
  read?(key: string, range?: ByteRange, into?: Uint8Array, options?: ReadOptions): Promise<Uint8Array>;
  /**
   * Optional scatter read: fills each of `targets` in order with the bytes of `key` from
   * byte `start` on (as many as their lengths sum to), in as few positional vectored reads
   * as the provider can (fs: preadv), so that parts of a blob can land apart in memory
   * without a copy. Writes only into `targets`. Throws ProviderError 'NotFound' if absent,
   * 'InvalidRange' if the blob ends before the targets are full.
   */
  readv?(key: string, start: number, targets: readonly Uint8Array[], options?: ReadOptions): Promise<void>;
  /**
   * Optional: the local file that holds `key`, in the fs provider's blob-file format
   * (fs/blob-file.ts: a header, then the bytes), for a reader on another thread
   * (readBlobRangeSync) that would otherwise ask this thread to read for it. No I/O: the file
   * may not exist. Only providers whose blobs are such files (fs) implement it.
   */
  blobFilePath?(key: string): string;
  /**
   * Optional, with blobFilePath: true when such a reader should read those files around the
   * page cache (readBlobRangeDirectSync): the provider writes its bulk blobs that way too (fs
   * with direct I/O asked for, and taken by its directory), so large passes over them (a
   * scrub, a repair) neither fill the page cache nor evict what it holds for requests.
   */
  readonly directFileReads?: boolean;
  /**
   * Optional: true when writing a blob costs the calling thread CPU in proportion to its bytes
   * beyond handing them on (erasure: the codec, the cells' CRC32C, framing). A large body's
   * checksums then all run on the hash worker (store/carrier-slabs.ts), leaving this thread
   * to receive and encode.
   */
  readonly cpuBoundWrites?: boolean;
  /**
   * Optional append-log capability (append-log.ts): creates the segment `key`, `bytes` long,
   * durable, and opens it for in-place appends. Providers that cannot make an append durable
   * cheaply leave it out; the repository then writes commit blobs.
   */
  openLog?(key: string, bytes: number): Promise<AppendLog>;
  /**
   * Optional, with openLog: before a writer builds on what reads of log segment `key` return
   * (recovery adopting the commits appended after the anchor, which new commits then chain on),
   * makes its bytes up to logical offset `end` (all when absent) as durable as an acknowledged
   * append. A crash can leave the last append on some of a segment's copies only; reads take the
   * longest copy, so without this a commit held by one copy becomes the parent of acknowledged
   * ones, and losing that copy breaks the chain.
   * The erasure provider copies such a tail onto its other copies (or new domains) now and throws
   * ProviderError 'Unavailable' when fewer copies than an append needs can hold it. Providers
   * whose segment is one durable file omit it.
   */
  settleLog?(key: string, end?: number): Promise<void>;
}

export type ProviderErrorCode =
  | 'NotFound'
  | 'PreconditionFailed'
  | 'InvalidKey'
  | 'InvalidRange'
  | 'LengthMismatch'
  | 'Unavailable'
  | 'Aborted'
  | 'Locked'
  | 'Io'
  /** The blob's own stored bytes are not in the provider's format (a blob file whose header
   * is not one): that blob is damaged, the provider itself works. Not retryable. */
  | 'Corrupt';

/** Every provider failure is one of these; `code` is stable, `retryable` says if a retry may help. */
export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  readonly retryable: boolean;
  /**
   * A failed write that may still take effect afterwards, whatever happens in between: a part
   * of it was left running past a timeout (an erasure copy on a domain that did not answer in
   * time), or an unconditional request to an S3 backend may have reached it without being
   * answered (s3/client.ts). Reading the key back now does not tell whether it will land, so a
   * caller resolving an ambiguous failure by reading back (the anchor's compare-and-swap) must
   * treat its outcome as unknown. Wrappers keep it in their cause: see {@link mayStillLand}.
   */
  readonly mayLand: boolean;
  constructor(code: ProviderErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean; mayLand?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderError';
    this.code = code;
    this.retryable = options?.retryable ?? (code === 'Unavailable');
    this.mayLand = options?.mayLand ?? false;
  }
}

/** `err` marked mayLand: itself if it already is, else the same error (code, message,
 * retryable) with it as the cause. */
export function withMayLand(err: ProviderError): ProviderError {
  return err.mayLand ? err : new ProviderError(err.code, err.message, { cause: err, retryable: err.retryable, mayLand: true });
}

/** True if `err` or an error in its cause chain is a ProviderError marked mayLand. */
export function mayStillLand(err: unknown): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 16; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ProviderError && e.mayLand) return true;
  }
  return false;
}

/** Reads a blob (or a range of it) fully into memory. For small blobs: runs, commits, pack entries.
 * `options` go to the provider's read (ReadOptions); without read they do not apply. */
export async function getBytes(provider: Provider, key: string, range?: ByteRange, options?: ReadOptions): Promise<Uint8Array> {
  if (provider.read) return provider.read(key, range, undefined, options);
  const res = await provider.get(key, range ? { range } : undefined);
  const out = new Uint8Array(res.length);
  let off = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    if (off + chunk.length > out.length) {
      res.body.destroy();
      throw new ProviderError('LengthMismatch', `${key}: provider returned more than ${res.length} bytes`);
    }
    out.set(chunk, off);
    off += chunk.length;
  }
  if (off !== out.length) {
    throw new ProviderError('LengthMismatch', `${key}: provider returned ${off} of ${res.length} bytes`);
  }
  return out;
}
