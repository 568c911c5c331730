/**
 * @module Recovery's forward scan of a commit log segment.
 *
 * The anchor names the log position after the newest commit it knows (its `log`); commits
 * appended after it are found by reading frames forward from there. A frame is taken only if
 * all of these hold, and the scan stops at the first that is not:
 *   - its header parses and its MAC (SHA-256 in segments written before frames were keyed)
 *     covers header and payload (frame.ts): torn writes, preallocated zeros, partial overwrites
 *     and frames a client wrote inside a body fail here;
 *   - its sequence is the previous commit's plus one, and the record inside says so too;
 *   - its record's parent is the previous commit (key, offset, length and hash): a whole frame
 *     left by an earlier attempt at the same position (written, never acknowledged, then
 *     replaced after a failure) does not continue this chain and is never taken.
 * A frame that passes the checksum and chains but whose record does not decode is damage, not
 * an end: StoreError 'Corrupt' (fail closed, never a silently shortened history).
 */
import { getBytes, type Provider } from '../../provider/provider.js';
import { readEntry } from '../../pack/reader.js';
import { ENTRY_HEADER_SIZE } from '../../pack/stream-writer.js';
import { decodeCommit, hashRecord, type CommitRecord, type RecordRef } from '../commit.js';
import { sameRef } from '../anchor.js';
import { StoreError } from '../errors.js';
import { checkFrame, decodeFrameHeader, FRAME_HEADER_BYTES, frameMagic, segmentAuth, type FrameHeader, type FrameKey } from './frame.js';

/** Bytes read at once while scanning: many small frames per read, one frame at most in memory
 * beyond it (a frame larger than this is read on its own). */
const SCAN_WINDOW_BYTES = 1024 * 1024;
const ZEROS = Buffer.alloc(SCAN_WINDOW_BYTES);

/** A position in the log: segment blob key and byte offset in it. */
export interface LogPosition {
  key: string;
  offset: number;
}

export interface ScannedCommit {
  record: CommitRecord;
  ref: RecordRef;
}

export interface ScanResult {
  /** Commits found after `from`, oldest first, each chaining onto the one before. */
  commits: ScannedCommit[];
  /** Position after the last commit taken (`from` when none). */
  end: LogPosition;
}

/**
 * Scans segment `from.key` forward from `from.offset` for commits continuing the chain whose
 * newest commit is `after` (sequence and reference; for the first commit after a root, the
 * root's reference); `frameKey`: the repository's (frame.ts deriveFrameKey). Reads only. Throws
 * StoreError 'MissingBlob' if the segment is gone, 'Corrupt' for a chaining frame whose record
 * does not decode, and provider errors.
 */
export async function scanLog(provider: Provider, from: LogPosition, after: { seq: number; ref: RecordRef }, frameKey: FrameKey | undefined): Promise<ScanResult> {
  const commits: ScannedCommit[] = [];
  let pos = from.offset;
  let seq = after.seq;
  let parent = after.ref;
  for await (const frame of readFrames(provider, from.key, from.offset, frameKey)) {
    if (frame.header.seq !== seq + 1) break;
    const { record, ref } = frameCommit(from.key, frame);
    if (!sameRef(record.parent, parent)) break; // a whole frame of another attempt: not this chain
    commits.push({ record, ref });
    seq = record.seq;
    parent = ref;
    pos = frame.end;
  }
  return { commits, end: { key: from.key, offset: pos } };
}

/** One frame that passed its checksum: where it is, its header and its payload (a pack image). */
export interface ReadFrame {
  at: number;
  end: number;
  header: FrameHeader;
  payload: Uint8Array;
}

/**
 * The frames of segment `key` from byte `from` on, in order, each checked against its MAC
 * (frame.ts segmentAuth: `frameKey` is the repository's); ends at the first position that holds
 * no whole valid frame (the log's end). Reads at most SCAN_WINDOW_BYTES (or one frame) at a time.
 * Throws StoreError 'MissingBlob' if the segment is gone, 'Corrupt' for a keyed segment without
 * `frameKey`, and provider errors.
 */
export async function* readFrames(provider: Provider, key: string, from: number, frameKey: FrameKey | undefined): AsyncGenerator<ReadFrame> {
  const auth = segmentAuth(key, frameKey);
  let size: number;
  try {
    size = (await provider.head(key)).size;
  } catch (err) {
    if ((err as { code?: string }).code === 'NotFound') throw new StoreError('MissingBlob', `log segment ${key} is missing`, { cause: err });
    throw err;
  }
  let window: Uint8Array = new Uint8Array(0);
  let windowStart = 0;
  const bytesAt = async (start: number, length: number): Promise<Uint8Array | undefined> => {
    if (start + length > size) return undefined;
    if (start < windowStart || start + length > windowStart + window.length) {
      let n = Math.min(size - start, Math.max(length, SCAN_WINDOW_BYTES));
      try {
        window = await getBytes(provider, key, { start, end: start + n - 1 });
      } catch (err) {
        // The writer may have sealed the segment (cut it to its written end) since `size` was
        // read: only preallocated bytes past the last frame went, so re-read the size and go on
        // within it; a segment no shorter than before is a real read error.
        const now = await provider.head(key).then((h) => h.size, () => size);
        if (now >= size) throw err;
        size = now;
        if (start + length > size) return undefined;
        n = Math.min(size - start, Math.max(length, SCAN_WINDOW_BYTES));
        window = await getBytes(provider, key, { start, end: start + n - 1 });
      }
      windowStart = start;
      if (window.length < length) return undefined;
    }
    return window.subarray(start - windowStart, start - windowStart + length);
  };
  let pos = from;
  for (;;) {
    const headerBytes = await bytesAt(pos, FRAME_HEADER_BYTES);
    if (!headerBytes) return;
    const header = decodeFrameHeader(headerBytes, auth);
    if (!header) return;
    const headerCopy = headerBytes.slice(); // the window may move when the payload is read
    const payload = await bytesAt(pos + FRAME_HEADER_BYTES, header.payloadBytes);
    if (!payload || !checkFrame(headerCopy, header, payload, auth)) return;
    const end = pos + FRAME_HEADER_BYTES + header.payloadBytes;
    yield { at: pos, end, header, payload };
    pos = end;
  }
}

/**
 * The commit record a checked frame holds, and the reference to it. Throws StoreError 'Corrupt'
 * when the record does not decode or names another sequence than the header: the frame passed
 * its checksum, so this is damage (or a bug), never a torn write.
 */
export function frameCommit(key: string, frame: ReadFrame): ScannedCommit {
  const { header, payload, at } = frame;
  let record: CommitRecord;
  let ref: RecordRef;
  try {
    const entry = payload.subarray(header.recordOffset, header.recordOffset + ENTRY_HEADER_SIZE + header.recordLength);
    const bytes = readEntry(entry, { length: header.recordLength });
    ref = { key, offset: at + FRAME_HEADER_BYTES + header.recordOffset, length: bytes.length, hash: hashRecord(bytes) };
    record = decodeCommit(bytes, `commit ${header.seq} in ${key}@${at}`);
  } catch (cause) {
    throw new StoreError('Corrupt', `log segment ${key}: the frame at ${at} passes its checksum but its commit record does not decode`, { cause });
  }
  if (record.seq !== header.seq) throw new StoreError('Corrupt', `log segment ${key}: the frame at ${at} says sequence ${header.seq}, its record ${record.seq}`);
  return { record, ref };
}

/**
 * The position of a whole valid frame (its MACs pass) of sequence above `afterSeq` anywhere in
 * segment `key` from byte `from` on, or undefined (`frameKey`: the repository's, as readFrames).
 * A frame inside a client's body cannot pass (frame.ts: keyed), and its header fails its own
 * MAC before the payload it claims is read; the MAC (~2.4 µs) is computed only for headers whose
 * fields could be a later frame here, and such headers lie at least 8 bytes apart (a length
 * field cannot hold another magic), so a 48 MiB segment of crafted bodies costs at most ~6
 * million MACs, ~15 s of CPU, once, at the open after a tear in it. Appends are serial (each synced before
 * the next starts), so past the log's end such a frame means acknowledged commits behind damaged
 * bytes: recovery then refuses to open rather than silently dropping them. Reads the segment in
 * windows and stops at the first window of zeros only: frames are contiguous, and no frame holds
 * SCAN_WINDOW_BYTES of zeros in a row (a packed body is at most layout.ts PACK_MAX_BODY, half a
 * window, and entry headers lie between bodies), so nothing valid lies past such a window
 * (the never-written preallocation). Throws provider errors, and StoreError 'Corrupt' as
 * readFrames.
 */
export async function findFrameAfter(provider: Provider, key: string, from: number, afterSeq: number, frameKey: FrameKey | undefined): Promise<number | undefined> {
  const auth = segmentAuth(key, frameKey);
  const size = (await provider.head(key)).size;
  const magic = frameMagic(auth);
  for (let start = from; start + FRAME_HEADER_BYTES <= size; ) {
    const end = Math.min(size, start + SCAN_WINDOW_BYTES);
    const window = Buffer.from(await getBytes(provider, key, { start, end: end - 1 }));
    if (window.length === SCAN_WINDOW_BYTES && window.equals(ZEROS)) break;
    for (let i = window.indexOf(magic); i >= 0; i = window.indexOf(magic, i + 1)) {
      const at = start + i;
      if (at === from) continue; // the frame the scan already refused
      const headerBytes = at + FRAME_HEADER_BYTES <= end ? window.subarray(i, i + FRAME_HEADER_BYTES) : await getBytes(provider, key, { start: at, end: Math.min(size, at + FRAME_HEADER_BYTES) - 1 });
      // Fields first, the header MAC only for a header that could be a later frame here.
      const header = decodeFrameHeader(headerBytes, auth, (h) => h.seq > afterSeq && at + FRAME_HEADER_BYTES + h.payloadBytes <= size);
      if (!header) continue;
      const payload = await getBytes(provider, key, { start: at + FRAME_HEADER_BYTES, end: at + FRAME_HEADER_BYTES + header.payloadBytes - 1 });
      if (checkFrame(headerBytes, header, payload, auth)) return at;
    }
    if (end >= size) break;
    start = end - (FRAME_HEADER_BYTES - 1); // a magic split across windows is seen by the next
  }
  return undefined;
}
