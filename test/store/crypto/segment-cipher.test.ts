/**
 * The segment cipher and the stream layer on top of it, with hostile input: every
 * truncation, bit flip, reordering, replay between streams and objects, a wrong final
 * flag and a wrong key must fail to open — never return bytes — and honest input must
 * round-trip at every tail length around the segment size.
 */
import { describe, expect, it } from 'vitest';
import { openSegment, sealSegment, sealSegmentInto, sealedLength, SEGMENT_TAG_BYTES } from '../../../src/store/crypto/segment-cipher.js';
import { BodyDecryptor, PACKED_SEGMENT_BYTES, sealBody, sealedSize, StreamSealer } from '../../../src/store/crypto/body-crypto.js';
import { newDataKey, newStreamId, streamKey, type ObjectEncryption } from '../../../src/store/crypto/envelope.js';
import { StoreError } from '../../../src/store/errors.js';
import { randomBytes } from '../../support/random.js';

const key = (seed: number) => Buffer.from(randomBytes(32, seed));
const corrupt = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('Corrupt');
    return;
  }
  throw new Error('opened bytes it should have refused');
};

describe('segment cipher', () => {
  it('round-trips empty, tiny and full segments and never leaks plaintext into the sealed bytes', () => {
    for (const n of [0, 1, 15, 16, 17, 4096, 256 * 1024]) {
      const plain = randomBytes(n, n + 1);
      const sealed = sealSegment(key(1), 7, false, plain);
      expect(sealed.length).toBe(sealedLength(n));
      if (n >= 16) expect(Buffer.from(sealed).includes(Buffer.from(plain.subarray(0, 16)))).toBe(false);
      expect(Buffer.from(openSegment(key(1), 7, false, sealed)).equals(Buffer.from(plain))).toBe(true);
    }
  });

  it('refuses a wrong key, index or final flag', () => {
    const sealed = sealSegment(key(1), 3, false, randomBytes(1000, 9));
    corrupt(() => openSegment(key(2), 3, false, sealed));
    corrupt(() => openSegment(key(1), 4, false, sealed));
    corrupt(() => openSegment(key(1), 3, true, sealed));
    const last = sealSegment(key(1), 3, true, randomBytes(1000, 9));
    corrupt(() => openSegment(key(1), 3, false, last));
  });

  it('refuses every single-bit flip and every truncation of a small segment', () => {
    const plain = randomBytes(40, 5);
    const sealed = sealSegment(key(3), 0, true, plain);
    for (let i = 0; i < sealed.length; i++) {
      for (const bit of [0, 7]) {
        const bad = Buffer.from(sealed);
        bad[i]! ^= 1 << bit;
        corrupt(() => openSegment(key(3), 0, true, bad));
      }
    }
    for (let n = 0; n < sealed.length; n++) corrupt(() => openSegment(key(3), 0, true, sealed.subarray(0, n)));
    // A byte appended is a different (longer) ciphertext: the tag no longer matches.
    corrupt(() => openSegment(key(3), 0, true, Buffer.concat([sealed, Buffer.from([0])])));
    expect(SEGMENT_TAG_BYTES).toBe(16);
  });

  it('rejects keys of the wrong length and negative or fractional indices', () => {
    expect(() => sealSegment(new Uint8Array(16), 0, true, new Uint8Array(1))).toThrow(RangeError);
    expect(() => sealSegment(key(1), -1, true, new Uint8Array(1))).toThrow(RangeError);
    expect(() => sealSegment(key(1), 1.5, true, new Uint8Array(1))).toThrow(RangeError);
    expect(() => openSegment(key(1), 2 ** 60, true, new Uint8Array(32))).toThrow(RangeError);
  });
});

/** A one-stream object of `plain` sealed as a packed body. */
function packedObject(plain: Uint8Array, seed: number): { dataKey: Buffer; enc: ObjectEncryption; sealed: Uint8Array } {
  const { key: dataKey, envelope } = newDataKey({ mode: 'sse-s3', root: key(seed) });
  const id = newStreamId();
  return { dataKey, enc: { ...envelope, streams: [{ id, size: plain.length }] }, sealed: sealBody(streamKey(dataKey, id), plain) };
}

describe('packed bodies', () => {
  const S = PACKED_SEGMENT_BYTES;

  it('opens every range around segment boundaries, for every tail length near the segment size', () => {
    for (const n of [1, S - 1, S, S + 1, 2 * S - 1, 2 * S]) {
      const plain = randomBytes(n, n);
      const { dataKey, enc, sealed } = packedObject(plain, 11);
      expect(sealed.length).toBe(sealedSize(n));
      const d = new BodyDecryptor(dataKey, enc, n);
      const cuts = [0, 1, S - 1, S, S + 1, n - 1].filter((x) => x >= 0 && x < n);
      for (const from of cuts) {
        for (const to of cuts.filter((x) => x >= from)) {
          expect(Buffer.from(d.packed(sealed, from, to)).equals(Buffer.from(plain.subarray(from, to + 1)))).toBe(true);
        }
      }
    }
  });

  it('fails on swapped segments, a truncated body, a body from another object, a wrong length', () => {
    const plain = randomBytes(2 * S + 10, 3);
    const { dataKey, enc, sealed } = packedObject(plain, 12);
    const d = new BodyDecryptor(dataKey, enc, plain.length);
    const seg = sealedLength(S);
    // Swap the first two sealed segments: each opens at the wrong index.
    const swapped = Buffer.concat([sealed.subarray(seg, 2 * seg), sealed.subarray(0, seg), sealed.subarray(2 * seg)]);
    corrupt(() => d.packed(swapped, 0, 10));
    corrupt(() => d.packed(swapped, S, S + 10));
    // Drop the last segment and claim a shorter object: the new last segment is not final.
    const short = sealed.subarray(0, 2 * seg);
    const shortEnc = { ...enc, streams: [{ id: enc.streams[0]!.id, size: 2 * S }] };
    corrupt(() => new BodyDecryptor(dataKey, shortEnc, 2 * S).packed(short, 2 * S - 5, 2 * S - 1));
    // The same plaintext sealed for another object (another data key) does not open here.
    const other = packedObject(plain, 12);
    corrupt(() => d.packed(other.sealed, 0, 10));
    corrupt(() => d.packed(sealed.subarray(0, sealed.length - 1), 0, 10));
  });

  it('refuses streams that do not add up to the object size', () => {
    const plain = randomBytes(100, 1);
    const { dataKey, enc } = packedObject(plain, 13);
    corrupt(() => new BodyDecryptor(dataKey, enc, 101));
  });
});

describe('carrier streams', () => {
  const SEG = 1024; // a small segment size keeps the grid fast; the logic is size-independent

  it('seals in order, marks only the last segment final, and maps chunks back to stream positions', () => {
    const dataKey = key(20);
    const streams = [
      { id: newStreamId(), size: 5 * SEG + 7 },
      { id: newStreamId(), size: 3 * SEG },
    ];
    const sealedByStream = streams.map((s, k) => {
      const sealer = new StreamSealer(streamKey(dataKey, s.id), s.size, SEG);
      const plain = randomBytes(s.size, 100 + k);
      const segs: Uint8Array[] = [];
      for (let off = 0; off < s.size; off += SEG) segs.push(sealer.seal(plain.subarray(off, Math.min(s.size, off + SEG))));
      expect(() => sealer.seal(new Uint8Array(1))).toThrow(RangeError);
      return { plain, segs };
    });
    const enc: ObjectEncryption = { mode: 'sse-c', salt: new Uint8Array(16), wrapped: new Uint8Array(48), streams };
    const size = streams[0]!.size + streams[1]!.size;
    const d = new BodyDecryptor(dataKey, enc, size);
    // Stream 0 in two chunks (3 + 3 segments), stream 1 in one.
    const open0 = d.chunk(0, 3 * SEG, SEG);
    const open1 = d.chunk(3 * SEG, 2 * SEG + 7, SEG);
    const open2 = d.chunk(streams[0]!.size, 3 * SEG, SEG);
    const s0 = sealedByStream[0]!;
    expect(Buffer.from(open0(0, s0.segs[0]!)).equals(Buffer.from(s0.plain.subarray(0, SEG)))).toBe(true);
    expect(Buffer.from(open1(2, s0.segs[5]!)).equals(Buffer.from(s0.plain.subarray(5 * SEG)))).toBe(true);
    const s1 = sealedByStream[1]!;
    expect(Buffer.from(open2(2, s1.segs[2]!)).equals(Buffer.from(s1.plain.subarray(2 * SEG)))).toBe(true);
    // Misplaced: the right segment at the wrong entry, or another stream's segment.
    corrupt(() => open0(1, s0.segs[0]!));
    corrupt(() => open2(0, s0.segs[0]!));
    corrupt(() => open1(0, s0.segs[4]!)); // index 3 expected, 4 given
    // A chunk that does not start on a segment boundary, or runs past its stream.
    corrupt(() => d.chunk(10, SEG, SEG));
    corrupt(() => d.chunk(3 * SEG, 3 * SEG, SEG));
  });

  it('sealInto writes what seal returns into a buffer of the caller, and a wrong target length changes nothing', () => {
    const k = streamKey(key(30), newStreamId());
    const plain = randomBytes(3 * SEG + 5, 31);
    const a = new StreamSealer(k, plain.length, SEG);
    const b = new StreamSealer(k, plain.length, SEG);
    const framed = Buffer.alloc(4 * 8 + sealedSize(plain.length, SEG), 0xee);
    for (let off = 0, at = 0; off < plain.length; off += SEG) {
      const seg = plain.subarray(off, Math.min(plain.length, off + SEG));
      const want = a.seal(seg);
      // A target of another length is refused before the sealer moves on.
      expect(() => b.sealInto(seg, Buffer.alloc(want.length - 1))).toThrow(RangeError);
      b.sealInto(seg, framed.subarray(at + 8, at + 8 + want.length));
      expect(framed.subarray(at + 8, at + 8 + want.length).equals(Buffer.from(want))).toBe(true);
      expect(framed.subarray(at, at + 8).equals(Buffer.alloc(8, 0xee))).toBe(true); // the framing room is left alone
      at += 8 + want.length;
    }
    expect(() => sealSegmentInto(k, 0, true, plain.subarray(0, 4), Buffer.alloc(4 + SEGMENT_TAG_BYTES + 1))).toThrow(RangeError);
    expect(Buffer.from(openSegment(k, 0, true, (() => {
      const t = Buffer.alloc(4 + SEGMENT_TAG_BYTES);
      sealSegmentInto(k, 0, true, plain.subarray(0, 4), t);
      return t;
    })())).equals(Buffer.from(plain.subarray(0, 4)))).toBe(true);
  });
});
