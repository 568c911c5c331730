/**
 * @module The key layout of a bucket's uploads keyspace (its own overlay and runs, beside
 * the object index), and upload ids.
 *
 *   u <key> NUL NUL <T> <id>                 upload in progress -> UploadRecord
 *   u <key> NUL NUL <T> <id> NUL <nnnn>      its part nnnn      -> PartRecord
 *   c <key> NUL NUL <T> <id>                 completed upload   -> CompletionRecord
 *   t <time> u <T> <id>                      expiry queue: upload initiated at <time>
 *   t <time> c <T> <id>                      expiry queue: upload completed at <time>
 *
 * <key> is the object key with each NUL written NUL 0x01, so `<key> NUL NUL` sorts exactly as
 * the key does (and a key sorts before its extensions); <T> is the initiation time, 12 hex
 * digits of milliseconds; <nnnn> the part number in 4 hex digits; queue values are the object
 * key's UTF-8. So ListMultipartUploads (key, then initiation) and ListParts (part number) are
 * a seek and a scan, a part follows its upload record (compaction drops the parts of an ended
 * upload as it streams past), and the expiry sweep reads only the queue up to its cutoff.
 * An empty value is a deletion (no record of any kind is empty).
 *
 * Upload ids made here are <T> followed by 32 random hex digits (44 characters), so the
 * record's key follows from (key, id). Uploads created before the uploads keyspace carry
 * 32-hex ids without <T>; their <T> comes from their record (see resolve in upload-index.ts).
 */
import { newId } from './layout.js';

/** An empty value: the entry was deleted (shadows older runs until compaction). */
export const GONE = new Uint8Array(0);

export const isGone = (value: Uint8Array): boolean => value.length === 0;

/** Upload ids of this format: 12 hex digits of initiation time + 32 random hex digits. */
const ID_RE = /^[0-9a-f]{44}$/;
/** Ids of uploads created before the uploads keyspace: 32 random hex digits. */
const LEGACY_ID_RE = /^[0-9a-f]{32}$/;
/** Milliseconds fit 12 hex digits until the year 10889. */
const TIME_DIGITS = 12;
const PART_DIGITS = 4;

export const UPLOAD_PREFIX = 'u';
export const COMPLETION_PREFIX = 'c';
export const QUEUE_PREFIX = 't';

const hexTime = (ms: number) => ms.toString(16).padStart(TIME_DIGITS, '0');

/** A fresh upload id for an upload initiated at `initiated` (ms). */
export function makeUploadId(initiated: number): string {
  return hexTime(initiated) + newId(16);
}

/**
 * What an upload id says about itself: `initiated` for ids made by makeUploadId, 'legacy' for
 * the older random ids (their time is in their record), undefined for anything else (no such
 * upload can exist).
 */
export function parseUploadId(id: string): { initiated: number } | 'legacy' | undefined {
  if (ID_RE.test(id)) return { initiated: parseInt(id.slice(0, TIME_DIGITS), 16) };
  return LEGACY_ID_RE.test(id) ? 'legacy' : undefined;
}

/** The object key in its order-preserving escaped form, terminated (see the module note). */
export function escapeKey(key: string): string {
  return `${key.replace(/\0/g, '\0\x01')}\0\0`;
}

/** The escaped form of a key prefix (no terminator): every escaped key it prefixes starts with it. */
export function escapePrefix(prefix: string): string {
  return prefix.replace(/\0/g, '\0\x01');
}

/** Identifies one upload: its object key, initiation time and id. */
export interface UploadRef {
  key: string;
  initiated: number;
  uploadId: string;
}

const tail = (u: UploadRef) => hexTime(u.initiated) + u.uploadId;

/** Key of the upload's record. */
export function uploadKey(u: UploadRef): string {
  return UPLOAD_PREFIX + escapeKey(u.key) + tail(u);
}

/** Key of part `number` of the upload. */
export function partKey(u: UploadRef, number: number): string {
  return `${uploadKey(u)}\0${number.toString(16).padStart(PART_DIGITS, '0')}`;
}

/** The first key after the upload's record and all of its parts. */
export function afterUpload(u: UploadRef): string {
  return `${uploadKey(u)}\x01`;
}

/** Key of the upload's completion record. */
export function completionKey(u: UploadRef): string {
  return COMPLETION_PREFIX + escapeKey(u.key) + tail(u);
}

/** Key of the expiry queue entry of `kind` ('u' in progress, 'c' completed) due from `time`. */
export function queueKey(kind: 'u' | 'c', time: number, u: UploadRef): string {
  return QUEUE_PREFIX + hexTime(time) + kind + tail(u);
}

/** The first queue key of an entry due strictly after `time`. */
export function queueAfter(time: number): string {
  return QUEUE_PREFIX + hexTime(time + 1);
}

/** An id either is an old-style one, or is made by makeUploadId from the same initiation time. */
function wellFormed(timeHex: string, uploadId: string): boolean {
  return LEGACY_ID_RE.test(uploadId) || (ID_RE.test(uploadId) && uploadId.startsWith(timeHex));
}

/** The parsed form of a `u` or `c` key; `part` for part keys. */
export interface ParsedEntry extends UploadRef {
  part?: number;
}

/**
 * Parses a `u` / `c` key (after its prefix letter) back into key, time, id and part number.
 * Returns undefined for a malformed key (callers treat that as corruption).
 */
export function parseEntryKey(k: string): ParsedEntry | undefined {
  let key = '';
  let i = 1;
  for (;;) {
    const nul = k.indexOf('\0', i);
    if (nul < 0 || nul + 1 >= k.length) return undefined;
    key += k.slice(i, nul);
    const next = k.charCodeAt(nul + 1);
    i = nul + 2;
    if (next === 0) break;
    if (next !== 1) return undefined;
    key += '\0';
  }
  const rest = k.slice(i);
  const sep = rest.indexOf('\0');
  const head = sep < 0 ? rest : rest.slice(0, sep);
  const uploadId = head.slice(TIME_DIGITS);
  if (!/^[0-9a-f]{12}$/.test(head.slice(0, TIME_DIGITS)) || key.length === 0 || !wellFormed(head.slice(0, TIME_DIGITS), uploadId)) return undefined;
  const out: ParsedEntry = { key, initiated: parseInt(head.slice(0, TIME_DIGITS), 16), uploadId };
  if (sep >= 0) {
    const part = rest.slice(sep + 1);
    if (!/^[0-9a-f]{4}$/.test(part)) return undefined;
    out.part = parseInt(part, 16);
  }
  return out;
}

/** A parsed expiry queue key. */
export interface QueueEntry {
  kind: 'u' | 'c';
  /** When the entry became due for the age count: initiation or completion time (ms). */
  time: number;
  initiated: number;
  uploadId: string;
}

/** Parses a `t` key; undefined if malformed. */
export function parseQueueKey(k: string): QueueEntry | undefined {
  const m = /^t([0-9a-f]{12})([uc])([0-9a-f]{12})([0-9a-f]+)$/.exec(k);
  if (!m || !wellFormed(m[3]!, m[4]!)) return undefined;
  return { kind: m[2] as 'u' | 'c', time: parseInt(m[1]!, 16), initiated: parseInt(m[3]!, 16), uploadId: m[4]! };
}
