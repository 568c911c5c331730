/**
 * @module Object Lock: the retention model of one object version, and the rules that decide
 * whether a version may be removed or its retention changed.
 *
 * A version may carry a retention (a mode and a retain-until time) and a legal hold; either
 * alone keeps the version from being removed permanently:
 *
 *   legal hold ON                         nobody removes it until the hold is cleared
 *   COMPLIANCE, retain-until in future    nobody removes it; the date may only move later,
 *                                         the mode never changes
 *   GOVERNANCE, retain-until in future    removed, shortened, cleared or turned COMPLIANCE
 *                                         only by a request that bypasses governance (a
 *                                         key allowed s3:BypassGovernanceRetention that
 *                                         sends x-amz-bypass-governance-retention: true)
 *   retain-until passed                   no retention at all
 *
 * A delete marker hides a version without removing it, so it is allowed whatever the lock
 * (as in S3). Pure: the S3 layer decides who may bypass, the store calls these checks inside
 * the commit that removes or rewrites a version, with the commit's time as `now`.
 */
import { ByteReader, ByteWriter } from './binary.js';
import { StoreError } from './errors.js';

export const LOCK_MODES = ['GOVERNANCE', 'COMPLIANCE'] as const;
export type LockMode = (typeof LOCK_MODES)[number];

/** A retention: the mode and the time (ms since the epoch) until which it holds. */
export interface Retention {
  mode: LockMode;
  retainUntil: number;
}

/**
 * The Object Lock fields of a version (record flag 32). `mode` and `retainUntil` come
 * together or not at all; `legalHold` is absent when never set (S3 then answers
 * NoSuchObjectLockConfiguration), false once cleared.
 */
export interface ObjectLock {
  mode?: LockMode;
  retainUntil?: number;
  legalHold?: boolean;
}

/**
 * Latest retain-until time accepted: 9999-12-31T23:59:59.999Z. Past it the ISO 8601 form
 * S3 uses has no room, and the value must stay exact in a varint (< 2^53).
 */
export const MAX_RETAIN_UNTIL_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Options of the removal and change checks. */
export interface LockCheckOptions {
  /** The time the change takes effect (ms): the commit's time. */
  now: number;
  /** The request bypasses governance retention (asked for, and the key is allowed to). */
  bypassGovernance: boolean;
}

const lockedMessage = 'Access Denied because object protected by object lock.';

/** The retention of `lock` that still holds at `now`, or undefined. Pure. */
export function activeRetention(lock: ObjectLock | undefined, now: number): Retention | undefined {
  if (!lock?.mode || lock.retainUntil === undefined || lock.retainUntil <= now) return undefined;
  return { mode: lock.mode, retainUntil: lock.retainUntil };
}

/** Whether `lock` keeps its version from being removed at `now` by a request that does not bypass. Pure. */
export function isLocked(lock: ObjectLock | undefined, now: number): boolean {
  return lock?.legalHold === true || activeRetention(lock, now) !== undefined;
}

/**
 * Throws StoreError `AccessDenied` when `version` may not be removed permanently at
 * `opts.now`: a legal hold, an active COMPLIANCE retention, or an active GOVERNANCE
 * retention without `opts.bypassGovernance`. Delete markers carry no lock and always pass.
 * Every permanent removal (DELETE of a version, DeleteObjects with a VersionId, and later
 * expiry and garbage collection) calls this inside its commit. Pure.
 */
export function assertRemovable(version: { lock?: ObjectLock; deleteMarker?: boolean }, opts: LockCheckOptions): void {
  const lock = version.lock;
  if (!lock) return;
  if (lock.legalHold === true) throw new StoreError('AccessDenied', lockedMessage, { detail: { Kind: 'ObjectLocked' } });
  const r = activeRetention(lock, opts.now);
  if (!r) return;
  if (r.mode === 'GOVERNANCE' && opts.bypassGovernance) return;
  throw new StoreError('AccessDenied', lockedMessage, { detail: { Kind: 'ObjectLocked' } });
}

/**
 * Throws StoreError `AccessDenied` when the retention of a version may not go from
 * `current` to `next` (undefined: removed) at `opts.now`:
 * - an active COMPLIANCE retention only moves later and stays COMPLIANCE;
 * - an active GOVERNANCE retention moves later freely; shortening it, removing it or
 *   changing its mode needs `opts.bypassGovernance`;
 * - without an active retention anything goes.
 * `next` is assumed validated (a future time, see {@link checkRetainUntil}). Pure.
 */
export function assertRetentionChange(current: ObjectLock | undefined, next: Retention | undefined, opts: LockCheckOptions): void {
  const cur = activeRetention(current, opts.now);
  if (!cur) return;
  const extendsIt = next !== undefined && next.mode === cur.mode && next.retainUntil >= cur.retainUntil;
  if (extendsIt) return;
  if (cur.mode === 'GOVERNANCE' && opts.bypassGovernance) return;
  throw new StoreError('AccessDenied', lockedMessage, { detail: { Kind: 'ObjectLocked' } });
}

/**
 * Throws StoreError `InvalidArgument` unless `retainUntil` is an integer time after `now`
 * and no later than {@link MAX_RETAIN_UNTIL_MS}. Pure.
 */
export function checkRetainUntil(retainUntil: number, now: number): void {
  if (!Number.isSafeInteger(retainUntil) || retainUntil > MAX_RETAIN_UNTIL_MS) {
    throw new StoreError('InvalidArgument', 'The retain until date is out of range', { detail: { ArgumentName: 'RetainUntilDate' } });
  }
  if (retainUntil <= now) {
    throw new StoreError('InvalidArgument', 'The retain until date must be in the future!', { detail: { ArgumentName: 'RetainUntilDate' } });
  }
}

/** `lock` with the retention replaced (undefined: removed); undefined when nothing is left. Pure. */
export function withRetention(lock: ObjectLock | undefined, next: Retention | undefined): ObjectLock | undefined {
  const out: ObjectLock = {};
  if (next) {
    out.mode = next.mode;
    out.retainUntil = next.retainUntil;
  }
  if (lock?.legalHold !== undefined) out.legalHold = lock.legalHold;
  return out.mode || out.legalHold !== undefined ? out : undefined;
}

/** `lock` with the legal hold set to `on`. Pure. */
export function withLegalHold(lock: ObjectLock | undefined, on: boolean): ObjectLock {
  const out: ObjectLock = {};
  if (lock?.mode && lock.retainUntil !== undefined) {
    out.mode = lock.mode;
    out.retainUntil = lock.retainUntil;
  }
  out.legalHold = on;
  return out;
}

// Record form (ObjectVersion flag 32): u8 bits (1 retention, 2 legal hold set, 4 legal hold
// ON); with a retention, u8 mode (index in LOCK_MODES) and varint retain-until (ms).
const BIT_RETENTION = 1;
const BIT_HOLD_SET = 2;
const BIT_HOLD_ON = 4;
const KNOWN_BITS = BIT_RETENTION | BIT_HOLD_SET | BIT_HOLD_ON;

/** Appends the record form of `lock` to `w`. Throws RangeError for a half retention. */
export function writeObjectLock(w: ByteWriter, lock: ObjectLock): void {
  const retention = lock.mode !== undefined || lock.retainUntil !== undefined;
  if (retention && (lock.mode === undefined || lock.retainUntil === undefined)) throw new RangeError('object lock: mode and retainUntil go together');
  const bits = (retention ? BIT_RETENTION : 0) | (lock.legalHold !== undefined ? BIT_HOLD_SET : 0) | (lock.legalHold ? BIT_HOLD_ON : 0);
  w.u8(bits);
  if (retention) w.u8(LOCK_MODES.indexOf(lock.mode!)).varint(lock.retainUntil!);
}

/** Reads the record form written by {@link writeObjectLock}; StoreError 'Corrupt' when malformed. */
export function readObjectLock(r: ByteReader): ObjectLock {
  const bits = r.u8();
  if (bits & ~KNOWN_BITS || (bits & BIT_HOLD_ON && !(bits & BIT_HOLD_SET))) throw new StoreError('Corrupt', `object lock: bits ${bits}`);
  const lock: ObjectLock = {};
  if (bits & BIT_RETENTION) {
    const mode = LOCK_MODES[r.u8()];
    if (!mode) throw new StoreError('Corrupt', 'object lock: unknown mode');
    lock.mode = mode;
    lock.retainUntil = r.varint();
  }
  if (bits & BIT_HOLD_SET) lock.legalHold = (bits & BIT_HOLD_ON) !== 0;
  return lock;
}

/** Standalone record form (tests, upload records). */
export function encodeObjectLock(lock: ObjectLock): Uint8Array {
  const w = new ByteWriter(16);
  writeObjectLock(w, lock);
  return w.finish();
}

export function decodeObjectLock(bytes: Uint8Array): ObjectLock {
  const r = new ByteReader(bytes, 'object lock');
  const lock = readObjectLock(r);
  r.end();
  return lock;
}
