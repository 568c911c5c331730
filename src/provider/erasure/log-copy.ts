/**
 * @module The erasure provider's append log: a segment replicated to m + 1 failure domains.
 *
 * Like every small blob here, a log segment is replicated, not striped: its copies go to the
 * m + 1 domains rendezvous placement gives its key (the policy honoured, failed domains placed
 * around), each copy a child AppendLog (the child's own openLog: fs, one O_DSYNC pwritev, so one
 * thread-pool job per copy) named `l.<preallocated>.<generation>` (child-key.ts). An append
 * becomes one record (log-record.ts: header + CRC32C-framed 4 KiB blocks, bound to the attempt),
 * built and checksummed once and the same buffer written to every live copy at the same
 * position, all copies at once; it resolves once every live copy has made it durable, so every
 * acknowledged byte is on every copy. With all domains on one disk, the m + 1 synchronous writes
 * per group commit are what the log costs over the plain fs provider's one (each a thread-pool
 * job, a context switch and a device flush; libuv runs 4 such jobs at a time unless
 * UV_THREADPOOL_SIZE says more, so 10+4's five copies take two rounds). More pool threads did
 * not help: at 16 connections (10,4) made 60-81% of the fs provider's 4 KiB PUTs with 5 or 6
 * threads against 66-93% with 4 (5 interleaved rounds each). Measured outside the server, a
 * 5-copy append of 28 KiB costs ~20% less CPU with the copies opened O_DIRECT (354-377 against
 * 453-478 us in the same runs), but the packed bodies a GET reads come from the copies through
 * the page cache, which O_DIRECT writes would leave cold; and one worker thread writing the
 * copies one after another (283-324 against 360-371 us) makes each append wait ~50% longer.
 *
 * A copy that fails an append (an I/O or sync error, or no answer within the domain timeout)
 * while others succeed is dropped for good: its state is unknown (a failed fsync may have lost
 * any of its pages), so nothing of it is trusted again and it is deleted best effort. Before the
 * append is acknowledged, a replacement is made on the next eligible domain: a new child log
 * holding a byte copy of a surviving copy's records (acknowledged ones and this one), so copies
 * stay identical record for record. Choosing replacement over reporting a failure keeps a
 * domain loss from fencing the repository (the issue: "a domain that fails during a write is
 * replaced by another eligible one"), and is safe because the record is durable on the
 * survivors before anything is copied from them. When fewer than m + 1 copies remain and no
 * replacement can be made, the append is acknowledged with one copy or more only if
 * degradedWrites is on (the key is queued for repair, and the log tries to add copies again
 * every TOP_UP_EVERY_MS before an append); otherwise it fails with AppendError
 * 'sync': the bytes may be durable on some copies, so the repository must stop (it fences).
 * Only when every copy fails before anything could be written (AppendError 'write' from every
 * child) does the append fail with 'write' and the same position is written again next time.
 *
 * Appends must not go backwards (an offset below the end of the last append fails with
 * 'write'): copies are never rewritten where a record was acknowledged.
 */
import { AppendError, type AppendLog } from '../append-log.js';
import { getBytes, ProviderError } from '../provider.js';
import { childKey } from './child-key.js';
import { isDomainFailure, type DomainSet } from './domains.js';
import type { BlobMeta } from './lookup.js';
import { encodeRecord, MAX_RECORD_BYTES, recordBytes } from './log-record.js';
import { LogView } from './log-view.js';

/** Largest segment the erasure provider creates: its copies are preallocated a little more
 * (record headers and block CRCs), which must stay within a child fs log's 1 GiB. */
export const MAX_LOG_SEGMENT_BYTES = 960 * 1024 * 1024;
/** Bytes read and appended at a time while copying a segment onto a replacement domain. */
const COPY_CHUNK_BYTES = 4 * 1024 * 1024;
/** How often a segment left short of m + 1 copies (degradedWrites) tries to add copies again
 * before an append, ms: a failed domain stays skipped for its cooldown (domains.ts) anyway, and
 * copying a segment's records is not something to retry per batch. */
const TOP_UP_EVERY_MS = 10_000;
/** Room for record headers beyond the blocks' own overhead in a copy's preallocation: 64 KiB
 * covers 2,048 appends' headers; more appends only grow the file. */
const HEADER_ROOM_BYTES = 64 * 1024;

/** What the log needs of the provider. */
export interface LogWriteContext {
  domains: DomainSet;
  m: number;
  degradedWrites: boolean;
  /** Domains for up to `count` copies of `key`, excluded ones replaced; throws when too few. */
  place(key: string, count: number, exclude?: ReadonlySet<string>): string[];
  /** Every domain in rendezvous order for `key`. */
  rank(key: string): string[];
  /** The segment has fewer than m + 1 copies (queue it for repair). */
  onDegraded(key: string): void;
}

interface LiveCopy {
  domain: string;
  log: AppendLog;
}

/** Bytes a copy of a `bytes`-byte segment is preallocated. */
function copyBytes(bytes: number): number {
  return recordBytes(bytes) + HEADER_ROOM_BYTES;
}

/** Domains to try for copies of `key`, policy placement first, then rendezvous order. */
function candidates(ctx: LogWriteContext, key: string, want: number, skip: ReadonlySet<string>): string[] {
  let placed: string[] = [];
  for (let c = want; c >= 1 && placed.length === 0; c--) {
    try {
      placed = ctx.place(key, c, skip);
    } catch {
      // fewer eligible domains: try fewer, then rendezvous order
    }
  }
  return [...placed, ...ctx.rank(key)].filter((d, i, all) => all.indexOf(d) === i && !skip.has(d));
}

/** Opens (creates) copy `child` on `domain`; a leftover of an earlier dropped copy is removed first. */
async function createCopy(domains: DomainSet, domain: string, child: string, bytes: number): Promise<AppendLog> {
  const open = (): Promise<AppendLog> =>
    domains.call(domain, `openLog ${child}`, (p) => {
      if (!p.openLog) throw new ProviderError('Io', `domain ${domain} cannot hold an append log`);
      return p.openLog(child, copyBytes(bytes));
    });
  try {
    return await open();
  } catch (err) {
    if (!(err instanceof ProviderError && err.code === 'PreconditionFailed')) throw err;
    await domains.call(domain, `delete ${child}`, (p) => p.delete(child));
    return open();
  }
}

/** The stage of a child append failure: 'write' only when the child said nothing was written. */
function stageOf(err: unknown): 'write' | 'sync' {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) if (e instanceof AppendError) return e.stage;
  return 'sync';
}

/** Closes and deletes a copy given up on. Its close waits for its pending write, which on a
 * hung disk never ends: it is bounded by the domain timeout like every other call there (a
 * write that lands afterwards lands in a copy being deleted, which nothing reads). */
async function dropCopy(domains: DomainSet, copy: LiveCopy, child: string): Promise<void> {
  // A plain bound, not a domain call: a healthy copy dropped because another failed must not
  // be marked failed for a slow close.
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, domains.timeoutMs)));
  await Promise.race([copy.log.close().catch(() => undefined), bound]);
  clearTimeout(timer);
  await domains.call(copy.domain, `delete ${child}`, (p) => p.delete(child)).catch(() => undefined);
}

/**
 * Creates segment `key` (`bytes` preallocated, write `generation`) on m + 1 domains, a domain
 * that fails replaced by the next eligible one, and opens it for appends. `meta` is filled
 * (copies) and kept current by the log. Throws ProviderError 'Unavailable' (nothing left
 * behind) when fewer than m + 1 copies (1 with degradedWrites) could be created.
 */
export async function openReplicatedLog(ctx: LogWriteContext, meta: BlobMeta, bytes: number): Promise<{ log: ReplicatedLog; view: LogView }> {
  const child = childKey({ ...meta, index: 0 });
  const want = ctx.m + 1;
  const tried = new Set<string>(ctx.domains.failedIds());
  const live: LiveCopy[] = [];
  let lastErr: unknown;
  while (live.length < want) {
    const targets = candidates(ctx, meta.key, want, new Set([...tried, ...live.map((c) => c.domain)])).slice(0, want - live.length);
    if (targets.length === 0) break;
    targets.forEach((t) => tried.add(t));
    const opened = await Promise.allSettled(targets.map((d) => createCopy(ctx.domains, d, child, bytes)));
    opened.forEach((r, i) => (r.status === 'fulfilled' ? live.push({ domain: targets[i]!, log: r.value }) : (lastErr = r.reason)));
  }
  if (live.length < want && !(ctx.degradedWrites && live.length >= 1)) {
    await Promise.allSettled(live.map((c) => dropCopy(ctx.domains, c, child)));
    throw new ProviderError(
      'Unavailable',
      `${meta.key}: cannot create the log segment: only ${live.length} of ${want} copies` +
        `${ctx.degradedWrites ? '' : ' (degradedWrites is off)'}${lastErr ? `: ${(lastErr as Error)?.message ?? lastErr}` : ''}`,
      { cause: lastErr }
    );
  }
  if (live.length < want) ctx.onDegraded(meta.key);
  meta.copies = live.map((c) => c.domain);
  const view = new LogView(meta.key, child, meta.generation, bytes, [], live.map((c) => ({ domain: c.domain, covers: 0 })));
  return { log: new ReplicatedLog(ctx, meta, view, live), view };
}

export class ReplicatedLog implements AppendLog {
  readonly key: string;
  readonly preallocated: number;
  readonly #ctx: LogWriteContext;
  readonly #meta: BlobMeta;
  readonly #view: LogView;
  #live: LiveCopy[];
  /** Serialises appends: each is durable (or failed) before the next is written. */
  #tail: Promise<unknown> = Promise.resolve();
  #attempt = 0;
  #closed = false;
  /** Set when an append failed in an unknown state: nothing more is written. */
  #broken: Error | undefined;
  /** When copies were last added to a segment short of m + 1 (Date.now() ms). */
  #lastTopUp = Date.now();

  constructor(ctx: LogWriteContext, meta: BlobMeta, view: LogView, live: LiveCopy[]) {
    this.key = meta.key;
    this.preallocated = view.preallocated;
    this.#ctx = ctx;
    this.#meta = meta;
    this.#view = view;
    this.#live = live;
  }

  append(offset: number, chunks: readonly Uint8Array[]): Promise<void> {
    const run = this.#tail.then(() => this.#append(offset, chunks));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #append(offset: number, chunks: readonly Uint8Array[]): Promise<void> {
    const view = this.#view;
    if (this.#closed) throw new AppendError('write', `${this.key}: segment is closed`, undefined);
    if (this.#broken) throw new AppendError('sync', `${this.key}: an earlier append failed in an unknown state: ${this.#broken.message}`, this.#broken);
    if (!Number.isSafeInteger(offset) || offset < view.logicalEnd)
      throw new AppendError('write', `${this.key}: append at ${offset} is before the log's end ${view.logicalEnd} (or not an offset)`, undefined);
    let total = 0;
    for (const c of chunks) total += c.byteLength;
    if (total > MAX_RECORD_BYTES) throw new AppendError('write', `${this.key}: a ${total}-byte append exceeds ${MAX_RECORD_BYTES} bytes`, undefined);
    // Short of m + 1 copies (degradedWrites let an append through): try to add copies again
    // now and then, so an open segment does not wait for its roll and a scrub.
    if (this.#live.length < this.#ctx.m + 1 && Date.now() - this.#lastTopUp >= TOP_UP_EVERY_MS) {
      this.#lastTopUp = Date.now();
      await this.#replace(new Set());
      this.#meta.copies = this.#live.map((c) => c.domain);
    }
    const record = encodeRecord(view.generation, ++this.#attempt, offset, chunks, total);
    const phys = view.physEnd;
    const copies = this.#live;
    const results = await Promise.allSettled(
      copies.map((c) => this.#ctx.domains.call(c.domain, `append ${view.child}`, () => c.log.append(phys, [record])))
    );
    const ok = copies.filter((_, i) => results[i]!.status === 'fulfilled');
    const failed = copies.filter((_, i) => results[i]!.status === 'rejected');
    const reasons = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (ok.length === 0) {
      const why = reasons.map((e) => (e as Error)?.message ?? String(e)).join('; ');
      if (reasons.every((e) => stageOf(e) === 'write'))
        throw new AppendError('write', `${this.key}: append at ${offset} failed on every copy: ${why}`, reasons[0]);
      this.#broken = new Error(why);
      throw new AppendError('sync', `${this.key}: append at ${offset} failed on every copy, some in an unknown state: ${why}`, reasons[0]);
    }
    view.records.push({ phys, logical: offset, length: total, attempt: this.#attempt });
    const held = view.records.length;
    for (const c of view.copies) if (ok.some((o) => o.domain === c.domain)) c.covers = held;
    if (failed.length === 0) return;
    // Drop the failed copies for good, then replace them from a survivor (module doc).
    this.#live = ok;
    view.copies = view.copies.filter((c) => ok.some((o) => o.domain === c.domain));
    await Promise.allSettled(failed.map((c) => dropCopy(this.#ctx.domains, c, view.child)));
    await this.#replace(new Set(failed.map((c) => c.domain)));
    this.#meta.copies = this.#live.map((c) => c.domain);
    const want = this.#ctx.m + 1;
    if (this.#live.length >= want) return;
    if (this.#ctx.degradedWrites) {
      this.#ctx.onDegraded(this.key);
      return;
    }
    const why = reasons.map((e) => (e as Error)?.message ?? String(e)).join('; ');
    this.#broken = new Error(why);
    throw new AppendError('sync', `${this.key}: append at ${offset} is on ${this.#live.length} of ${want} copies and no domain could replace the others (degradedWrites is off): ${why}`, reasons[0]);
  }

  /**
   * Replaces the live copies on domains outside `sound` (the domains where a scrub found the
   * copy whole; the others are missing or damaged: e.g. a domain emptied under an open file
   * handle, whose appends still succeed into an unlinked file) with
   * byte copies of a sound live copy on other eligible domains, in turn with appends (so no
   * copy misses a record). Returns how many copies were added. Does nothing on a closed or
   * broken log, or when it would drop the last live copy.
   */
  heal(sound: ReadonlySet<string>): Promise<number> {
    const run = this.#tail.then(async () => {
      const bad = this.#live.filter((c) => !sound.has(c.domain));
      const domains = new Set(bad.map((c) => c.domain));
      if (this.#closed || this.#broken || bad.length === 0 || bad.length >= this.#live.length) return 0;
      const view = this.#view;
      this.#live = this.#live.filter((c) => !domains.has(c.domain));
      view.copies = view.copies.filter((c) => !domains.has(c.domain));
      await Promise.allSettled(bad.map((c) => dropCopy(this.#ctx.domains, c, view.child)));
      const before = this.#live.length;
      await this.#replace(domains);
      this.#meta.copies = this.#live.map((c) => c.domain);
      if (this.#live.length < this.#ctx.m + 1) this.#ctx.onDegraded(this.key);
      return this.#live.length - before;
    });
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Adds copies (byte copies of a live one) until m + 1 or no eligible domain is left. */
  async #replace(dropped: ReadonlySet<string>): Promise<void> {
    const view = this.#view;
    const want = this.#ctx.m + 1;
    const tried = new Set<string>([...dropped, ...this.#ctx.domains.failedIds()]);
    while (this.#live.length < want) {
      const next = candidates(this.#ctx, this.key, want, new Set([...tried, ...this.#live.map((c) => c.domain)]))[0];
      if (next === undefined) return;
      tried.add(next);
      let log: AppendLog | undefined;
      try {
        log = await createCopy(this.#ctx.domains, next, view.child, view.preallocated);
        const end = view.physEnd;
        for (let pos = 0; pos < end; pos += COPY_CHUNK_BYTES) {
          const range = { start: pos, end: Math.min(end, pos + COPY_CHUNK_BYTES) - 1 };
          const bytes = await this.#readLive(range);
          await this.#ctx.domains.call(next, `append ${view.child}`, () => log!.append(pos, [bytes]));
        }
        this.#live.push({ domain: next, log });
        view.copies.push({ domain: next, covers: view.records.length });
      } catch {
        if (log) await dropCopy(this.#ctx.domains, { domain: next, log }, view.child);
      }
    }
  }

  /** Bytes `range` of the copy, from the first live copy that returns them whole. */
  async #readLive(range: { start: number; end: number }): Promise<Uint8Array> {
    let last: unknown;
    for (const c of this.#live) {
      try {
        const bytes = await this.#ctx.domains.readBlob(c.domain, this.#view.child, (p) => getBytes(p, this.#view.child, range));
        if (bytes.length === range.end - range.start + 1) return bytes;
        last = new Error(`short read of ${this.#view.child} on ${c.domain}`);
      } catch (err) {
        if (!isDomainFailure(err) && !(err instanceof ProviderError)) throw err;
        last = err;
      }
    }
    throw last ?? new Error('no live copy');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    await Promise.allSettled(this.#live.map((c) => c.log.close()));
  }
}
