/**
 * Data-key envelopes and the records that carry them: the right root unwraps, any other
 * root, mode or damaged byte does not; SSE-C key errors map to the S3 answers; version,
 * upload and part records round-trip their encryption fields and refuse truncated,
 * oversized and unknown input.
 */
import { describe, expect, it } from 'vitest';
import {
  maskedMd5,
  newDataKey,
  newStreamId,
  openDataKey,
  unwrapDataKey,
  type ObjectEncryption,
} from '../../../src/store/crypto/envelope.js';
import { decodeVersion, encodeVersion, type ObjectVersion } from '../../../src/store/records.js';
import { decodePart, decodeUpload, encodePart, encodeUpload } from '../../../src/store/uploads.js';
import { openDigests, sealDigests, sealVersionChecksums, unsealVersionChecksums } from '../../../src/store/crypto/sealed-checksums.js';
import { StoreError } from '../../../src/store/errors.js';
import { randomBytes } from '../../support/random.js';

const root = (seed: number) => Buffer.from(randomBytes(32, seed));
const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof StoreError) return err.code;
    throw err;
  }
  return 'none';
};

describe('key envelopes', () => {
  it('unwraps with the root that wrapped it and nothing else', () => {
    const { key, envelope } = newDataKey({ mode: 'sse-c', root: root(1) });
    expect(envelope.salt.length).toBe(16);
    expect(envelope.wrapped.length).toBe(48);
    expect(Buffer.from(envelope.wrapped).includes(key)).toBe(false);
    expect(unwrapDataKey(envelope, root(1))?.equals(key)).toBe(true);
    expect(unwrapDataKey(envelope, root(2))).toBeUndefined();
    expect(unwrapDataKey({ ...envelope, mode: 'sse-s3' }, root(1))).toBeUndefined();
    expect(unwrapDataKey(envelope, root(1).subarray(0, 16))).toBeUndefined();
    for (let i = 0; i < envelope.wrapped.length; i++) {
      const bad = Buffer.from(envelope.wrapped);
      bad[i]! ^= 0x80;
      expect(unwrapDataKey({ ...envelope, wrapped: bad }, root(1))).toBeUndefined();
    }
    const salt = Buffer.from(envelope.salt);
    salt[0]! ^= 1;
    expect(unwrapDataKey({ ...envelope, salt }, root(1))).toBeUndefined();
    expect(unwrapDataKey({ ...envelope, wrapped: envelope.wrapped.subarray(0, 40) }, root(1))).toBeUndefined();
  });

  it('draws a new data key and salt every time', () => {
    const a = newDataKey({ mode: 'sse-s3', root: root(1) });
    const b = newDataKey({ mode: 'sse-s3', root: root(1) });
    expect(a.key.equals(b.key)).toBe(false);
    expect(Buffer.from(a.envelope.salt).equals(Buffer.from(b.envelope.salt))).toBe(false);
  });

  it('maps key problems to the S3 answers', () => {
    const c = newDataKey({ mode: 'sse-c', root: root(1) }).envelope;
    expect(codeOf(() => openDataKey(c, undefined))).toBe('InvalidRequest');
    expect(codeOf(() => openDataKey(c, { sseS3: root(1) }))).toBe('InvalidRequest');
    expect(codeOf(() => openDataKey(c, { customer: root(2) }))).toBe('AccessDenied');
    expect(codeOf(() => openDataKey(c, { customer: root(1) }))).toBe('none');
    const s = newDataKey({ mode: 'sse-s3', root: root(3) }).envelope;
    expect(codeOf(() => openDataKey(s, {}))).toBe('KeyUnavailable');
    expect(codeOf(() => openDataKey(s, { sseS3: root(4) }))).toBe('KeyUnavailable');
    expect(codeOf(() => openDataKey(s, { sseS3: root(3), customer: root(9) }))).toBe('none');
  });

  it('masks SSE-C ETag digests per data key, deterministically', () => {
    const md5 = randomBytes(16, 5);
    const k1 = root(1);
    expect(Buffer.from(maskedMd5(k1, md5)).equals(Buffer.from(maskedMd5(k1, md5)))).toBe(true);
    expect(Buffer.from(maskedMd5(k1, md5)).equals(Buffer.from(maskedMd5(root(2), md5)))).toBe(false);
    expect(Buffer.from(maskedMd5(k1, md5)).equals(Buffer.from(md5))).toBe(false);
    expect(maskedMd5(k1, md5).length).toBe(16);
  });
});

function version(encryption?: ObjectEncryption): ObjectVersion {
  const v: ObjectVersion = {
    versionId: 'v1',
    deleteMarker: false,
    size: 300,
    md5: new Uint8Array(16).fill(7),
    partCount: 0,
    lastModified: 1_700_000_000_000,
    system: {},
    userMetadata: { a: 'b' },
    tags: {},
    location: { kind: 'chunks', chunks: [{ blob: 'chunks/x', size: 300, segment: 262144, tag: 5 }] },
  };
  if (encryption) v.encryption = encryption;
  return v;
}

describe('records', () => {
  const env = newDataKey({ mode: 'sse-c', root: root(1) }).envelope;
  const enc: ObjectEncryption = { ...env, streams: [{ id: newStreamId(), size: 100 }, { id: newStreamId(), size: 200 }] };

  it('round-trip a version with and without encryption (flag 16)', () => {
    const plain = decodeVersion(encodeVersion(version()));
    expect(plain.encryption).toBeUndefined();
    const bytes = encodeVersion(version(enc));
    expect(bytes[0]! & 16).toBe(16);
    const back = decodeVersion(bytes);
    expect(back.encryption?.mode).toBe('sse-c');
    expect(Buffer.from(back.encryption!.wrapped).equals(Buffer.from(env.wrapped))).toBe(true);
    expect(back.encryption!.streams.map((s) => s.size)).toEqual([100, 200]);
    expect(Buffer.from(back.encryption!.streams[1]!.id).equals(Buffer.from(enc.streams[1]!.id))).toBe(true);
  });

  it('refuse every truncation, an unknown mode and a stream count that cannot fit', () => {
    const bytes = encodeVersion(version(enc));
    const plainLen = encodeVersion(version()).length;
    for (let n = plainLen; n < bytes.length; n++) expect(codeOf(() => decodeVersion(bytes.subarray(0, n)))).toBe('Corrupt');
    const badMode = Buffer.from(bytes);
    badMode[plainLen] = 3;
    expect(codeOf(() => decodeVersion(badMode))).toBe('Corrupt');
    const huge = Buffer.from(bytes.subarray(0, plainLen + 1 + 16 + 48));
    expect(codeOf(() => decodeVersion(Buffer.concat([huge, Buffer.from([0xff, 0xff, 0xff, 0x7f])])))).toBe('Corrupt');
    expect(codeOf(() => decodeVersion(Buffer.concat([bytes, Buffer.from([0])])))).toBe('Corrupt');
  });

  it('upload and part records carry the envelope and the stream id as optional trailing fields', () => {
    const base = { key: 'k', initiated: 5, system: {}, userMetadata: {}, tags: {}, checksumType: 'FULL_OBJECT' as const };
    expect(decodeUpload(encodeUpload(base)).encryption).toBeUndefined();
    const u = decodeUpload(encodeUpload({ ...base, encryption: env }));
    expect(u.encryption?.mode).toBe('sse-c');
    expect(Buffer.from(u.encryption!.salt).equals(Buffer.from(env.salt))).toBe(true);
    const withEnc = encodeUpload({ ...base, encryption: env });
    const plainLen = encodeUpload(base).length;
    for (let n = plainLen + 1; n < withEnc.length; n++) expect(codeOf(() => decodeUpload(withEnc.subarray(0, n)))).toBe('Corrupt');
    const unknown = Buffer.from(withEnc);
    unknown[plainLen] = 2;
    expect(codeOf(() => decodeUpload(unknown))).toBe('Corrupt');

    const part = { size: 10, md5: new Uint8Array(16), values: {}, chunks: [], lastModified: 1 };
    expect(decodePart(encodePart(part)).stream).toBeUndefined();
    const id = newStreamId();
    const p = encodePart({ ...part, stream: id, sealedValues: new Uint8Array([1, 2, 3]) });
    const back = decodePart(p);
    expect(Buffer.from(back.stream!).equals(id)).toBe(true);
    expect([...back.sealedValues!]).toEqual([1, 2, 3]);
    // Every truncation fails except at a field boundary (the record sits in a checksummed blob).
    const boundary = encodePart({ ...part, stream: id }).length;
    for (let n = encodePart(part).length + 1; n < p.length; n++) {
      if (n !== boundary) expect(codeOf(() => decodePart(p.subarray(0, n))), `cut at ${n}`).toBe('Corrupt');
    }
    const plainPart = encodePart(part);
    expect(codeOf(() => decodePart(Buffer.concat([plainPart, Buffer.from([3, 0])])))).toBe('Corrupt');
    // Tags must come in order, once each.
    expect(codeOf(() => decodePart(Buffer.concat([plainPart, Buffer.from([2, 1, 9, 1]), id])))).toBe('Corrupt');
    expect(codeOf(() => decodePart(Buffer.concat([plainPart, Buffer.from([1]), id, Buffer.from([1]), id])))).toBe('Corrupt');
  });

  it('SSE-C checksum values: sealed in the record, opened only with the data key, shape checked', () => {
    const dataKey = root(40);
    const v = version(enc);
    v.checksums = { type: 'COMPOSITE', primary: 'crc32', parts: 2, values: { crc32: new Uint8Array([1, 2, 3, 4]), crc64nvme: new Uint8Array(8).fill(9) } };
    v.parts = [
      { number: 1, size: 100, md5: new Uint8Array(16), checksums: { crc32: new Uint8Array([5, 6, 7, 8]) } },
      { number: 2, size: 200, md5: new Uint8Array(16), checksums: { crc32: new Uint8Array([9, 9, 9, 9]) } },
    ];
    const stored = sealVersionChecksums(v, dataKey);
    expect(stored.checksums!.values).toEqual({});
    expect(stored.parts!.map((p) => p.checksums)).toEqual([{}, {}]);
    expect(v.checksums.values.crc32).toBeDefined(); // the input is untouched
    const bytes = encodeVersion(stored);
    for (const needle of [[1, 2, 3, 4], [5, 6, 7, 8]]) expect(Buffer.from(bytes).includes(Buffer.from(needle))).toBe(false);
    const back = unsealVersionChecksums(decodeVersion(bytes), dataKey);
    expect([...back.checksums!.values.crc32!]).toEqual([1, 2, 3, 4]);
    expect([...back.parts![1]!.checksums.crc32!]).toEqual([9, 9, 9, 9]);
    expect(codeOf(() => unsealVersionChecksums(decodeVersion(bytes), root(41)))).toBe('Corrupt');
    const sealed = stored.encryption!.sealedChecksums!;
    for (const i of [0, 12, sealed.length - 1]) {
      const bad = Buffer.from(sealed);
      bad[i]! ^= 1;
      expect(codeOf(() => openDigests(dataKey, bad))).toBe('Corrupt');
    }
    expect(codeOf(() => openDigests(dataKey, sealed.subarray(0, 20)))).toBe('Corrupt');
    // One map sealed for a version with two parts: the shape does not match.
    const wrongShape = { ...stored, encryption: { ...stored.encryption!, sealedChecksums: sealDigests(dataKey, [{}]) } };
    expect(codeOf(() => unsealVersionChecksums(wrongShape, dataKey))).toBe('Corrupt');
    // SSE-S3 versions are stored as they are.
    const s3v = { ...v, encryption: { ...enc, mode: 'sse-s3' as const } };
    expect(sealVersionChecksums(s3v, dataKey)).toBe(s3v);
  });
});
