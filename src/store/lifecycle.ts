/**
 * @module Carrying out S3 lifecycle rules (bucket config `lifecycle`, lifecycle-config.ts)
 * through the store's ordinary commits: `runLifecycle`, called by the server's worker, the
 * `strata lifecycle run` verb and the admin endpoint.
 *
 * For every bucket with a configuration (one, with `bucket`), the version log is read a page
 * at a time in S3's version order (versions-list.ts: keys in order, each key newest first),
 * so memory holds one page (charged to the pending budget) and never a bucket:
 *
 *   current version, not a marker  Expiration Days/Date due -> a DELETE without versionId, as
 *                                  a client's: unversioned bucket -> the key is gone; versioning
 *                                  Enabled -> a delete marker; Suspended -> a null marker
 *   current delete marker, alone   ExpiredObjectDeleteMarker, or Expiration Days/Date the
 *                                  marker's own age satisfies -> the marker is removed
 *   noncurrent version or marker   NoncurrentVersionExpiration: due NoncurrentDays after it
 *                                  BECAME noncurrent (its successor's time), and only past the
 *                                  NewerNoncurrentVersions newest noncurrent ones -> removed
 *   upload in progress             AbortIncompleteMultipartUpload DaysAfterInitiation -> aborted
 *
 * Removals go through versions-remove.ts, which applies Object Lock: a version under legal
 * hold or retention is never removed; it is counted in `skippedLocked` and tried again next
 * run. Actions are staged 100 to a commit (a few commits at once, sharing group commits
 * with client writes); each re-checks, inside the commit, that the key and version are still
 * what the scan saw and that the rule still applies (the configuration may have changed);
 * otherwise it stages nothing (`skippedChanged`). Uploads are aborted through the existing
 * abort path (multipart.ts), one commit each.
 *
 * Removing a version here does not make it unrecoverable: the log keeps it for reads as of
 * an earlier time until retention expiry (expiry.ts) drops it, and GC frees its bytes only
 * when nothing (no fork, no retained point) reaches it.
 */
import type { Repository } from './repository.js';
import type { Tx } from './tx.js';
import type { ObjectVersion } from './records.js';
import { StoreError } from './errors.js';
import { listVersions, type VersionListEntry } from './versions-list.js';
import { listMultipartUploads } from './upload-list.js';
import { abortMultipartUpload } from './multipart.js';
import { stageRemoveVersion } from './versions-remove.js';
import { currentRecord, stageDelete } from './versions-write.js';
import { visibleVersions } from './versions-read.js';
import { afterDays, currentExpiry, lifecycleDayMs, lifecycleIn, lifecycleOf, LIFECYCLE_CONFIG, ruleMatches, type LifecycleConfig } from './lifecycle-config.js';

/** Versions read per page: bounds memory (with the entries' sizes) and the commit burst. */
export const LIFECYCLE_PAGE = 1000;
/** Actions staged in one commit: amortises the commit; bounds what one failure undoes. */
const BATCH = 100;
/** Batches committed at once: they share group commits without starving client writes. */
const PARALLEL = 4;
/** Uploads aborted at once (each is its own commit, then a chunk deletion). */
const UPLOAD_PARALLEL = 32;
/** Pending-budget charge per listed entry beyond its key: a decoded record's typical size. */
const ENTRY_OVERHEAD_BYTES = 512;
/** Versions of one key a removal re-reads at most (> S3's 100 NewerNoncurrentVersions). */
const WALK_LIMIT = 1000;

export interface LifecycleReport {
  /** Buckets whose configuration was evaluated. */
  buckets: number;
  /** Versions, markers and uploads looked at. */
  examined: number;
  /** Current versions expired (deleted, or hidden behind a delete marker). */
  expired: number;
  /** Noncurrent versions (and noncurrent markers) removed. */
  versionsRemoved: number;
  /** Expired object delete markers removed. */
  markersRemoved: number;
  /** Multipart uploads aborted. */
  uploadsAborted: number;
  /** Due versions kept because Object Lock protects them. */
  skippedLocked: number;
  /** Due actions dropped because the key, version or rules changed since the scan. */
  skippedChanged: number;
  ms: number;
}

export interface LifecycleProgress {
  bucket: string;
  examined: number;
  report: LifecycleReport;
}

export interface LifecycleOptions {
  /** The time rules are evaluated at (default: the repository clock). */
  now?: number;
  /** Only this bucket (default: every bucket with a configuration). */
  bucket?: string;
  /** Called after each page. */
  onProgress?: (p: LifecycleProgress) => void;
  /** Length of a lifecycle day, ms (default: STRATA_LIFECYCLE_DAY_MS or a real day). */
  dayMs?: number;
}

type Outcome = 'done' | 'changed' | 'locked';
/** One action: staged in a commit shared with other actions of its batch (see settle). */
type Action = (tx: Tx) => Promise<Outcome>;

interface Ctx {
  repo: Repository;
  bucket: string;
  bucketId: string;
  now: number;
  dayMs: number;
  report: LifecycleReport;
}

/** The bucket's configuration as `tx` sees it, if the bucket is still the one scanned. */
function txConfig(tx: Tx, c: Ctx): LifecycleConfig | undefined {
  if (tx.bucket(c.bucket)?.id !== c.bucketId) return undefined;
  const raw = tx.config(c.bucket, LIFECYCLE_CONFIG);
  return raw ? lifecycleOf(raw) : undefined;
}

const sameVersion = (a: ObjectVersion | undefined, b: ObjectVersion) =>
  !!a && a.versionId === b.versionId && a.logId === b.logId && a.lastModified === b.lastModified && a.deleteMarker === b.deleteMarker;

function isLocked(err: unknown): boolean {
  return err instanceof StoreError && err.code === 'AccessDenied' && err.detail?.Kind === 'ObjectLocked';
}

/** Expires the current version `v` of `key` (a DELETE without versionId), re-checked in its commit. */
function expireCurrent(c: Ctx, key: string, v: ObjectVersion): Action {
  return async (tx: Tx): Promise<Outcome> => {
    const config = txConfig(tx, c);
    const cur = await currentRecord(tx, c.bucket, key);
    if (!config || !cur || !sameVersion(cur, v)) return 'changed';
    const x = currentExpiry(config, key, cur, c.dayMs);
    if (!x || x.at > c.now) return 'changed';
    await stageDelete(tx, c.bucket, key);
    return 'done';
  };
}

/** Removes the delete marker `v`, current and alone, re-checked in its commit. */
function removeMarker(c: Ctx, key: string, v: ObjectVersion): Action {
  return async (tx: Tx): Promise<Outcome> => {
    const config = txConfig(tx, c);
    const cur = await currentRecord(tx, c.bucket, key);
    if (!config || !cur || !sameVersion(cur, v) || !markerDue(c, config, key, cur)) return 'changed';
    let n = 0;
    for await (const _ of visibleVersions(tx.logSources(c.bucket, key), key)) if (++n > 1) break;
    if (n !== 1) return 'changed';
    const r = await stageRemoveVersion(tx, c.bucket, key, v.versionId);
    return r.removed ? 'done' : 'changed';
  };
}

/**
 * Whether a rule removes the current delete marker `marker` of `key` once it is alone: an
 * enabled rule selecting it with ExpiredObjectDeleteMarker, or with Expiration Days / Date
 * the marker's age satisfies (S3 cleans expired object delete markers for those too).
 */
function markerDue(c: Pick<Ctx, 'now' | 'dayMs'>, config: LifecycleConfig, key: string, marker: ObjectVersion): boolean {
  return config.rules.some((r) => {
    const x = r.expiration;
    if (!r.enabled || !x || !ruleMatches(r, key, marker)) return false;
    if (x.expiredObjectDeleteMarker === true) return true;
    if (x.days !== undefined) return afterDays(marker.lastModified, x.days, c.dayMs) <= c.now;
    return x.date !== undefined && x.date <= c.now;
  });
}

/**
 * Whether an enabled NoncurrentVersionExpiration rule makes the noncurrent version `v` due:
 * `index` newer noncurrent versions precede it, and it became noncurrent at `since`.
 */
function noncurrentDue(c: Ctx, config: LifecycleConfig, key: string, v: ObjectVersion, index: number, since: number): boolean {
  return config.rules.some((r) => {
    const n = r.noncurrentExpiration;
    if (!r.enabled || !n || !ruleMatches(r, key, v)) return false;
    return index >= (n.newerNoncurrentVersions ?? 0) && afterDays(since, n.days, c.dayMs) <= c.now;
  });
}

/**
 * Removes the noncurrent version `v` of `key`, re-checked in its commit: it must still be
 * noncurrent and due by its rank and successor time under the rules as they are now. The
 * re-check walks the key's versions newest first, at most WALK_LIMIT of them (a key with
 * more keeps the scan's successor time for versions past that depth, whose rank is beyond
 * any NewerNoncurrentVersions), so one action costs O(1) reads, not O(versions).
 */
function removeNoncurrent(c: Ctx, key: string, v: ObjectVersion, scannedSince: number): Action {
  return async (tx: Tx): Promise<Outcome> => {
    const config = txConfig(tx, c);
    if (!config) return 'changed';
    let index = -1;
    let since: number | undefined;
    let found = false;
    for await (const e of visibleVersions(tx.logSources(c.bucket, key), key)) {
      if (sameVersion(e.record, v)) {
        found = true;
        break;
      }
      if (index + 1 >= WALK_LIMIT) {
        since = scannedSince;
        found = true;
        break;
      }
      index++;
      since = e.record?.lastModified;
    }
    if (!found || index < 0 || since === undefined || !noncurrentDue(c, config, key, v, index, since)) return 'changed';
    try {
      const r = await stageRemoveVersion(tx, c.bucket, key, v.versionId);
      return r.removed ? 'done' : 'changed';
    } catch (err) {
      if (isLocked(err)) return 'locked';
      throw err;
    }
  };
}

/** Per-key state carried across a bucket's pages. */
interface KeyScan {
  key: string;
  /** Visible versions of the key seen so far. */
  count: number;
  /** Noncurrent versions seen so far. */
  noncurrent: number;
  /** lastModified of the previous (newer) version: when the next one became noncurrent. */
  successor?: number;
  /** The current delete marker, when a rule may remove it once it is known to be alone. */
  marker?: ObjectVersion;
}

/**
 * Carries out `actions`: BATCH of them staged one after the other in one commit, PARALLEL
 * such commits at a time (they share group commits with client writes). An action that
 * finds its target changed or locked stages nothing and says so; any other error fails the
 * run (its batch's commit with it: nothing half-done).
 */
async function settle(c: Ctx, actions: Array<{ kind: keyof LifecycleReport; run: Action }>): Promise<void> {
  const batches: Array<typeof actions> = [];
  for (let i = 0; i < actions.length; i += BATCH) batches.push(actions.slice(i, i + BATCH));
  for (let i = 0; i < batches.length; i += PARALLEL) {
    const results = await Promise.all(
      batches.slice(i, i + PARALLEL).map((batch) =>
        c.repo.run(async (tx) => {
          const out: Array<{ o: Outcome; kind: keyof LifecycleReport }> = [];
          for (const a of batch) out.push({ o: await a.run(tx), kind: a.kind });
          return out;
        })
      )
    );
    for (const { o, kind } of results.flat()) {
      if (o === 'done') (c.report[kind] as number)++;
      else if (o === 'locked') c.report.skippedLocked++;
      else c.report.skippedChanged++;
    }
  }
}

async function scanVersions(c: Ctx, config: LifecycleConfig, onProgress?: LifecycleOptions['onProgress']): Promise<void> {
  const wantsVersions = config.rules.some((r) => r.enabled && (r.expiration || r.noncurrentExpiration));
  if (!wantsVersions) return;
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  let scan: KeyScan | undefined;
  for (;;) {
    if (c.repo.state.buckets.get(c.bucket)?.id !== c.bucketId) return; // deleted meanwhile
    const page = await listVersions(c.repo, c.bucket, {
      maxKeys: LIFECYCLE_PAGE,
      ...(keyMarker !== undefined && { keyMarker }),
      ...(versionIdMarker !== undefined && { versionIdMarker }),
    });
    const release = c.repo.budget.reserve(page.versions.reduce((n, e) => n + e.key.length * 2 + ENTRY_OVERHEAD_BYTES, 0));
    try {
      const actions: Array<{ kind: keyof LifecycleReport; run: Action }> = [];
      const finish = (s: KeyScan | undefined) => {
        if (s?.marker && s.count === 1) actions.push({ kind: 'markersRemoved', run: removeMarker(c, s.key, s.marker) });
      };
      for (const e of page.versions) {
        if (scan?.key !== e.key) {
          finish(scan);
          scan = { key: e.key, count: 0, noncurrent: 0 };
        }
        visit(c, config, scan, e, actions);
      }
      if (!page.isTruncated) finish(scan);
      c.report.examined += page.versions.length;
      await settle(c, actions);
    } finally {
      release();
    }
    onProgress?.({ bucket: c.bucket, examined: c.report.examined, report: c.report });
    if (!page.isTruncated) return;
    keyMarker = page.nextKeyMarker;
    versionIdMarker = page.nextVersionIdMarker;
  }
}

function visit(c: Ctx, config: LifecycleConfig, s: KeyScan, e: VersionListEntry, actions: Array<{ kind: keyof LifecycleReport; run: Action }>): void {
  const v = e.version;
  s.count++;
  if (e.isLatest) {
    if (v.deleteMarker) {
      if (markerDue(c, config, e.key, v)) s.marker = v;
    } else {
      const x = currentExpiry(config, e.key, v, c.dayMs);
      if (x && x.at <= c.now) actions.push({ kind: 'expired', run: expireCurrent(c, e.key, v) });
    }
  } else {
    const since = s.successor ?? v.lastModified;
    if (noncurrentDue(c, config, e.key, v, s.noncurrent, since)) actions.push({ kind: 'versionsRemoved', run: removeNoncurrent(c, e.key, v, since) });
    s.noncurrent++;
  }
  s.successor = v.lastModified;
}

async function abortUploads(c: Ctx, config: LifecycleConfig): Promise<void> {
  const rules = config.rules.filter((r) => r.enabled && r.abortIncompleteUploadDays !== undefined);
  if (rules.length === 0) return;
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  for (;;) {
    if (c.repo.state.buckets.get(c.bucket)?.id !== c.bucketId) return;
    const page = await listMultipartUploads(c.repo, c.bucket, {
      maxUploads: LIFECYCLE_PAGE,
      ...(keyMarker !== undefined && { keyMarker }),
      ...(uploadIdMarker !== undefined && { uploadIdMarker }),
    });
    c.report.examined += page.uploads.length;
    const due = page.uploads.filter((u) => rules.some((r) => u.key.startsWith(r.filter.prefix) && afterDays(u.initiated, r.abortIncompleteUploadDays!, c.dayMs) <= c.now));
    // The existing abort path (its own commit, then the parts' chunks are deleted).
    for (let i = 0; i < due.length; i += UPLOAD_PARALLEL) {
      await Promise.all(
        due.slice(i, i + UPLOAD_PARALLEL).map(async (u) => {
          try {
            await abortMultipartUpload(c.repo, c.bucket, u.key, u.uploadId);
            c.report.uploadsAborted++;
          } catch (err) {
            if (!(err instanceof StoreError && (err.code === 'NoSuchUpload' || err.code === 'NoSuchBucket'))) throw err;
            c.report.skippedChanged++; // completed or aborted meanwhile
          }
        })
      );
    }
    if (!page.isTruncated) return;
    keyMarker = page.nextKeyMarker;
    uploadIdMarker = page.nextUploadIdMarker;
  }
}

/**
 * Carries out the lifecycle rules of every bucket that has them (or of `opts.bucket`) as of
 * `opts.now` (see the module note) and reports what it did. Mutates the repository through
 * ordinary commits only. Throws StoreError 'NoSuchBucket' when `opts.bucket` does not exist,
 * 'Corrupt' when a stored configuration cannot be read, 'SlowDown' when the pending budget
 * cannot hold a page, and what commits and index reads throw; what was done before a failure
 * stays done (a next run continues).
 */
export async function runLifecycle(repo: Repository, opts: LifecycleOptions = {}): Promise<LifecycleReport> {
  const started = performance.now();
  const now = opts.now ?? repo.now();
  const dayMs = opts.dayMs ?? lifecycleDayMs();
  const report: LifecycleReport = {
    buckets: 0,
    examined: 0,
    expired: 0,
    versionsRemoved: 0,
    markersRemoved: 0,
    uploadsAborted: 0,
    skippedLocked: 0,
    skippedChanged: 0,
    ms: 0,
  };
  if (opts.bucket !== undefined && !repo.state.buckets.has(opts.bucket)) {
    throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: opts.bucket } });
  }
  const names = opts.bucket !== undefined ? [opts.bucket] : [...repo.state.buckets.keys()].sort();
  for (const name of names) {
    const b = repo.state.buckets.get(name);
    if (!b) continue; // deleted since the list was taken
    const config = lifecycleIn(b.configs);
    if (!config || !config.rules.some((r) => r.enabled)) continue;
    report.buckets++;
    const c: Ctx = { repo, bucket: name, bucketId: b.id, now, dayMs, report };
    await scanVersions(c, config, opts.onProgress);
    await abortUploads(c, config);
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}
