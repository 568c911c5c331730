/**
 * @module Bucket policy evaluation: what a compiled policy says about one request, and
 * whether a policy is "public" in S3's sense (Block Public Access, GetBucketPolicyStatus).
 *
 * A statement applies when its principal, action, resource and every condition match; an
 * applying Deny beats any Allow (IAM evaluation logic). A condition whose request value
 * cannot be known yet counts against the requester: the Deny applies, the Allow does not.
 */
import { confinesSourceIp, evaluateCondition, type ConditionContext } from './policy-conditions.js';
import { globMatch, MatchBudgetExceeded, MAX_MATCH_STEPS, withMatchBudget } from './policy-match.js';
import type { BucketPolicy, PolicyStatement } from './policy-parse.js';

/** A request as a policy sees it. */
export interface PolicyRequest {
  /** Access key id, or null for an anonymous request. */
  principal: string | null;
  /** `s3:GetObject`, ... */
  action: string;
  /** `bucket` or `bucket/key`. */
  resource: string;
  context: ConditionContext;
}

/** What a policy says: an applying Deny, an applying Allow, or nothing. */
export type PolicyDecision = 'deny' | 'allow' | 'none';

function principalMatches(s: PolicyStatement, principal: string | null): boolean {
  const listed = s.principal.any || (principal !== null && s.principal.ids.has(principal));
  return s.principal.not ? !listed : listed;
}

function actionMatches(s: PolicyStatement, action: string): boolean {
  const lower = action.toLowerCase();
  const listed = s.action.globs.some((g) => globMatch(g, lower));
  return s.action.not ? !listed : listed;
}

function resourceMatches(s: PolicyStatement, resource: string): boolean {
  const listed = s.resource.globs.some((g) => globMatch(g, resource));
  return s.resource.not ? !listed : listed;
}

/** The conditions' verdict: all true, some false, or (none false) some unknowable. */
function conditionsHold(s: PolicyStatement, ctx: ConditionContext): boolean | 'unknown' {
  let unknown = false;
  for (const c of s.conditions) {
    const v = evaluateCondition(c, ctx);
    if (v === false) return false;
    if (v === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : true;
}

/**
 * Evaluates `policy` for `req`. Pure (reads `req.context` only). A policy whose patterns
 * would take more than MAX_MATCH_STEPS to match against this request denies it (fail
 * closed: the policy is too expensive to decide, so nothing it might allow is allowed).
 */
export function evaluatePolicy(policy: BucketPolicy, req: PolicyRequest): PolicyDecision {
  try {
    return withMatchBudget(MAX_MATCH_STEPS, () => evaluate(policy, req));
  } catch (err) {
    if (err instanceof MatchBudgetExceeded) return 'deny';
    throw err;
  }
}

function evaluate(policy: BucketPolicy, req: PolicyRequest): PolicyDecision {
  let allowed = false;
  for (const s of policy.statements) {
    if (!principalMatches(s, req.principal) || !actionMatches(s, req.action) || !resourceMatches(s, req.resource)) continue;
    const held = conditionsHold(s, req.context);
    if (s.effect === 'Deny') {
      if (held !== false) return 'deny';
    } else if (held === true) {
      allowed = true;
    }
  }
  return allowed ? 'allow' : 'none';
}

/**
 * Whether `policy` grants public access (S3 user guide, "The meaning of public"): some Allow
 * statement names every principal (`*`) and is not confined to fixed networks by an
 * aws:SourceIp condition. Statements naming key ids are not public. Pure.
 */
export function isPolicyPublic(policy: BucketPolicy): boolean {
  return policy.statements.some((s) => s.effect === 'Allow' && s.principal.any && !s.principal.not && !s.conditions.some(confinesSourceIp));
}
