/**
 * headIsDeleted: LIST's two-byte liveness check for keys rolled into a common prefix must
 * agree with a full decode on every well-formed version list, and fail closed (StoreError
 * 'Corrupt') on what a full decode would refuse in the bytes it reads.
 */
import { describe, expect, it } from 'vitest';
import { decodeListedHead, decodeVersions, encodeVersions, headIsDeleted, TOMBSTONE, type ObjectVersion } from '../../src/store/records.js';
import { StoreError } from '../../src/store/errors.js';
import { WRAPPED_BYTES } from '../../src/store/crypto/envelope.js';

function version(over: Partial<ObjectVersion>): ObjectVersion {
  return {
    versionId: 'v1',
    deleteMarker: false,
    size: 3,
    md5: new Uint8Array(16).fill(1),
    partCount: 0,
    lastModified: 1_700_000_000_000,
    system: {},
    userMetadata: {},
    tags: {},
    location: { kind: 'empty' },
    ...over,
  };
}

const full = (bytes: Uint8Array): boolean => {
  const v = decodeVersions(bytes)[0];
  return !v || v.deleteMarker;
};

describe('headIsDeleted', () => {
  const shapes: ObjectVersion[] = [
    version({}),
    version({ deleteMarker: true }),
    version({ access: { owner: 'AK', acl: 'public-read' } }),
    version({ deleteMarker: true, logId: 'x'.repeat(20) }),
    version({ checksums: { type: 'FULL_OBJECT', primary: 'crc32', values: { crc32: new Uint8Array(4) } } }),
  ];

  it('agrees with a full decode for tombstones, live heads, delete markers and long lists', () => {
    expect(headIsDeleted(TOMBSTONE)).toBe(true);
    for (const a of shapes) {
      expect(headIsDeleted(encodeVersions([a]))).toBe(full(encodeVersions([a])));
      for (const b of shapes) expect(headIsDeleted(encodeVersions([a, b]))).toBe(a.deleteMarker);
    }
    // 130 versions: a two-byte count, decided by the full decode.
    const many = encodeVersions(Array.from({ length: 130 }, (_, i) => version({ deleteMarker: i === 0 })));
    expect(headIsDeleted(many)).toBe(true);
  });

  it('fails closed on unknown flags, empty and truncated bytes, and bytes after a tombstone', () => {
    const live = encodeVersions([version({})]);
    const bad = live.slice();
    bad[1] = 0x80;
    for (const bytes of [bad, new Uint8Array(0), Uint8Array.of(1), Uint8Array.of(0, 0), Uint8Array.of(0x81)]) {
      expect(() => headIsDeleted(bytes), `bytes ${[...bytes]}`).toThrow(StoreError);
    }
  });
});

describe('decodeListedHead', () => {
  const sha = new Uint8Array(32).fill(9);
  const rich: ObjectVersion[] = [
    version({}),
    version({ deleteMarker: true, versionId: '1.2.abc' }), // a pre-log id reads as 'null'
    version({ contentType: 'text/plain', system: { 'cache-control': 'no' }, userMetadata: { a: 'é', b: '' }, tags: { t: '1' } }),
    version({ checksums: { type: 'COMPOSITE', primary: 'sha256', values: { sha256: sha, crc32: new Uint8Array(4) }, parts: 3 }, partCount: 3 }),
    version({ checksums: { type: 'FULL_OBJECT', primary: 'crc64nvme', values: { crc64nvme: new Uint8Array(8) } } }),
    version({ location: { kind: 'pack', blob: 'packs/x', offset: 10, length: 20, tag: 7, index: 2 } }),
    version({ location: { kind: 'chunks', chunks: [{ blob: 'c/1', size: 5, segment: 4, tag: 1 }, { blob: 'c/2', size: 6, segment: 4, tag: 2 }] } }),
    version({ parts: [{ number: 1, size: 5, md5: new Uint8Array(16), checksums: { crc32: new Uint8Array(4) } }], partCount: 1 }),
    version({ encryption: { mode: 'sse-s3', salt: new Uint8Array(16).fill(1), wrapped: new Uint8Array(WRAPPED_BYTES).fill(2), streams: [{ id: new Uint8Array(16).fill(3), size: 9 }] } }),
    version({ access: { owner: 'AKID', acl: 'public-read' }, lock: { mode: 'GOVERNANCE', retainUntil: 1_800_000_000_000, legalHold: true }, logId: 'L'.repeat(24) }),
    version({ access: { acl: 'private' } }),
  ];
  const project = (v: ObjectVersion) => {
    const out: Record<string, unknown> = { versionId: v.versionId, deleteMarker: v.deleteMarker, size: v.size, md5: v.md5, partCount: v.partCount, lastModified: v.lastModified };
    if (v.checksums) out.checksums = v.checksums.parts ? { type: v.checksums.type, primary: v.checksums.primary, parts: v.checksums.parts } : { type: v.checksums.type, primary: v.checksums.primary };
    if (v.access) out.access = v.access;
    if (v.logId !== undefined) out.logId = v.logId;
    return out;
  };

  it('gives what a full decode gives, for every field shape a listing may meet', () => {
    expect(decodeListedHead(TOMBSTONE)).toBeUndefined();
    for (const v of rich) {
      const bytes = encodeVersions([v]);
      const full = decodeVersions(bytes)[0]!;
      expect(decodeListedHead(bytes)).toEqual(project(full));
      // A longer list: the newest, fully decoded.
      expect(decodeListedHead(encodeVersions([v, rich[0]!]))).toEqual(decodeVersions(encodeVersions([v, rich[0]!]))[0]);
    }
  });

  it('fails closed on every truncation, a trailing byte, and bad tags, as a full decode does', () => {
    for (const v of rich) {
      const bytes = encodeVersions([v]);
      for (let n = 0; n < bytes.length; n++) {
        expect(() => decodeListedHead(bytes.subarray(0, n)), `${n} of ${bytes.length}`).toThrow(StoreError);
      }
      const longer = new Uint8Array(bytes.length + 1);
      longer.set(bytes);
      expect(() => decodeListedHead(longer)).toThrow(StoreError);
    }
    const bytes = encodeVersions([rich[5]!]);
    const badFlags = bytes.slice();
    badFlags[1] = 0x80;
    expect(() => decodeListedHead(badFlags)).toThrow(StoreError);
  });
});
