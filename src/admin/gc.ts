/**
 * @module Admin API: one garbage-collection pass now — and the function both this route and
 * `strata gc` on a stopped repository call, so both paths answer alike.
 *
 *   POST /_strata/admin/v1/gc   {dryRun?: boolean, grace?: "1h", cleanBelow?: 0.6}
 *        -> 200 {dryRun, grace, graceMs, examinedBlobs, examinedBytes, unreachableBlobs,
 *                unreachableBytes, freedBlobs, freedBytes, pendingBlobs, cleanedPacks,
 *                deferredPacks, movedBytes, errors, liveBlobs, anchorSeq, ms}
 *
 * Options travel in the (signed) body: admin requests carry no query string (router.ts). A
 * dry run reads only and reports exactly what a pass would free now; a real pass checkpoints
 * first (so what the commit chain alone still names becomes collectable), cleans sparse packs
 * and frees what stayed unreachable for the grace. A pass that another (the background
 * schedule) is running waits for it. Errors: 400 InvalidJson / InvalidArgument (grace,
 * cleanBelow), and the store's errors (a mark that cannot read everything: 500, nothing freed).
 */
import type { AdminRoute } from './router.js';
import { AdminError, readJson, sendJson } from './http.js';
import type { Store } from '../store/store.js';
import { runGc, DEFAULT_GRACE_MS, type GcOptions, type GcReport } from '../store/gc.js';
import { formatDuration, parseDuration } from '../server/option-types.js';

export interface AdminGcRequest {
  dryRun?: boolean;
  /** A duration (`1h`, `30m`, `0`). */
  grace?: string;
  cleanBelow?: number;
}

export interface AdminGcResult extends GcReport {
  grace: string;
  graceMs: number;
}

/**
 * Runs one GC pass on `store` as `req` says. Throws AdminError 400 'InvalidArgument' for a bad
 * grace or threshold, and what runGc throws.
 */
export async function adminGc(store: Store, req: AdminGcRequest, onProgress?: GcOptions['onProgress']): Promise<AdminGcResult> {
  let graceMs = DEFAULT_GRACE_MS;
  if (req.grace !== undefined) {
    try {
      graceMs = parseDuration(req.grace, 'grace');
    } catch (err) {
      throw new AdminError(400, 'InvalidArgument', `grace: ${(err as Error).message}`);
    }
  }
  if (req.cleanBelow !== undefined && !(req.cleanBelow >= 0 && req.cleanBelow <= 1)) {
    throw new AdminError(400, 'InvalidArgument', `cleanBelow must be within 0..1, not ${req.cleanBelow}`);
  }
  const report = await runGc(store.repo, {
    dryRun: req.dryRun === true,
    graceMs,
    checkpoint: req.dryRun !== true,
    ...(req.cleanBelow !== undefined ? { cleanBelow: req.cleanBelow } : {}),
    ...(onProgress ? { onProgress } : {}),
  });
  return { ...report, grace: formatDuration(graceMs), graceMs };
}

/** The GC route (mounted under /_strata/admin/v1). */
export const GC_ROUTES: AdminRoute[] = [
  {
    method: 'POST',
    path: ['gc'],
    op: 'AdminGc',
    handle: async (r) => {
      const body = await readJson(r, { dryRun: 'boolean', grace: 'string', cleanBelow: 'number' });
      sendJson(r, 200, await adminGc(r.store, body));
    },
  },
];
