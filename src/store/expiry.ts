/**
 * @module Retention expiry: drops the version log entries that no read inside their bucket's
 * history window can reach any more (the rule: expiry-rule.ts), through ordinary commits.
 *
 * Per bucket (each fork is a bucket with its own log: shared runs are immutable, so a drop in
 * one bucket never changes what another reads), one walk of the committed log decides every
 * key against the window [start, now], start = max(now - window, created, expired before);
 * window = the bucket's `history` config, else the server default (repository option
 * `retentionMs`, `--retention`). What to drop is committed in batches of at most
 * MAX_EXPIRE_KEYS entries (op 'expireVersions': tombstones under the log keys, with the
 * dropped entries' sizes for the history budget), together with the bucket configuration
 * `history-expired` = start (history-window.ts), so a window made longer later refuses the
 * dropped past instead of reading it wrongly. Bodies are not freed here: only GC's global mark
 * decides that (forks and restores share bodies).
 *
 * Guarded: each batch re-checks at staging, in its transaction, that the bucket is the one
 * walked (same id), that its window did not grow since the walk, and that every entry is still
 * there, not dropped, with the size walked; what changed is skipped (counted in `skipped`).
 * Only S3-visible entries are ever rewritten (removal, tags, ACL), and the rule drops none. New
 * writes, removals and tag or ACL rewrites made meanwhile cannot make a dropped entry
 * readable again (expiry-rule.ts). One expiry runs at a time per repository (later calls
 * wait for the running one, then run).
 *
 * Memory: the walk streams the log; what it buffers (the batch, a key's held drops) is charged
 * to the pending budget (repo.budget), waiting while the budget is full.
 */
import type { Repository } from './repository.js';
import type { BucketState } from './state.js';
import { mergeSources } from './index/merge.js';
import { MAX_EXPIRE_KEYS } from './commit.js';
import { decodeEntry, decodeEntryHeader, isLogTombstone } from './version-log.js';
import { escapeKey, parseLogKey, VERSION_ID_LENGTH } from './version-id.js';
import { blobError } from './body-reader.js';
import { StoreError } from './errors.js';
import { KeyExpiry, type Drop } from './expiry-rule.js';
import {
  bucketWindow,
  decodeExpiredThrough,
  decodeHistoryWindow,
  encodeExpiredThrough,
  EXPIRED_CONFIG,
  expiredThrough,
  HISTORY_CONFIG,
  historyNow,
} from './history-window.js';

/** Progress of a run, reported after every committed batch and at the end of each bucket. */
export interface ExpiryProgress {
  bucket: string;
  /** Totals of the run so far (all buckets). */
  examined: number;
  expired: number;
  bytes: number;
  /** The bucket's walk is over. */
  bucketDone: boolean;
}

export interface HistoryExpiryOptions {
  /** "Now" (ms) for the rule; default historyNow(repo). A time before that is raised to it. */
  now?: number;
  /** Only this bucket (StoreError 'NoSuchBucket' if it does not exist). */
  bucket?: string;
  /** Called after every committed batch and at each bucket's end; a returned promise is awaited (the run waits). */
  onProgress?: (p: ExpiryProgress) => void | Promise<void>;
}

export interface ExpiryReport {
  /** Buckets walked. */
  buckets: number;
  /** Version log entries examined. */
  examined: number;
  /** Entries dropped. */
  expired: number;
  /** Bytes of the dropped entries (log key + value, what the history budget counts). */
  bytes: number;
  /** Entries that changed between the walk and their batch, or whose bucket changed: kept. */
  skipped: number;
  ms: number;
}

/** Estimated heap bytes per buffered drop (a log key string, its size, the array slot). */
const DROP_HEAP_BYTES = 160;
/** Budget is reserved in steps of this many bytes (one step ~ a batch of drops). */
const RESERVE_STEP_BYTES = MAX_EXPIRE_KEYS * DROP_HEAP_BYTES;
/** How long to wait for pending budget for the batch before giving up the run (ms): a full budget is transient. */
const BUDGET_WAIT_MS = 60_000;
/**
 * How long to wait for pending budget for a key's held drops (ms) before keeping that key
 * whole this time (a key with very many replaced null writes must not stall the run).
 */
const HELD_WAIT_MS = 1000;

const running = new WeakMap<Repository, Promise<unknown>>();

/**
 * Drops every version log entry of every bucket (or `opts.bucket`) that its window no longer
 * reaches (see the module note and expiry-rule.ts), in commits of at most MAX_EXPIRE_KEYS
 * entries. Mutates the repository only through those commits. Throws StoreError
 * 'NoSuchBucket' for a missing `opts.bucket`, 'SlowDown' when the pending budget stays full
 * for BUDGET_WAIT_MS, and what reading the log or committing throws (batches committed
 * before stay committed: every prefix of the drops is a consistent state).
 */
export async function expireHistory(repo: Repository, opts: HistoryExpiryOptions = {}): Promise<ExpiryReport> {
  if (opts.bucket !== undefined && !repo.state.buckets.has(opts.bucket)) {
    throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: opts.bucket } });
  }
  const before = running.get(repo);
  const run = (async () => {
    await before?.catch(() => undefined);
    return runExpiry(repo, opts);
  })();
  running.set(repo, run);
  try {
    return await run;
  } finally {
    if (running.get(repo) === run) running.delete(repo);
  }
}

async function runExpiry(repo: Repository, opts: HistoryExpiryOptions): Promise<ExpiryReport> {
  const t0 = performance.now();
  const report: ExpiryReport = { buckets: 0, examined: 0, expired: 0, bytes: 0, skipped: 0, ms: 0 };
  const names = opts.bucket !== undefined ? [opts.bucket] : [...repo.state.buckets.keys()].sort();
  const hold = new BudgetHold(repo);
  const dropped: string[] = [];
  try {
    for (const name of names) {
      const b = repo.state.buckets.get(name);
      if (!b) continue; // deleted meanwhile
      report.buckets++;
      const before = report.expired;
      await expireBucket(repo, b, opts, report, hold);
      if (report.expired > before) dropped.push(b.id);
    }
  } finally {
    hold.release();
  }
  if (report.expired > 0) {
    // Dropped entries are tombstones until a merge reaching the oldest run: merge the logs of
    // the buckets that dropped entries now, so their bytes (and GC's) come back.
    repo.requestMajorCompaction(dropped);
    await repo.checkpoint();
  }
  report.ms = Math.round(performance.now() - t0);
  return report;
}

/** What a bucket's walk decided against, re-checked by each batch. */
interface Walk {
  name: string;
  id: string;
  window: number;
  start: number;
}

async function expireBucket(repo: Repository, b: BucketState, opts: HistoryExpiryOptions, report: ExpiryReport, hold: BudgetHold): Promise<void> {
  const now = Math.max(opts.now ?? 0, historyNow(repo));
  const window = bucketWindow(repo, b);
  const walk: Walk = { name: b.name, id: b.id, window, start: Math.max(now - window, b.created, expiredThrough(b)) };
  const progress = async (bucketDone: boolean) =>
    await opts.onProgress?.({ bucket: b.name, examined: report.examined, expired: report.expired, bytes: report.bytes, bucketDone });
  let batch: Drop[] = [];
  let gone = false;
  const flush = async () => {
    if (batch.length === 0 || gone) return;
    const drops = batch;
    batch = [];
    const r = await commitBatch(repo, walk, drops);
    if (r === 'gone') gone = true;
    else {
      report.expired += r.expired;
      report.bytes += r.bytes;
      report.skipped += r.skipped;
    }
    await hold.fit(0);
    await progress(false);
  };
  const take = async (drops: Drop[]) => {
    for (const d of drops) {
      batch.push(d);
      if (batch.length >= MAX_EXPIRE_KEYS) await flush();
    }
  };

  const it = mergeSources(b.versions.sources());
  let cur: { key: string; esc: string; rule: KeyExpiry } | undefined;
  try {
    for (;;) {
      if (gone) break;
      let e;
      try {
        e = it.nextSync();
        if (e === undefined) {
          const r = await it.next();
          e = r.done ? null : r.value;
        }
      } catch (err) {
        throw blobError(err, `bucket ${b.name} version log`);
      }
      if (e === null) break;
      if (isLogTombstone(e.value)) continue;
      const raw = e.key;
      if (!(cur && raw.length === cur.esc.length + VERSION_ID_LENGTH && raw.startsWith(cur.esc))) {
        const parsed = parseLogKey(raw);
        if (!parsed) throw new StoreError('Corrupt', `bucket ${b.name}: version log key ${JSON.stringify(raw)} is malformed`);
        if (cur) await take(cur.rule.finish());
        cur = { key: parsed.key, esc: escapeKey(parsed.key), rule: new KeyExpiry({ start: walk.start, now }) };
      }
      report.examined++;
      const what = `version log entry of ${b.name}/${cur.key}`;
      const head = decodeEntryHeader(e.value, what);
      const entry = cur.rule.candidate(head) && head.kind === 'version' ? decodeEntry(e.value, what) : head;
      await take(cur.rule.next(raw, entry, e.value.length));
      if (!(await hold.fit((cur.rule.held + batch.length) * DROP_HEAP_BYTES, HELD_WAIT_MS))) {
        report.skipped += cur.rule.giveUp();
        await hold.fit(batch.length * DROP_HEAP_BYTES);
      }
    }
  } finally {
    await it.return();
  }
  if (cur) await take(cur.rule.finish());
  await flush();
  await progress(true);
}

/**
 * Commits one batch of drops of `walk`'s bucket, re-checked in the transaction (see the module
 * note). 'gone': the bucket was deleted or replaced (nothing staged).
 */
async function commitBatch(repo: Repository, walk: Walk, drops: Drop[]): Promise<'gone' | { expired: number; bytes: number; skipped: number }> {
  return repo.run(async (tx) => {
    const view = tx.bucket(walk.name);
    if (!view || view.id !== walk.id) return 'gone';
    const window = decodeHistoryWindow(tx.config(walk.name, HISTORY_CONFIG), repo.retentionMs);
    if (window > walk.window) return { expired: 0, bytes: 0, skipped: drops.length }; // grew meanwhile: keep
    const keys: string[] = [];
    const sizes: number[] = [];
    let bytes = 0;
    for (const d of drops) {
      const parsed = parseLogKey(d.logKey);
      const value = parsed && (await tx.logLookup(walk.name, parsed.key, d.logKey));
      if (!value || isLogTombstone(value) || value.length !== d.size) continue;
      keys.push(d.logKey);
      sizes.push(value.length);
      bytes += Buffer.byteLength(d.logKey) + value.length;
    }
    if (keys.length > 0) {
      tx.expireVersions(walk.name, keys, sizes);
      const through = decodeExpiredThrough(tx.config(walk.name, EXPIRED_CONFIG));
      if (walk.start > through) tx.setConfig(walk.name, EXPIRED_CONFIG, encodeExpiredThrough(walk.start));
    }
    return { expired: keys.length, bytes, skipped: drops.length - keys.length };
  });
}

/** Pending budget held for what the walk buffers, reserved in RESERVE_STEP_BYTES steps. */
class BudgetHold {
  readonly #repo: Repository;
  #releases: (() => void)[] = [];

  constructor(repo: Repository) {
    this.#repo = repo;
  }

  /**
   * Holds at least `bytes`, waiting while the budget is full. After `waitMs`: resolves false
   * when a wait was given, else throws StoreError 'SlowDown' (BUDGET_WAIT_MS).
   */
  async fit(bytes: number, waitMs?: number): Promise<boolean> {
    const want = Math.ceil(bytes / RESERVE_STEP_BYTES);
    while (this.#releases.length > Math.max(want, 1)) this.#releases.pop()!();
    const deadline = Date.now() + (waitMs ?? BUDGET_WAIT_MS);
    while (this.#releases.length < want) {
      try {
        this.#releases.push(this.#repo.budget.reserve(RESERVE_STEP_BYTES));
      } catch (err) {
        if ((err as StoreError).code !== 'SlowDown') throw err;
        if (Date.now() > deadline) {
          if (waitMs !== undefined) return false;
          throw err;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return true;
  }

  release(): void {
    for (const r of this.#releases) r();
    this.#releases = [];
  }
}
