/**
 * @module Restoring a bucket, or the keys under a prefix, to what they were at a past time —
 * as new writes, so the restore is itself history (readable, and restorable, as of any time
 * before or after it) and nothing is lost.
 *
 * For each key (past-scan.ts gives its state then and now):
 *   - it existed then as version V, and now it does not, or is not V: a new version of the
 *     key whose record is V's (same body blobs or pack entries, same metadata, checksums,
 *     tags, owner and encryption envelope — an SSE-C object needs no customer key, nothing is
 *     decrypted or copied), with a new id, the restore's time as Last-Modified, and the
 *     bucket's default Object Lock retention (if any) as any new version gets;
 *   - it did not exist then (not yet written, deleted, behind a delete marker) and exists
 *     now: deleted as a DELETE would (a delete marker in a bucket whose versioning was ever
 *     enabled, else the key's removal);
 *   - otherwise it is left alone: no write at all.
 * "Is V" compares content (the record without its id, log position and time), so a key that
 * an earlier restore (or an interrupted run of this one) already brought back is unchanged:
 * running a restore again, whole or from where it stopped, converges to the same state and
 * writes nothing more. That is how an interrupted restore is resumed (see the kill test).
 *
 * Keys are written BATCH_KEYS per commit, each commit re-checking each key's present state
 * inside its transaction (a write that raced the scan wins or is overwritten, never merged);
 * progress is reported after every commit. A dry run reports what would be done and writes
 * nothing. Cost: one pass over the version log under the prefix (past-scan.ts), plus one
 * namespace lookup and one log entry per key changed.
 */
import type { Repository } from './repository.js';
import type { Tx } from './tx.js';
import { encodeVersion, type ObjectVersion } from './records.js';
import { pastAndNow, type KeyPastAndNow } from './past-scan.js';
import { checkReadableTime } from './history-window.js';
import { requireBucketState, s3VersionId } from './versions-read.js';
import { currentRecord, stageDelete, stageVersion } from './versions-write.js';
import { StoreError } from './errors.js';
import { BudgetHold } from './budget.js';

/**
 * Memory a planned key holds until its batch commits, relative to its encoded record: the
 * decoded record, and the copy the commit record and the version log entry make of it.
 */
const PLAN_RECORD_FACTOR = 4;
/** Fixed cost of one planned key (the plan object, its key string), bytes. */
const PLAN_OVERHEAD = 128;
import { MAX_KEY_BYTES } from './validate.js';
import { decodeLockConfig, OBJECT_LOCK_CONFIG, resolveLock } from './object-lock-config.js';

/** Keys written per commit: a commit record of ~1000 versions is ~200 KiB, one write. */
export const BATCH_KEYS = 1000;
/** Changes listed in a result (every change is counted; a dry run of millions lists these). */
export const MAX_LISTED_CHANGES = 1000;

export interface RestoreOptions {
  /** The time to restore to, ms; inside the bucket's history window. */
  to: number;
  /** Only keys starting with this (default: all). */
  prefix?: string;
  /** Report, do not write. */
  dryRun?: boolean;
  /** Start after this key (a `next` of an earlier call). */
  after?: string;
  /** Stop after examining this many keys and return `next` (default: no limit). */
  maxKeys?: number;
  /** Keys per commit (default BATCH_KEYS). */
  batchKeys?: number;
  /** Called after every commit (and at the end) with the totals so far. */
  onProgress?: (p: RestoreProgress) => void;
}

export interface RestoreProgress {
  /** Keys examined. */
  scanned: number;
  /** Keys given back their version of then (or, in a dry run, that would be). */
  restored: number;
  /** Keys deleted (or that would be). */
  deleted: number;
  /** Keys examined and left alone. */
  unchanged: number;
  /** Commits written. */
  commits: number;
  /** The last key examined. */
  last?: string;
}

export interface RestoreChange {
  key: string;
  action: 'restore' | 'delete';
  /** restore: the S3 id of the version brought back (its id then). */
  from?: string;
  /** The id of the new version or delete marker (not in a dry run; absent for an unversioned delete). */
  versionId?: string;
}

export interface RestoreResult extends RestoreProgress {
  bucket: string;
  to: number;
  prefix: string;
  dryRun: boolean;
  /** The first MAX_LISTED_CHANGES changes, in key order. */
  changes: RestoreChange[];
  /** Set when stopped by maxKeys: pass it as `after` to go on. */
  next?: string;
}

/** What a key must become, when it must change. */
type Plan = { key: string; want?: ObjectVersion; from?: string };

/**
 * The record without what every write of it differs in: id, log position, time — and its
 * Object Lock, which belongs to the version (a restored version gets the bucket's default,
 * as any new version does), not to the object's content.
 */
function contentOf(v: ObjectVersion): Uint8Array {
  const { logId: _logId, lock: _lock, ...rest } = v;
  return encodeVersion({ ...rest, versionId: '', lastModified: 0 });
}

/** Whether `a` and `b` are the same object (body, metadata, tags, owner, encryption). */
export function sameContent(a: ObjectVersion, b: ObjectVersion): boolean {
  return Buffer.from(contentOf(a)).equals(contentOf(b));
}

const exists = (v: ObjectVersion | undefined): v is ObjectVersion => v !== undefined && !v.deleteMarker;

/** What `k` needs, or undefined when its present state already is its past one. */
function planOf(k: KeyPastAndNow): Plan | undefined {
  const past = k.past?.record;
  const now = k.now?.record;
  if (k.past && k.now && k.past.position.seq === k.now.position.seq && k.past.position.index === k.now.position.index) return undefined;
  if (!exists(past)) return exists(now) ? { key: k.key } : undefined;
  if (exists(now) && sameContent(now, past)) return undefined;
  return { key: k.key, want: past, from: s3VersionId({ ...k.past!.entry, record: past }) };
}

/**
 * Restores `bucket` (the keys under opts.prefix) to its state at opts.to (see the module
 * note). Mutates the bucket through ordinary commits (none for a dry run). Throws StoreError
 * 'NoSuchBucket' (also when the bucket is deleted, or deleted and created again, midway),
 * 'InvalidArgument' (a time outside the history window, a prefix or `after` longer than a
 * key), and what reading the log or committing throws — commits made before a failure stay,
 * and running the restore again completes it.
 */
export async function restoreBucket(repo: Repository, bucket: string, opts: RestoreOptions): Promise<RestoreResult> {
  const b = requireBucketState(repo, bucket);
  const prefix = opts.prefix ?? '';
  for (const [name, v] of [['prefix', prefix], ['after', opts.after ?? '']] as const) {
    if (Buffer.byteLength(v, 'utf8') > MAX_KEY_BYTES) throw new StoreError('InvalidArgument', `the restore ${name} is longer than a key can be (${MAX_KEY_BYTES} bytes)`, { detail: { ArgumentName: name, ArgumentValue: v.slice(0, 64) } });
  }
  checkReadableTime(repo, b, opts.to, 'restore time');
  const batchKeys = opts.batchKeys ?? BATCH_KEYS;
  if (!Number.isInteger(batchKeys) || batchKeys < 1) throw new RangeError(`batchKeys must be a positive integer, not ${batchKeys}`);
  if (opts.maxKeys !== undefined && (!Number.isInteger(opts.maxKeys) || opts.maxKeys < 1)) throw new RangeError(`maxKeys must be a positive integer, not ${opts.maxKeys}`);
  const result: RestoreResult = { bucket, to: opts.to, prefix, dryRun: opts.dryRun === true, changes: [], scanned: 0, restored: 0, deleted: 0, unchanged: 0, commits: 0 };
  const note = (c: RestoreChange) => {
    if (result.changes.length < MAX_LISTED_CHANGES) result.changes.push(c);
  };
  const progress = () => opts.onProgress?.({ scanned: result.scanned, restored: result.restored, deleted: result.deleted, unchanged: result.unchanged, commits: result.commits, ...(result.last !== undefined ? { last: result.last } : {}) });
  let pending: Plan[] = [];
  // The batch in the making is charged to the pending budget; short of room, it is committed
  // early (which releases it) and the plan is charged again (SlowDown if it still does not fit).
  const hold = new BudgetHold(repo.budget);
  const charge = async (p: Plan) => {
    const bytes = PLAN_OVERHEAD + Buffer.byteLength(p.key) + (p.want ? encodeVersion(p.want).length * PLAN_RECORD_FACTOR : 0);
    if (hold.tryAdd(bytes)) return;
    await flush();
    hold.add(bytes);
  };
  const flush = async () => {
    if (pending.length === 0) return;
    const plans = pending;
    pending = [];
    try {
      await commitPlans(plans);
    } finally {
      hold.release();
    }
  };
  const commitPlans = async (plans: Plan[]) => {
    if (opts.dryRun) {
      for (const p of plans) {
        note({ key: p.key, action: p.want ? 'restore' : 'delete', ...(p.from !== undefined ? { from: p.from } : {}) });
        p.want ? result.restored++ : result.deleted++;
      }
      progress();
      return;
    }
    const outcome = await repo.run((tx) => stageRestores(tx, bucket, b.id, plans));
    for (const o of outcome) {
      if (!o.change) result.unchanged++;
      else {
        note(o.change);
        o.change.action === 'restore' ? result.restored++ : result.deleted++;
      }
    }
    if (outcome.some((o) => o.change)) result.commits++;
    progress();
  };
  const after = opts.after !== undefined && opts.after !== '' ? opts.after : undefined;
  try {
    for await (const k of pastAndNow(b, opts.to, { prefix, ...(after !== undefined ? { after } : {}) })) {
      if (opts.maxKeys !== undefined && result.scanned >= opts.maxKeys) {
        result.next = result.last!;
        break;
      }
      result.scanned++;
      result.last = k.key;
      const plan = planOf(k);
      if (!plan) result.unchanged++;
      else {
        await charge(plan);
        pending.push(plan);
      }
      if (pending.length >= batchKeys) await flush();
    }
    await flush();
  } finally {
    hold.release();
  }
  progress();
  return result;
}

/**
 * Stages `plans` in one transaction: each key's present state is read again (staged writes
 * included) and changed only if it still differs from the state wanted. Throws StoreError
 * 'NoSuchBucket' when the bucket is gone or is another bucket by now (id `id`).
 */
async function stageRestores(tx: Tx, bucket: string, id: string, plans: Plan[]): Promise<{ change?: RestoreChange }[]> {
  if (tx.requireBucket(bucket).id !== id) {
    throw new StoreError('NoSuchBucket', `bucket ${bucket} was deleted (and created again) during the restore`, { detail: { BucketName: bucket } });
  }
  const lockConfig = tx.config(bucket, OBJECT_LOCK_CONFIG);
  const defaultRule = lockConfig ? decodeLockConfig(lockConfig).rule : undefined;
  const out: { change?: RestoreChange }[] = [];
  for (const p of plans) {
    const cur = await currentRecord(tx, bucket, p.key);
    if (!p.want) {
      if (!exists(cur)) {
        out.push({});
        continue;
      }
      const d = await stageDelete(tx, bucket, p.key);
      out.push({ change: { key: p.key, action: 'delete', ...(d.marker ? { versionId: d.marker.versionId } : {}) } });
      continue;
    }
    if (exists(cur) && sameContent(cur, p.want)) {
      out.push({});
      continue;
    }
    // The record as it was, shared body and all: only its id, position and time are new, and
    // its lock is the bucket's default retention from now, as for any new version (the old
    // version keeps its own; a restore neither extends nor carries over a retention).
    const { logId: _logId, lock: _lock, ...record } = p.want;
    const copy: ObjectVersion = { ...record, versionId: '', lastModified: tx.time };
    const lock = resolveLock(defaultRule ? { defaultRule } : undefined, tx.time);
    if (lock) copy.lock = lock;
    const ids = stageVersion(tx, bucket, p.key, copy);
    out.push({ change: { key: p.key, action: 'restore', ...(p.from !== undefined ? { from: p.from } : {}), versionId: ids.versionId } });
  }
  return out;
}
