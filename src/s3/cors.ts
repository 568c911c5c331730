/**
 * @module CORS: preflight answers (OPTIONS, no authentication, by the bucket's rules) and
 * the Access-Control-* headers of actual cross-origin requests.
 */
import type { RequestContext } from './context.js';
import type { CorsRule } from './xml/index.js';
import { S3Error } from './errors.js';
import { sendEmpty } from './respond.js';
import { corsRules } from './ops/buckets.js';

/** S3 allows one '*' wildcard anywhere in an AllowedOrigin / AllowedHeader. */
function wildcard(pattern: string, value: string, caseInsensitive: boolean): boolean {
  const p = caseInsensitive ? pattern.toLowerCase() : pattern;
  const v = caseInsensitive ? value.toLowerCase() : value;
  const star = p.indexOf('*');
  if (star < 0) return p === v;
  const head = p.slice(0, star);
  const tail = p.slice(star + 1);
  return v.length >= head.length + tail.length && v.startsWith(head) && v.endsWith(tail);
}

function matchRule(rules: readonly CorsRule[], origin: string, method: string, headers: string[]): CorsRule | undefined {
  return rules.find(
    (rule) =>
      rule.allowedOrigins.some((o) => wildcard(o, origin, false)) &&
      (rule.allowedMethods as string[]).includes(method) &&
      headers.every((h) => rule.allowedHeaders.some((a) => wildcard(a, h, true)))
  );
}

function allowOrigin(rule: CorsRule, origin: string): Record<string, string> {
  const any = rule.allowedOrigins.includes('*');
  const out: Record<string, string> = { 'access-control-allow-origin': any ? '*' : origin, vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method' };
  if (!any) out['access-control-allow-credentials'] = 'true';
  if (rule.exposeHeaders.length) out['access-control-expose-headers'] = rule.exposeHeaders.join(', ');
  return out;
}

/** Answers an OPTIONS preflight for `bucket` (no auth). Throws S3Error when not allowed. */
export function handlePreflight(r: RequestContext, bucket: string | undefined): void {
  const origin = r.headers.origin;
  const method = r.headers['access-control-request-method'];
  if (!origin || !method) throw new S3Error('InvalidRequest', 'Insufficient information. Origin request header needed.');
  const requested = (r.headers['access-control-request-headers'] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  let rules: CorsRule[] | undefined;
  try {
    rules = bucket ? corsRules(r, bucket) : undefined;
  } catch {
    rules = undefined;
  }
  const rule = rules && matchRule(rules, origin, method.toUpperCase(), requested);
  if (!rule) throw new S3Error('AccessForbidden');
  const headers: Record<string, string> = {
    ...allowOrigin(rule, origin),
    'access-control-allow-methods': rule.allowedMethods.join(', '),
  };
  if (requested.length) headers['access-control-allow-headers'] = requested.join(', ');
  if (rule.maxAgeSeconds !== undefined) headers['access-control-max-age'] = String(rule.maxAgeSeconds);
  sendEmpty(r, 200, headers);
}

/** Adds the CORS headers of an actual request with an Origin, when a rule allows it. */
export function applyCors(r: RequestContext, bucket: string | undefined): void {
  const origin = r.headers.origin;
  if (!origin || !bucket) return;
  let rules: CorsRule[] | undefined;
  try {
    rules = corsRules(r, bucket);
  } catch {
    return;
  }
  // An actual request that names the method it stands for (Access-Control-Request-Method,
  // as browsers' preflights do) is matched as that method, as S3 answers such requests.
  const method = r.headers['access-control-request-method']?.trim().toUpperCase() || r.method;
  const rule = rules && matchRule(rules, origin, method, []);
  // S3 names the rule's methods on actual requests too, not only on preflights.
  if (rule) Object.assign(r.baseHeaders, allowOrigin(rule, origin), { 'access-control-allow-methods': rule.allowedMethods.join(', ') });
}
