/**
 * @module Checking and repairing an erasure-provider log segment (scrub, repair worker,
 * `strata verify` through checkBlob).
 *
 * A segment is a replicated blob whose copies hold records (log-record.ts). The check reads
 * every copy whole and verifies every block of every record against a reference list of
 * records: the writer's own list while the segment is open in this process, else the longest
 * copy's (log-view.ts: every acknowledged record is on every copy, so the longest holds them
 * all). A copy is 'ok' when it holds the whole reference list and every block verifies;
 * 'corrupt' when a block fails or records are missing from its tail; 'unreachable' when its
 * domain cannot be read; copies short of m + 1 are 'missing'. The segment is lost when some
 * record verifies on no copy (reads of it fail closed).
 *
 * Repair writes the reference records' bytes, each record taken from a copy on which it
 * verifies, as a whole new copy: in place of a corrupt copy (an atomic replace on the child)
 * and on the next eligible domains for missing ones. A segment open for appends in this
 * process is not repaired here: its writer replaces copies itself (log-copy.ts; a repairing
 * checkBlob asks it to, heal), and a repair
 * racing an append could leave a copy without the newest record.
 */
import { getBytes, ProviderError } from '../provider.js';
import type { DomainSet } from './domains.js';
import { isDomainFailure } from './domains.js';
import { parseRecordHeader, recordEnd, RECORD_HEADER_BYTES, type LogRecord } from './log-record.js';
import { COPY_WINDOW_BYTES, CopyWindows, recordVerifies, sameRecord, scanCopyChecked, verifyRecord, type LogView, type ScannedCopy } from './log-view.js';
import { nameOf, type BlobMeta, type LookupResult } from './lookup.js';
import type { BlobCheck, ErasureStats, FragmentCheck } from './types.js';

/** Bytes read at a time when a repair copies records. */
const REPAIR_CHUNK_BYTES = 4 * 1024 * 1024;
export interface LogCheckContext {
  domains: DomainSet;
  m: number;
  place(key: string, count: number, exclude?: ReadonlySet<string>): string[];
  rank(key: string): string[];
}

interface CopyResult {
  domain: string;
  state: 'ok' | 'corrupt' | 'unreachable';
  /** Per reference record: does it verify on this copy? */
  good: boolean[];
}

/** Verifies copy `child` on `domain` against `ref`, reading it in windows (CopyWindows; a
 * record larger than a window on its own, piece by piece). Never throws for a domain's failure. */
async function checkCopy(domains: DomainSet, domain: string, child: string, generation: number, ref: readonly LogRecord[]): Promise<CopyResult> {
  const good: boolean[] = [];
  try {
    const size = ref.length ? (await domains.call(domain, `head ${child}`, (p) => p.head(child))).size : 0;
    const windows = new CopyWindows(domains, domain, child, size);
    for (const r of ref) {
      const end = recordEnd(r);
      if (end > size) break; // the copy ends before this record: it is short (below)
      if (end - r.phys > COPY_WINDOW_BYTES) {
        const header = await domains.readBlob(domain, child, (p) => getBytes(p, child, { start: r.phys, end: r.phys + RECORD_HEADER_BYTES - 1 }));
        const h = parseRecordHeader(header, r.phys, generation);
        good.push(!!h && sameRecord(h, r) && (await verifyRecord(domains, domain, child, generation, r)));
        continue;
      }
      const bytes = windows.held(r.phys, end) ?? (await windows.span(r.phys, end));
      if (bytes.length < end - r.phys) break; // read short: the copy ended meanwhile
      good.push(recordVerifies(bytes, r, generation));
    }
    if (good.length < ref.length) {
      while (good.length < ref.length) good.push(false);
      return { domain, state: 'corrupt', good };
    }
  } catch (err) {
    if (err instanceof ProviderError && err.code === 'Aborted') throw err;
    // A copy shorter than the reference reads short or out of range: damage, not a dead domain.
    if (!isDomainFailure(err) || (err instanceof ProviderError && err.cause instanceof ProviderError && err.cause.code === 'InvalidRange')) {
      while (good.length < ref.length) good.push(false);
      return { domain, state: 'corrupt', good };
    }
    return { domain, state: 'unreachable', good: ref.map(() => false) };
  }
  return { domain, state: good.every(Boolean) ? 'ok' : 'corrupt', good };
}

/** The reference records (the open writer's, else the longest copy's) and, without a writer,
 * each copy's scan with its records checked (undefined where the scan failed). */
async function referenceOf(domains: DomainSet, meta: BlobMeta, child: string, open: LogView | undefined): Promise<{ ref: LogRecord[]; scans: (ScannedCopy | undefined)[] }> {
  if (open) return { ref: open.records.slice(), scans: [] };
  const scans = await Promise.all(meta.copies.map((d) => scanCopyChecked(domains, d, child, meta.generation, true).catch(() => undefined)));
  return { ref: scans.reduce((a, b) => (b && b.records.length > a.length ? b.records : a), [] as LogRecord[]), scans };
}

/** Copy `domain` checked against `ref`: from its scan (`scan`) as far as the scan found the
 * reference's records and checked them, the rest read again (checkCopy). */
async function checkScanned(domains: DomainSet, domain: string, child: string, generation: number, ref: readonly LogRecord[], scan: ScannedCopy | undefined): Promise<CopyResult> {
  const good: boolean[] = [];
  if (scan) {
    for (let i = 0; i < ref.length && i < scan.records.length; i++) {
      const v = scan.verified[i];
      if (v === undefined || !sameRecord(scan.records[i]!, ref[i]!)) break;
      good.push(v);
    }
  }
  if (good.length === ref.length) return { domain, state: good.every(Boolean) ? 'ok' : 'corrupt', good };
  const rest = await checkCopy(domains, domain, child, generation, ref.slice(good.length));
  if (rest.state === 'unreachable') return { domain, state: 'unreachable', good: ref.map(() => false) };
  const all = [...good, ...rest.good];
  return { domain, state: all.every(Boolean) ? 'ok' : 'corrupt', good: all };
}

/** The bytes of the reference records, each from a copy on which it verified: records that
 * follow one another on the same source are read together, up to REPAIR_CHUNK_BYTES a read. */
async function* image(domains: DomainSet, child: string, ref: readonly LogRecord[], copies: readonly CopyResult[]): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < ref.length; ) {
    const source = copies.find((c) => c.good[i])!;
    const start = ref[i]!.phys;
    let end = recordEnd(ref[i]!);
    // Extend the run while the next record starts where this one ends and verified on the same copy.
    for (i++; i < ref.length && ref[i]!.phys === end && copies.find((c) => c.good[i]) === source && recordEnd(ref[i]!) - start <= REPAIR_CHUNK_BYTES; i++) end = recordEnd(ref[i]!);
    for (let pos = start; pos < end; pos += REPAIR_CHUNK_BYTES) {
      const to = Math.min(end, pos + REPAIR_CHUNK_BYTES);
      yield await domains.readBlob(source.domain, child, (p) => getBytes(p, child, { start: pos, end: to - 1 }));
    }
  }
}

/**
 * Checks (and with `repair`, repairs) log segment `meta` (found by `found`); `open` is the
 * writer's view when this process appends to it (then nothing is rewritten). Updates `stats`.
 * Returns the check, the description to cache (undefined when lost), and whether it is clean.
 * Throws ProviderError 'Aborted'.
 */
export async function checkLog(
  ctx: LogCheckContext,
  meta: BlobMeta,
  found: LookupResult,
  stats: ErasureStats,
  options: { repair?: boolean; open?: LogView }
): Promise<{ check: BlobCheck; meta: BlobMeta | undefined; clean: boolean }> {
  const child = nameOf(meta, 0);
  // Without a writer, every copy is scanned and checked in one read (its records as far as they
  // are the reference's); a writer's copies are checked against its own list.
  const { ref, scans } = await referenceOf(ctx.domains, meta, child, options.open);
  const results = await Promise.all(meta.copies.map((d, i) => checkScanned(ctx.domains, d, child, meta.generation, ref, scans[i])));
  const fragments: FragmentCheck[] = results.map((r, i) => ({ index: i, domain: r.domain, state: r.state }));
  const want = ctx.m + 1;
  const holding = new Set(meta.copies);
  const unusable = new Set([...ctx.domains.failedIds(), ...results.filter((r) => r.state === 'unreachable').map((r) => r.domain)]);
  let planned: string[] = [];
  try {
    planned = ctx.place(meta.key, want, unusable);
  } catch {
    // the policy cannot be met: rendezvous order below
  }
  const spare = [...planned, ...ctx.rank(meta.key)].filter((d, i, all) => all.indexOf(d) === i && !holding.has(d) && !unusable.has(d));
  for (let i = meta.copies.length; i < want; i++) fragments.push({ index: i, domain: spare[i - meta.copies.length] ?? '(none)', state: 'missing' });
  const good = fragments.filter((f) => f.state === 'ok').length;
  const bad = fragments.length - good;
  const lost = ref.some((_, i) => !results.some((r) => r.good[i]));
  const size = Math.max(meta.length ?? 0, ref.length ? ref[ref.length - 1]!.logical + ref[ref.length - 1]!.length : 0);
  const check: BlobCheck = { key: meta.key, layout: 'replicated', size, fragments, repaired: 0, repairBytes: 0, lost };
  stats.fragmentsVerified += good;
  stats.fragmentsDamaged += bad;
  if (lost) return { check, meta: undefined, clean: false };
  if (!options.repair || options.open || bad === 0) return { check, meta, clean: bad === 0 && found.stale.length === 0 };

  const okCopies = results.filter((r) => r.state === 'ok').map((r) => r.domain);
  const corrupt = results.filter((r) => r.state === 'corrupt').map((r) => r.domain);
  // Corrupt copies are rewritten in place first, then spares until m + 1 copies are whole: a
  // target whose write fails is passed over for the next one.
  const bytes = ref.length ? recordEnd(ref[ref.length - 1]!) : 0;
  for (const t of [...corrupt, ...spare]) {
    if (okCopies.length >= want) break;
    try {
      await ctx.domains.call(
        t,
        `put ${child}`,
        (p, { signal }) => p.put(child, image(ctx.domains, child, ref, results), { contentLength: bytes, signal }),
        Number.POSITIVE_INFINITY // a whole segment: bounded by each read's own timeout instead
      );
      okCopies.push(t);
      check.repaired++;
      check.repairBytes += bytes;
      stats.fragmentsRepaired++;
      stats.repairBytes += bytes;
    } catch {
      // counted as not repaired
    }
  }
  for (const s of found.stale) {
    const name = found.names.find((n) => n.child === s.childKey && n.domain === s.domain);
    if (name && name.name.generation < meta.generation) await ctx.domains.call(s.domain, `delete ${s.childKey}`, (p) => p.delete(s.childKey)).catch(() => undefined);
  }
  // Copies not rewritten stay listed (reads fall back to the records that verify on them).
  meta.copies = [...okCopies, ...meta.copies].filter((d, i, all) => all.indexOf(d) === i);
  return { check, meta, clean: true };
}
