/**
 * @module Writes in flight when the server was killed: each either happened whole or not at
 * all. The test sends them on distinct keys without waiting, kills the server, and after the
 * reopen resolves each against what the server lists for its key: the model without the
 * write, or the model with it (a new version or marker taking the id the server shows).
 * Anything else — half a write, a lost acknowledged version — is a failure.
 */
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Probe } from './client.js';
import { Mismatch } from './driver.js';
import { NULL_ID, type BucketModel, type ListedEntry, type World } from './model.js';
import { bodyOf, contentOf, describeOp, type Op } from './ops.js';

/** The writes that can be in flight: one per key. */
export type PendingOp = Extract<Op, { t: 'put' } | { t: 'delete' } | { t: 'deleteVersion' }>;

/** Picks up to `n` in-flight writes on distinct (bucket, key) pairs (ids from the model for version deletes). */
export function pendingOps(next: () => number, world: World, keys: readonly string[], n: number, serial: number): PendingOp[] {
  const free = [...world.keys()].flatMap((bucket) => keys.map((key) => ({ bucket, key })));
  const out: PendingOp[] = [];
  for (let i = 0; i < n && free.length > 0; i++) {
    const { bucket, key } = free.splice(next() % free.length, 1)[0]!;
    const r = next() % 10;
    const own = world.get(bucket)!.versionsOf(key);
    if (r < 6) out.push({ bucket, t: 'put', key, content: contentOf(next(), 1 + (next() % 2000)), meta: `k${serial}.${i}` });
    else if (r < 8 || own.length === 0) out.push({ bucket, t: 'delete', key });
    else out.push({ bucket, t: 'deleteVersion', key, id: own[next() % own.length]!.id });
  }
  return out;
}

/** Sends `op` and forgets it (the server is about to be killed). */
export function fire(p: Probe, op: PendingOp): Promise<unknown> {
  const bucket = op.bucket;
  const cmd =
    op.t === 'put'
      ? new PutObjectCommand({ Bucket: bucket, Key: op.key, Body: bodyOf(op.content), Metadata: { model: op.meta } })
      : new DeleteObjectCommand({ Bucket: bucket, Key: op.key, ...(op.t === 'deleteVersion' ? { VersionId: op.id } : {}) });
  return p.sdk.send(cmd as never).catch(() => undefined);
}

function show(entries: readonly ListedEntry[]): string {
  return JSON.stringify(entries.map((e) => `${e.marker ? 'M' : 'V'} ${e.id}${e.isLatest ? ' latest' : ''}${e.etag ? ` ${e.etag}/${e.size}` : ''}`));
}

/**
 * Settles `op` in `m` from `listed` (the server's full version listing after the reopen):
 * leaves `m` as it is when the write did not happen, applies it when it did. Returns whether
 * it happened; throws Mismatch when the key matches neither.
 */
export function resolvePending(m: BucketModel, op: PendingOp, listed: readonly ListedEntry[]): boolean {
  const observed = listed.filter((e) => e.key === op.key);
  const before = m.listVersions().filter((e) => e.key === op.key);
  if (show(observed) === show(before)) return false;
  const after = m.clone();
  const top = observed[0];
  try {
    if (op.t === 'put') after.write(op.key, op.content, op.meta, top?.id ?? NULL_ID);
    else if (op.t === 'delete') after.deleteKey(op.key, after.versioning === 'Unversioned' ? undefined : top?.id);
    else after.deleteVersion(op.key, op.id);
  } catch (err) {
    throw new Mismatch(`in-flight ${describeOp(op)}: the server shows ${show(observed)}, which no outcome explains (${(err as Error).message})`);
  }
  const applied = after.listVersions().filter((e) => e.key === op.key);
  if (show(observed) !== show(applied)) {
    throw new Mismatch(`in-flight ${describeOp(op)}: the server shows ${show(observed)}; without the write ${show(before)}, with it ${show(applied)}`);
  }
  if (op.t === 'put') m.write(op.key, op.content, op.meta, top?.id ?? NULL_ID);
  else if (op.t === 'delete') m.deleteKey(op.key, m.versioning === 'Unversioned' ? undefined : top?.id);
  else m.deleteVersion(op.key, op.id);
  return true;
}
