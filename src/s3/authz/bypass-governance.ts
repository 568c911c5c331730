/**
 * @module Who may bypass GOVERNANCE retention: a request that sends
 * `x-amz-bypass-governance-retention: true` removes, shortens or clears a GOVERNANCE
 * retention only when its key is allowed `s3:BypassGovernanceRetention` on the object.
 *
 * Allowed (in the order of the bucket side of authorization, policy-authorize.ts):
 *   1. an applying Deny of s3:BypassGovernanceRetention in the bucket policy refuses (the
 *      owner and admins too: a policy may take bypass away from everyone);
 *   2. the key holds the bucket's `owner` permission by itself (admin, bucket owner, or an
 *      owner grant on the bucket): bypassing retention is bucket administration, not a write;
 *   3. an applying Allow of s3:BypassGovernanceRetention (unless RestrictPublicBuckets
 *      ignores a public policy).
 * Anonymous requests never bypass. No ACL grants it. Without the header nobody bypasses, so
 * a client must ask each time (as S3 requires).
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { keyAllows, keyOf } from './grants.js';
import { conditionContext } from './policy-context.js';
import { evaluatePolicy } from './policy-evaluate.js';
import { bucketSettings } from './policy-settings.js';

/** The request header asking to bypass governance retention. */
export const BYPASS_HEADER = 'x-amz-bypass-governance-retention';

/** Whether the request asks to bypass (header `true`, any case; anything else does not ask). Pure. */
export function bypassRequested(headers: Readonly<Record<string, string | undefined>>): boolean {
  return (headers[BYPASS_HEADER] ?? '').trim().toLowerCase() === 'true';
}

/**
 * Whether request `r`, acting as `principal` on object `key` of `bucket` through endpoint
 * `e` (its condition context), asks to bypass governance retention and is allowed to.
 * Reads the key registry and the bucket's settings; changes nothing; never throws for a
 * refusal (the store answers AccessDenied when the lock then holds).
 */
export function mayBypassGovernance(r: RequestContext, e: Endpoint, bucket: string, key: string, principal: string | null): boolean {
  if (!bypassRequested(r.headers) || principal === null) return false;
  const k = keyOf(r.deps, principal);
  if (!k) return false;
  const settings = bucketSettings(r.store, bucket);
  if (!settings) return false;
  const owner = keyAllows(r.deps, k, 'owner', bucket);
  const p = settings.policy;
  if (!p) return owner;
  if ('broken' in p) return owner && (k.admin || settings.owner === k.id);
  const ctx = conditionContext(r, e, { principal });
  const d = evaluatePolicy(p.policy, { principal, action: 's3:BypassGovernanceRetention', resource: `${bucket}/${key}`, context: ctx });
  if (d === 'deny') return false;
  if (owner) return true;
  return d === 'allow' && !(settings.block.restrictPublicBuckets && p.isPublic);
}
