/**
 * @module Scrub: one pass over every blob of an erasure provider, reading and verifying every
 * fragment (checkBlob), optionally rebuilding what is missing or corrupt onto healthy domains,
 * at a bounded rate, reporting damage by domain and the blobs that are lost.
 *
 * A pass walks the provider's census (census.ts: every domain listed once, each blob with its
 * fragment names, so no check needs a lookup of its own; provider.list() for a provider
 * without one) in key order (skipping maintenance/), checks up to `concurrency` blobs at a time
 * (small ones SMALL_PER_SLOT to a slot), and every CURSOR_EVERY_BLOBS blobs or CURSOR_EVERY_MS saves a cursor (the
 * last key of the checked prefix and the totals so far, scrub-cursor.ts) so that a killed pass
 * resumes where it stood instead of starting over. A completed pass removes the cursor and
 * records its end (`maintenance/scrub-last`) and its size (`maintenance/scrub-size`: blobs and
 * bytes). Progress is reported against that size, marked `estimated`; only a pass with no size
 * recorded first counts what it will check with a listing of every domain (which cost about a
 * tenth of a (10,4) repair's time, the census listing them all again). Within one process,
 * passes over one provider run one at a time (a second waits for the first).
 *
 * Resuming is the default: a pass finding a cursor saved by a pass of the same kind (repair,
 * missing-only repair, or check-only) continues it, and its report covers the whole pass. A
 * cursor of another kind is dropped (a repair pass must not skip blobs a check-only pass merely
 * looked at, nor a full pass blobs a missing-only one did not verify).
 *
 * A missing-only repair (`missingOnly`, for a domain replaced by an empty one) rebuilds only
 * fragments missing by name and reads only what that needs (k verified fragments of a blob
 * missing one, nothing of a complete blob): `fragments.unchecked` counts what it did not verify.
 * It does not count as a completed scrub (`maintenance/scrub-last` is left as it was), so the
 * scheduled full pass still comes when due.
 */
import { ProviderError } from '../provider.js';
import type { BlobCheck, ErasureProvider } from './types.js';
import type { LookupResult } from './lookup.js';
import { ByteRateLimiter, REAL_CLOCK, yieldToRequests, type RateClock, type RequestLoad } from './scrub-rate.js';
import {
  clearCursor,
  emptyTotals,
  loadCursor,
  MAINTENANCE_PREFIX,
  MAX_LISTED_KEYS,
  saveCursor,
  saveLastPass,
  loadPassSize,
  savePassSize,
  type ScrubTotals,
} from './scrub-cursor.js';

/** Pass time before progress reports an ETA (the rate before it is the first blobs' alone). */
export const ETA_AFTER_MS = 2000;
export { SCRUB_CURSOR_KEY, SCRUB_LAST_KEY, MAX_LISTED_KEYS, type ScrubTotals } from './scrub-cursor.js';

/** Blobs checked at once: enough to keep k+m domains busy with small blobs, few enough that a
 * background pass does not crowd out requests (each check reads k+m fragments). */
export const DEFAULT_SCRUB_CONCURRENCY = 4;
/** Save the cursor after this many blobs... */
export const CURSOR_EVERY_BLOBS = 500;
/** ...or this many ms, whichever comes first: a kill repeats at most this much work. */
export const CURSOR_EVERY_MS = 2000;
/** Checked-but-unfolded results kept while one slow blob holds the prefix back, per slot. */
const WINDOW_PER_SLOT = 16;
/** Blobs below this many bytes are small: replicated, or a few stripes. Their check and repair
 * cost is latency (a read, a put and its fsyncs), not bandwidth, so... */
const SMALL_BLOB_BYTES = 2 ** 20;
/** ...this many of them share one slot of `concurrency`. (Repair of a wiped (4,2) domain
 * holding 1,000 replicated 4 KiB blobs, load ~15 on 2 cores: 16.3 s with a lookup per blob and
 * 8 in flight, 7.3 s with the census and 32 in flight.) */
const SMALL_PER_SLOT = 4;

export interface ScrubProgress {
  /** 'count': listing to size the pass; 'scrub': checking. */
  phase: 'count' | 'scrub';
  /** Blobs and bytes checked so far in this pass (a resumed pass includes the earlier part). */
  blobs: number;
  bytes: number;
  /** The pass's size as the count listing found it (blobs may come and go meanwhile), or, when
   * `estimated`, as the last pass over every blob found it (no count listing: module note). */
  totalBlobs: number;
  totalBytes: number;
  estimated?: boolean;
  /** Logical bytes per second checked by this run (not counting a resumed part). */
  bytesPerSec: number;
  /** Estimated ms to the end at the current rate, once the rate was measured over ETA_AFTER_MS. */
  etaMs?: number;
  damagedBlobs: number;
  repairedFragments: number;
  lostCount: number;
}

export interface ScrubOptions {
  /** Rewrite missing or corrupt fragments (default false: check only). */
  repair?: boolean;
  /** With `repair`: rebuild only fragments missing by name, reading only what that needs (see
   * the module note); fragments not verified are counted in `fragments.unchecked`. */
  missingOnly?: boolean;
  /** Limit on logical blob bytes checked per second (the disks read about (k+m)/k times that
   * for striped blobs, m+1 times for replicated ones). Default unlimited. */
  rateBytesPerSec?: number;
  /** The requests a pass in a server shares the machine with: before each blob it waits for
   * them to pause, up to load.waitPerWork times its work since its last wait (the time some
   * check was in flight; scrub-rate.ts yieldToRequests). Default: no waiting. */
  load?: RequestLoad;
  /** Continue a pass a saved cursor describes (default true); false starts over. */
  resume?: boolean;
  onProgress?: (p: ScrubProgress) => void;
  /** Stops the pass: the cursor is saved and the report says complete: false. */
  signal?: AbortSignal;
  concurrency?: number;
  /** Cursor save period (tests shorten it). */
  cursorEveryBlobs?: number;
  cursorEveryMs?: number;
  clock?: RateClock;
  /** Asked about each lost blob: true when it is an interrupted write's leftover that nothing
   * references (admin/scrub-garbage.ts), counted as garbage instead of lost or damaged. */
  isGarbage?: (key: string) => Promise<boolean>;
}

export interface ScrubReport extends ScrubTotals {
  repair: boolean;
  /** A missing-only repair pass (present only then). */
  missingOnly?: boolean;
  /** False when stopped by `signal` before the end (the cursor holds the rest). */
  complete: boolean;
  /** The cursor key this run continued after, when it resumed a pass. */
  resumedFrom?: string;
  /** Blobs and bytes checked by earlier runs of this pass (part of `blobs`, `bytes`). */
  resumedBlobs: number;
  resumedBytes: number;
  /** When the pass began (ms since the epoch; an earlier run's start when resumed). */
  startedAt: number;
  /** This run's duration, ms. */
  ms: number;
  /** A pass that stopped before the end: the key the next run resumes after (absent: from the
   * start). */
  resumeAfter?: string;
}

/**
 * A pass that could not go on (a listing failed: more than m domains did not answer, or the
 * cursor could not be saved) and stopped with what it had checked saved in its cursor, so that
 * running it again resumes there. `report` is the partial report (complete: false); the message
 * says where the next run resumes. Its code is the cause's (ProviderError 'Unavailable' for a
 * listing), so callers that map provider errors keep working.
 */
export class ScrubGaveUp extends ProviderError {
  readonly report: ScrubReport;
  constructor(cause: unknown, report: ScrubReport, saved: boolean) {
    const why = (cause as Error)?.message ?? String(cause);
    const code = cause instanceof ProviderError ? cause.code : 'Io';
    const checked = report.blobs - report.resumedBlobs;
    const where = report.resumeAfter !== undefined ? `after ${JSON.stringify(report.resumeAfter)}` : 'from the start';
    const kept = saved
      ? `${checked} blobs checked in this run (${report.blobs} in the pass) are kept in the saved cursor`
      : report.resumeAfter !== undefined
        ? 'the cursor saved earlier stands (blobs checked since are checked again)'
        : 'nothing of this pass is saved';
    super(code, `scrub gave up: ${why}; ${kept}: run the scrub again to resume ${where}`, { cause });
    this.name = 'ScrubGaveUp';
    this.report = report;
  }
}

const passes = new WeakMap<object, Promise<unknown>>();

/**
 * Runs one scrub pass over `provider` (see the module note). Mutates only damaged fragments
 * (with `repair`) and the maintenance/ cursor keys. Resolves with the report; a blob whose
 * check fails is counted in `errors` and the pass goes on. Rejects when listing fails or the
 * cursor cannot be saved (ScrubGaveUp, with the checked prefix saved where it can be), when
 * reading the cursor fails (the provider's error), or for a bad option (RangeError).
 */
export async function runScrub(provider: ErasureProvider, options: ScrubOptions = {}): Promise<ScrubReport> {
  const concurrency = options.concurrency ?? DEFAULT_SCRUB_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) throw new RangeError(`scrub concurrency must be 1..256, not ${concurrency}`);
  if (options.missingOnly && !options.repair) throw new RangeError('scrub: missingOnly needs repair');
  const before = passes.get(provider);
  const run = (async () => {
    await before?.catch(() => undefined);
    return scrubPass(provider, options, concurrency);
  })();
  passes.set(provider, run);
  try {
    return await run;
  } finally {
    if (passes.get(provider) === run) passes.delete(provider);
  }
}

/** Is a scrub pass running (or waiting) on `provider` in this process? */
export function scrubRunning(provider: ErasureProvider): boolean {
  return passes.has(provider);
}

async function countPass(provider: ErasureProvider, after: string | undefined, signal: AbortSignal | undefined, report: (blobs: number, bytes: number) => void): Promise<{ blobs: number; bytes: number }> {
  let blobs = 0;
  let bytes = 0;
  let startAfter: string | undefined = after;
  do {
    const page = await provider.list({ ...(startAfter !== undefined ? { startAfter } : {}), ...(signal ? { signal } : {}) });
    for (const it of page.items) {
      if (it.key.startsWith(MAINTENANCE_PREFIX)) continue;
      blobs++;
      bytes += it.size;
    }
    report(blobs, bytes);
    startAfter = page.next;
  } while (startAfter !== undefined && !signal?.aborted);
  return { blobs, bytes };
}

function fold(t: ScrubTotals, size: number, c: BlobCheck, repair: boolean, garbage: boolean): void {
  t.blobs++;
  t.bytes += size;
  if (c.unchecked?.length) t.fragments.unchecked = (t.fragments.unchecked ?? 0) + c.unchecked.length;
  if (garbage) {
    t.garbageCount++;
    if (t.garbage.length < MAX_LISTED_KEYS) t.garbage.push(c.key);
    return;
  }
  let damaged = 0;
  for (const f of c.fragments) {
    t.fragments.verified++;
    if (f.state === 'ok') continue;
    damaged++;
    t.fragments[f.state]++;
    t.damagedByDomain[f.domain] = (t.damagedByDomain[f.domain] ?? 0) + 1;
  }
  if (damaged > 0) t.damagedBlobs++;
  t.repairedFragments += c.repaired;
  t.repairBytes += c.repairBytes;
  if (c.lost) {
    t.lostCount++;
    if (t.lost.length < MAX_LISTED_KEYS) t.lost.push(c.key);
  } else if (damaged > 0 && (!repair || c.repaired < damaged)) {
    t.unrepairedBlobs++;
  }
}

type Slot = { key: string; size: number; weight: number; found?: LookupResult; state: 'running' | 'done' | 'stopped'; check?: BlobCheck; garbage?: boolean; error?: unknown };

/**
 * The blobs after `after` in key order (maintenance/ left out): from the provider's census
 * when it has one (with each blob's fragment names, so checks need no lookups), else from
 * list() pages.
 */
async function* blobsAfter(provider: ErasureProvider, after: string | undefined, signal: AbortSignal | undefined): AsyncGenerator<{ key: string; size: number; found?: LookupResult }> {
  if (provider.census) {
    yield* provider.census({ ...(after !== undefined ? { startAfter: after } : {}), skipPrefix: MAINTENANCE_PREFIX, ...(signal ? { signal } : {}) });
    return;
  }
  let startAfter = after;
  do {
    const page = await provider.list({ ...(startAfter !== undefined ? { startAfter } : {}), ...(signal ? { signal } : {}) });
    for (const it of page.items) if (!it.key.startsWith(MAINTENANCE_PREFIX)) yield { key: it.key, size: it.size };
    startAfter = page.next;
  } while (startAfter !== undefined);
}

async function scrubPass(provider: ErasureProvider, options: ScrubOptions, concurrency: number): Promise<ScrubReport> {
  const repair = options.repair === true;
  const missingOnly = repair && options.missingOnly === true;
  const signal = options.signal;
  const clock = options.clock ?? REAL_CLOCK;
  const everyBlobs = options.cursorEveryBlobs ?? CURSOR_EVERY_BLOBS;
  const everyMs = options.cursorEveryMs ?? CURSOR_EVERY_MS;
  const limiter = options.rateBytesPerSec !== undefined ? new ByteRateLimiter(options.rateBytesPerSec, clock) : undefined;
  const began = clock.now();

  let cursor = options.resume === false ? undefined : await loadCursor(provider);
  if (cursor && (cursor.repair !== repair || (cursor.missingOnly === true) !== missingOnly)) cursor = undefined;
  if (!cursor) await clearCursor(provider);
  const totals = cursor ? cursor.totals : emptyTotals();
  const startedAt = cursor ? cursor.startedAt : Date.now();
  const resumedBlobs = totals.blobs;
  const resumedBytes = totals.bytes;

  let estimated = false;
  const progress = (phase: ScrubProgress['phase'], totalBlobs: number, totalBytes: number) => {
    if (!options.onProgress) return;
    const elapsedMs = clock.now() - began;
    const secs = Math.max(elapsedMs, 1) / 1000;
    const bytesPerSec = (totals.bytes - resumedBytes) / secs;
    // An estimate may be short: never report less than what was checked.
    if (estimated) {
      totalBlobs = Math.max(totalBlobs, totals.blobs);
      totalBytes = Math.max(totalBytes, totals.bytes);
    }
    const left = Math.max(totalBytes - totals.bytes, 0);
    options.onProgress({
      phase,
      blobs: totals.blobs,
      bytes: totals.bytes,
      totalBlobs,
      totalBytes,
      ...(estimated ? { estimated } : {}),
      bytesPerSec,
      // A rate from the first blobs (a few KiB in a few ms) says nothing of the rest: an ETA of
      // hundreds of hours on the first line. Only a rate measured over ETA_AFTER_MS gives one.
      ...(bytesPerSec > 0 && elapsedMs >= ETA_AFTER_MS ? { etaMs: Math.round((left / bytesPerSec) * 1000) } : {}),
      damagedBlobs: totals.damagedBlobs,
      repairedFragments: totals.repairedFragments,
      lostCount: totals.lostCount,
    });
  };

  const partial = (after: string | undefined): ScrubReport => ({
    ...totals,
    repair,
    ...(missingOnly ? { missingOnly } : {}),
    complete: false,
    ...(cursor ? { resumedFrom: cursor.after } : {}),
    resumedBlobs,
    resumedBytes,
    startedAt,
    ms: clock.now() - began,
    ...(after !== undefined ? { resumeAfter: after } : {}),
  });

  // Size the pass: as the last pass over every blob found it, when one did (a listing of every
  // domain costs about a tenth of a repair's time: scrubbing lists them all again anyway);
  // otherwise by counting what is left after the cursor, plus what the cursor already covered.
  let size = await loadPassSize(provider).catch(() => undefined);
  if (size) estimated = true;
  else {
    let left = { blobs: 0, bytes: 0 };
    try {
      left = await countPass(provider, cursor?.after, signal, (b, n) => progress('count', totals.blobs + b, totals.bytes + n));
    } catch (err) {
      if (!signal?.aborted) throw new ScrubGaveUp(err, partial(cursor?.after), false);
    }
    size = { blobs: totals.blobs + left.blobs, bytes: totals.bytes + left.bytes };
  }
  const totalBlobs = size.blobs;
  const totalBytes = size.bytes;

  let after = cursor?.after;
  let savedAt = clock.now();
  let sinceSave = 0;
  let saving: Promise<void> | undefined;
  const save = async () => {
    if (after === undefined) return;
    await saveCursor(provider, { after, repair, ...(missingOnly ? { missingOnly } : {}), startedAt, totals });
    savedAt = clock.now();
    sinceSave = 0;
  };

  // The window holds listed blobs in key order; the checked prefix is folded into the totals
  // and moves the cursor, so a saved cursor never claims a blob still being checked.
  const window: Slot[] = [];
  const inflight = new Set<Promise<void>>();
  let saveError: unknown;
  const advance = () => {
    while (window.length && window[0]!.state === 'done') {
      const s = window.shift()!;
      after = s.key;
      sinceSave++;
      if (s.check) fold(totals, s.size, s.check, repair, s.garbage === true);
      else if (s.error instanceof ProviderError && s.error.code === 'NotFound') totals.vanished++;
      else {
        totals.errorCount++;
        if (totals.errors.length < MAX_LISTED_KEYS) totals.errors.push({ key: s.key, error: String((s.error as Error)?.message ?? s.error).slice(0, 500) });
      }
    }
    progress('scrub', totalBlobs, totalBytes);
    if (!saving && (sinceSave >= everyBlobs || (sinceSave > 0 && clock.now() - savedAt >= everyMs))) {
      saving = save()
        .catch((err: unknown) => void (saveError ??= err))
        .finally(() => (saving = undefined));
    }
  };
  let load = 0;
  // With `load`: the pass's work since its last wait is the time some check was in flight
  // (checks run during the rate limit's waits too; the limit's waits alone are not work).
  let worked = 0;
  let activeFrom: number | undefined;
  const start = (slot: Slot) => {
    load += slot.weight;
    if (inflight.size === 0) activeFrom = clock.now();
    const p: Promise<void> = provider
      .checkBlob(slot.key, { repair, ...(missingOnly ? { missingOnly } : {}), ...(signal ? { signal } : {}), ...(slot.found ? { found: slot.found } : {}) })
      .then(async (c) => {
        if (c.lost && options.isGarbage) slot.garbage = await options.isGarbage(c.key).catch(() => false);
        return c;
      })
      .then(
        (c) => void ((slot.check = c), (slot.state = 'done')),
        (err: unknown) => {
          // An abort leaves the blob unchecked: the cursor stays before it.
          if (signal?.aborted) slot.state = 'stopped';
          else ((slot.error = err), (slot.state = 'done'));
        }
      )
      .finally(() => {
        inflight.delete(p);
        if (inflight.size === 0 && activeFrom !== undefined) {
          worked += clock.now() - activeFrom;
          activeFrom = undefined;
        }
        load -= slot.weight;
        slot.found = undefined;
        advance();
      });
    inflight.add(p);
  };

  let stopped = false;
  try {
    for await (const it of blobsAfter(provider, cursor?.after, signal)) {
      const weight = it.size >= SMALL_BLOB_BYTES ? 1 : 1 / SMALL_PER_SLOT;
      while (load + weight > concurrency + 1e-9 || window.length >= concurrency * SMALL_PER_SLOT * WINDOW_PER_SLOT) await Promise.race(inflight);
      if (saveError) throw saveError;
      if (signal?.aborted) break;
      if (options.load) {
        const now = clock.now();
        await yieldToRequests(options.load, worked + (activeFrom !== undefined ? now - activeFrom : 0), clock, signal);
        worked = 0;
        if (activeFrom !== undefined) activeFrom = clock.now();
      }
      await limiter?.take(it.size, signal);
      const slot: Slot = { key: it.key, size: it.size, weight, ...(it.found ? { found: it.found } : {}), state: 'running' };
      window.push(slot);
      start(slot);
    }
  } catch (err) {
    // Whatever a listing or a wait throws once the signal fired is the stop itself.
    if (!signal?.aborted) {
      // Give up with the checked prefix saved, so that the next run resumes after it.
      await Promise.allSettled(inflight);
      await saving;
      let saved = false;
      if (!saveError && after !== undefined && after !== cursor?.after) {
        try {
          await save();
          saved = true;
        } catch {
          // the cursor saved last stands
        }
      }
      const lastSaved = saved ? after : await loadCursor(provider).then((c) => (c?.repair === repair && (c.missingOnly === true) === missingOnly ? c.after : undefined), () => undefined);
      throw new ScrubGaveUp(err, partial(lastSaved), saved);
    }
  }
  await Promise.allSettled(inflight);
  await saving;
  if (saveError) throw saveError;
  stopped = signal?.aborted === true || window.length > 0;
  if (stopped) await save();
  else {
    await clearCursor(provider);
    // Every blob went through this pass (missing-only ones too): the next pass's size.
    await savePassSize(provider, { blobs: totals.blobs, bytes: totals.bytes }).catch(() => undefined);
    // A missing-only pass verified only part of the fragments: not a completed scrub.
    if (!missingOnly) await saveLastPass(provider, repair);
  }
  progress('scrub', totalBlobs, totalBytes);
  return stopped ? partial(after) : { ...partial(undefined), complete: true };
}
