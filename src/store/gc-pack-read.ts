/**
 * @module Pack cleaning's reads (gc-pack.ts): the live entries of many source packs are read
 * with as few provider requests as possible and a small bounded concurrency.
 *
 * Entries of one source blob that lie close together (a gap of at most SPAN_MAX_GAP bytes) are
 * read as one span, up to SPAN_MAX_BYTES a span (a lone larger entry is its own span), so a
 * pack with many live bodies costs one request, not one per body, and the dead bytes read in
 * between stay bounded. READ_PARALLEL spans are in flight at a time: enough to hide the
 * provider's per-request latency (fs: open, read, close; S3: a round trip), few enough to
 * leave the disk to the writers.
 *
 * Every entry is checked as a single read would check it (pack/reader.ts readEntry: header,
 * index, length, CRC32C): a corrupt entry, or a span whose read fails, is reported as failed
 * and never copied.
 */
import type { Provider } from '../provider/provider.js';
import { getBytes } from '../provider/provider.js';
import { readEntry } from '../pack/reader.js';
import { ENTRY_HEADER_SIZE } from '../pack/stream-writer.js';
import type { Location } from './records.js';

/** Largest run of dead bytes (ms of one read on any disk) worth reading to save a request. */
export const SPAN_MAX_GAP = 16 * 1024;
/** Largest span read in one request, bytes: bounds the dead bytes held per read in flight. */
export const SPAN_MAX_BYTES = 1024 * 1024;
/** Spans read at once. */
export const READ_PARALLEL = 4;

/** A packed body's location. */
export type PackLoc = Extract<Location, { kind: 'pack' }>;

/** One provider read: bytes [start, end] (inclusive) of `blob`, holding `entries`. */
export interface Span {
  blob: string;
  start: number;
  end: number;
  entries: PackLoc[];
}

/** The last byte (inclusive) of the entry at `loc`: its header and body. */
const entryEnd = (loc: PackLoc) => loc.offset + ENTRY_HEADER_SIZE + loc.length - 1;

/**
 * The spans that read `locs` (any order, any blobs; each entry once): entries of one blob in
 * offset order, joined while the gap to the next is at most `maxGap` and the span stays within
 * `maxBytes`. Pure; throws nothing. Overlapping entries (never written by a pack writer) are
 * still each read whole.
 */
export function planSpans(locs: readonly PackLoc[], maxGap = SPAN_MAX_GAP, maxBytes = SPAN_MAX_BYTES): Span[] {
  const byBlob = new Map<string, PackLoc[]>();
  for (const l of locs) {
    let list = byBlob.get(l.blob);
    if (!list) byBlob.set(l.blob, (list = []));
    list.push(l);
  }
  const spans: Span[] = [];
  for (const [blob, list] of byBlob) {
    list.sort((a, b) => a.offset - b.offset);
    let cur: Span | undefined;
    for (const l of list) {
      const end = entryEnd(l);
      if (cur && l.offset - cur.end - 1 <= maxGap && Math.max(cur.end, end) - cur.start + 1 <= maxBytes) {
        cur.end = Math.max(cur.end, end);
        cur.entries.push(l);
        continue;
      }
      cur = { blob, start: l.offset, end, entries: [l] };
      spans.push(cur);
    }
  }
  return spans;
}

export interface ReadResult {
  /** Each entry read and checked: its body (a copy, not a view of the span). */
  bodies: Map<PackLoc, Uint8Array>;
  /** Entries not read (the span's read failed, or the entry is corrupt), with the error. */
  failed: { loc: PackLoc; error: unknown }[];
  /** Provider requests made, and bytes they returned. */
  requests: number;
  bytesRead: number;
}

/**
 * Reads and checks every entry of `spans` from `provider`, READ_PARALLEL spans at a time
 * (see the module note). Never throws for a failed read or a corrupt entry: those are in
 * `failed`. Memory: the bodies, plus at most `parallel` spans in flight.
 */
export async function readSpans(provider: Provider, spans: readonly Span[], parallel = READ_PARALLEL): Promise<ReadResult> {
  const out: ReadResult = { bodies: new Map(), failed: [], requests: 0, bytesRead: 0 };
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < spans.length; i = next++) {
      const s = spans[i]!;
      let raw: Uint8Array;
      try {
        out.requests++;
        raw = await getBytes(provider, s.blob, { start: s.start, end: s.end });
        out.bytesRead += raw.length;
      } catch (error) {
        for (const loc of s.entries) out.failed.push({ loc, error });
        continue;
      }
      for (const loc of s.entries) {
        try {
          const at = loc.offset - s.start;
          const bytes = raw.subarray(at, Math.min(raw.length, at + ENTRY_HEADER_SIZE + loc.length));
          out.bodies.set(loc, readEntry(bytes, { tag: loc.tag, index: loc.index, length: loc.length }).slice());
        } catch (error) {
          out.failed.push({ loc, error });
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, spans.length)) }, worker));
  return out;
}
