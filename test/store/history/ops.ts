/**
 * @module The operations of the model-based history test and their seeded generator. An
 * operation names everything it needs (keys, version ids, bodies by seed and size), so a
 * failing sequence prints as data and replays from its seed.
 */
import { randomBytes, randInt } from '../../support/random.js';
import { md5Hex, NULL_ID, type BucketModel, type Content, type World } from './model.js';

/** An operation on bucket `bucket` (a copy reads from `srcBucket`). */
export type Op = { bucket: string } & OpBody;

type OpBody =
  | { t: 'versioning'; status: 'Enabled' | 'Suspended' }
  | { t: 'put'; key: string; content: Content; meta: string }
  /** A one-part multipart upload (CreateMultipartUpload, UploadPart, Complete). */
  | { t: 'mpu'; key: string; content: Content; meta: string }
  /** PutObjectTagging (latest, or by versionId): one tag `t` = value. */
  | { t: 'tag'; key: string; id?: string; value: string }
  /** `replace`: MetadataDirective REPLACE with `meta` (always when copying a key onto itself). */
  | { t: 'copy'; srcBucket: string; src: string; srcId?: string; dst: string; replace: boolean; meta: string }
  | { t: 'delete'; key: string }
  | { t: 'deleteVersion'; key: string; id: string }
  /** DeleteObjects; keys are distinct (S3 does not define the order of one key's entries). */
  | { t: 'deleteObjects'; items: { key: string; id?: string }[] }
  | { t: 'read'; key: string; id?: string; head: boolean };

/**
 * Keys chosen for ordering edges: a key that is a prefix of others ('a' < 'a/' < 'a/b' <
 * 'ab'), spaces and '+', multi-byte UTF-8 (sorted by bytes, not UTF-16 units: U+FF5E sorts
 * before U+1F600 in UTF-16 but after it in UTF-8), a percent sign, and a control character
 * (which forces URL-encoded listings).
 */
export const KEYS = ['a', 'a/', 'a/b', 'a/b/c', 'ab', 'b c+d', 'd/\u00fc\u20ac', 'd/\uff5e', 'd/\ud83d\ude00', 'e%2F..', 'f\u0001g', 'z'];

/** Bodies are small (the log is what is tested); a few cross the pack/carrier threshold. */
export function contentOf(seed: number, size: number): Content {
  return { seed, size, md5: md5Hex(bodyOf({ seed, size })) };
}

export function bodyOf(c: Pick<Content, 'seed' | 'size'>): Buffer {
  return Buffer.from(randomBytes(c.size, c.seed));
}

/** Sizes: mostly tiny, sometimes empty, sometimes tens of KiB; `large` allows ~600 KiB. */
function pickSize(next: () => number, large: boolean): number {
  const r = next() % 100;
  if (r < 6) return 0;
  if (r < 85) return randInt(next, 1, 300);
  if (r < 99 || !large) return randInt(next, 4 * 1024, 40 * 1024);
  return randInt(next, 560 * 1024, 640 * 1024);
}

export interface GenOptions {
  keys?: readonly string[];
  /** Allow bodies over the pack threshold (slower). */
  large?: boolean;
}

/** Every id the model knows for `key`, plus ones it does not have (removed, other keys', `null`). */
function idChoices(model: BucketModel, key: string, next: () => number): string {
  const own = model.versionsOf(key).map((v) => v.id);
  const r = next() % 10;
  if (own.length > 0 && r < 7) return own[next() % own.length]!;
  if (r < 8) return NULL_ID;
  const removed = [...model.removed].filter((x) => x.startsWith(`${key}\0`)).map((x) => x.slice(key.length + 1));
  if (removed.length > 0 && r < 9) return removed[next() % removed.length]!;
  // An id of another key: well formed, but not one of this key's versions.
  const others = [...model.ids];
  return others.length > 0 ? others[next() % others.length]! : NULL_ID;
}

/** The next operation on one of `world`'s buckets (read, not changed). */
export function nextOp(next: () => number, world: World, serial: number, o: GenOptions = {}): Op {
  const names = [...world.keys()];
  const bucket = names[next() % names.length]!;
  return { bucket, ...nextBody(next, world, world.get(bucket)!, serial, o) } as Op;
}

function nextBody(next: () => number, world: World, model: BucketModel, serial: number, o: GenOptions): OpBody {
  const keys = o.keys ?? KEYS;
  const key = keys[next() % keys.length]!;
  const r = next() % 100;
  if (r < 5) return { t: 'versioning', status: next() % 3 === 0 ? 'Suspended' : 'Enabled' };
  if (r < 34) return { t: 'put', key, content: contentOf(next(), pickSize(next, o.large ?? false)), meta: `m${serial}` };
  if (r < 37) return { t: 'mpu', key, content: contentOf(next(), pickSize(next, false)), meta: `u${serial}` };
  if (r < 41) {
    const op: OpBody = { t: 'tag', key, value: `v${serial}` };
    if (next() % 3 !== 0) op.id = idChoices(model, key, next);
    return op;
  }
  if (r < 48) {
    const src = keys[next() % keys.length]!;
    // Half the copies read another bucket (when there is one).
    const names = [...world.keys()];
    const from = next() % 2 === 0 ? model : world.get(names[next() % names.length]!)!;
    const op: OpBody = { t: 'copy', srcBucket: from.name, src, dst: key, replace: (from === model && src === key) || next() % 3 === 0, meta: `c${serial}` };
    if (next() % 2 === 0) op.srcId = idChoices(from, src, next);
    return op;
  }
  if (r < 62) return { t: 'delete', key };
  if (r < 78) return { t: 'deleteVersion', key, id: idChoices(model, key, next) };
  if (r < 83) {
    const n = randInt(next, 1, 4);
    // A key XML 1.0 cannot carry cannot be named in a DeleteObjects body (S3 refuses it too).
    const xmlKeys = keys.filter((k) => !/[\x00-\x08\x0B\x0C\x0E-\x1F]/.test(k));
    const picked = [...new Set(Array.from({ length: n }, () => xmlKeys[next() % xmlKeys.length]!))];
    return { t: 'deleteObjects', items: picked.map((k) => (next() % 2 === 0 ? { key: k, id: idChoices(model, k, next) } : { key: k })) };
  }
  const op: OpBody = { t: 'read', key, head: next() % 3 === 0 };
  if (next() % 2 === 0) op.id = idChoices(model, key, next);
  return op;
}

/** A short description for failure messages. */
export function describeOp(op: Op): string {
  return `${op.bucket}: ${describeBody(op)}`;
}

function describeBody(op: Op): string {
  switch (op.t) {
    case 'put':
      return `PUT ${JSON.stringify(op.key)} (${op.content.size} B, seed ${op.content.seed})`;
    case 'mpu':
      return `MPU ${JSON.stringify(op.key)} (${op.content.size} B, seed ${op.content.seed})`;
    case 'tag':
      return `PutObjectTagging ${JSON.stringify(op.key)}${op.id ? `?versionId=${op.id}` : ''} t=${op.value}`;
    case 'copy':
      return `COPY ${op.srcBucket === op.bucket ? '' : `${op.srcBucket}/`}${JSON.stringify(op.src)}${op.srcId ? `?versionId=${op.srcId}` : ''} -> ${JSON.stringify(op.dst)}${op.replace ? ' REPLACE' : ''}`;
    case 'delete':
      return `DELETE ${JSON.stringify(op.key)}`;
    case 'deleteVersion':
      return `DELETE ${JSON.stringify(op.key)}?versionId=${op.id}`;
    case 'deleteObjects':
      return `DeleteObjects ${JSON.stringify(op.items)}`;
    case 'read':
      return `${op.head ? 'HEAD' : 'GET'} ${JSON.stringify(op.key)}${op.id ? `?versionId=${op.id}` : ''}`;
    case 'versioning':
      return `PutBucketVersioning ${op.status}`;
  }
}
