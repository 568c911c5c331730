/**
 * @module A bucket's Object Lock configuration: whether lock is enabled, its default
 * retention, their stored form (bucket configuration `object-lock`), and how a new version
 * gets its lock from the request and the bucket's default.
 *
 * Object Lock is enabled when the bucket is created (with versioning Enabled), or later by
 * PutObjectLockConfiguration on a bucket whose versioning is Enabled; once enabled it is never
 * disabled and versioning can no longer be suspended. Both checks run inside the commit that
 * changes the state, so a concurrent versioning change cannot slip between them.
 *
 * Stored form: u8 format (1), u8 rule (0 none; else 1 + index in LOCK_MODES), with a rule
 * u8 unit (0 days, 1 years) and varint period.
 */
import type { Repository } from './repository.js';
import type { Tx } from './tx.js';
import { ByteReader, ByteWriter } from './binary.js';
import { StoreError } from './errors.js';
import { checkRetainUntil, LOCK_MODES, type LockMode, type ObjectLock, type Retention } from './object-lock.js';

/** The bucket configuration names this module reads and writes (CONTRACT.md). */
export const OBJECT_LOCK_CONFIG = 'object-lock';
export const VERSIONING_CONFIG = 'versioning';

/** S3's upper bounds on a default retention period: 100 years. */
export const MAX_DEFAULT_DAYS = 36_500;
export const MAX_DEFAULT_YEARS = 100;
const DAY_MS = 86_400_000;

/** A default retention: exactly one of `days` / `years`, positive. */
export type DefaultRetention = { mode: LockMode } & ({ days: number; years?: undefined } | { years: number; days?: undefined });

/** The Object Lock configuration of a lock-enabled bucket. */
export interface BucketLockConfig {
  rule?: DefaultRetention;
}

const FORMAT = 1;

/**
 * Throws StoreError `InvalidArgument` (answered as InvalidRetentionPeriod: its detail Kind
 * says so) unless the period of `rule` is a positive integer within S3's bounds. Pure.
 */
export function checkDefaultRetention(rule: DefaultRetention): void {
  const [n, max] = rule.days !== undefined ? [rule.days, MAX_DEFAULT_DAYS] : [rule.years, MAX_DEFAULT_YEARS];
  if (!Number.isSafeInteger(n) || n! < 1 || n! > max) {
    throw new StoreError('InvalidArgument', `Default retention period must be a positive integer no larger than ${max} ${rule.days !== undefined ? 'days' : 'years'}.`, {
      detail: { Kind: 'InvalidRetentionPeriod' },
    });
  }
}

export function encodeLockConfig(c: BucketLockConfig): Uint8Array {
  const w = new ByteWriter(16).u8(FORMAT);
  if (!c.rule) return w.u8(0).finish();
  checkDefaultRetention(c.rule);
  w.u8(1 + LOCK_MODES.indexOf(c.rule.mode));
  if (c.rule.days !== undefined) w.u8(0).varint(c.rule.days);
  else w.u8(1).varint(c.rule.years);
  return w.finish();
}

/** Decodes the stored configuration; StoreError 'Corrupt' when it is not one this version wrote. */
export function decodeLockConfig(bytes: Uint8Array): BucketLockConfig {
  const r = new ByteReader(bytes, 'object lock configuration');
  if (r.u8() !== FORMAT) throw new StoreError('Corrupt', 'object lock configuration: unknown format');
  const m = r.u8();
  if (m === 0) {
    r.end();
    return {};
  }
  const mode = LOCK_MODES[m - 1];
  const unit = r.u8();
  const n = r.varint();
  r.end();
  if (!mode || unit > 1) throw new StoreError('Corrupt', 'object lock configuration: bad rule');
  const rule: DefaultRetention = unit === 0 ? { mode, days: n } : { mode, years: n };
  try {
    checkDefaultRetention(rule);
  } catch {
    throw new StoreError('Corrupt', 'object lock configuration: bad period');
  }
  return { rule };
}

/** The time `rule`'s retention ends for a version created at `from` (ms). Years are calendar years (UTC). Pure. */
export function defaultRetainUntil(rule: DefaultRetention, from: number): number {
  if (rule.days !== undefined) return from + rule.days * DAY_MS;
  const d = new Date(from);
  d.setUTCFullYear(d.getUTCFullYear() + rule.years);
  return d.getTime();
}

/**
 * What a write asks for the lock of the version it creates: an explicit retention (the
 * x-amz-object-lock-mode / -retain-until-date headers), else the bucket's default rule
 * (applied at the version's creation time), and a legal hold.
 */
export interface LockRequest {
  retention?: Retention;
  defaultRule?: DefaultRetention;
  legalHold?: boolean;
}

/** The lock of a version created at `now` from `req`; undefined when it carries none. Pure. */
export function resolveLock(req: LockRequest | undefined, now: number): ObjectLock | undefined {
  if (!req) return undefined;
  const lock: ObjectLock = {};
  const retention = req.retention ?? (req.defaultRule && { mode: req.defaultRule.mode, retainUntil: defaultRetainUntil(req.defaultRule, now) });
  if (retention) {
    lock.mode = retention.mode;
    lock.retainUntil = retention.retainUntil;
  }
  if (req.legalHold !== undefined) lock.legalHold = req.legalHold;
  return lock.mode || lock.legalHold !== undefined ? lock : undefined;
}

// Record form of a LockRequest (multipart upload records): u8 bits (1 retention, 2 default
// rule, 4 legal hold set, 8 legal hold ON), then the retention (u8 mode, varint ms) and the
// rule (u8 mode, u8 unit, varint period).
export function writeLockRequest(w: ByteWriter, req: LockRequest): void {
  const bits = (req.retention ? 1 : 0) | (req.defaultRule ? 2 : 0) | (req.legalHold !== undefined ? 4 : 0) | (req.legalHold ? 8 : 0);
  w.u8(bits);
  if (req.retention) w.u8(LOCK_MODES.indexOf(req.retention.mode)).varint(req.retention.retainUntil);
  if (req.defaultRule) {
    const d = req.defaultRule;
    w.u8(LOCK_MODES.indexOf(d.mode)).u8(d.days !== undefined ? 0 : 1).varint(d.days ?? d.years);
  }
}

export function readLockRequest(r: ByteReader): LockRequest {
  const bits = r.u8();
  if (bits & ~15 || (bits & 8 && !(bits & 4))) throw new StoreError('Corrupt', `lock request: bits ${bits}`);
  const req: LockRequest = {};
  const mode = () => {
    const m = LOCK_MODES[r.u8()];
    if (!m) throw new StoreError('Corrupt', 'lock request: unknown mode');
    return m;
  };
  if (bits & 1) req.retention = { mode: mode(), retainUntil: r.varint() };
  if (bits & 2) {
    const m = mode();
    const unit = r.u8();
    const n = r.varint();
    if (unit > 1) throw new StoreError('Corrupt', 'lock request: bad unit');
    req.defaultRule = unit === 0 ? { mode: m, days: n } : { mode: m, years: n };
    try {
      checkDefaultRetention(req.defaultRule);
    } catch {
      throw new StoreError('Corrupt', 'lock request: bad period');
    }
  }
  if (bits & 4) req.legalHold = (bits & 8) !== 0;
  return req;
}

/** Whether the bucket as `tx` sees it has Object Lock enabled. */
export function lockEnabledIn(tx: Tx, bucket: string): boolean {
  return tx.config(bucket, OBJECT_LOCK_CONFIG) !== undefined;
}

/** The committed Object Lock configuration of `bucket`, or undefined when lock is not enabled; StoreError 'NoSuchBucket'. */
export function bucketLockConfig(repo: Repository, bucket: string): BucketLockConfig | undefined {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  const raw = b.configs.get(OBJECT_LOCK_CONFIG);
  return raw ? decodeLockConfig(raw) : undefined;
}

/**
 * Sets the Object Lock configuration of `bucket` (enabling lock when it was not), in one
 * commit with the check that allows it: lock already enabled, or versioning Enabled. Throws
 * StoreError 'NoSuchBucket', 'InvalidBucketState' (versioning never enabled or suspended),
 * 'InvalidArgument' (a period out of bounds).
 */
export async function putBucketLockConfig(repo: Repository, bucket: string, config: BucketLockConfig): Promise<void> {
  const value = encodeLockConfig(config);
  await repo.run(async (tx) => {
    tx.requireBucket(bucket);
    if (!lockEnabledIn(tx, bucket) && utf8(tx.config(bucket, VERSIONING_CONFIG)) !== 'Enabled') {
      throw new StoreError('InvalidBucketState', 'Versioning must be \'Enabled\' on the bucket to apply a Object Lock configuration');
    }
    tx.setConfig(bucket, OBJECT_LOCK_CONFIG, value);
  });
}

/**
 * Throws StoreError 'InvalidBucketState' when versioning of `bucket` may not become
 * `status` in `tx`: a lock-enabled bucket stays Enabled. PutBucketVersioning calls it inside
 * the commit that writes the new state.
 */
export function assertVersioningChange(tx: Tx, bucket: string, status: string): void {
  if (status !== 'Enabled' && lockEnabledIn(tx, bucket)) {
    throw new StoreError('InvalidBucketState', 'An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.');
  }
}

/**
 * The configurations a bucket created with Object Lock starts with: versioning Enabled and
 * lock enabled without a default retention.
 */
export function lockedBucketConfigs(): [string, Uint8Array][] {
  return [
    [VERSIONING_CONFIG, new TextEncoder().encode('Enabled')],
    [OBJECT_LOCK_CONFIG, encodeLockConfig({})],
  ];
}

/** Validates an explicit retention of a write at `now` (see checkRetainUntil). */
export function checkRequestedRetention(req: LockRequest, now: number): void {
  if (req.retention) checkRetainUntil(req.retention.retainUntil, now);
}

const utf8 = (v: Uint8Array | undefined) => (v ? new TextDecoder().decode(v) : undefined);
