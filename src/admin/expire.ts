/**
 * @module Admin API for retention expiry (store/expiry.ts) and for going back to the server's
 * default history window — and the function `strata expire` calls on a stopped repository.
 *
 *   POST   /_strata/admin/v1/expire                              {bucket?}
 *          -> 202 {running, current?, last?}   starts a run now (unless one is in progress)
 *   GET    /_strata/admin/v1/expire          -> 200 {running, current?, last?}
 *   DELETE /_strata/admin/v1/buckets/{bucket}/history-window     -> 200 {bucket, window, windowMs, own: false}
 *
 * A run walks every bucket's version log, which can take longer than one admin request may:
 * so POST starts it in the server's expiry worker and answers at once, and the client polls
 * GET for progress (`current`) and the outcome (`last`: the report or the error). Errors:
 * 400 InvalidJson, 404 NoSuchBucket (a bucket named that does not exist).
 */
import type { AdminRoute } from './router.js';
import { AdminError, readJson, sendJson } from './http.js';
import type { Store } from '../store/store.js';
import type { ExpiryProgress, ExpiryReport } from '../store/expiry.js';
import { adminWindow } from './history.js';

/** Runs expiry on a stopped repository (the `strata expire --data DIR` path). */
export function adminExpireLocal(store: Store, req: { bucket?: string }, onProgress?: (p: ExpiryProgress) => void): Promise<ExpiryReport> {
  return store.expireHistory({ ...(req.bucket !== undefined ? { bucket: req.bucket } : {}), ...(onProgress ? { onProgress } : {}) });
}

export const EXPIRE_ROUTES: AdminRoute[] = [
  {
    method: 'POST',
    path: ['expire'],
    op: 'AdminExpire',
    handle: async (r) => {
      const body = await readJson(r, { bucket: 'string' });
      if (body.bucket !== undefined) r.store.getHistoryWindow(body.bucket); // NoSuchBucket now, not in the background
      const worker = r.deps.historyExpiry;
      if (!worker) throw new AdminError(503, 'ServiceUnavailable', 'this server runs no expiry worker');
      sendJson(r, 202, worker.trigger(body.bucket !== undefined ? { bucket: body.bucket } : {}));
    },
  },
  {
    method: 'GET',
    path: ['expire'],
    op: 'AdminExpireStatus',
    handle: async (r) => {
      const worker = r.deps.historyExpiry;
      if (!worker) throw new AdminError(503, 'ServiceUnavailable', 'this server runs no expiry worker');
      sendJson(r, 200, worker.status());
    },
  },
  {
    method: 'DELETE',
    path: ['buckets', ':bucket', 'history-window'],
    op: 'AdminDeleteHistoryWindow',
    handle: async (r, p) => {
      await r.store.clearHistoryWindow(p.bucket!);
      sendJson(r, 200, await adminWindow(r.store, p.bucket!));
    },
  },
];
