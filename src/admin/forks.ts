/**
 * @module Admin API: bucket forks (store/fork.ts), and the one function both it and
 * `strata fork` on a stopped repository call.
 *
 *   POST /_strata/admin/v1/buckets/{bucket}/fork   {source, at?, owner?}
 *        -> 201 {bucket, source, created, owner, copied}
 *
 * `source` is the bucket to fork; `at` an RFC 3339 time to fork it as of (inside the source's
 * history window: store/fork-at-time.ts); `owner` the access key that will own the fork. An operator
 * forks on someone's behalf, so without `owner` the fork keeps the SOURCE's owner (a bucket
 * nobody owns stays so: admin keys only); `""` makes it owned by nobody. Errors: 400
 * InvalidBucketName / InvalidArgument / InvalidRequest (itself), 404 NoSuchBucket /
 * NoSuchAccessKey, 409 BucketAlreadyExists (an existing bucket, whoever owns it).
 */
import type { AdminRoute } from './router.js';
import { AdminError, readJson, sendJson } from './http.js';
import type { Store } from '../store/store.js';
import { parseForkTime } from '../store/fork-at.js';
import { StoreError } from '../store/errors.js';

export interface AdminForkRequest {
  source: string;
  target: string;
  /** RFC 3339 time. */
  at?: string;
  /** Access key id; absent: the source's owner; '': nobody. */
  owner?: string;
}

export interface AdminForkResult {
  bucket: string;
  source: string;
  /** ISO 8601 time of the fork's commit. */
  created: string;
  /** The owning access key id, or null. */
  owner: string | null;
  /** Settings copied from the source. */
  copied: string[];
}

/**
 * Forks `req.source` into `req.target` in `store` (see the module note for the owner).
 * Throws AdminError 404 'NoSuchAccessKey' for an unknown owner, and the StoreErrors of
 * Store.forkBucket ('BucketAlreadyOwnedByYou' is reported as 'BucketAlreadyExists': an
 * administrator owns no bucket).
 */
export async function adminFork(store: Store, req: AdminForkRequest): Promise<AdminForkResult> {
  const at = req.at === undefined ? undefined : parseForkTime(req.at);
  let owner = req.owner === undefined ? store.bucketOwner(req.source) : req.owner || undefined;
  if (req.owner && !store.getKey(req.owner)) throw new AdminError(404, 'NoSuchAccessKey', `no access key ${req.owner}`);
  if (owner !== undefined && !store.getKey(owner)) owner = undefined; // the source's owner was deleted: nobody
  try {
    const r = await store.forkBucket(req.source, req.target, { ...(owner !== undefined ? { owner } : {}), ...(at !== undefined ? { at } : {}) });
    return { bucket: r.name, source: r.source, created: new Date(r.created).toISOString(), owner: owner ?? null, copied: r.copied };
  } catch (err) {
    if (err instanceof StoreError && err.code === 'BucketAlreadyOwnedByYou') {
      throw new AdminError(409, 'BucketAlreadyExists', `bucket ${req.target} already exists`);
    }
    throw err;
  }
}

/** The fork routes (mounted under /_strata/admin/v1). */
export const FORK_ROUTES: AdminRoute[] = [
  {
    method: 'POST',
    path: ['buckets', ':bucket', 'fork'],
    op: 'AdminForkBucket',
    handle: async (r, p) => {
      const body = await readJson(r, { source: 'string', at: 'string', owner: 'string' });
      if (body.source === undefined) throw new AdminError(400, 'InvalidJson', 'field source (the bucket to fork) is required');
      const result = await adminFork(r.store, {
        source: body.source,
        target: p.bucket!,
        ...(body.at !== undefined ? { at: body.at } : {}),
        ...(body.owner !== undefined ? { owner: body.owner } : {}),
      });
      sendJson(r, 201, result);
    },
  },
];
