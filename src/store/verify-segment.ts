/**
 * @module `strata verify` of one commit log segment: its frames to the log's end, and for a
 * damaged frame, the objects whose bodies the damage reaches.
 *
 * A frame's MAC covers the whole batch, so one flipped byte in one body fails the frame
 * (and recovery, rightly, takes nothing from it on). To name what is lost, the damaged frame is
 * read the way readers see it: its commit record is one pack entry with its own CRC32C, and each
 * body another; when the record's entry still checks and decodes, every body it names in this
 * frame is checked by its own CRC, and the objects whose bodies fail are the ones reported.
 * When the header or the record itself is damaged, nothing can be named (the caller reports
 * the segment alone).
 */
import { getBytes, type Provider } from '../provider/provider.js';
import { decodePack, readEntry } from '../pack/reader.js';
import { ENTRY_HEADER_SIZE } from '../pack/stream-writer.js';
import { decodeCommit, type Mutation } from './commit.js';
import { decodeVersions, type Location } from './records.js';
import { checkLogEntry } from './version-log-verify.js';
import { StoreError } from './errors.js';
import { decodeFrameHeader, FRAME_HEADER_BYTES, segmentAuth, type FrameKey } from './commit-log/frame.js';
import { findFrameAfter, frameCommit, readFrames } from './commit-log/scan.js';

/** Objects a damaged frame's bodies belonged to: at most `max` names, and how many more. */
export interface FrameDamage {
  /** Byte offset of the damaged frame in its segment. */
  at: number;
  names: string[];
  more: number;
}

/**
 * Checks segment `key` frame by frame (checksum, pack framing, record) to the end of what was
 * ever appended whole. Throws StoreError 'Corrupt' when a whole valid frame lies past a frame
 * that fails (acknowledged commits behind damage), with `damage` (FrameDamage, when the damaged
 * frame's record still names its bodies) on the error; 'MissingBlob' if the segment is gone,
 * provider errors. A frame that fails with nothing valid after it is the log's end (a torn
 * tail or the preallocation), not damage. `frameKey`: the repository's (commit-log/frame.ts;
 * undefined when its config is unreadable: a keyed segment then throws 'Corrupt'). Reads only.
 */
export async function verifySegment(provider: Provider, key: string, max: number, frameKey: FrameKey | undefined): Promise<void> {
  let end = 0;
  const walk = async () => {
    for await (const frame of readFrames(provider, key, end, frameKey)) {
      decodePack(frame.payload);
      frameCommit(key, frame);
      end = frame.end;
    }
  };
  await walk();
  let beyond = await findFrameAfter(provider, key, end, 0, frameKey);
  if (beyond !== undefined) {
    // A repository appending beside us: the frame we stopped at may have been mid-write.
    await walk();
    if (end > beyond) beyond = undefined;
  }
  if (beyond === undefined) return;
  const damage = await frameDamage(provider, key, end, max, frameKey);
  const named = damage && damage.names.length > 0 ? `; damaged bodies of ${damage.names.join(', ')}${damage.more ? ` and ${damage.more} more` : ''}` : '';
  const err = new StoreError('Corrupt', `log segment ${key}: the frame at ${end} is damaged (a valid frame follows at ${beyond})${named}`);
  if (damage) (err as StoreError & { damage?: FrameDamage }).damage = damage;
  throw err;
}

/**
 * The objects whose bodies in the (damaged) frame at `at` of segment `key` fail their CRC, as
 * `bucket/key` (at most `max` names); undefined when the frame's header or its commit record
 * cannot be read (nothing can be named). `frameKey` as verifySegment. Reads only; never throws
 * for damage, only provider errors (and 'Corrupt' as verifySegment).
 */
export async function frameDamage(provider: Provider, key: string, at: number, max: number, frameKey: FrameKey | undefined): Promise<FrameDamage | undefined> {
  const auth = segmentAuth(key, frameKey);
  const size = (await provider.head(key)).size;
  if (at + FRAME_HEADER_BYTES > size) return undefined;
  const header = decodeFrameHeader(await getBytes(provider, key, { start: at, end: at + FRAME_HEADER_BYTES - 1 }), auth);
  if (!header) return undefined;
  const payloadAt = at + FRAME_HEADER_BYTES;
  const payloadEnd = Math.min(size, payloadAt + header.payloadBytes);
  const payload = await getBytes(provider, key, { start: payloadAt, end: payloadEnd - 1 });
  let mutations: readonly Mutation[];
  try {
    const entry = payload.subarray(header.recordOffset, header.recordOffset + ENTRY_HEADER_SIZE + header.recordLength);
    mutations = decodeCommit(readEntry(entry, { length: header.recordLength }), `commit ${header.seq} in ${key}@${at}`).mutations;
  } catch {
    return undefined; // the record itself is damaged: what the frame held cannot be named
  }
  const damage: FrameDamage = { at, names: [], more: 0 };
  const seen = new Set<string>();
  const check = (name: string, loc: Location) => {
    if (loc.kind !== 'pack' || loc.blob !== key || loc.offset < payloadAt || loc.offset >= payloadAt + header.payloadBytes) return;
    const start = loc.offset - payloadAt;
    try {
      readEntry(payload.subarray(start, start + ENTRY_HEADER_SIZE + loc.length), { tag: loc.tag, index: loc.index, length: loc.length });
      return;
    } catch {
      // this body is damaged (or cut short): its object is affected
    }
    if (seen.has(name)) return;
    seen.add(name);
    if (damage.names.length < max) damage.names.push(name);
    else damage.more++;
  };
  for (const m of mutations) {
    try {
      if (m.op === 'put') for (const v of decodeVersions(m.value)) check(`${m.bucket}/${m.key}`, v.location);
      if (m.op === 'putVersion' || m.op === 'rewriteVersion') {
        const v = checkLogEntry(m.entry);
        if (v) check(`${m.bucket}/${m.key}`, v.location);
      }
    } catch {
      // a mutation that does not decode names nothing; the frame is reported all the same
    }
  }
  return damage;
}
