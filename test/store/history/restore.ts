/**
 * @module A restore in the model-based history test: `POST /_strata/admin/v1/buckets/{b}/restore`
 * to a snapshot's time (optionally under a prefix), checked against what the model says a
 * restore to that moment must do, then applied to the model.
 *
 * Expected, per key under the prefix (the issue: "restore a bucket or a prefix to a time as
 * new commits; nothing is lost; other keys untouched"): a key live then as version V and not
 * V now (by content: ETag, size, metadata, tags) gets a new version that is V again; a key
 * not live then (never written, deleted, behind a marker) and live now is deleted as a DELETE
 * does (a marker once versioning was ever enabled); anything else is left alone. The ids of
 * the new writes are the server's, from the restore's answer.
 */
import { adminRequest } from '../../../src/admin/client.js';
import { ACCESS_KEY, SECRET_KEY } from '../../integration/harness.js';
import type { Probe } from './client.js';
import { expectEq, Mismatch } from './driver.js';
import { compareUtf8, NULL_ID, type BucketModel, type MVersion } from './model.js';
import { liveAt, type BucketSnapshot } from './timeline.js';

export interface RestoreOp {
  bucket: string;
  /** The snapshot's time, ms. */
  to: number;
  prefix: string;
}

interface RestoreAnswer {
  restored: number;
  deleted: number;
  changes: { key: string; action: 'restore' | 'delete'; from?: string; versionId?: string }[];
  next?: string;
}

const sameContent = (a: MVersion, b: MVersion) => a.etag === b.etag && a.content!.size === b.content!.size && a.meta === b.meta && a.tag === b.tag;

/** Restores `op.bucket` to `then` (the model's snapshot at op.to); checks and applies the result. */
export async function applyRestore(p: Probe, m: BucketModel, op: RestoreOp, then: BucketSnapshot): Promise<void> {
  const expected: { key: string; action: 'restore' | 'delete'; from?: MVersion }[] = [];
  const keys = [...new Set([...then.keys.keys(), ...m.keys.keys()])].filter((k) => k.startsWith(op.prefix)).sort(compareUtf8);
  for (const key of keys) {
    const was = liveAt(then, key);
    const latest = m.latest(key);
    const is = latest && !latest.marker ? latest : undefined;
    if (was && !(is && sameContent(is, was))) expected.push({ key, action: 'restore', from: was });
    else if (!was && is) expected.push({ key, action: 'delete' });
  }
  const body = { to: new Date(op.to).toISOString(), ...(op.prefix ? { prefix: op.prefix } : {}) };
  let res: RestoreAnswer;
  try {
    res = (await adminRequest({ endpoint: p.endpoint, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } }, 'POST', ['buckets', m.name, 'restore'], body)) as RestoreAnswer;
  } catch (err) {
    throw new Mismatch(`restore ${JSON.stringify(body)} failed: ${(err as Error).message}`);
  }
  if (res.next !== undefined) throw new Mismatch(`restore of a few keys answered next=${res.next}`);
  const got = [...res.changes].sort((a, b) => compareUtf8(a.key, b.key));
  expectEq(`restore ${JSON.stringify(body)}: changes`, got.map((c) => `${c.action} ${c.key}${c.from ? ` from ${c.from}` : ''}`), expected.map((e) => `${e.action} ${e.key}${e.from ? ` from ${e.from.id}` : ''}`));
  expectEq('restored', res.restored, expected.filter((e) => e.action === 'restore').length);
  expectEq('deleted', res.deleted, expected.filter((e) => e.action === 'delete').length);
  for (const [i, e] of expected.entries()) {
    const c = got[i]!;
    if (e.action === 'restore') {
      const v = e.from!;
      m.write(e.key, v.content!, v.meta!, c.versionId ?? NULL_ID, v.etag, v.tag);
    } else {
      m.deleteKey(e.key, m.versioning === 'Unversioned' ? undefined : c.versionId ?? (m.versioning === 'Suspended' ? NULL_ID : undefined));
    }
  }
}
