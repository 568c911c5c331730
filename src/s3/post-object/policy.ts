/**
 * @module The POST policy: a base64 JSON document `{ "expiration": ISO-8601, "conditions":
 * [...] }` signed by the form's signer, and the rules S3 applies to a form with it
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-HTTPPOSTConstructPolicy.html).
 *
 *   { "field": "value" }                      the field must equal value
 *   [ "eq", "$field", "value" ]               the same
 *   [ "starts-with", "$field", "prefix" ]     the field must start with prefix ("" = anything)
 *   [ "content-length-range", min, max ]      the file's size, enforced while it streams
 *
 * Field names and operators are case-insensitive, values case-sensitive; a field the form
 * does not send is the empty string. Every form field except the signature, the policy,
 * the file, `x-ignore-*` and the `x-amz-checksum-*` integrity claims (they can only make an
 * upload fail, and S3 accepts them unnamed) must be named by a condition, and the bucket
 * (always a field, from the URL) too. A malformed document is 400 InvalidPolicyDocument; a form the policy
 * does not allow is 403 AccessDenied "Invalid according to Policy: ...".
 */
import { S3Error } from '../errors.js';

export type PolicyCondition =
  | { op: 'eq' | 'starts-with'; field: string; value: string; text: string }
  | { op: 'content-length-range'; min: number; max: number; text: string };

export interface PostPolicy {
  expiration: Date;
  conditions: PolicyCondition[];
}

/** Largest decoded policy document accepted, bytes (the form's field limit bounds it too). */
export const MAX_POLICY_BYTES = 20 * 1024;

/** Form fields no condition has to name. */
const EXEMPT_FIELDS = new Set(['policy', 'signature', 'x-amz-signature', 'awsaccesskeyid', 'file']);

const EXPIRATION = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;

function invalid(why: string): S3Error {
  return new S3Error('InvalidPolicyDocument', `Invalid Policy: ${why}`);
}

function deny(why: string): S3Error {
  return new S3Error('AccessDenied', `Invalid according to Policy: ${why}`);
}

function parseExpiration(v: unknown): Date {
  const m = typeof v === 'string' ? EXPIRATION.exec(v) : null;
  if (!m) throw invalid(`Invalid 'expiration' value: '${String(v)}'`);
  const t = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, m[7] ? Math.floor(Number(m[7]) * 1000) : 0);
  const d = new Date(t);
  // Date.UTC rolls over out-of-range parts (month 13, second 61): refuse those instead.
  if (Number.isNaN(t) || d.getUTCMonth() !== +m[2]! - 1 || d.getUTCDate() !== +m[3]! || d.getUTCHours() !== +m[4]! || d.getUTCMinutes() !== +m[5]! || d.getUTCSeconds() !== +m[6]!) {
    throw invalid(`Invalid 'expiration' value: '${String(v)}'`);
  }
  return d;
}

function fieldName(v: unknown, text: string): string {
  if (typeof v !== 'string' || !v.startsWith('$') || v.length < 2) throw invalid(`Condition field must start with '$': ${text}`);
  return v.slice(1).toLowerCase();
}

function conditionValue(v: unknown, text: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw invalid(`Condition value must be a string: ${text}`);
}

function bound(v: unknown, text: string): number {
  const n = typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw invalid(`Invalid content-length-range bound: ${text}`);
  return n;
}

function parseCondition(c: unknown): PolicyCondition[] {
  const text = JSON.stringify(c);
  if (Array.isArray(c)) {
    const op = typeof c[0] === 'string' ? c[0].toLowerCase() : '';
    if (op === 'content-length-range') {
      if (c.length !== 3) throw invalid(`content-length-range needs a minimum and a maximum: ${text}`);
      const min = bound(c[1], text);
      const max = bound(c[2], text);
      if (min > max) throw invalid(`content-length-range minimum is above its maximum: ${text}`);
      return [{ op, min, max, text }];
    }
    if (op !== 'eq' && op !== 'starts-with') throw invalid(`Unknown condition: ${text}`);
    if (c.length !== 3) throw invalid(`Condition needs three elements: ${text}`);
    return [{ op, field: fieldName(c[1], text), value: conditionValue(c[2], text), text }];
  }
  if (c !== null && typeof c === 'object') {
    const entries = Object.entries(c as Record<string, unknown>);
    if (entries.length === 0) throw invalid(`Empty condition: ${text}`);
    return entries.map(([k, v]) => {
      const one = JSON.stringify({ [k]: v });
      return { op: 'eq' as const, field: k.replace(/^\$/, '').toLowerCase(), value: conditionValue(v, one), text: one };
    });
  }
  throw invalid(`Condition must be an object or an array: ${text}`);
}

/**
 * Decodes and parses a policy field (base64 of UTF-8 JSON). Pure. Throws S3Error
 * InvalidPolicyDocument for bad base64, JSON, a missing or malformed `expiration` or
 * `conditions` (keys are case-sensitive), or a malformed condition.
 */
export function parsePolicy(base64: string): PostPolicy {
  const b64 = base64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 === 1) throw invalid('the policy is not base64');
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length > MAX_POLICY_BYTES) throw invalid(`the policy is larger than ${MAX_POLICY_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw invalid('the policy is not UTF-8 JSON');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw invalid('the policy is not a JSON object');
  const o = doc as Record<string, unknown>;
  if (!('expiration' in o)) throw invalid("Policy missing expiration.");
  if (!('conditions' in o)) throw invalid('Policy missing conditions.');
  if (!Array.isArray(o.conditions)) throw invalid("'conditions' must be a list");
  return { expiration: parseExpiration(o.expiration), conditions: o.conditions.flatMap(parseCondition) };
}

/** The size bounds the policy puts on the file (the tightest when several are given). */
export function contentLengthRange(p: PostPolicy): { min: number; max: number } | undefined {
  let out: { min: number; max: number } | undefined;
  for (const c of p.conditions) {
    if (c.op !== 'content-length-range') continue;
    out = out ? { min: Math.max(out.min, c.min), max: Math.min(out.max, c.max) } : { min: c.min, max: c.max };
  }
  return out;
}

function holds(c: Extract<PolicyCondition, { field: string }>, value: string): boolean {
  if (c.op === 'eq') return value === c.value;
  // Content-Type may list several types; each must match.
  if (c.field === 'content-type') return value.split(',').every((t) => t.trim().startsWith(c.value));
  return value.startsWith(c.value);
}

/**
 * Checks a form against the policy at `now` (the file's size excepted, see
 * contentLengthRange). `fields` has lower-case names and the values the form sent, with
 * `bucket` set to the request's bucket and `key` already expanded (`${filename}`). Throws
 * S3Error AccessDenied "Invalid according to Policy: ..." (expired, a condition that does
 * not hold, a field no condition names).
 */
export function checkPolicy(p: PostPolicy, fields: ReadonlyMap<string, string>, now: Date): void {
  if (now.getTime() > p.expiration.getTime()) throw deny('Policy expired.');
  const named = new Set<string>();
  for (const c of p.conditions) {
    if (c.op === 'content-length-range') continue;
    named.add(c.field);
    if (!holds(c, fields.get(c.field) ?? '')) throw deny(`Policy Condition failed: ${c.text}`);
  }
  const extra = [...fields.keys()].filter(
    (f) => !EXEMPT_FIELDS.has(f) && !f.startsWith('x-ignore-') && !f.startsWith('x-amz-checksum-') && !named.has(f)
  );
  if (extra.length > 0) throw deny(`Extra input fields: ${extra.join(', ')}`);
}
