/**
 * @module Authorization: may this principal perform this endpoint's operation?
 *
 * The one place every S3 request is authorized, after authentication (app.ts) and routing.
 * Handlers that authorize a second resource (a copy source, a POST Form's signer, each key of
 * a DeleteObjects) call {@link authorizeEndpoint} again with the endpoint that describes it.
 *
 * Two sources decide together: what the requesting access key holds (today every key is an
 * administrator; per-key grants replace {@link keyRights}), and what the bucket says — its
 * policy, its ACLs and its Block Public Access settings (authz/policy-authorize.ts). An
 * explicit Deny in the policy wins over everything; anonymous requests get only what a
 * policy or an ACL gives everyone.
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import { isS3Error, S3Error } from './errors.js';
import { ACCESS_RULES } from './authz/policy-actions.js';
import { authorizeBucketAccess, type KeyRights } from './authz/policy-authorize.js';

/** Who is asking: an access key id, or null for an anonymous request. */
export type Principal = string | null;

/** What the key itself may do with `e`. Until per-key grants exist, any key may do everything. */
function keyRights(_r: RequestContext, _e: Endpoint, principal: Principal): KeyRights {
  const isKey = principal !== null;
  return { granted: isKey, ownerOrAdmin: isKey };
}

/**
 * Resolves when `principal` may perform `e`; throws S3Error `AccessDenied` otherwise.
 * Reads server state only (keys, bucket settings, and the stored object when a condition or
 * an object ACL needs it); changes nothing.
 */
export async function authorizeEndpoint(r: RequestContext, e: Endpoint, principal: Principal): Promise<void> {
  const rule = ACCESS_RULES[e.op];
  if (rule.scope === 'none') return;
  const rights = keyRights(r, e, principal);
  if (rule.scope === 'service' || !('bucket' in e) || e.bucket === undefined) {
    if (!rights.granted) throw new S3Error('AccessDenied');
    return;
  }
  await authorizeBucketAccess(r, e as Extract<Endpoint, { bucket: string }>, principal, rights);
}

/**
 * The keys of a DeleteObjects request that `principal` may NOT delete (each authorized as a
 * DeleteObject of its own). Changes nothing; rethrows anything but AccessDenied.
 */
export async function refusedDeletes(r: RequestContext, bucket: string, keys: readonly string[], principal: Principal): Promise<Set<string>> {
  const refused = new Set<string>();
  for (const key of keys) {
    try {
      await authorizeEndpoint(r, { op: 'DeleteObject', bucket, key }, principal);
    } catch (err) {
      if (!isS3Error(err, 'AccessDenied')) throw err;
      refused.add(key);
    }
  }
  return refused;
}
