/**
 * @module The anchor: the one mutable blob, naming the newest commit and checkpoint.
 *
 * It is small JSON (operators can read it) with a SHA-256 `check` over its canonical
 * content, and it only ever moves by compare-and-swap (`ifMatch` the etag read or written
 * last). Nothing is acknowledged before the anchor names a commit that covers it.
 */
import { createHash } from 'node:crypto';
import type { RecordRef } from './commit.js';
import { StoreError } from './errors.js';
import { keyedLogSegment } from './layout.js';

export const FORMAT = 'strata-repository/1';
/**
 * What an anchor says as its format when its `log` names a segment of keyed frames
 * (commit-log/frame.ts): versions before keyed frames find no frame they can read in such a
 * segment and would take the anchor's head for the newest commit, dropping the acknowledged
 * commits appended after it. They refuse this format ('UnsupportedFormat') instead. Such an
 * anchor also names the frame keys' id (`frameKeyId`), so that a config whose secret was
 * damaged or swapped is refused rather than taken for a log with no frames after the anchor.
 */
export const FORMAT_KEYED_LOG = 'strata-repository/2';
/** The anchor is tiny; anything larger is not ours and is refused before parsing. */
export const MAX_ANCHOR_BYTES = 64 * 1024;

export interface Anchor {
  /** The repository format; the bytes say FORMAT_KEYED_LOG instead when `log` names a segment
   * of keyed frames (encodeAnchor decides from `log`). */
  format: typeof FORMAT;
  /** Sequence of the newest commit (0: none yet). */
  seq: number;
  /** The newest commit; absent before the first commit. */
  head?: RecordRef;
  /** The newest checkpoint and the sequence it covers. */
  root: RecordRef & { seq: number };
  /** Time of the last move, ms: the wall clock, or the newest commit's time if that is later. */
  time: number;
  /** Random id of the process that wrote it. */
  writer: string;
  /**
   * With a commit log (commit-log/): the segment and byte offset right after `head`'s frame.
   * Commits appended after it are found by scanning forward from there (commit-log/scan.ts).
   */
  log?: AnchorLog;
  /** With `log` naming a segment of keyed frames (and only then): the id of the frame keys
   * (commit-log/frame.ts FrameKey.id), which readers check their config's keys against. */
  frameKeyId?: string;
}

/** Whether an anchor's `log` names a segment of keyed frames (FORMAT_KEYED_LOG, frameKeyId). */
export function namesKeyedLog(a: { log?: AnchorLog | undefined }): boolean {
  return !!a.log && keyedLogSegment(a.log.key);
}

/** A position in the commit log: segment blob key and byte offset in it. */
export interface AnchorLog {
  key: string;
  offset: number;
}

/** The format an anchor's bytes carry (FORMAT_KEYED_LOG). */
function writtenFormat(a: Anchor): string {
  return namesKeyedLog(a) ? FORMAT_KEYED_LOG : a.format;
}

function canonical(a: Anchor): string {
  const fields: Record<string, unknown> = { format: writtenFormat(a), seq: a.seq, head: a.head ?? null, root: a.root, time: a.time, writer: a.writer };
  // Only when present, so anchors written before the commit log keep their check digest.
  if (a.log) fields.log = { key: a.log.key, offset: a.log.offset };
  if (namesKeyedLog(a)) fields.frameKey = a.frameKeyId;
  return JSON.stringify(fields);
}

/** Encodes `a`; throws RangeError for an anchor naming a keyed segment without frameKeyId. */
export function encodeAnchor(a: Anchor): Uint8Array {
  if (namesKeyedLog(a) && !isKeyId(a.frameKeyId)) throw new RangeError(`anchor naming ${a.log!.key} needs the frame keys' id`);
  const body = canonical(a);
  const check = createHash('sha256').update(body).digest('hex');
  return new TextEncoder().encode(`${body.slice(0, -1)},"check":"${check}"}\n`);
}

/** Parses and checks an anchor; throws StoreError 'Corrupt' / 'UnsupportedFormat'. */
export function decodeAnchor(bytes: Uint8Array): Anchor {
  if (bytes.length > MAX_ANCHOR_BYTES) throw new StoreError('Corrupt', `anchor is ${bytes.length} bytes`);
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as Record<string, unknown>;
  } catch (cause) {
    throw new StoreError('Corrupt', 'anchor is not valid JSON', { cause });
  }
  if (raw.format !== FORMAT && raw.format !== FORMAT_KEYED_LOG) {
    throw new StoreError('UnsupportedFormat', `anchor format ${String(raw.format)} is neither ${FORMAT} nor ${FORMAT_KEYED_LOG}`);
  }
  const a: Anchor = {
    format: FORMAT,
    seq: raw.seq as number,
    root: raw.root as Anchor['root'],
    time: raw.time as number,
    writer: raw.writer as string,
  };
  if (raw.head) a.head = raw.head as RecordRef;
  if (raw.log !== undefined) a.log = raw.log as AnchorLog;
  if (raw.format === FORMAT_KEYED_LOG) a.frameKeyId = raw.frameKey as string;
  const valid =
    Number.isSafeInteger(a.seq) && a.seq >= 0 && isRef(a.root) && Number.isSafeInteger(a.root.seq) &&
    (a.head === undefined || isRef(a.head)) && typeof a.writer === 'string' && Number.isFinite(a.time) &&
    (a.log === undefined || isLog(a.log)) && (raw.format !== FORMAT_KEYED_LOG || isKeyId(a.frameKeyId));
  if (!valid) throw new StoreError('Corrupt', 'anchor fields are malformed');
  if (raw.format !== writtenFormat(a)) throw new StoreError('Corrupt', `anchor format ${String(raw.format)} does not fit its log segment ${a.log?.key ?? '(none)'}`);
  if (createHash('sha256').update(canonical(a)).digest('hex') !== raw.check) {
    throw new StoreError('Corrupt', 'anchor check digest does not match its content');
  }
  return a;
}

/** Whether `a` and `b` name the same record (both absent counts as the same). Pure. */
export function sameRef(a: RecordRef | undefined, b: RecordRef | undefined): boolean {
  if (!a || !b) return a === b;
  return a.key === b.key && a.offset === b.offset && a.length === b.length && a.hash === b.hash;
}

/**
 * Whether two anchors are the same in every field (format, sequence, head, root and the
 * sequence it covers, time, writer, log position, frame keys' id): how a writer recognises its
 * own write read back. Pure.
 */
export function sameAnchor(a: Anchor, b: Anchor): boolean {
  return (
    a.format === b.format && a.seq === b.seq && sameRef(a.head, b.head) && sameRef(a.root, b.root) &&
    a.root.seq === b.root.seq && a.time === b.time && a.writer === b.writer &&
    a.log?.key === b.log?.key && a.log?.offset === b.log?.offset && a.frameKeyId === b.frameKeyId
  );
}

const isKeyId = (x: unknown): x is string => typeof x === 'string' && /^[0-9a-f]{16}$/.test(x);

function isLog(l: unknown): l is AnchorLog {
  const x = l as AnchorLog;
  return !!x && typeof x.key === 'string' && x.key.startsWith('log/') && Number.isSafeInteger(x.offset) && x.offset >= 0;
}

function isRef(r: unknown): r is RecordRef {
  const x = r as RecordRef;
  return (
    !!x && typeof x.key === 'string' && Number.isSafeInteger(x.offset) && Number.isSafeInteger(x.length) &&
    typeof x.hash === 'string' && /^[0-9a-f]{64}$/.test(x.hash)
  );
}
