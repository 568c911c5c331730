/**
 * @module A bucket's S3 lifecycle configuration as the store keeps it: the rule model, its
 * stored form (bucket config `lifecycle`, JSON), and the pure questions the worker and the
 * S3 layer ask of it (does a rule apply to this object; when does it expire it).
 *
 * The S3 document is parsed and validated in the S3 layer (s3/xml/lifecycle.ts); what reaches
 * here is already valid. Decoding re-checks the shape and fails closed (StoreError 'Corrupt'):
 * a configuration the store cannot read must never be taken as "no rules" nor as other rules.
 *
 * Days: S3 counts a rule's days from the object's creation (or, for noncurrent versions, from
 * when the version became noncurrent) and rounds the result UP to the next midnight UTC. The
 * length of a "day" is `STRATA_LIFECYCLE_DAY_MS` (debug setting, default 86,400,000 ms): with
 * a shorter day, rounding is to the next multiple of that length, so tests run in seconds
 * with the same arithmetic. Dates (Expiration Date) are absolute and never scaled.
 */
import { StoreError } from './errors.js';
import type { ObjectVersion } from './records.js';

/** The bucket configuration name the lifecycle configuration is stored under. */
export const LIFECYCLE_CONFIG = 'lifecycle';
/** S3's limit on rules per configuration. */
export const MAX_LIFECYCLE_RULES = 1000;
/** S3's limit on a rule ID, in characters. */
export const MAX_RULE_ID_LENGTH = 255;
/** A real day, ms: the default length of a lifecycle day. */
export const DAY_MS = 86_400_000;

export interface LifecycleFilter {
  /** Key prefix ('' matches every key). */
  prefix: string;
  /** Every tag here must be on the object with this value. */
  tags: Array<{ key: string; value: string }>;
  /** Objects strictly larger than this many bytes. */
  sizeGreaterThan?: number;
  /** Objects strictly smaller than this many bytes. */
  sizeLessThan?: number;
}

export interface LifecycleRule {
  id: string;
  enabled: boolean;
  /**
   * How the filter was written, so GET returns the same shape: the legacy top-level
   * `<Prefix>` ('prefix'), an empty `<Filter/>` ('empty'), `<Filter>` with one element
   * ('filter'), or `<Filter><And>` ('and').
   */
  form: 'prefix' | 'empty' | 'filter' | 'and';
  filter: LifecycleFilter;
  expiration?: { days?: number; date?: number; expiredObjectDeleteMarker?: boolean };
  noncurrentExpiration?: { days: number; newerNoncurrentVersions?: number };
  abortIncompleteUploadDays?: number;
}

export interface LifecycleConfig {
  rules: LifecycleRule[];
}

/** The length of a lifecycle day in ms: env STRATA_LIFECYCLE_DAY_MS (debug), else a real day. */
export function lifecycleDayMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.STRATA_LIFECYCLE_DAY_MS;
  if (raw === undefined || raw === '') return DAY_MS;
  const v = Number(raw);
  if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`STRATA_LIFECYCLE_DAY_MS must be a positive integer (ms), not ${JSON.stringify(raw)}`);
  return v;
}

/** `start + days` lifecycle days, rounded up to the next day boundary (S3's midnight UTC). Pure. */
export function afterDays(start: number, days: number, dayMs: number): number {
  return Math.ceil((start + days * dayMs) / dayMs) * dayMs;
}

/** Whether `rule`'s filter selects the object `key` with `version` (tags, size). Pure. */
export function ruleMatches(rule: LifecycleRule, key: string, version: Pick<ObjectVersion, 'size' | 'tags'>): boolean {
  const f = rule.filter;
  if (!key.startsWith(f.prefix)) return false;
  for (const t of f.tags) if (version.tags[t.key] !== t.value) return false;
  if (f.sizeGreaterThan !== undefined && !(version.size > f.sizeGreaterThan)) return false;
  if (f.sizeLessThan !== undefined && !(version.size < f.sizeLessThan)) return false;
  return true;
}

/** When a current version expires and by which rule. */
export interface Expiry {
  at: number;
  ruleId: string;
}

/**
 * The earliest expiry of the current version `version` of `key` under the enabled
 * Expiration (Days or Date) rules of `config` that select it, or undefined. Pure.
 */
export function currentExpiry(config: LifecycleConfig, key: string, version: ObjectVersion, dayMs: number): Expiry | undefined {
  if (version.deleteMarker) return undefined;
  let best: Expiry | undefined;
  for (const rule of config.rules) {
    const x = rule.expiration;
    if (!rule.enabled || !x || (x.days === undefined && x.date === undefined)) continue;
    if (!ruleMatches(rule, key, version)) continue;
    const at = x.days !== undefined ? afterDays(version.lastModified, x.days, dayMs) : x.date!;
    if (!best || at < best.at) best = { at, ruleId: rule.id };
  }
  return best;
}

/** Encodes a configuration for storage (bucket config LIFECYCLE_CONFIG). Pure. */
export function encodeLifecycle(c: LifecycleConfig): Uint8Array {
  return Buffer.from(JSON.stringify({ v: 1, rules: c.rules }));
}

const corrupt = (why: string) => new StoreError('Corrupt', `stored lifecycle configuration: ${why}`);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** Decodes a stored configuration; StoreError 'Corrupt' if it is not one this module wrote. */
export function decodeLifecycle(raw: Uint8Array): LifecycleConfig {
  let v: { v?: unknown; rules?: unknown };
  try {
    v = JSON.parse(Buffer.from(raw).toString('utf8')) as typeof v;
  } catch {
    throw corrupt('not JSON');
  }
  if (v?.v !== 1 || !Array.isArray(v.rules) || v.rules.length > MAX_LIFECYCLE_RULES) throw corrupt('unknown shape');
  for (const r of v.rules as LifecycleRule[]) {
    if (typeof r?.id !== 'string' || typeof r.enabled !== 'boolean' || !['prefix', 'empty', 'filter', 'and'].includes(r.form)) throw corrupt('bad rule');
    const f = r.filter;
    if (typeof f?.prefix !== 'string' || !Array.isArray(f.tags)) throw corrupt(`bad filter in rule ${r.id}`);
    for (const t of f.tags) if (typeof t?.key !== 'string' || typeof t.value !== 'string') throw corrupt(`bad tag in rule ${r.id}`);
    if (f.sizeGreaterThan !== undefined && !isCount(f.sizeGreaterThan)) throw corrupt(`bad size in rule ${r.id}`);
    if (f.sizeLessThan !== undefined && !isCount(f.sizeLessThan)) throw corrupt(`bad size in rule ${r.id}`);
    const x = r.expiration;
    if (x && ((x.days !== undefined && !isCount(x.days)) || (x.date !== undefined && !isCount(x.date)))) throw corrupt(`bad expiration in rule ${r.id}`);
    const n = r.noncurrentExpiration;
    if (n && (!isCount(n.days) || (n.newerNoncurrentVersions !== undefined && !isCount(n.newerNoncurrentVersions)))) throw corrupt(`bad noncurrent expiration in rule ${r.id}`);
    if (r.abortIncompleteUploadDays !== undefined && !isCount(r.abortIncompleteUploadDays)) throw corrupt(`bad upload abort in rule ${r.id}`);
  }
  return { rules: v.rules as LifecycleRule[] };
}

/**
 * Decoded configurations by their stored bytes: every GET and HEAD of a bucket with rules
 * asks (x-amz-expiration), and a setting is replaced, never mutated, so the bytes identify it.
 */
const decoded = new WeakMap<Uint8Array, LifecycleConfig>();

/**
 * The lifecycle configuration stored in `configs` (a bucket's settings), or undefined.
 * Throws StoreError 'Corrupt' (decodeLifecycle). The result is shared: do not mutate it.
 */
export function lifecycleIn(configs: ReadonlyMap<string, Uint8Array>): LifecycleConfig | undefined {
  const raw = configs.get(LIFECYCLE_CONFIG);
  return raw ? lifecycleOf(raw) : undefined;
}

/** decodeLifecycle through the cache above (same errors; the result is shared, do not mutate). */
export function lifecycleOf(raw: Uint8Array): LifecycleConfig {
  let c = decoded.get(raw);
  if (!c) {
    c = decodeLifecycle(raw);
    decoded.set(raw, c);
  }
  return c;
}
