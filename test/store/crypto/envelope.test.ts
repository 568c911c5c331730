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
    const p = encodePart({ ...part, stream: id });
    expect(Buffer.from(decodePart(p).stream!).equals(id)).toBe(true);
    for (let n = encodePart(part).length + 1; n < p.length; n++) expect(codeOf(() => decodePart(p.subarray(0, n)))).toBe('Corrupt');
  });
});
