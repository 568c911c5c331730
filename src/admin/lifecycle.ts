/**
 * @module The lifecycle admin route: run every bucket's S3 lifecycle rules now.
 *
 *   POST /_strata/admin/v1/lifecycle/run   {bucket?}  -> 200 LifecycleReport
 *
 * The same pass the server's worker runs on its schedule (store/lifecycle.ts), so an operator
 * (or `strata lifecycle run` against a running server) need not wait for the next one. When
 * the server has a worker, the run goes through it: one run at a time, counted in its metrics.
 */
import type { AdminRoute } from './router.js';
import { readJson, sendJson } from './http.js';
import type { Store } from '../store/store.js';
import { runLifecycle, type LifecycleReport } from '../store/lifecycle.js';

/** Something that runs lifecycle passes one at a time (the server's worker). */
export interface LifecycleRunner {
  runNow(opts?: { bucket?: string }): Promise<LifecycleReport>;
}

/**
 * One lifecycle pass over `store` (or only `bucket`), through `runner` when given (the
 * server's worker); throws what runLifecycle throws.
 */
export function adminLifecycleRun(store: Store, bucket?: string, runner?: LifecycleRunner): Promise<LifecycleReport> {
  const opts = bucket !== undefined ? { bucket } : {};
  return runner ? runner.runNow(opts) : runLifecycle(store.repo, opts);
}

/** The lifecycle routes (mounted under /_strata/admin/v1). */
export const LIFECYCLE_ROUTES: AdminRoute[] = [
  {
    method: 'POST',
    path: ['lifecycle', 'run'],
    op: 'AdminLifecycleRun',
    handle: async (r) => {
      const body = await readJson(r, { bucket: 'string' });
      sendJson(r, 200, await adminLifecycleRun(r.store, body.bucket, r.deps.lifecycle));
    },
  },
];
