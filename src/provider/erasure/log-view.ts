/**
 * @module Reading an erasure-provider log segment: which records it holds, on which copies,
 * and the logical bytes they make.
 *
 * A segment's copies (log-copy.ts) hold the same records at the same positions, except that
 * a copy may lack the tail: a copy made before a crash, a copy whose last append was torn,
 * or a copy holding one unacknowledged record more than the others. A LogView is the list of
 * records of the longest copy (the reference) and, per copy, how many of its leading records
 * it holds: a record is acknowledged only once every live copy has it, so every copy holds
 * every acknowledged record, and reading the longest never loses one. Bytes of the segment
 * that no record covers (the preallocation, gaps) read as zeros, as on the fs provider.
 *
 * The writer keeps the view of a segment it appends to up to date; a segment not opened by
 * this process is scanned once (scanCopy) on first use: each copy's record headers are read in
 * windows, and the last record of each copy is verified whole, since only the last append of a
 * copy can have been torn. Every read verifies the CRC of each block it returns; a block that
 * fails is read from the next copy that holds the record, and with none left the read fails
 * with ProviderError 'Io' naming the segment: never wrong bytes. The one exception is
 * readUnchecked, for a caller that checks every byte itself (ReadOptions.endToEnd: the store's
 * pack entries carry their own CRC32C) and reads again through read when they fail.
 */
import { readBlobRangeDirect } from '../fs/blob-file.js';
import { getBytes, ProviderError } from '../provider.js';
import type { DomainSet } from './domains.js';
import {
  blockSpan,
  dataSpan,
  dropBlockCrcs,
  parseRecordHeader,
  RECORD_HEADER_BYTES,
  recordBytes,
  recordEnd,
  unframeBlocks,
  type LogRecord,
} from './log-record.js';

/** Bytes of a copy read at once while scanning or checking it: a window holds many records (a
 * group-commit batch is a record of a few KiB), so a copy costs a read per window, not one or
 * two per record. A (10,4) repair of a wiped domain holding five 51 MB segments of 4 KiB PUTs'
 * batches spent most of its time in per-record reads (tens of thousands per copy, five copies
 * each) before copies were read this way. */
export const COPY_WINDOW_BYTES = 1024 * 1024;

/**
 * Reads one copy front to back in windows of COPY_WINDOW_BYTES, all into one buffer (a read
 * that can fill it, Provider.read; a fresh megabyte per window cost more in GC than the checks
 * of its records): each window is used up before the next is read. Where the domain's files are
 * read around the page cache (Provider.directFileReads), windows are read O_DIRECT
 * (readBlobRangeDirect): buffered, the log copies of a cold (10,4) repair were a quarter of
 * its system time, spent copying from freshly filled page-cache pages. Reads only; a domain's
 * failure is thrown as the domain call reports it.
 */
export class CopyWindows {
  readonly #domains: DomainSet;
  readonly #domain: string;
  readonly #child: string;
  /** The copy's size (its head), which no window reads past. */
  readonly #size: number;
  #window: Uint8Array = new Uint8Array(0);
  #start = 0;
  #scratch: Uint8Array | undefined;

  constructor(domains: DomainSet, domain: string, child: string, size: number) {
    this.#domains = domains;
    this.#domain = domain;
    this.#child = child;
    this.#size = size;
  }

  /** Bytes [start, end) of the copy when the current window holds them all, else undefined:
   * the common case needs no promise (a copy's scan asks for tens of thousands of records'
   * spans, and an await for each made a (10,4) repair 15% slower). */
  held(start: number, end: number): Uint8Array | undefined {
    return start >= this.#start && end <= this.#start + this.#window.length ? this.#window.subarray(start - this.#start, end - this.#start) : undefined;
  }

  /**
   * Bytes [start, end) of the copy (end - start at most COPY_WINDOW_BYTES), from the current
   * window when it holds them (callers ask `held` first), else from a new window read from
   * `start`. Shorter when the copy ends first (or reads short); empty when `start` is at or
   * past its size.
   */
  async span(start: number, end: number): Promise<Uint8Array> {
    const held = this.held(start, end);
    if (held) return held;
    const n = Math.min(this.#size - start, COPY_WINDOW_BYTES);
    if (n <= 0) return new Uint8Array(0);
    const scratch = (this.#scratch ??= new Uint8Array(Math.min(this.#size, COPY_WINDOW_BYTES)));
    const range = { start, end: start + n - 1 };
    const child = this.#child;
    this.#window = await this.#domains.readBlob(this.#domain, child, async (p) => {
      // Around the page cache where the domain's blob files are read so (Provider.directFileReads:
      // a scrub's, or a server's with --direct-io on): a pass reads every copy once.
      const direct = p.directFileReads && p.blobFilePath ? await readBlobRangeDirect(p.blobFilePath(child), start, n, scratch) : undefined;
      return direct ?? (p.read ? p.read(child, range, scratch) : getBytes(p, child, range));
    });
    this.#start = start;
    return this.#window.subarray(0, Math.min(end - start, this.#window.length));
  }
}

export interface LogCopyState {
  domain: string;
  /** Leading records of the view this copy holds. */
  covers: number;
}

/** What a view needs of the provider: bounded domain calls and where damage is reported. */
export interface LogViewContext {
  domains: DomainSet;
  /** A copy failed a check while reading `key` (heal on read: the key is queued for repair). */
  onDamaged(key: string, domain: string, why: string): void;
}

export class LogView {
  readonly key: string;
  readonly child: string;
  readonly generation: number;
  readonly preallocated: number;
  /** Records in logical order; the reference copy's. */
  readonly records: LogRecord[];
  copies: LogCopyState[];

  constructor(key: string, child: string, generation: number, preallocated: number, records: LogRecord[], copies: LogCopyState[]) {
    this.key = key;
    this.child = child;
    this.generation = generation;
    this.preallocated = preallocated;
    this.records = records;
    this.copies = copies;
  }

  /** Logical end of the last record (0 when none). */
  get logicalEnd(): number {
    const r = this.records[this.records.length - 1];
    return r ? r.logical + r.length : 0;
  }

  /** Copy bytes the records take (where the next record goes). */
  get physEnd(): number {
    const r = this.records[this.records.length - 1];
    return r ? recordEnd(r) : 0;
  }

  /** The segment's size as head() reports it: the preallocation, or more once appends ran past it. */
  get size(): number {
    return Math.max(this.preallocated, this.logicalEnd);
  }

  /** Index of the first record whose data ends after logical offset `at`. */
  #firstAfter(at: number): number {
    let lo = 0;
    let hi = this.records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const r = this.records[mid]!;
      if (r.logical + r.length <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The logical bytes [start, start + length) into `out` (zeros where no record lies). Throws
   * ProviderError 'Io' when a record's bytes verify on no copy that holds it.
   */
  async read(ctx: LogViewContext, start: number, length: number, out: Uint8Array): Promise<void> {
    const end = start + length;
    const i0 = this.#firstAfter(start);
    // The common case (a packed body): the range lies inside one record.
    if (this.#holds(i0, start, end)) {
      const at = this.records[i0]!.logical;
      return this.#readRecord(ctx, i0, start - at, end - at, out, 0);
    }
    let filled = start;
    const reads: Promise<void>[] = [];
    for (let i = i0; i < this.records.length; i++) {
      const r = this.records[i]!;
      if (r.logical >= end) break;
      if (r.logical > filled) out.fill(0, filled - start, r.logical - start);
      const from = Math.max(start, r.logical) - r.logical;
      const to = Math.min(end, r.logical + r.length) - r.logical;
      reads.push(this.#readRecord(ctx, i, from, to, out, r.logical + from - start));
      filled = r.logical + to;
    }
    if (filled < end) out.fill(0, filled - start, length);
    await Promise.all(reads);
  }

  /**
   * The logical bytes [start, start + length) unchecked, for a caller that checks every byte
   * itself and reads again checked (read) when they fail (ReadOptions.endToEnd): when the range
   * lies inside one record and a healthy copy holds it, one read of just those bytes from that
   * copy, block CRCs dropped, not computed (a 4 KiB packed body reads ~4 KiB, where a checked
   * read reads and checks the two or three 4 KiB blocks it touches, and copies it out of them).
   * Undefined when that does not apply or the read fails: the caller reads checked then.
   * Rejects only for an abort.
   */
  async readUnchecked(ctx: LogViewContext, start: number, length: number): Promise<Uint8Array | undefined> {
    const i0 = this.#firstAfter(start);
    if (length <= 0 || !this.#holds(i0, start, start + length)) return undefined;
    const copy = this.#firstHealthy(ctx, i0);
    if (!copy) return undefined;
    const r = this.records[i0]!;
    const from = start - r.logical;
    const span = dataSpan(r, from, from + length);
    try {
      const raw = await ctx.domains.readBlob(copy.domain, this.child, (p) => getBytes(p, this.child, { start: span.start, end: span.start + span.length - 1 }));
      return dropBlockCrcs(raw, from, from + length);
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'Aborted') throw err;
      return undefined;
    }
  }

  /** Whether record `i` holds all of logical [start, end). */
  #holds(i: number, start: number, end: number): boolean {
    const r = this.records[i];
    return r !== undefined && r.logical <= start && end <= r.logical + r.length;
  }

  /** The first copy holding record `index` by the scan, when its domain is not failed. */
  #firstHealthy(ctx: LogViewContext, index: number): LogCopyState | undefined {
    const first = this.copies.find((c) => c.covers > index);
    return first && !ctx.domains.isFailed(first.domain) ? first : undefined;
  }

  async #readRecord(ctx: LogViewContext, index: number, from: number, to: number, out: Uint8Array, outOffset: number): Promise<void> {
    const r = this.records[index]!;
    const span = blockSpan(r, from, to);
    // Fast path (a small read, a healthy first copy): no candidate list. Any failure falls
    // through to the loop, which tries every copy holding the record, healthy ones first.
    const first = this.#firstHealthy(ctx, index);
    if (first) {
      try {
        const framed = await ctx.domains.readBlob(first.domain, this.child, (p) =>
          getBytes(p, this.child, { start: span.start, end: span.start + span.length - 1 })
        );
        if (unframeBlocks(framed, r, this.generation, span.firstBlock, span.dataStart, from, to, out, outOffset)) return;
      } catch (err) {
        if (err instanceof ProviderError && err.code === 'Aborted') throw err;
      }
    }
    // Copies holding the record by the scan first, healthy ones first; then the others as a last
    // resort (a copy whose scan stopped at a damaged header may still hold this record intact:
    // the blocks' CRCs bind the attempt, so only the bytes of this very append can pass).
    const rank = (c: LogCopyState): number => (c.covers > index ? 0 : 2) + Number(ctx.domains.isFailed(c.domain));
    const holders = [...this.copies].sort((a, b) => rank(a) - rank(b));
    const errors: string[] = [];
    for (const c of holders) {
      try {
        const framed = await ctx.domains.readBlob(c.domain, this.child, (p) =>
          getBytes(p, this.child, { start: span.start, end: span.start + span.length - 1 })
        );
        if (unframeBlocks(framed, r, this.generation, span.firstBlock, span.dataStart, from, to, out, outOffset)) return;
        errors.push(`${c.domain}: record at ${r.phys} fails its block checks`);
      } catch (err) {
        if (err instanceof ProviderError && err.code === 'Aborted') throw err;
        errors.push(`${c.domain}: ${(err as Error)?.message ?? err}`);
      }
      ctx.onDamaged(this.key, c.domain, errors[errors.length - 1]!);
    }
    throw new ProviderError(
      'Io',
      `${this.key}: log record at logical ${r.logical} verifies on none of the ${holders.length} copies; ` +
        `refusing to return bytes${errors.length ? ` (${errors.slice(0, 4).join('; ')})` : ''}`
    );
  }
}

/**
 * The records of copy `child` on `domain`, read from its headers (CopyWindows), up to the first position that holds no record continuing the log (a
 * header that fails, a record running past the copy's end, a logical offset going backwards).
 * The last record found is verified whole and dropped if it fails (a torn append). Reads only;
 * throws the domain's ProviderError when the copy cannot be read.
 */
export async function scanCopy(domains: DomainSet, domain: string, child: string, generation: number): Promise<LogRecord[]> {
  return (await scanCopyChecked(domains, domain, child, generation, false)).records;
}

/** A copy's records as scanCopy finds them, with each one's check when asked for. */
export interface ScannedCopy {
  records: LogRecord[];
  /** Per record (with `verify`): whether its header and every block verify, or undefined when
   * it is larger than a window (COPY_WINDOW_BYTES; not checked here: verifyRecord reads it piece by piece). */
  verified: (boolean | undefined)[];
}

/**
 * scanCopy, and with `verify` each record's blocks checked from the same windows as they pass
 * (a window is read again from a record's header when the record runs past its end), so that
 * a copy scanned and checked is read once (log-check.ts).
 */
export async function scanCopyChecked(domains: DomainSet, domain: string, child: string, generation: number, verify: boolean): Promise<ScannedCopy> {
  const size = (await domains.call(domain, `head ${child}`, (p) => p.head(child))).size;
  const records: LogRecord[] = [];
  const verified: (boolean | undefined)[] = [];
  const windows = new CopyWindows(domains, domain, child, size);
  let pos = 0;
  let logicalEnd = 0;
  while (pos + RECORD_HEADER_BYTES <= size) {
    const header = windows.held(pos, pos + RECORD_HEADER_BYTES) ?? (await windows.span(pos, pos + RECORD_HEADER_BYTES));
    if (header.length < RECORD_HEADER_BYTES) break;
    const r = parseRecordHeader(header, pos, generation);
    if (!r || r.logical < logicalEnd || pos + recordBytes(r.length) > size) break;
    let check: boolean | undefined;
    if (verify && recordEnd(r) - pos <= COPY_WINDOW_BYTES) {
      // The window is read again from the header when the record runs past its end: the
      // header must still be this one (recordVerifies checks it against r).
      const whole = windows.held(pos, recordEnd(r)) ?? (await windows.span(pos, recordEnd(r)));
      check = whole.length === recordEnd(r) - pos && recordVerifies(whole, r, generation);
    }
    records.push(r);
    verified.push(check);
    logicalEnd = r.logical + r.length;
    pos = recordEnd(r);
  }
  const last = records.length - 1;
  if (last >= 0) {
    const good = verified[last] ?? (await verifyRecord(domains, domain, child, generation, records[last]!));
    if (!good) {
      records.pop();
      verified.pop();
    }
  }
  return { records, verified };
}

/** Whether `bytes` (record `r` whole: header and framed blocks, as a copy holds them) are
 * record `r` with every block passing its check. */
export function recordVerifies(bytes: Uint8Array, r: LogRecord, generation: number): boolean {
  const h = parseRecordHeader(bytes.subarray(0, RECORD_HEADER_BYTES), r.phys, generation);
  if (!h || !sameRecord(h, r)) return false;
  if (r.length === 0) return true;
  const s = blockSpan(r, 0, r.length);
  return unframeBlocks(bytes.subarray(s.start - r.phys, s.start - r.phys + s.length), r, generation, s.firstBlock, s.dataStart, 0, r.length, null, 0);
}

/** Whether every block of `r` on copy `child` of `domain` passes its check. Throws the domain's
 * ProviderError when the copy cannot be read. */
export async function verifyRecord(domains: DomainSet, domain: string, child: string, generation: number, r: LogRecord): Promise<boolean> {
  if (r.length === 0) return true;
  // Whole blocks in pieces of at most a scan window: bounded memory whatever the record size.
  const per = Math.max(1, Math.floor(COPY_WINDOW_BYTES / 4100)) * 4096;
  const out = new Uint8Array(Math.min(per, r.length));
  for (let from = 0; from < r.length; from += per) {
    const to = Math.min(r.length, from + per);
    const s = blockSpan(r, from, to);
    const framed = await domains.readBlob(domain, child, (p) => getBytes(p, child, { start: s.start, end: s.start + s.length - 1 }));
    if (!unframeBlocks(framed, r, generation, s.firstBlock, s.dataStart, from, to, out, 0)) return false;
  }
  return true;
}

/** Whether two records are the same write (same place, attempt and extent). */
export function sameRecord(a: LogRecord, b: LogRecord): boolean {
  return a.phys === b.phys && a.logical === b.logical && a.length === b.length && a.attempt === b.attempt;
}

/**
 * Builds the view of segment `key` from its copies on `domains` (copy name `child`): scans
 * every copy at once, takes the longest as the reference and counts, per copy, the leading
 * records it shares with it. A copy that cannot be read counts as holding none (reads try it
 * last, scrub repairs it). Throws ProviderError 'Io' when no copy can be read.
 */
export async function loadView(
  domains: DomainSet,
  key: string,
  child: string,
  generation: number,
  preallocated: number,
  copies: readonly string[]
): Promise<LogView> {
  const scanned = await Promise.all(
    copies.map((d) => scanCopy(domains, d, child, generation).then((records) => ({ d, records }), (err: unknown) => ({ d, err })))
  );
  const readable = scanned.filter((s): s is { d: string; records: LogRecord[] } => 'records' in s);
  if (readable.length === 0) {
    const why = scanned.map((s) => ('err' in s ? `${s.d}: ${(s.err as Error)?.message ?? s.err}` : '')).join('; ');
    throw new ProviderError('Io', `${key}: no copy of the log segment can be read (${why})`);
  }
  const longest = readable.reduce((a, b) => (b.records.length > a.records.length ? b : a));
  const states = scanned.map((s) => {
    if (!('records' in s)) return { domain: s.d, covers: 0 };
    let n = 0;
    while (n < s.records.length && n < longest.records.length && sameRecord(s.records[n]!, longest.records[n]!)) n++;
    return { domain: s.d, covers: n };
  });
  return new LogView(key, child, generation, preallocated, longest.records, states);
}
