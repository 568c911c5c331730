/**
 * @module The erasure provider: blobs across failure domains (child providers), striped
 * with Reed-Solomon or replicated, with per-block CRC32C, heal on read and repair.
 *
 *   blob >= stripeThreshold  → k data + m parity cells per stripe, fragment i on domain
 *                              placed[i] (rendezvous hashing + policy, place.ts)
 *   smaller blob, 'anchor'   → m + 1 whole copies, read as the newest valid one
 *   openLog segment          → m + 1 append-log copies of CRC-framed records (log-copy.ts),
 *                              offered only when every domain's provider has openLog
 *
 * Fragment names (child-key.ts) carry layout, geometry, logical length and write
 * generation; the bytes (fragment.ts) carry a header, CRC32C-framed blocks and a trailer.
 *
 * Single writer: conditional puts (ifNoneMatch '*', ifMatch) are decided here under an
 * in-process per-key lock, not by the children, so one repository must be served by one
 * process. An etag names one write: `<layout><generation>-<length>` in base 36; generations
 * are microsecond timestamps made strictly increasing, so a rewrite of identical bytes still
 * gets a new etag (the content is not hashed: list() reports etags from names alone).
 *
 * Overwrites write the new generation beside the old and delete the old once the new is
 * acknowledged, so a reader sees the old blob or the new one, never a mix. A delete removes
 * every fragment it can reach; fragments on a domain that is down at the time stay behind,
 * show up again in list() when it returns (too few to read: a read fails with 'Io'), and
 * are removed by the next delete of the key (the store's GC deletes the unreferenced blobs
 * it lists). checkBlob reports such a key as lost and never deletes it: it cannot tell a
 * leftover from a blob that lost more than m fragments.
 */
import { Readable } from 'node:stream';
import { checkedChunks, discardBody, replayableLength, throwIfAborted } from '../body.js';
import { createEncoder, type ReedSolomon } from '../../codec/reed-solomon.js';
import {
  ProviderError,
  type BlobBody,
  type BlobInfo,
  type ByteRange,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type ProviderCapabilities,
  type PutOptions,
  type ReadOptions,
} from '../provider.js';
import { resolveRange } from '../range.js';
import { ByteSource } from './byte-source.js';
import { checkLogicalKey } from './child-key.js';
import { DomainSet } from './domains.js';
import { checkBlob } from './check.js';
import { census, type CensusEntry } from './census.js';
import { MAX_CELL_BYTES } from './fragment.js';
import { listMerged } from './list.js';
import { etagOf, lookupBlob, nameOf, type BlobMeta, type LookupResult } from './lookup.js';
import { placeFragments, rankDomains, validatePolicy } from './placement.js';
import { readRange, readScatter, streamRange, trailerLength, type ReadContext } from './read.js';
import { dropRebuiltStripes } from './rebuilt-stripes.js';
import { ScatterSink } from './scatter-sink.js';
import { writeReplicated, writeStriped, type WriteContext } from './write.js';
import { replicatedCost, stripedCost, WriteGate, writeGateLimits, type WriteGateStats } from './write-gate.js';
import { openFilesLimit } from '../fs/fd-budget.js';
import type { AppendLog } from '../append-log.js';
import { checkLog } from './log-check.js';
import { LogSegments, readLog } from './log-segments.js';
import type { LogView, LogViewContext } from './log-view.js';
import type {
  BlobCheck,
  CheckBlobOptions,
  Domain,
  DomainHealth,
  ErasureConfig,
  ErasureProvider,
  ErasureStats,
} from './types.js';

export type { ErasureProvider } from './types.js';

/** Keys always replicated, whatever their size: the repository's anchor (store/layout.ts
 * ANCHOR_KEY) is replaced by compare-and-swap, which independent children cannot give a
 * striped blob. */
export const ALWAYS_REPLICATED = new Set(['anchor']);

/** Blob descriptions kept in memory so warm reads skip the lookup (~200 bytes each:
 * 100,000 entries is about 20 MiB). */
export const META_CACHE_ENTRIES = 100_000;

/** Bytes a streaming get of a log segment reads at a time (scan.ts reads 1 MiB windows). */
const LOG_STREAM_BYTES = 1024 * 1024;

/** Keys the heal-on-read queue holds at most (~100 bytes each: about 10 MiB). */
export const MAX_REPAIR_QUEUE = 100_000;

export interface ErasureProviderOptions {
  config: ErasureConfig;
  domains: Domain[];
  /** The process's limit on open files, which sizes the write gate (write-gate.ts); read from
   * the system (fd-budget.ts openFilesLimit) when absent. */
  openFiles?: number;
}

/**
 * Chunk blob size the erasure provider asks the store for (ProviderCapabilities.chunkBytes):
 * 64 MiB, the store's largest. Every striped blob is k + m files, each in two new directories
 * of its domain, so a body cut into 8 MiB chunks paid those creates, syncs and renames eight
 * times per 64 MiB; as one blob, the (10,4) 64 MiB PUT here ran 1.34x (32 MiB) to 1.43x
 * (64 MiB) faster, GETs (fewer, longer fragments) 1.04x healthy and 1.25x degraded, and the
 * repair of a wiped domain 1.3-1.5x. Write memory is per stripe and unchanged. What grows with
 * the blob: a write-gate place turns over per chunk put (every 64 MiB of an upload, not 8), a
 * background repair runs a whole blob between its pauses for requests (repair-worker.ts), and
 * `strata verify` reads a chunk blob whole. Asked for only while chunks this size are striped
 * (stripeThreshold at most {@link STRIPED_CHUNKS_THRESHOLD}): replicated blobs are built in
 * memory, so with a higher threshold chunks stay at the store's 8 MiB, copied whole as before.
 */
export const ERASURE_CHUNK_BYTES = 64 * 1024 * 1024;
/** Highest stripeThreshold under which the provider asks for ERASURE_CHUNK_BYTES: the store's
 * default chunk size, so no chunk a body ends with is replicated that was not before. */
export const STRIPED_CHUNKS_THRESHOLD = 8 * 1024 * 1024;

class ErasureProviderImpl implements ErasureProvider {
  readonly kind = 'erasure' as const;
  /** Striped writes encode, CRC and frame every byte on the writing thread. */
  readonly cpuBoundWrites = true;
  readonly capabilities: ProviderCapabilities;
  readonly k: number;
  readonly m: number;
  readonly domains: readonly Domain[];
  readonly stats: ErasureStats = {
    fragmentsVerified: 0,
    fragmentsDamaged: 0,
    fragmentsRepaired: 0,
    repairBytes: 0,
    degradedReads: 0,
    degradedBlobs: 0,
  };
  readonly #config: ErasureConfig;
  readonly #set: DomainSet;
  readonly #codecs = new Map<string, ReedSolomon>();
  readonly #cache = new Map<string, BlobMeta>();
  readonly #locks = new Map<string, Promise<void>>();
  readonly #lookups = new Map<string, Promise<LookupResult>>();
  readonly #repair = new Set<string>();
  readonly #ctx: WriteContext;
  /** Admission of object-body writes by the descriptors and stripe memory they hold. */
  readonly #gate: WriteGate;
  /** Log segments (the append-log capability, log-copy.ts). */
  readonly #logs: LogSegments;
  /** Creates and opens a log segment replicated to m + 1 domains (log-copy.ts); absent unless
   * every domain's provider has openLog itself (s3 domains do not). */
  readonly openLog?: (key: string, bytes: number) => Promise<AppendLog>;
  #gen = 0;
  /** Counts finished puts and deletes (any key): a lookup started before one is not cached. */
  #epoch = 0;
  #closed = false;

  constructor(config: ErasureConfig, domains: Domain[], openFiles: number) {
    this.#config = config;
    this.capabilities = {
      conditionalWrites: true,
      sortedList: true,
      ...(config.stripeThreshold <= STRIPED_CHUNKS_THRESHOLD ? { chunkBytes: ERASURE_CHUNK_BYTES } : {}),
    };
    this.#gate = new WriteGate(writeGateLimits(config, openFiles));
    this.k = config.k;
    this.m = config.m;
    this.domains = domains;
    this.#set = new DomainSet(domains, config.domainTimeoutMs);
    this.#ctx = {
      domains: this.#set,
      config,
      codec: (k, m) => this.#codec(k, m),
      onDamaged: (meta) => this.#queueRepair(meta.key),
      onDegradedRead: () => void this.stats.degradedReads++,
      place: (key, count, exclude) => placeFragments(key, domains, config.policy, count, exclude),
      rank: (key) => rankDomains(key, domains),
    };
    this.#logs = new LogSegments({
      domains: this.#set,
      m: config.m,
      degradedWrites: config.degradedWrites,
      place: this.#ctx.place,
      rank: this.#ctx.rank,
      onDegraded: (key) => this.#queueRepair(key),
      onDamaged: (key) => this.#queueRepair(key),
    });
    this.#logRead = { domains: this.#set, onDamaged: (key) => this.#queueRepair(key) };
    if (domains.every((d) => typeof d.provider.openLog === 'function')) this.openLog = (key, bytes) => this.#openLog(key, bytes);
  }

  /** openLog: create-only (ProviderError 'PreconditionFailed' if `key` exists, like fs). */
  async #openLog(key: string, bytes: number): Promise<AppendLog> {
    this.#checkOpen();
    checkLogicalKey(key);
    return this.#withLock(key, async () => {
      const current = await this.#meta(key).catch((err) => {
        if (err instanceof ProviderError && err.code === 'NotFound') return undefined;
        throw err;
      });
      if (current) throw new ProviderError('PreconditionFailed', `${key}: exists (openLog creates)`);
      const meta: BlobMeta = {
        key, layout: 'log', k: 1, m: 0, cellSize: 1, length: bytes, generation: this.#nextGen(),
        lastModified: new Date(), fragments: [], copies: [], fragmentBytes: 0, sized: true,
      };
      const log = await this.#logs.open(meta, bytes);
      this.#epoch++;
      this.#remember(meta);
      return log;
    });
  }

  /** The read view of log segment `meta` and head()'s description of it. */
  async #logView(meta: BlobMeta): Promise<{ view: LogView; info: BlobInfo }> {
    const view = await this.#logs.view(meta);
    return { view, info: Object.assign(this.#info(meta), { size: view.size }) };
  }

  #codec(k: number, m: number): ReedSolomon {
    const id = `${k}+${m}`;
    let c = this.#codecs.get(id);
    if (!c) this.#codecs.set(id, (c = createEncoder(k, m)));
    return c;
  }

  #queueRepair(key: string): void {
    // Bounded: with a whole domain gone every read would queue its key; past the bound the
    // scrub (which walks everything) finds the rest.
    if (this.#repair.size >= MAX_REPAIR_QUEUE && !this.#repair.has(key)) return;
    this.#repair.add(key);
    this.stats.degradedBlobs = this.#repair.size;
  }

  #checkOpen(): void {
    if (this.#closed) throw new ProviderError('Io', 'erasure provider is closed');
  }

  #nextGen(after = 0): number {
    this.#gen = Math.max(Date.now() * 1000, this.#gen + 1, after + 1);
    return this.#gen;
  }

  #remember(meta: BlobMeta): void {
    this.#cache.delete(meta.key);
    this.#cache.set(meta.key, meta);
    if (this.#cache.size > META_CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
  }

  #info(meta: BlobMeta): BlobInfo {
    return {
      key: meta.key,
      size: meta.length!,
      etag: etagOf(Object.assign({}, meta, { length: meta.sized ? meta.length : undefined })),
      lastModified: meta.lastModified,
    };
  }

  /** Runs `fn` holding `key`'s in-process lock (puts, deletes and repairs of one key queue). */
  async #withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((r) => (release = r));
    this.#locks.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.#locks.get(key) === tail) this.#locks.delete(key);
    }
  }

  /**
   * The current write of `key`: cached, else looked up. Throws 'NotFound' when no domain
   * holds a fragment (and at most m did not answer), 'Unavailable' when more than m did not
   * answer, 'Io' when fragments exist but too few to read (the blob is lost: fail closed).
   */
  async #meta(key: string, fresh = false, newest = false): Promise<BlobMeta> {
    const cached = fresh ? undefined : this.#cache.get(key);
    if (cached) {
      this.#remember(cached);
      return cached;
    }
    // Concurrent cold reads of one key share one lookup (N listings, not N per reader).
    const epoch = this.#epoch;
    let pending = fresh ? undefined : this.#lookups.get(key);
    if (!pending) {
      pending = lookupBlob(this.#set, key);
      if (!fresh) {
        this.#lookups.set(key, pending);
        const done = (): void => void (this.#lookups.get(key) === pending && this.#lookups.delete(key));
        pending.then(done, done);
      }
    }
    const found = await pending;
    if (!found.meta) {
      if (found.names.length > 0) {
        throw new ProviderError(
          'Io',
          `${key}: only ${found.names.length} fragments found, too few to read (k=${this.k}, m=${this.m}` +
            `${found.unreachable.length ? `; unreachable: ${found.unreachable.join(', ')}` : ''})`
        );
      }
      if (found.unreachable.length > this.m)
        throw new ProviderError('Unavailable', `${key}: ${found.unreachable.length} domains did not answer (${found.unreachable.join(', ')})`);
      throw new ProviderError('NotFound', `${key}: no such blob`);
    }
    const meta = found.meta;
    // A key replaced in place (GetOptions.newest) has m + 1 copies of its newest write (one
    // may do with degradedWrites): with more domains silent than that allows, they may all be
    // there, and what answered may be older.
    const silentMax = this.#ctx.config.degradedWrites ? 0 : this.m;
    if (newest && meta.layout !== 'striped' && found.unreachable.length > silentMax)
      throw new ProviderError(
        'Unavailable',
        `${key}: ${found.unreachable.length} domains did not answer (${found.unreachable.join(', ')}), more than ${silentMax}` +
          `${this.#ctx.config.degradedWrites ? ' (degradedWrites: its newest write may have one copy)' : ` (m = ${this.m})`}: the newest write may be on them alone`
      );
    if (meta.length === undefined) meta.length = await trailerLength(this.#ctx, meta);
    if (found.stale.length || (meta.layout === 'striped' && meta.fragments.includes(undefined))) this.#queueRepair(key);
    if (meta.layout !== 'striped' && meta.copies.length < this.m + 1) this.#queueRepair(key);
    // A put or delete that finished while this lookup listed may have made it stale: cache
    // only a lookup that no write overtook (the write's own result is cached by the write).
    const cur = this.#cache.get(key);
    if (cur && cur.generation >= meta.generation) return cur;
    if (epoch === this.#epoch) this.#remember(meta);
    return meta;
  }

  async put(key: string, body: BlobBody, options: PutOptions = {}): Promise<BlobInfo> {
    const len = options.contentLength;
    try {
      this.#checkOpen();
      checkLogicalKey(key);
      throwIfAborted(options.signal, key);
      if (len !== undefined && (!Number.isSafeInteger(len) || len < 0))
        throw new ProviderError('LengthMismatch', `${key}: invalid contentLength ${len}`);
    } catch (err) {
      discardBody(body);
      throw err;
    }
    return this.#withLock(key, async () => {
      let current: BlobMeta | undefined;
      try {
        if (options.ifNoneMatch === '*' || options.ifMatch !== undefined) {
          current = await this.#meta(key).catch((err) => {
            if (err instanceof ProviderError && err.code === 'NotFound') return undefined;
            throw err;
          });
          if (options.ifNoneMatch === '*' && current)
            throw new ProviderError('PreconditionFailed', `${key}: exists (ifNoneMatch: '*')`);
          if (options.ifMatch !== undefined) {
            const etag = current ? this.#info(current).etag : undefined;
            if (etag !== options.ifMatch)
              throw new ProviderError('PreconditionFailed', `${key}: etag is ${etag ?? 'absent'}, not ${options.ifMatch}`);
          }
        } else current = this.#cache.get(key);
      } catch (err) {
        discardBody(body);
        throw err;
      }
      const generation = this.#nextGen(current?.generation);
      const written = await this.#write(key, generation, body, len ?? replayableLength(body), options);
      this.#epoch++;
      this.#remember(written.meta);
      if (written.degraded) this.#queueRepair(key);
      if (current && current.generation !== generation) await this.#dropWrite(current);
      return this.#info(written.meta);
    });
  }

  failedDomainIds(): string[] {
    return [...this.#set.failedIds()];
  }

  get writeGate(): WriteGateStats {
    return this.#gate.stats;
  }

  /**
   * Writes one blob; an object's body (PutOptions.bulk) first enters the write gate with what
   * it will hold, before any of it is read, and leaves when written. The store's own metadata
   * (commit blobs, checkpoints, the anchor) does not: the store bounds it, and a refusal there
   * would fail a commit rather than ask a client to retry.
   */
  async #write(key: string, generation: number, body: BlobBody, length: number | undefined, options: PutOptions) {
    if (options.bulk !== true) return this.#writeAdmitted(key, generation, body, length, options);
    const config = this.#config;
    const cost = this.#replicated(key, length) ? replicatedCost(config, length!) : stripedCost(config, length !== undefined);
    let leave: (() => void) | undefined;
    try {
      leave = await this.#gate.enter(cost, key, options.signal, options.owner);
      this.#checkOpen(); // closed while this write waited
      return await this.#writeAdmitted(key, generation, body, length, options);
    } catch (err) {
      discardBody(body);
      throw err;
    } finally {
      leave?.();
    }
  }

  /** Is a blob of known `length` stored replicated (the anchor, or below the stripe threshold)? */
  #replicated(key: string, length: number | undefined): boolean {
    return length !== undefined && (ALWAYS_REPLICATED.has(key) || length < this.#config.stripeThreshold);
  }

  async #writeAdmitted(key: string, generation: number, body: BlobBody, length: number | undefined, options: PutOptions) {
    const source = new ByteSource(checkedChunks(body, key, options.contentLength, options.signal), options.released);
    const threshold = this.#config.stripeThreshold;
    const replicatedOnly = ALWAYS_REPLICATED.has(key);
    if (length !== undefined && this.#replicated(key, length)) {
      const bytes = new Uint8Array(length);
      const got = await source.fill(bytes, 0, length);
      await source.fill(new Uint8Array(1), 0, 1); // lets the checked body prove it ended
      if (got !== length) throw new ProviderError('LengthMismatch', `${key}: body has ${got} bytes, contentLength says ${length}`);
      throwIfAborted(options.signal, key);
      return writeReplicated(this.#ctx, key, generation, bytes, options.signal);
    }
    if (length !== undefined) return writeStriped(this.#ctx, key, generation, new Uint8Array(0), source, length, options.bulk === true);
    // Unknown length: read up to the threshold to choose the layout.
    const parts: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const want = replicatedOnly ? 64 * 1024 : Math.max(1, threshold - total);
      const buf = new Uint8Array(want);
      const got = await source.fill(buf, 0, want);
      parts.push(buf.subarray(0, got));
      total += got;
      if (got < want) break;
      if (!replicatedOnly && total >= threshold) {
        return writeStriped(this.#ctx, key, generation, Buffer.concat(parts), source, undefined, options.bulk === true);
      }
    }
    throwIfAborted(options.signal, key);
    return writeReplicated(this.#ctx, key, generation, Buffer.concat(parts), options.signal);
  }

  /** Deletes every fragment of one write (best effort; see the module doc). */
  async #dropWrite(meta: BlobMeta): Promise<void> {
    const items =
      meta.layout === 'striped'
        ? meta.fragments.flatMap((d, i) => (d === undefined ? [] : [{ d, child: nameOf(meta, i) }]))
        : meta.copies.map((d) => ({ d, child: nameOf(meta, 0) }));
    await Promise.allSettled(items.map(({ d, child }) => this.#set.call(d, `delete ${child}`, (p) => p.delete(child))));
  }

  #readContext(endToEnd = false): ReadContext {
    let counted = false;
    return {
      ...this.#ctx,
      endToEnd,
      onDegradedRead: () => {
        if (!counted) this.stats.degradedReads++;
        counted = true;
      },
    };
  }

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    this.#checkOpen();
    checkLogicalKey(key);
    throwIfAborted(options.signal, key);
    // `newest` looks the key up afresh: a cached description may come from an earlier lookup
    // as blind as the one it would replace, or miss a copy a failed write left.
    const meta = await this.#meta(key, options.newest === true, options.newest === true);
    if (meta.layout === 'log') {
      const { view, info } = await this.#logView(meta);
      const r = resolveRange(view.size, options.range, key);
      return { info, start: r.start, length: r.length, body: Readable.from(this.#streamLog(view, r.start, r.length, options.signal), { objectMode: false }) };
    }
    const { start, length } = resolveRange(meta.length!, options.range, key);
    const body =
      length === 0
        ? Readable.from([])
        : Readable.from(streamRange(this.#readContext(), meta, start, length, options.signal), { objectMode: false });
    return { info: this.#info(meta), start, length, body };
  }

  /** Provider.read; with `endToEnd` (the caller checks the bytes itself) fragment blocks and
   * copies are not checked (ReadContext.endToEnd), nor the blocks of a log segment's record
   * (readLog). */
  async read(key: string, range?: ByteRange, into?: Uint8Array, options: ReadOptions = {}): Promise<Uint8Array> {
    this.#checkOpen();
    checkLogicalKey(key);
    const meta = await this.#meta(key);
    if (meta.layout === 'log') {
      const view = await this.#logs.view(meta);
      const r = resolveRange(view.size, range, key);
      return readLog(this.#logRead, view, r.start, r.length, into, options.endToEnd === true);
    }
    const { start, length } = resolveRange(meta.length!, range, key);
    if (length === 0) return new Uint8Array(0);
    return readRange(this.#readContext(options.endToEnd === true), meta, start, length, into);
  }

  /**
   * Scatter read (Provider.readv): the bytes of `key` from `start` into `targets`, verified
   * and rebuilt like read() (read.ts readScatter), so a large GET reads into the store's
   * pooled span buffers instead of a fresh buffer per span. With `endToEnd` (the caller checks
   * the bytes itself) fragment blocks are not checked (ReadContext.endToEnd), nor a log
   * segment record's blocks (readLog). Throws ProviderError 'NotFound',
   * 'InvalidRange' (the blob ends before the targets are full), 'Io' (unreadable: too few
   * good fragments).
   */
  async readv(key: string, start: number, targets: readonly Uint8Array[], options: ReadOptions = {}): Promise<void> {
    this.#checkOpen();
    checkLogicalKey(key);
    const meta = await this.#meta(key);
    const sink = new ScatterSink(targets);
    if (meta.layout === 'log') {
      const view = await this.#logs.view(meta);
      checkScatterRange(key, start, sink.length, view.size);
      if (sink.length > 0) sink.set(await readLog(this.#logRead, view, start, sink.length, undefined, options.endToEnd === true), 0);
      return;
    }
    checkScatterRange(key, start, sink.length, meta.length!);
    await readScatter(this.#readContext(options.endToEnd === true), meta, start, sink);
  }

  async head(key: string): Promise<BlobInfo> {
    this.#checkOpen();
    checkLogicalKey(key);
    const meta = await this.#meta(key);
    return meta.layout === 'log' ? (await this.#logView(meta)).info : this.#info(meta);
  }

  /** Log reads report damage to the repair queue. */
  readonly #logRead: LogViewContext;

  /** A log segment's bytes [start, start + length) in pieces of LOG_STREAM_BYTES. */
  async *#streamLog(view: LogView, start: number, length: number, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
    for (let at = start; at < start + length; at += LOG_STREAM_BYTES) {
      if (signal?.aborted) throw new ProviderError('Aborted', `${view.key}: aborted`);
      yield await readLog(this.#logRead, view, at, Math.min(LOG_STREAM_BYTES, start + length - at));
    }
  }

  async list(options: ListOptions = {}): Promise<ListPage> {
    this.#checkOpen();
    return listMerged(this.#set, options, this.m, async (e) => {
      const cached = this.#cache.get(e.name.key);
      if (cached?.generation === e.name.generation && cached.length !== undefined) return cached.length;
      try {
        return (await this.#meta(e.name.key, true)).length!;
      } catch (err) {
        if (err instanceof ProviderError && err.code === 'Aborted') throw err;
        // An unsized write with no readable trailer (lost, or a crashed write): still listed,
        // so that a GC can delete it, with size 0; reading it fails closed.
        return 0;
      }
    });
  }

  async delete(key: string): Promise<void> {
    this.#checkOpen();
    checkLogicalKey(key);
    await this.#withLock(key, async () => {
      const found = await lookupBlob(this.#set, key);
      this.#epoch++;
      this.#cache.delete(key);
      this.#logs.forget(key);
      this.#repair.delete(key);
      this.stats.degradedBlobs = this.#repair.size;
      const results = await Promise.allSettled(
        found.names.map((n) => this.#set.call(n.domain, `delete ${n.child}`, (p) => p.delete(n.child)))
      );
      // Fragments left on domains that are down (rejected deletes) are tolerated, see the
      // module doc: the next delete of the key removes them.
      void results;
      this.#epoch++;
      this.#cache.delete(key);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#gate.close();
    dropRebuiltStripes(this.#set);
    await Promise.allSettled(this.domains.map((d) => d.provider.close()));
  }

  async checkBlob(key: string, options: CheckBlobOptions = {}): Promise<BlobCheck> {
    this.#checkOpen();
    checkLogicalKey(key);
    return this.#withLock(key, async () => {
      // A census older than this process's own last write of the key is not used.
      const known = this.#cache.get(key);
      let found = options.found?.meta && known && known.generation > options.found.meta.generation ? undefined : options.found;
      // Log segments (log-check.ts) are told apart by their names: look up first when no census did.
      found ??= await lookupBlob(this.#set, key);
      if (found.meta?.layout === 'log') {
        const open = this.#logs.openView(key);
        const mine = open?.generation === found.meta.generation ? open : undefined;
        let result = await checkLog({ ...this.#ctx, m: this.m }, found.meta, found, this.stats, { repair: options.repair, open: mine });
        if (options.repair && mine && !result.check.lost && !result.clean) {
          // An open segment is repaired by its writer, between appends (log-copy.ts heal).
          const sound = new Set(result.check.fragments.filter((f) => f.state === 'ok').map((f) => f.domain));
          const added = await this.#logs.heal(key, sound);
          if (added > 0) {
            const after = await lookupBlob(this.#set, key);
            if (after.meta?.layout === 'log') {
              result = await checkLog({ ...this.#ctx, m: this.m }, after.meta, after, this.stats, { open: this.#logs.openView(key) });
              result.check.repaired = added;
            }
          }
        }
        if (result.check.repaired) this.#logs.forget(key);
        // An open segment's description stays the writer's own (it keeps its copies current).
        if (result.meta && !open) this.#remember(result.meta);
        else if (!result.meta) this.#cache.delete(key);
        if (!result.check.lost && result.clean && result.check.fragments.every((f) => f.state === 'ok')) {
          this.#repair.delete(key);
          this.stats.degradedBlobs = this.#repair.size;
        }
        return result.check;
      }
      const result = await checkBlob(this.#ctx, key, this.#config, this.stats, { ...options, found });
      if (result.meta) this.#remember(result.meta);
      else this.#cache.delete(key);
      // A missing-only repair that left fragments unchecked has not shown the blob sound.
      if (!result.check.lost && result.check.fragments.every((f) => f.state === 'ok') && !result.check.unchecked?.length && result.clean) {
        this.#repair.delete(key);
        this.stats.degradedBlobs = this.#repair.size;
      }
      return result.check;
    });
  }

  /**
   * Provider.settleLog: when fewer readable copies of segment `key` than an append needs (m + 1;
   * 1 with degradedWrites) hold every record that starts before logical offset `end` (all of
   * them when absent), repairs the segment now (checkBlob: short copies rewritten with the whole
   * tail, new copies on eligible domains for unreadable or missing ones) and checks again on a
   * fresh scan. Throws ProviderError 'Unavailable' when it still falls short, or when the records
   * up to `end` are no longer on any readable copy (their only holder stopped answering); 'Io'
   * when a record verifies on no copy. A key that is not a log segment: no-op.
   */
  async settleLog(key: string, end?: number): Promise<void> {
    this.#checkOpen();
    checkLogicalKey(key);
    const need = this.#config.degradedWrites ? 1 : this.m + 1;
    const holding = async (meta: BlobMeta | undefined): Promise<{ full: number; upTo: number; reaches: boolean } | undefined> => {
      if (meta?.layout !== 'log') return undefined;
      const view = await this.#logs.view(meta);
      const bound = end ?? view.logicalEnd;
      let upTo = 0;
      while (upTo < view.records.length && view.records[upTo]!.logical < bound) upTo++;
      // Counted only where the copy's domain answers now: a view may be older than a domain's
      // failure (one head per copy, m + 1 small calls).
      const answers = await Promise.all(
        view.copies
          .filter((c) => c.covers >= upTo && !this.#set.isFailed(c.domain))
          .map((c) => this.#set.call(c.domain, `head ${view.child}`, (p) => p.head(view.child)).then(() => true, () => false))
      );
      return { full: answers.filter(Boolean).length, upTo, reaches: view.logicalEnd >= bound };
    };
    // First on what recovery's own reads just described and scanned (cached): a healthy open
    // pays one head per copy.
    const cached = this.#cache.get(key);
    const before = await holding(cached?.layout === 'log' ? cached : (await lookupBlob(this.#set, key)).meta);
    if (!before || (before.full >= need && before.reaches)) return;
    const check = await this.checkBlob(key, { repair: true });
    if (check.lost) throw new ProviderError('Io', `${key}: a record of the log segment verifies on no copy; refusing to build on it`);
    this.#logs.forget(key); // scan again: a copy that only failed for a moment reads whole now
    const after = await holding((await lookupBlob(this.#set, key)).meta);
    if (after && !after.reaches) {
      throw new ProviderError('Unavailable', `${key}: the records up to ${end} are on no readable copy now (a domain holding them stopped answering); refusing to build without them`);
    }
    if (after && after.full < need) {
      throw new ProviderError(
        'Unavailable',
        `${key}: its first ${after.upTo} records are on ${after.full} readable copies and no domain could take more (an append needs ${need}${this.#config.degradedWrites ? ', degradedWrites' : ''}); refusing to build on them`
      );
    }
  }

  census(options: { startAfter?: string; skipPrefix?: string; signal?: AbortSignal } = {}): AsyncGenerator<CensusEntry> {
    this.#checkOpen();
    return census(this.#set, this.m, options);
  }

  takeRepairQueue(): string[] {
    const keys = [...this.#repair];
    this.#repair.clear();
    this.stats.degradedBlobs = 0;
    return keys;
  }

  async domainHealth(options: { usage?: boolean } = {}): Promise<DomainHealth[]> {
    return Promise.all(
      this.domains.map(async (d): Promise<DomainHealth> => {
        try {
          let blobs = 0;
          let bytes = 0;
          let next: string | undefined;
          do {
            const page = await this.#set.call(d.id, 'list (health probe)', (p, { signal }) =>
              p.list({ startAfter: next, limit: options.usage ? 1000 : 1, signal, etags: false })
            );
            for (const item of page.items) (blobs++, (bytes += item.size));
            next = options.usage ? page.next : undefined;
          } while (next);
          return options.usage ? { id: d.id, labels: d.labels, state: 'ok', blobs, bytes } : { id: d.id, labels: d.labels, state: 'ok' };
        } catch (err) {
          return { id: d.id, labels: d.labels, state: 'failed', error: (err as Error)?.message ?? String(err) };
        }
      })
    );
  }
}

/**
 * Builds an erasure provider over opened domains. Validates the configuration (k, m, cell
 * size, threshold, timeout) and the placement policy against the domains (validatePolicy:
 * throws PlacementError saying why it cannot be satisfied); throws RangeError for other bad
 * settings. The provider owns the domains' providers: close() closes them.
 */
export async function createErasureProvider(options: ErasureProviderOptions): Promise<ErasureProvider> {
  const { config, domains } = options;
  const { k, m, cellSize, stripeThreshold, domainTimeoutMs } = config;
  if (!Number.isInteger(k) || !Number.isInteger(m) || k < 1 || m < 0 || k + m > 256)
    throw new RangeError(`erasure: k=${k} m=${m}: need k >= 1, m >= 0, k + m <= 256`);
  if (!Number.isInteger(cellSize) || cellSize < 1 || cellSize > MAX_CELL_BYTES)
    throw new RangeError(`erasure: cellSize ${cellSize} outside 1..${MAX_CELL_BYTES} bytes`);
  if (!Number.isSafeInteger(stripeThreshold) || stripeThreshold < 0)
    throw new RangeError(`erasure: stripeThreshold ${stripeThreshold} is not a byte count`);
  if (!(domainTimeoutMs > 0)) throw new RangeError(`erasure: domainTimeoutMs ${domainTimeoutMs} must be positive`);
  if (domains.length < k + m) throw new RangeError(`erasure: ${k}+${m} needs ${k + m} domains, have ${domains.length}`);
  validatePolicy(domains, config.policy, k, m);
  return new ErasureProviderImpl(config, domains, options.openFiles ?? openFilesLimit());
}

/** readv's range check: [start, start + want) must lie inside a blob of `size` bytes. */
function checkScatterRange(key: string, start: number, want: number, size: number): void {
  if (!(Number.isSafeInteger(start) && start >= 0 && start + want <= size))
    throw new ProviderError('InvalidRange', `${key}: bytes ${start}+${want} outside its ${size}`);
}
