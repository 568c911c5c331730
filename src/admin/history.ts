/**
 * @module Admin API: a bucket's history, restores, and its history window — and the
 * functions both these routes and the `strata history` / `strata restore` /
 * `strata history-window` verbs call on a stopped repository, so both paths answer alike.
 *
 *   POST /_strata/admin/v1/buckets/{bucket}/history         {key?, prefix?, since?, until?, limit?, cursor?}
 *        -> 200 {bucket, from, window, windowMs, entries: [{time, key, op, versionId, writeId, size?, etag?, removedAt?}], next?}
 *   POST /_strata/admin/v1/buckets/{bucket}/restore         {to, prefix?, dryRun?, after?, maxKeys?}
 *        -> 200 {bucket, to, prefix, dryRun, scanned, restored, deleted, unchanged, commits, changes, next?}
 *   GET  /_strata/admin/v1/buckets/{bucket}/history-window  -> 200 {bucket, window, windowMs, own}
 *   PUT  /_strata/admin/v1/buckets/{bucket}/history-window  {window} -> 200 {bucket, window, windowMs, own: true}
 *   (DELETE of it, back to the server default: expire.ts)
 *
 * Times are RFC 3339 (answers: UTC with milliseconds); a window is a duration (`30d`, `12h`,
 * `0`). The history is a POST because admin requests carry no query string (router.ts); it
 * changes nothing. A restore request does a bounded amount of work — at most `maxKeys` keys
 * examined (default and ceiling RESTORE_KEYS_PER_REQUEST) — and answers `next` when there is
 * more: the client repeats with `after: next` (restores are idempotent, so a repeat after a
 * lost answer is harmless). Errors: 400 InvalidArgument / InvalidJson, 404 NoSuchBucket.
 */
import type { AdminRoute } from './router.js';
import { AdminError, readJson, sendJson } from './http.js';
import type { Store } from '../store/store.js';
import { formatTime, parseTimeText } from '../store/time-text.js';
import { formatDuration, parseDuration } from '../server/option-types.js';
import type { HistoryEntry } from '../store/history.js';
import type { RestoreChange, RestoreProgress } from '../store/restore.js';

/**
 * Keys a restore request examines at most: about a second of work (a scan of ten thousand
 * keys and ten commits of a thousand), well inside the admin client's 30 s timeout.
 */
export const RESTORE_KEYS_PER_REQUEST = 10_000;

export interface AdminHistoryRequest {
  bucket: string;
  key?: string;
  prefix?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

export interface AdminHistoryEntry extends Omit<HistoryEntry, 'time' | 'removedAt'> {
  time: string;
  removedAt?: string;
}

export interface AdminHistoryResult {
  bucket: string;
  /** The earliest time history is shown from (creation or window start). */
  from: string;
  window: string;
  windowMs: number;
  entries: AdminHistoryEntry[];
  next?: string;
}

export interface AdminRestoreRequest {
  bucket: string;
  to: string;
  prefix?: string;
  dryRun?: boolean;
  after?: string;
  maxKeys?: number;
}

export interface AdminRestoreResult extends RestoreProgress {
  bucket: string;
  to: string;
  prefix: string;
  dryRun: boolean;
  changes: RestoreChange[];
  next?: string;
}

export interface AdminWindowResult {
  bucket: string;
  window: string;
  windowMs: number;
  /** The bucket set its own window (false: it follows the server default, --retention). */
  own: boolean;
}

/** `text` as ms since the epoch; AdminError 400 InvalidArgument naming `field` otherwise. */
export function parseAdminTime(field: string, text: string): number {
  const at = parseTimeText(text);
  if (typeof at === 'string') throw new AdminError(400, 'InvalidArgument', `${field}: ${JSON.stringify(text.slice(0, 64))} is not a time (${at})`);
  return at;
}

/** One page of `req.bucket`'s history. Throws AdminError 400 and the StoreErrors of Store.listHistory. */
export async function adminHistory(store: Store, req: AdminHistoryRequest): Promise<AdminHistoryResult> {
  const page = await store.listHistory(req.bucket, {
    ...(req.key !== undefined ? { key: req.key } : {}),
    ...(req.prefix !== undefined ? { prefix: req.prefix } : {}),
    ...(req.since !== undefined ? { since: parseAdminTime('since', req.since) } : {}),
    ...(req.until !== undefined ? { until: parseAdminTime('until', req.until) } : {}),
    ...(req.limit !== undefined ? { limit: req.limit } : {}),
    ...(req.cursor !== undefined ? { cursor: req.cursor } : {}),
  });
  return {
    bucket: req.bucket,
    from: formatTime(page.from),
    window: formatDuration(page.windowMs),
    windowMs: page.windowMs,
    entries: page.entries.map(({ time, removedAt, ...e }) => ({ ...e, time: formatTime(time), ...(removedAt !== undefined ? { removedAt: formatTime(removedAt) } : {}) })),
    ...(page.next !== undefined ? { next: page.next } : {}),
  };
}

/**
 * One bounded step of a restore of `req.bucket` (see the module note; `maxKeys` is capped at
 * `cap`, undefined for no cap: the local command line). Throws AdminError 400 and the
 * StoreErrors of Store.restore.
 */
export async function adminRestore(
  store: Store,
  req: AdminRestoreRequest,
  opts: { cap?: number; onProgress?: (p: RestoreProgress) => void } = {}
): Promise<AdminRestoreResult> {
  const to = parseAdminTime('to', req.to);
  if (req.maxKeys !== undefined && (!Number.isInteger(req.maxKeys) || req.maxKeys < 1)) throw new AdminError(400, 'InvalidArgument', 'maxKeys must be a positive integer');
  const maxKeys = opts.cap === undefined ? req.maxKeys : Math.min(req.maxKeys ?? opts.cap, opts.cap);
  const r = await store.restore(req.bucket, {
    to,
    ...(req.prefix !== undefined ? { prefix: req.prefix } : {}),
    ...(req.dryRun ? { dryRun: true } : {}),
    ...(req.after !== undefined ? { after: req.after } : {}),
    ...(maxKeys !== undefined ? { maxKeys } : {}),
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
  });
  const { to: _to, ...rest } = r;
  return { ...rest, to: formatTime(r.to) };
}

/** The history window of `bucket`, after setting it to `window` (a duration) when given. */
export async function adminWindow(store: Store, bucket: string, window?: string): Promise<AdminWindowResult> {
  if (window !== undefined) {
    let ms: number;
    try {
      ms = parseDuration(window, 'window');
    } catch (err) {
      throw new AdminError(400, 'InvalidArgument', (err as Error).message);
    }
    await store.putHistoryWindow(bucket, ms);
  }
  const ms = store.getHistoryWindow(bucket);
  return { bucket, window: formatDuration(ms), windowMs: ms, own: store.hasOwnHistoryWindow(bucket) };
}

/** The history routes (mounted under /_strata/admin/v1). */
export const HISTORY_ROUTES: AdminRoute[] = [
  {
    method: 'POST',
    path: ['buckets', ':bucket', 'history'],
    op: 'AdminHistory',
    handle: async (r, p) => {
      const body = await readJson(r, { key: 'string', prefix: 'string', since: 'string', until: 'string', limit: 'number', cursor: 'string' });
      sendJson(r, 200, await adminHistory(r.store, { bucket: p.bucket!, ...body }));
    },
  },
  {
    method: 'POST',
    path: ['buckets', ':bucket', 'restore'],
    op: 'AdminRestore',
    handle: async (r, p) => {
      const body = await readJson(r, { to: 'string', prefix: 'string', dryRun: 'boolean', after: 'string', maxKeys: 'number' });
      if (body.to === undefined) throw new AdminError(400, 'InvalidJson', 'field to (the RFC 3339 time to restore to) is required');
      sendJson(r, 200, await adminRestore(r.store, { bucket: p.bucket!, ...body, to: body.to }, { cap: RESTORE_KEYS_PER_REQUEST }));
    },
  },
  {
    method: 'GET',
    path: ['buckets', ':bucket', 'history-window'],
    op: 'AdminGetHistoryWindow',
    handle: async (r, p) => sendJson(r, 200, await adminWindow(r.store, p.bucket!)),
  },
  {
    method: 'PUT',
    path: ['buckets', ':bucket', 'history-window'],
    op: 'AdminPutHistoryWindow',
    handle: async (r, p) => {
      const body = await readJson(r, { window: 'string' });
      if (body.window === undefined) throw new AdminError(400, 'InvalidJson', 'field window (a duration such as 30d, or 0) is required');
      sendJson(r, 200, await adminWindow(r.store, p.bucket!, body.window));
    },
  },
];
