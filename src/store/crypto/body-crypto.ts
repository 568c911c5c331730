/**
 * @module Bodies as encrypted streams: sealing what a write produces, and mapping what a
 * read fetches back to (stream, segment) positions so only the touched segments are opened.
 *
 *   object body = stream 0 || stream 1 || ...      (one per PUT, or one per multipart part)
 *   stream      = segment 0 || segment 1 || ...    (SEGMENT plaintext bytes each, the last shorter)
 *   stored      = seal(segment 0) || seal(segment 1) || ...   (each + a 16-byte tag)
 *
 * A packed body keeps its sealed segments back to back in one pack entry; a carrier chunk
 * keeps one sealed segment per pack entry. Either way segment i of a stream is sealed with
 * the stream's key at index i (segment-cipher.ts).
 */
import { openSegment, sealSegment, sealSegmentInto, sealedLength, SEGMENT_TAG_BYTES } from './segment-cipher.js';
import { streamKey, type BodyStream, type ObjectEncryption } from './envelope.js';
import { StoreError } from '../errors.js';

/** Plaintext bytes per sealed segment of a packed body. Part of the stored format: bodies
 * written with one value cannot be read with another. Equal to the carrier segment size so
 * a ranged read decrypts at most 256 KiB more than it serves at each end. */
export const PACKED_SEGMENT_BYTES = 256 * 1024;

/** Sealed size of a stream of `size` plaintext bytes cut in `segment`-byte segments. */
export function sealedSize(size: number, segment = PACKED_SEGMENT_BYTES): number {
  return size + Math.ceil(size / segment) * SEGMENT_TAG_BYTES;
}

/** Seals one stream's segments as they come, in order; knows which one is final. */
export class StreamSealer {
  readonly #key: Buffer;
  readonly #size: number;
  readonly #segment: number;
  #next = 0;
  #done = 0;

  /** `key` is the stream key; `size` the stream's exact plaintext length. */
  constructor(key: Buffer, size: number, segment: number) {
    this.#key = key;
    this.#size = size;
    this.#segment = segment;
  }

  /**
   * Seals the next segment (`plain` must be exactly the next segment's length: `segment`
   * bytes, or what remains for the last). Throws RangeError on a wrong length or past the end.
   */
  seal(plain: Uint8Array): Uint8Array {
    this.#advance(plain);
    return sealSegment(this.#key, this.#next++, this.#done === this.#size, plain);
  }

  /** As seal, writing the sealed segment into `target` (exactly sealedLength(plain.length) bytes). */
  sealInto(plain: Uint8Array, target: Uint8Array): void {
    if (target.length !== sealedLength(plain.length)) throw new RangeError(`segment ${this.#next}: target is ${target.length} bytes, ${sealedLength(plain.length)} expected`);
    this.#advance(plain);
    sealSegmentInto(this.#key, this.#next++, this.#done === this.#size, plain, target);
  }

  #advance(plain: Uint8Array): void {
    const want = Math.min(this.#segment, this.#size - this.#done);
    if (want <= 0 || plain.length !== want) throw new RangeError(`segment ${this.#next}: ${plain.length} bytes, expected ${want}`);
    this.#done += plain.length;
  }
}

/** Seals a whole (packed) body as one stream; returns the concatenated sealed segments. */
export function sealBody(key: Buffer, plain: Uint8Array): Uint8Array {
  const out = new Uint8Array(sealedSize(plain.length));
  const sealer = new StreamSealer(key, plain.length, PACKED_SEGMENT_BYTES);
  let at = 0;
  for (let off = 0; off < plain.length; off += PACKED_SEGMENT_BYTES) {
    const s = sealer.seal(plain.subarray(off, Math.min(plain.length, off + PACKED_SEGMENT_BYTES)));
    out.set(s, at);
    at += s.length;
  }
  return out;
}

/** Where a run of an object's plaintext sits in its streams. */
interface StreamSpan {
  key: Buffer;
  start: number;
  stream: BodyStream;
}

/**
 * Opens an encrypted object's body for reading: checks that its streams cover exactly
 * `size` bytes, derives stream keys on demand, and opens segments named by their position.
 */
export class BodyDecryptor {
  readonly #dataKey: Buffer;
  readonly #spans: { start: number; stream: BodyStream; key?: Buffer }[] = [];

  /** The object's data key (opened from its envelope by the caller). */
  get dataKey(): Buffer {
    return this.#dataKey;
  }

  /** Throws StoreError 'Corrupt' if the streams do not add up to `size`. */
  constructor(dataKey: Buffer, enc: ObjectEncryption, size: number) {
    this.#dataKey = dataKey;
    let start = 0;
    for (const stream of enc.streams) {
      this.#spans.push({ start, stream });
      start += stream.size;
    }
    if (start !== size) throw new StoreError('Corrupt', `encryption: streams hold ${start} bytes, the object ${size}`);
  }

  /** The stream holding object byte `offset` (offset < size). */
  #span(offset: number): StreamSpan {
    let lo = 0;
    let hi = this.#spans.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#spans[mid]!.start <= offset) lo = mid;
      else hi = mid - 1;
    }
    const s = this.#spans[lo];
    if (!s || offset < s.start || offset >= s.start + s.stream.size) throw new StoreError('Corrupt', `encryption: no stream holds byte ${offset}`);
    s.key ??= streamKey(this.#dataKey, s.stream.id);
    return { key: s.key, start: s.start, stream: s.stream };
  }

  /**
   * The opener for a carrier chunk holding object bytes [base, base + length) in
   * `segment`-byte entries. Throws StoreError 'Corrupt' if the chunk does not start on a
   * segment boundary of one stream or runs past it.
   */
  chunk(base: number, length: number, segment: number): (entry: number, sealed: Uint8Array) => Uint8Array {
    const span = this.#span(base);
    const rel = base - span.start;
    if (rel % segment !== 0 || rel + length > span.stream.size) {
      throw new StoreError('Corrupt', `encryption: chunk at ${base} (${length} bytes) does not fit its stream`);
    }
    const first = rel / segment;
    const last = Math.ceil(span.stream.size / segment) - 1;
    return (entry, sealed) => {
      const index = first + entry;
      return openSegment(span.key, index, index === last, sealed);
    };
  }

  /**
   * Bytes [from, to] (inclusive, object coordinates) of a packed body whose stored entry is
   * `sealed` (one stream, PACKED_SEGMENT_BYTES segments). Opens only the segments the range
   * touches. Throws StoreError 'Corrupt' on a size mismatch or a segment that fails to open.
   */
  packed(sealed: Uint8Array, from: number, to: number): Uint8Array {
    if (this.#spans.length !== 1) throw new StoreError('Corrupt', `encryption: a packed body has ${this.#spans.length} streams`);
    const span = this.#span(0);
    const size = span.stream.size;
    if (sealed.length !== sealedSize(size)) throw new StoreError('Corrupt', `encryption: packed body is ${sealed.length} bytes, ${sealedSize(size)} expected`);
    const seg = PACKED_SEGMENT_BYTES;
    const s0 = Math.floor(from / seg);
    const s1 = Math.floor(to / seg);
    const last = Math.ceil(size / seg) - 1;
    const parts: Uint8Array[] = [];
    for (let i = s0; i <= s1; i++) {
      const plainLen = Math.min(seg, size - i * seg);
      const at = i * sealedLength(seg);
      const plain = openSegment(span.key, i, i === last, sealed.subarray(at, at + sealedLength(plainLen)));
      const lo = Math.max(from, i * seg) - i * seg;
      const hi = Math.min(to, i * seg + plainLen - 1) - i * seg;
      parts.push(plain.subarray(lo, hi + 1));
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}
