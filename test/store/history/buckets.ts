/**
 * @module Bucket-level operations of the model-based history test: forks and bucket deletion.
 *
 *   - fork: CreateBucket with `x-strata-fork-source: SRC` (signed). The fork starts as SRC is
 *     now — every version, delete marker and id, and SRC's versioning state — and from then on
 *     the two are independent: the model clones SRC's bucket.
 *   - fork as of a time: `SRC@<time>` of a timeline snapshot. The fork starts with SRC's
 *     versions as ListObjectVersions showed them then (same ids; versions removed since are
 *     back, writes made since are not) and SRC's settings of now (its versioning state).
 *   - drop: S3's strict way to delete a bucket: while any version or delete marker is left,
 *     DeleteBucket is 409 BucketNotEmpty (history S3 does not show — unversioned deletes,
 *     versions removed by id, replaced nulls — does not count); every version and marker is
 *     removed with DeleteObjects by VersionId, then DeleteBucket succeeds and the bucket is
 *     gone. Forks of it (and what they share with it) must stay whole: the next full
 *     comparison reads them.
 */
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, DeleteObjectsCommand, HeadBucketCommand, type DeleteObjectsOutput } from '@aws-sdk/client-s3';
import type { Probe } from './client.js';
import { walkVersions } from './check.js';
import { expectEq, Mismatch } from './driver.js';
import { BucketModel, type ListedEntry, type World } from './model.js';
import type { Timeline } from './timeline.js';

/** Most keys one DeleteObjects may name (S3's limit). */
const DELETE_BATCH = 1000;

/** A fork (of the source now, or as of `at`: a snapshot time) or a bucket deletion. */
export type BucketOp = { t: 'fork'; bucket: string; source: string; at?: number } | { t: 'drop'; bucket: string };

export function describeBucketOp(op: BucketOp): string {
  if (op.t === 'drop') return `${op.bucket}: DROP (every version, then DeleteBucket)`;
  return `${op.bucket}: FORK of ${op.source}${op.at !== undefined ? ` as of ${new Date(op.at).toISOString()}` : ''}`;
}

/** Applies `op` to the server and to `world` (and records a fork's creation in `timeline`). */
export async function applyBucketOp(p: Probe, world: World, timeline: Timeline, op: BucketOp): Promise<void> {
  if (op.t === 'fork') {
    const source = world.get(op.source)!;
    const header = op.at === undefined ? op.source : `${op.source}@${new Date(op.at).toISOString()}`;
    timeline.created.set(op.bucket, Date.now());
    const a = await p.callWith(new CreateBucketCommand({ Bucket: op.bucket }), { headers: { 'x-strata-fork-source': header } });
    expectEq(`fork status (${a.code ?? 'ok'})`, a.status, 200);
    if (op.at === undefined) {
      world.set(op.bucket, source.clone(op.bucket));
      return;
    }
    const then = timeline.snapshots.find((s) => s.time === op.at)!.buckets.get(op.source)!;
    const fork = new BucketModel(op.bucket);
    fork.versioning = source.versioning;
    for (const id of source.ids) fork.ids.add(id);
    // The fork's versions are its own from now on (tags set later on the source stay there).
    for (const [key, vs] of then.keys) fork.keys.set(key, vs.map((v) => ({ ...v })));
    world.set(op.bucket, fork);
    return;
  }
  const m = world.get(op.bucket)!;
  if (m.listVersions().length > 0) {
    const refused = await p.call(new DeleteBucketCommand({ Bucket: op.bucket }));
    expectEq('DeleteBucket of a bucket with versions', [refused.status, refused.code], [409, 'BucketNotEmpty']);
  }
  const all = (await walkVersions(p, op.bucket, 1000)) as ListedEntry[];
  // A key XML 1.0 cannot carry cannot be named in a DeleteObjects body: one DELETE each.
  const xmlUnsafe = (k: string) => /[\x00-\x08\x0B\x0C\x0E-\x1F]/.test(k);
  for (const e of all.filter((x) => xmlUnsafe(x.key))) {
    const a = await p.call(new DeleteObjectCommand({ Bucket: op.bucket, Key: e.key, VersionId: e.id }));
    expectEq('DELETE ?versionId status', a.status, 204);
  }
  const listed = all.filter((x) => !xmlUnsafe(x.key));
  for (let i = 0; i < listed.length; i += DELETE_BATCH) {
    const batch = listed.slice(i, i + DELETE_BATCH);
    const a = await p.call<DeleteObjectsOutput>(
      new DeleteObjectsCommand({ Bucket: op.bucket, Delete: { Objects: batch.map((e) => ({ Key: e.key, VersionId: e.id })), Quiet: true } })
    );
    expectEq('DeleteObjects status', a.status, 200);
    expectEq('DeleteObjects errors', a.out!.Errors ?? [], []);
  }
  const left = await walkVersions(p, op.bucket, 1000);
  if (left.length > 0) throw new Mismatch(`versions left after removing every one: ${JSON.stringify(left)}`);
  const del = await p.call(new DeleteBucketCommand({ Bucket: op.bucket }));
  expectEq(`DeleteBucket status (${del.code ?? 'ok'})`, del.status, 204);
  const head = await p.call(new HeadBucketCommand({ Bucket: op.bucket }));
  expectEq('HeadBucket after DeleteBucket', head.status, 404);
  world.delete(op.bucket);
}
