/**
 * @module Reads object bodies back: a packed body with one ranged read, a carrier segment
 * by segment. Every byte is checked (entry CRC32C) before it is yielded, so a corrupted
 * blob ends the stream with an error instead of wrong bytes. Plain bodies are read first with
 * ReadOptions.endToEnd (these checks make the provider's own redundant) and, where they fail,
 * once more without it. Encrypted carrier segments are
 * checked by their GCM tag instead (authenticated: a tampered or misplaced segment fails, so
 * the CRC would add nothing), and only the segments a range touches are fetched and opened.
 *
 * Segments are opened (AES-256-GCM, ~3 ms of an 8 MiB GET's ~12 ms of CPU here) on this
 * thread. Opening each read span on a worker thread instead (the sealed span transferred there,
 * its plaintext transferred back, one or two spans ahead, spans of 768 KiB to 4 MiB) was built
 * and measured on the 2-core machine on 2026-12-05: paired A/B against this path, 0.85-1.01 of
 * its throughput, never a gain. Each message cost ~90 µs of postMessage on both sides, and
 * the main thread's GC time doubled with the transferred buffers it received.
 */
import type { Provider } from '../provider/provider.js';
import { END_TO_END, getBytes } from '../provider/provider.js';
import { blobError } from './blob-error.js';

export { blobError };
import { readEntry, entryRange } from '../pack/reader.js';
import { PackError } from '../pack/errors.js';
import { ENTRY_HEADER_SIZE, PACK_HEADER_SIZE } from '../pack/stream-writer.js';
import type { ChunkRef, Location } from './records.js';
import { StoreError } from './errors.js';
import { BodyCache } from './body-cache.js';
import type { BodyDecryptor } from './crypto/body-crypto.js';
import { SEGMENT_TAG_BYTES } from './crypto/segment-cipher.js';
import { scatterReadChunk, type ScatterProvider } from './chunk-scatter-read.js';
import { sharedHashPool } from '../checksum/hash-pool.js';
import { acceleratedCrc32c } from '../checksum/accelerator.js';

/** Inclusive byte range within the object. */
export interface BodyRange {
  start: number;
  end: number;
}

/** Bytes of carrier segments fetched per positional read on this path (providers without
 * scatter reads, and encrypted chunks): a few segments, bounded memory (a GET holds two such
 * spans: the one being sent and the next, read meanwhile). */
const READ_SPAN_BYTES = 1024 * 1024;

/** Opens stored (sealed) entry `i` of a chunk into its plaintext segment. */
type EntryOpener = (entry: number, stored: Uint8Array) => Uint8Array;

async function* readChunk(provider: Provider, c: ChunkRef, from: number, to: number, open?: EntryOpener): AsyncGenerator<Uint8Array> {
  // Segments s0..s1 cover data bytes [from, to] of this chunk; all but the chunk's last
  // segment are full, so entry i starts at PACK_HEADER_SIZE + i * (header + stored segment).
  // A sealed segment is its plaintext plus a tag: `over` bytes per entry.
  const over = open ? SEGMENT_TAG_BYTES : 0;
  // An encrypted segment is authenticated by its GCM tag when opened (a flipped bit fails
  // there), which makes the entry's CRC32C redundant: it is not computed.
  const authenticated = open !== undefined;
  const s0 = Math.floor(from / c.segment);
  const s1 = Math.floor(to / c.segment);
  const lenOf = (i: number) => Math.min(c.segment, c.size - i * c.segment) + over;
  const offsetOf = (i: number) => PACK_HEADER_SIZE + i * (ENTRY_HEADER_SIZE + c.segment + over);
  const slice = (seg: number, body: Uint8Array) => {
    const base = seg * c.segment;
    return body.subarray(Math.max(from, base) - base, Math.min(to, base + body.length - 1) - base + 1);
  };
  if (!open && provider.readv) {
    // Scatter reads: a span of segments per read, sent as one write (chunk-scatter-read.ts).
    // Its CRCs are checked here with the native CRC32C (a 2 MiB span in ~0.2-0.3 ms, less than
    // the round trip of handing it to a worker and back costs this thread), else on a hash
    // worker while the span before it is sent.
    yield* scatterReadChunk(provider as ScatterProvider, c, from, to, acceleratedCrc32c() ? undefined : sharedHashPool());
    return;
  }
  if (provider.read) {
    // Positional reads of a few segments at a time, each segment verified before use.
    const per = Math.max(1, Math.floor(READ_SPAN_BYTES / (ENTRY_HEADER_SIZE + c.segment)));
    // Decrypted segments are copies, so a span's stored bytes are consumed before the read
    // after the next one: two scratch buffers, taken in turn, serve every read of this chunk
    // (plain segments are yielded as views of fresh reads instead).
    const scratch: (Uint8Array | undefined)[] = [undefined, undefined];
    let turn = 0;
    const spanRead = (seg: number): Promise<Uint8Array> => {
      const last = Math.min(s1, seg + per - 1);
      const start = offsetOf(seg);
      const end = offsetOf(last) + ENTRY_HEADER_SIZE + lenOf(last) - 1;
      let into: Uint8Array | undefined;
      if (open) {
        // Sized by the chunk's first span, the largest (only the last span may be shorter).
        into = scratch[turn] ??= new Uint8Array(Math.min(end - start + 1, per * (ENTRY_HEADER_SIZE + c.segment + over)));
        turn ^= 1;
      }
      return provider.read!(c.blob, { start, end }, into).then((bytes) => {
        if (bytes.length !== end - start + 1) throw new StoreError('Corrupt', `${c.blob}: short read of its segments`);
        return bytes;
      });
    };
    // The next span is read while this one is opened and goes out to the client (disk,
    // decryption and socket overlap; two spans held). An encrypted span's scratch is taken
    // again only by the read after the next, which starts once this span is all opened.
    let ahead: Promise<Uint8Array> | undefined;
    try {
      for (let seg = s0; seg <= s1; seg += per) {
        const last = Math.min(s1, seg + per - 1);
        const start = offsetOf(seg);
        let bytes: Uint8Array;
        try {
          bytes = await (ahead ?? spanRead(seg));
          ahead = undefined;
          if (seg + per <= s1) {
            ahead = spanRead(seg + per);
            ahead.catch(() => undefined); // awaited next round, or when the stream stops
          }
        } catch (err) {
          throw blobError(err, c.blob);
        }
        for (let i = seg; i <= last; i++) {
          const at = offsetOf(i) - start;
          let body: Uint8Array;
          try {
            body = readEntry(bytes.subarray(at, at + ENTRY_HEADER_SIZE + lenOf(i)), { tag: c.tag, index: i, length: lenOf(i), authenticated });
            if (open) body = open(i, body);
          } catch (err) {
            throw blobError(err, c.blob);
          }
          yield slice(i, body);
        }
      }
    } finally {
      // A stream stopped early leaves no read running unobserved.
      await ahead?.catch(() => undefined);
    }
    return;
  }
  const start = offsetOf(s0);
  let total = 0;
  for (let i = s0; i <= s1; i++) total += ENTRY_HEADER_SIZE + lenOf(i);
  let res;
  try {
    res = await provider.get(c.blob, { range: { start, end: start + total - 1 } });
  } catch (err) {
    throw blobError(err, c.blob);
  }
  let seg = s0;
  let buf = new Uint8Array(ENTRY_HEADER_SIZE + lenOf(seg));
  let have = 0;
  try {
    for await (const piece of res.body as AsyncIterable<Uint8Array>) {
      let p = 0;
      while (p < piece.length) {
        const take = Math.min(buf.length - have, piece.length - p);
        buf.set(piece.subarray(p, p + take), have);
        have += take;
        p += take;
        if (have < buf.length) continue;
        if (seg > s1) throw new StoreError('Corrupt', `${c.blob}: provider returned bytes past the range`);
        let body = readEntry(buf, { tag: c.tag, index: seg, length: lenOf(seg), authenticated });
        if (open) body = open(seg, body);
        yield slice(seg, body);
        seg++;
        if (seg <= s1) buf = new Uint8Array(ENTRY_HEADER_SIZE + lenOf(seg));
        have = 0;
      }
    }
  } catch (err) {
    res.body.destroy();
    throw blobError(err, c.blob);
  }
  if (seg <= s1) throw new StoreError('Corrupt', `${c.blob}: provider returned fewer bytes than the segments need`);
}

/**
 * Yields bytes [range.start, range.end] of the body at `loc` (the whole body when no
 * range), verified, and decrypted by `decrypt` when the body is encrypted (the cache only
 * ever holds what is stored, so an encrypted body is opened again on every read). Throws
 * StoreError 'Corrupt' / 'MissingBlob' naming the blob; 'Corrupt' also when a segment
 * fails authentication, and before any byte when the location does not hold exactly
 * `size` bytes.
 */
export async function* readBody(
  provider: Provider,
  loc: Location,
  size: number,
  range?: BodyRange,
  cache?: BodyCache,
  decrypt?: BodyDecryptor
): AsyncGenerator<Uint8Array> {
  if (size === 0) return;
  if (loc.kind === 'empty') throw new StoreError('Corrupt', `a ${size}-byte object has no body`);
  const r = range ?? { start: 0, end: size - 1 };
  if (loc.kind === 'pack') {
    const key = BodyCache.key(loc.blob, loc.offset);
    let body = cache?.get(key);
    if (!body) {
      const { start, end } = entryRange(loc);
      // The entry's checks cover every byte read, so the provider may leave its own to them
      // (ReadOptions.endToEnd); an entry that fails them is read again, checked there too.
      const entry = async (checked: boolean) =>
        readEntry(await getBytes(provider, loc.blob, { start, end }, checked ? undefined : END_TO_END), { tag: loc.tag, index: loc.index, length: loc.length });
      try {
        body = await entry(false).catch((err: unknown) => {
          if (err instanceof PackError) return entry(true);
          throw err;
        });
      } catch (err) {
        throw blobError(err, loc.blob);
      }
      cache?.set(key, body);
    }
    if (!decrypt) {
      // A record whose entry is shorter than the object would serve a short body.
      if (body.length !== size) throw new StoreError('Corrupt', `${loc.blob}: entry ${loc.index} holds ${body.length} bytes, the object ${size}`);
      yield body.subarray(r.start, r.end + 1);
      return;
    }
    let plain: Uint8Array;
    try {
      plain = decrypt.packed(body, r.start, r.end);
    } catch (err) {
      throw blobError(err, loc.blob);
    }
    yield plain;
    return;
  }
  // The chunks must hold exactly the object: fewer bytes would end the response early
  // without an error (a client holding the connection for the rest), more would be ignored.
  let held = 0;
  for (const c of loc.chunks) {
    if (!(Number.isSafeInteger(c.size) && c.size > 0 && Number.isSafeInteger(c.segment) && c.segment > 0)) {
      throw new StoreError('Corrupt', `${c.blob}: chunk of ${c.size} bytes in ${c.segment}-byte segments`);
    }
    held += c.size;
  }
  if (held !== size) throw new StoreError('Corrupt', `the chunks of a ${size}-byte object hold ${held} bytes`);
  let base = 0;
  for (const c of loc.chunks) {
    const lo = Math.max(r.start, base);
    const hi = Math.min(r.end, base + c.size - 1);
    if (lo <= hi) yield* readChunk(provider, c, lo - base, hi - base, decrypt?.chunk(base, c.size, c.segment));
    base += c.size;
    if (base > r.end) break;
  }
}
